"""One repro or bisect at a time on a box: they share its GPUs, and two training runs on
the same devices fail each other in ways that look like regressions. A lock file in the
state dir (`flock`: released by the kernel however the holder ends)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from scout_tui.errors import ScoutError, clean

LOCK_FILE = "gpu-runs.lock"


class BoxBusy(ScoutError):
    """Another repro or bisect holds the box."""


class BoxLock:
    def __init__(self, state_dir: Path, what: str) -> None:
        self.path = state_dir / LOCK_FILE
        self.what = what
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the box (BoxBusy: another run has it; ScoutError: no state dir)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise ScoutError(f"cannot open {self.path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = clean(os.pread(fd, 200, 0).decode("utf-8", "replace")).strip()
            os.close(fd)
            raise BoxBusy(
                f"another run holds this box's GPUs ({holder or 'unknown'}): one repro or "
                "bisect at a time — wait for it, or stop it"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{self.what}, pid {os.getpid()}".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # the lock goes with the descriptor
            self._fd = None

    def __enter__(self) -> BoxLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
