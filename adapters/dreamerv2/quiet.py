"""Quiet DreamerV2 runs: what ``api.train`` prints goes to ``<logdir>/dreamerv2.log``, the learning
summary stays on the terminal.

In a 300-step run DreamerV2 prints its whole config (~140 lines), ``Resizing keys ...`` and, for
image envs without ffmpeg, ``GIF summaries require ffmpeg ...`` per video; TensorFlow Probability
logs a 30-line warning about DreamerV2's ``OneHotDist`` on every distribution it builds (thousands
of lines). All of it is scoped to the ``with`` block: sys.stdout / sys.stderr, the root and
``tensorflow`` loggers and the warning filters are restored afterwards.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import pathlib
import sys
import warnings
from typing import IO, Any, Iterator, List, Set

__all__ = ["quiet_run", "LOG_NAME", "terminal_output", "built_quietly", "LOGGER"]

# what DreamerV2 prints while envbridge builds its classes (ResizeImage's "Resizing keys ... to
# (64, 64)." even without images, the Encoder's key lists) goes here at INFO: silent by default,
# shown by ``--verbose`` (the CLI) or by ``logging.getLogger("bridge.dreamerv2")`` with a handler
LOGGER = logging.getLogger("bridge.dreamerv2")

LOG_NAME = "dreamerv2.log"
_LOGGERS = ("", "tensorflow", "absl")  # root: TFP logs through logging.warning


class _Once(logging.Filter):
    """Each message template once (TFP repeats the same warning for every distribution)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: Set[Any] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.msg)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


@contextlib.contextmanager
def quiet_run(logdir: str, verbose: bool) -> Iterator[IO[str]]:
    """Yield the terminal stream; unless ``verbose``, send everything else to ``logdir/dreamerv2.log``."""
    terminal = sys.stdout
    if verbose:
        yield terminal
        return
    path = pathlib.Path(logdir).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    with open(path / LOG_NAME, "a", encoding="utf-8") as log:
        handler = logging.StreamHandler(log)
        handler.addFilter(_Once())
        handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
        saved: List[Any] = []
        for name in _LOGGERS:
            logger = logging.getLogger(name)
            saved.append((logger, logger.handlers[:], logger.propagate))
            logger.handlers[:] = [handler]
            logger.propagate = False
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                warnings.simplefilter("default")  # each warning once per place
                warnings.showwarning = functools.partial(_show, log)  # wins over an outer recorder too
                yield terminal
        finally:
            for logger, handlers, propagate in saved:
                logger.handlers[:] = handlers
                logger.propagate = propagate


def built_quietly(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` (a DreamerV2 constructor) with what it prints sent to :data:`LOGGER`."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        out = fn(*args)
    for line in buffer.getvalue().splitlines():
        if line.strip():
            LOGGER.info(line)
    return out


def _show(
    log: IO[str], message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    log.write(warnings.formatwarning(message, category, filename, lineno, line))


def terminal_output(base: type, terminal: IO[str]) -> Any:
    """DreamerV2's ``TerminalOutput`` (class ``base``) printing to ``terminal`` and to the log."""

    class _Terminal(base):  # type: ignore[misc, valid-type]
        def __call__(self, summaries: Any) -> None:
            super().__call__(summaries)  # sys.stdout is the log inside quiet_run
            with contextlib.redirect_stdout(terminal):
                super().__call__(summaries)
            terminal.flush()

    return _Terminal()
