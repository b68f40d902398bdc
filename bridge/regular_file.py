"""Opening a stranger's file: only a regular file, never trusting ``os.stat``, read within a bound.

Every loader (tapes, manifests, snapshots, JSON, ``--config`` YAML) opens through :class:`opened`.
"""

from __future__ import annotations

import os
import stat
from typing import Any, Optional, Tuple

from bridge.errors import ContractError, message

__all__ = ["Refusal", "opened", "read_regular"]


class Refusal:
    """Raises the house error for one file: ``subject`` and ``fix`` fixed, the rest per cause."""

    def __init__(self, subject: str, fix: str, kind: type = ContractError) -> None:
        self.subject, self.fix, self.kind = subject, fix, kind

    def __call__(self, expectation: str, actual: str, member: Optional[str] = None) -> Exception:
        subject = self.subject if member is None else f"{self.subject} member {member!r}"
        return self.kind(message(subject, expectation, actual, self.fix))


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class opened:
    """A stranger's file opened for reading only if it is a regular file, as ``(file, size)``.

    Every loader (tapes, manifests, snapshots, configs) opens through here. ``os.stat`` alone is not
    trusted: a named pipe would block ``open`` and ``/dev/zero`` reports size 0 but never ends. So
    the path is opened non-blocking (a FIFO cannot hang the open) and the *opened* descriptor is
    checked with ``fstat`` (no swap between a check and the open); anything but a regular file is
    refused naming what it is. Callers read at most the size checked here (or their own limit).
    """

    def __init__(self, path: str, refuse: Refusal) -> None:
        self.path, self.refuse = path, refuse
        self.file: Any = None

    def __enter__(self) -> Tuple[Any, int]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise self.refuse("be a readable file", f"{type(e).__name__} ({e.strerror})") from e
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            what = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise self.refuse("be a regular file", what)
        self.file = os.fdopen(fd, "rb")
        return self.file, info.st_size

    def __exit__(self, *exc: Any) -> None:
        self.file.close()


def read_regular(path: str, max_bytes: int, refuse: Refusal, expectation: str) -> bytes:
    """A whole regular file of at most ``max_bytes`` (checked on the size and again on the read);
    ``expectation`` is the sentence a larger file is refused with."""
    with opened(path, refuse) as (raw, size):
        data = raw.read(min(size, max_bytes) + 1)  # read(n) allocates n: never more than the limit
    if size > max_bytes or len(data) > max_bytes:
        raise refuse(expectation, f"{max(size, len(data)):,} bytes")
    return data
