"""What `scout ci-log FILE` may be given, opened as a file descriptor `cilog.analyse` can
read by offset (`os.pread`).

    with open_log(path) as log:          # raises LogInputError
        analysis = analyse(log.fd, experiment)

- `-`: standard input (a pipe or a redirected file), spooled to a temporary file.
- a regular file: opened as it is, never copied.
- a FIFO, a character device such as /dev/null, bash's `<(cmd)` (/dev/fd/63, a pipe):
  spooled like standard input. Opening a FIFO waits for its writer, as `cat` does.
- gzip data, told by its magic bytes (1f 8b) and not by its name: decompressed into the
  spool. A corrupt or truncated gzip is an error ("FILE is not a readable gzip file: …"),
  not a partial analysis: what a cut stream lost is its end, where the summary of
  failures is, so a partial analysis would pass a failing run for a green one.
- a zip (PK\\x03\\x04), as GitHub's "Download log archive" of a workflow run: one
  `N_<job>.txt` per job at its top level, and folders `<job>/N_<step>.txt` holding the
  same text split by step. The top-level .txt members are used when there are any, else
  every .txt member, in natural name order (2_ before 10_), concatenated into the spool
  (a newline is added between members that lack one), so each failure is found once.

One layer of compression is undone: a gzip inside a gzip stays compressed.

Everything is streamed in SPOOL_BLOCK-sized blocks: memory stays flat whatever the log's
size; a spool takes the log's (uncompressed) size in the temporary directory ($TMPDIR).
Spools are unlinked at once (`tempfile.TemporaryFile`) and closed when the `with` block
ends, on errors too.

Errors are one `LogInputError` with a one-line message; `usage` is True when the command
line names something that cannot be a log (missing, a directory, not readable, no
standard input: exit 2) and False when the data is bad (exit 1).
"""

from __future__ import annotations

import gzip
import os
import re
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import IO

SPOOL_BLOCK = 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a member first; an empty archive
STDIN_NAME = "standard input"


class LogInputError(Exception):
    """A log that cannot be opened. `usage`: the command line is wrong (exit 2), not the
    data (exit 1)."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage


@dataclass(frozen=True)
class LogInput:
    fd: int  # seekable, readable with os.pread; open until the `with` block ends
    name: str  # what to call the log in messages: the path, or "standard input"
    kind: str  # "file" | "stdin" | "pipe" (FIFO, /dev/fd/N, character device) | "gzip" | "zip"
    members: tuple[str, ...] = ()  # zip: the members concatenated, in that order


@contextmanager
def open_log(path: str) -> Iterator[LogInput]:
    """The log at `path` (`-` for standard input) as a readable, seekable descriptor."""
    with ExitStack() as stack:
        yield _open(path, stack)


def _open(path: str, stack: ExitStack) -> LogInput:
    if path == "-":
        fd, kind, name = _spool_stdin(stack), "stdin", STDIN_NAME
    else:
        (fd, kind), name = _open_path(path, stack), path
    magic = os.pread(fd, 4, 0)
    if magic.startswith(GZIP_MAGIC):
        return LogInput(_gunzip(fd, name, stack), name, "gzip")
    if magic in ZIP_MAGICS:
        spool, members = _unzip(fd, name, stack)
        return LogInput(spool, name, "zip", members)
    return LogInput(fd, name, kind)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _open_path(path: str, stack: ExitStack) -> tuple[int, str]:
    """A descriptor on the file at `path` (spooled unless regular) and its kind."""
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            raise LogInputError(f"{path} is a directory", usage=True)
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        raise LogInputError(f"no such log file: {path}", usage=True) from None
    except OSError as exc:
        raise LogInputError(f"cannot read {path}: {_reason(exc)}", usage=True) from None
    stack.callback(os.close, fd)
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return fd, "file"
    # A FIFO, a pipe from `<(cmd)`, a character device: readable once, front to back.
    return _spool_fd(fd, path, stack), "pipe"


def _spool_stdin(stack: ExitStack) -> int:
    try:
        os.fstat(0)
    except OSError:
        raise LogInputError("no standard input to read a log from", usage=True) from None
    if os.isatty(0):
        raise LogInputError("standard input is a terminal: pipe a log into `-`", usage=True)
    return _spool_fd(0, STDIN_NAME, stack)


def _new_spool(stack: ExitStack) -> IO[bytes]:
    return stack.enter_context(tempfile.TemporaryFile(prefix="scout-log-"))


def _write(spool: IO[bytes], block: bytes, name: str) -> None:
    try:
        spool.write(block)
    except OSError as exc:
        raise LogInputError(f"cannot spool {name} to a temporary file: {_reason(exc)}") from None


def _copy(read: Callable[[int], bytes], spool: IO[bytes], name: str) -> bytes:
    """Copy blocks from `read` to the spool; the last byte copied (b"" when none). Read
    errors propagate for the caller to word; write errors become a LogInputError."""
    last = b""
    while block := read(SPOOL_BLOCK):
        last = block[-1:]
        _write(spool, block, name)
    return last


def _finish(spool: IO[bytes], name: str) -> int:
    try:
        spool.flush()
    except OSError as exc:
        raise LogInputError(f"cannot spool {name} to a temporary file: {_reason(exc)}") from None
    return spool.fileno()


def _spool_fd(fd: int, name: str, stack: ExitStack) -> int:
    spool = _new_spool(stack)
    try:
        _copy(lambda size: os.read(fd, size), spool, name)
    except OSError as exc:
        raise LogInputError(f"cannot read {name}: {_reason(exc)}") from None
    return _finish(spool, name)


def _from_start(fd: int) -> IO[bytes]:
    """A file object on `fd` (left open), read from the start. Every descriptor seeked
    here is this module's own: a spool, or a file it opened."""
    os.lseek(fd, 0, os.SEEK_SET)
    return open(fd, "rb", closefd=False)


def _gunzip(fd: int, name: str, stack: ExitStack) -> int:
    spool = _new_spool(stack)
    try:
        with _from_start(fd) as source, gzip.GzipFile(fileobj=source, mode="rb") as data:
            _copy(data.read, spool, name)
    except (OSError, EOFError, zlib.error) as exc:
        raise LogInputError(f"{name} is not a readable gzip file: {exc}") from None
    return _finish(spool, name)


def _natural(name: str) -> list[str | int]:
    """Sort key: digit runs compare as numbers, so `2_test.txt` comes before `10_lint.txt`."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def log_members(names: list[str]) -> list[str]:
    """The members of a log archive to read, in order: the top-level .txt files (one per
    job in GitHub's archive) when there are any, else every .txt file (the per-step
    files, or an archive of a single job's steps)."""
    texts = [name for name in names if name.lower().endswith(".txt") and not name.endswith("/")]
    top = [name for name in texts if "/" not in name]
    return sorted(top or texts, key=_natural)


def _unzip(fd: int, name: str, stack: ExitStack) -> tuple[int, tuple[str, ...]]:
    spool = _new_spool(stack)
    try:
        with _from_start(fd) as source, zipfile.ZipFile(source) as archive:
            members = log_members(archive.namelist())
            if not members:
                raise LogInputError(f"{name} is not a log archive: it holds no .txt file")
            for member in members:
                with archive.open(member) as data:
                    if _copy(data.read, spool, name) not in (b"", b"\n"):
                        _write(spool, b"\n", name)  # the next member starts a line
    except (
        zipfile.BadZipFile,
        OSError,
        EOFError,
        zlib.error,
        NotImplementedError,
        RuntimeError,
    ) as exc:
        # RuntimeError: an encrypted member; NotImplementedError: an unknown compression.
        reason = str(exc)
        if reason == "File is not a zip file":  # no end of central directory record
            reason = "its central directory is missing (a truncated download?)"
        raise LogInputError(f"{name} is not a readable zip archive: {reason}") from None
    return _finish(spool, name), tuple(members)
