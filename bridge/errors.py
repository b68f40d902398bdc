"""The exceptions envbridge raises.

Every message reads ``<subject> must <expectation>, got <actual>. <fix>.`` so a user can act on it
without reading our source. :func:`message` builds that sentence; :func:`error` builds the exception
and keeps the four parts (check reports show them apart). Callers build, then raise.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

__all__ = [
    "BridgeError",
    "SpecError",
    "ContractError",
    "BatchError",
    "NotABatchError",
    "OrderError",
    "ConversionError",
    "MissingDependencyError",
    "message",
    "statement",
    "error",
    "close_beside",
]

Parts = Tuple[str, str, str, str]


class BridgeError(Exception):
    """Base class of every error envbridge raises on purpose.

    ``parts`` holds ``(subject, expectation, actual, fix)`` when the error was built by :func:`error`.
    """

    parts: Optional[Parts] = None


class SpecError(BridgeError, ValueError):
    """A space, spec or argument is malformed (raised at construction time)."""


class ContractError(BridgeError, RuntimeError):
    """An environment broke the API contract at run time (bad action, bad step output, misuse)."""


class BatchError(ContractError, ValueError):
    """A batch of the wrong size (actions, values per sub-env, a reset mask): a ContractError that
    is also the ValueError Gymnasium raises there, so existing ``except ValueError`` clauses work."""


class NotABatchError(BatchError, TypeError):
    """One action (no leading axis) where a vector env takes a batch: also the TypeError Gymnasium's
    vector envs raise when they iterate over it."""


class OrderError(ContractError, AssertionError):
    """A step before the first reset, where the runtime's own order check raises AssertionError
    (gym 0.23's OrderEnforcing, which gym's ``check_env`` expects word for word)."""


class ConversionError(BridgeError, TypeError):
    """A space or value cannot be expressed losslessly by a target runtime."""


class MissingDependencyError(BridgeError, ImportError):
    """An optional framework is not installed; the message carries the pip command."""


def message(subject: str, expectation: str, actual: object, fix: str) -> str:
    """Format the house error sentence.

    Args:
        subject: what is wrong, e.g. ``"Box low"`` or ``"observation['pos']"``.
        expectation: what it must be, without the word "must".
        actual: the offending value; strings are used verbatim, anything else through ``repr``.
        fix: what the user should do, one sentence (a final period is added if missing).
    """
    return f"{statement(subject, expectation, actual)} {_sentence(fix)}"


def error(kind: type, subject: str, expectation: str, actual: object, fix: str) -> BridgeError:
    """The exception ``kind`` (a BridgeError class) with the house message and its parts kept."""
    shown = actual if isinstance(actual, str) else repr(actual)
    found = kind(message(subject, expectation, shown, fix))
    found.parts = (subject, expectation, shown, fix)
    return found


def statement(subject: str, expectation: str, actual: object) -> str:
    """The first half of :func:`message`: ``<subject> must <expectation>, got <actual>.``"""
    shown = actual if isinstance(actual, str) else repr(actual)
    return f"{subject} must {expectation}, got {_sentence(shown)}"  # a quoted sentence keeps its own stop


def _sentence(text: str) -> str:
    text = text.rstrip()
    return text if text.endswith((".", "?", "!")) else text + "."


def close_beside(refusal: BaseException, close: Callable[[], Any], what: str) -> None:
    """Call ``close`` (the cleanup after ``refusal``); should it raise, the refusal stays the error
    and the close error is reported beside it, as a note (``__notes__``: Python 3.11 prints it under
    the traceback; on 3.9 it is kept on the exception), never instead of it. Call it inside the
    ``except`` block, then re-raise the refusal."""
    try:
        close()
    except Exception as e:  # noqa: BLE001 - any close error is reported, none replaces the refusal
        note = f"Closing {what} after this error also failed: {type(e).__name__}: {e}"
        if hasattr(refusal, "add_note"):
            refusal.add_note(note)
        else:
            refusal.__notes__ = [*getattr(refusal, "__notes__", ()), note]  # type: ignore[attr-defined]
