"""Where a command's output goes: stdout, or `-o FILE` written so nothing is half-written
and nothing that is not a regular file gets replaced."""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from pathlib import Path

from scout_tui.errors import UsageError


def check_target(target: Path | None, flag: str = "-o") -> None:
    """Refuse a bad `-o` (or another file option) before any work is done, so nothing is
    left behind."""
    if target is None or str(target) == "-":
        return
    if target.is_dir():
        raise UsageError(f"{flag} {target}: is a directory")
    parent = _final_path(target).parent
    if not parent.exists():
        raise UsageError(f"{flag} {target}: no such folder {parent}")
    if not parent.is_dir():
        raise UsageError(f"{flag} {target}: {parent} is not a folder")


def probe_writable(target: Path, flag: str = "-o") -> None:
    """Create and remove a file beside `target`: the folder's permissions, a read-only or
    immutable mount, a full disk are said now, not after the work."""
    try:
        with tempfile.NamedTemporaryFile(dir=_final_path(target).parent, prefix=".scout-probe-"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag} {target}: cannot write there: {exc.strerror or exc}") from None


def _final_path(target: Path) -> Path:
    """A symlink is written through to what it points at (a dangling one creates it)."""
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def write_output(text: str, target: Path | None) -> None:
    if not text.endswith("\n"):
        text += "\n"
    if target is None or str(target) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    check_target(target)
    path = _final_path(target)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        # A FIFO, a device, /dev/stdout: write into it; renaming over it would replace it.
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(text)
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(tmp, stat.S_IMODE(mode))  # keep the replaced file's permissions
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # what a plain open() would have made
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True, default=str)
