"""Random access by line number to a log of any size, for the log viewer.

A 500 MB CI log is never held in memory nor split into lines up front. `LogIndex.scan`
keeps a sparse index: one checkpoint per BLOCK bytes, at the first line start at or after
the block's start, with that line's number (newlines are counted with `bytes.count`, at C
speed). Reading lines bisects the checkpoints and decodes one block (a few hundred lines);
a small LRU keeps the decoded blocks the viewer is showing. The index costs 16 bytes per
64 KiB of log: 125 KiB for 500 MB.

Everything reads with `os.pread` in bounded chunks rather than through an mmap: pages an
mmap touches count in the process's resident set, so one scan or search of a 500 MB log
through an mmap shows as 500 MB of RSS.

Line numbers are the file's own (newline-separated, the last line counted even without
its newline): a line longer than MAX_LINE gets no checkpoint inside it, and only its first
LINE_BYTES bytes are ever decoded, so a binary file or one endless line stays cheap.

No widget here: the viewer calls `scan`, `search` and `failure_lines` from thread
workers, `lines` from the event loop (a block is a fraction of a millisecond).
"""

from __future__ import annotations

import os
import re
import stat
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from scout_tui.analysis.ci.cilog import find_anchors
from scout_tui.errors import scrub

BLOCK = 64 * 1024  # bytes between checkpoints
MAX_LINE = 64 * 1024  # how far past a block's start a checkpoint looks for a line start
SCAN_CHUNK = 4 * 1024 * 1024
READ_WINDOW = 256 * 1024  # a line longer than this is skipped past, its head kept
LINE_BYTES = 16 * 1024  # bytes of a line that are decoded: DISPLAY_CHARS and their escapes
DISPLAY_CHARS = 2000
ELLIPSIS = "…"
CACHED_BLOCKS = 32  # decoded blocks kept: about 2-4 MiB of text
SEARCH_CHUNK = 1024 * 1024  # small enough that a chunk's search holds the GIL ~1 ms
COUNT_CHUNK = 1024 * 1024

# The anchors of `cilog` that mark a failure (not the pip line, headers or commands).
FAILURE_ANCHORS = frozenset({"traceback", "pytest_failed", "flavor"})

# Terminal escape sequences (CSI colours, OSC titles and links, two-byte escapes) and the
# control characters left (CR of CRLF and progress bars, backspace, C1 controls), none of
# which a widget can show. Escapes come first so that their ESC goes with them.
_NOISE = re.compile(
    r"\x1b(?:\[[0-9;:?<=>]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[@-Z\\-_])"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


class LogClosedError(OSError):
    """The index was closed (its viewer went away) while a reader still wanted it."""


def clean_line(text: str) -> str:
    """A decoded log line as a widget can show it: no escapes or control characters, tabs
    expanded, no token, at most DISPLAY_CHARS characters (the cut marked with ELLIPSIS)."""
    text = scrub(_NOISE.sub("", text))
    if "\t" in text:
        text = text.expandtabs()
    if len(text) > DISPLAY_CHARS:
        text = text[: DISPLAY_CHARS - 1] + ELLIPSIS
    return text


def is_experiment_line(text: str, experiment: str) -> bool:
    """Whether a line names a file of the experiment (`…/torchtitan/experiments/x/…`), as
    its traceback frames do."""
    experiment = experiment.strip("/")
    return bool(experiment) and f"/{experiment}/" in text.replace("\\", "/")


@dataclass(frozen=True)
class _Checkpoints:
    """The scan's result, swapped in as one object so readers never see half of it."""

    offsets: array  # byte offset of a line start, one per block (the first is 0)
    first_lines: array  # the number of the line starting there
    line_count: int
    size: int


@dataclass(frozen=True)
class _Block:
    """The lines between two checkpoints, decoded."""

    starts: array  # byte offset of each line
    texts: list[str]


class LogIndex:
    """Lines of a log file by number, scanned once; see the module's docstring."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fd: int | None = None
        self._users = 0  # readers holding the fd: close() waits for the last one
        self._closing = False
        self._lock = threading.Lock()
        self._size = 0
        self._checkpoints = _Checkpoints(array("Q", [0]), array("Q", [0]), 0, 0)
        self._blocks: OrderedDict[int, _Block] = OrderedDict()
        self.scanned = False

    # -- the file ---------------------------------------------------------------------------
    def open(self) -> None:
        """Open the file (OSError when it is missing, unreadable or not a regular file)."""
        with self._lock:
            if self._fd is not None:
                return
            fd = os.open(self.path, os.O_RDONLY)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                os.close(fd)
                raise OSError(f"{self.path} is not a regular file")
            self._fd, self._size, self._closing = fd, info.st_size, False

    def close(self) -> None:
        """Close the file once no reader (a worker, say) is using it."""
        with self._lock:
            self._closing = True
            if self._users == 0 and self._fd is not None:
                os.close(self._fd)
                self._fd = None

    @contextmanager
    def _reading(self) -> Iterator[int]:
        with self._lock:
            if self._fd is None or self._closing:
                raise LogClosedError(f"{self.path} is not open")
            self._users += 1
            fd = self._fd
        try:
            yield fd
        finally:
            with self._lock:
                self._users -= 1
                if self._closing and self._users == 0 and self._fd is not None:
                    os.close(self._fd)
                    self._fd = None

    @property
    def size(self) -> int:
        return self._size

    @property
    def line_count(self) -> int:
        return self._checkpoints.line_count

    @property
    def index_bytes(self) -> int:
        """Memory held by the checkpoints (the decoded-block LRU is bounded apart)."""
        checkpoints = self._checkpoints
        return (len(checkpoints.offsets) + len(checkpoints.first_lines)) * 8

    # -- scan ---------------------------------------------------------------------------------
    def scan(
        self,
        progress: Callable[[float], None] | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> bool:
        """Count the lines and checkpoint every BLOCK bytes. `progress` gets the fraction
        done after each SCAN_CHUNK. False when `cancelled()` said stop (nothing changed)."""
        self.open()
        offsets, first_lines = array("Q", [0]), array("Q", [0])
        newlines = 0
        counted_to = 0  # newlines are counted in [0, counted_to)
        last_byte = b""
        with self._reading() as fd:
            size = self._size
            for chunk_start in range(0, size, SCAN_CHUNK):
                if cancelled():
                    return False
                # MAX_LINE more bytes, so the chunk's last blocks find their line start.
                chunk = os.pread(fd, SCAN_CHUNK + MAX_LINE, chunk_start)
                used = min(SCAN_CHUNK, len(chunk))  # the chunk's own bytes, past them MAX_LINE
                first_block = -(-max(chunk_start, 1) // BLOCK)
                for block_start in range(first_block * BLOCK, chunk_start + used, BLOCK):
                    if block_start < counted_to:
                        continue  # still inside the line the last checkpoint ended
                    relative = block_start - chunk_start
                    newline = chunk.find(b"\n", relative, relative + MAX_LINE)
                    if newline < 0:
                        continue  # a line longer than MAX_LINE: no checkpoint inside it
                    newlines += chunk.count(b"\n", counted_to - chunk_start, newline + 1)
                    counted_to = chunk_start + newline + 1
                    if counted_to < size:
                        offsets.append(counted_to)
                        first_lines.append(newlines)
                if counted_to < chunk_start + used:
                    newlines += chunk.count(b"\n", counted_to - chunk_start, used)
                    counted_to = chunk_start + used
                last_byte = chunk[used - 1 : used] or last_byte
                if progress is not None:
                    progress((chunk_start + used) / size)
        line_count = newlines + (last_byte not in (b"", b"\n"))
        with self._lock:
            self._checkpoints = _Checkpoints(offsets, first_lines, line_count, size)
            self._blocks.clear()
        self.scanned = True
        return True

    # -- lines ------------------------------------------------------------------------------
    def lines(self, start: int, count: int) -> list[str]:
        """Up to `count` lines from line `start` (0-based), cleaned by `clean_line`."""
        checkpoints = self._checkpoints
        result: list[str] = []
        line = max(0, start)
        while len(result) < count and line < checkpoints.line_count:
            index = bisect_right(checkpoints.first_lines, line) - 1
            block = self._block(checkpoints, index)
            first = line - checkpoints.first_lines[index]
            taken = block.texts[first : first + count - len(result)]
            if not taken:
                break  # the file shrank since the scan
            result.extend(taken)
            line += len(taken)
        return result

    def _block(self, checkpoints: _Checkpoints, index: int) -> _Block:
        with self._lock:
            block = self._blocks.get(index)
            if block is not None:
                self._blocks.move_to_end(index)
                return block
        block = self._read_block(checkpoints, index)  # outside the lock: a reader may wait
        with self._lock:
            self._blocks[index] = block
            while len(self._blocks) > CACHED_BLOCKS:
                self._blocks.popitem(last=False)
        return block

    def _read_block(self, checkpoints: _Checkpoints, index: int) -> _Block:
        start = checkpoints.offsets[index]
        end = (
            checkpoints.offsets[index + 1]
            if index + 1 < len(checkpoints.offsets)
            else checkpoints.size
        )
        starts = array("Q")
        raws: list[bytes] = []
        cut: list[int] = []  # lines of which only the head was read
        position = start

        def keep(raw: bytes) -> None:
            if len(raw) > LINE_BYTES:
                cut.append(len(raws))
                raw = raw[:LINE_BYTES]
            starts.append(position)
            raws.append(raw)

        with self._reading() as fd:
            while position < end:
                window = os.pread(fd, min(end - position, READ_WINDOW), position)
                if not window:
                    break  # the file shrank since the scan
                *complete, tail = window.split(b"\n")
                for raw in complete:
                    keep(raw)
                    position += len(raw) + 1
                if not tail:
                    continue
                if position + len(tail) >= end:  # the file's last line, without newline
                    keep(tail)
                    break
                if complete:
                    continue  # the unfinished line is read again from its start
                # Longer than READ_WINDOW: keep its head. Such a line always ends its
                # block (the scan puts a checkpoint right after any line longer than a
                # block), so its end needs no search.
                keep(tail)
                break
        texts = [clean_line(raw.decode("utf-8", "replace")) for raw in raws]
        for number in cut:
            if not texts[number].endswith(ELLIPSIS):
                texts[number] += ELLIPSIS
        return _Block(starts, texts)

    # -- offsets and line numbers -------------------------------------------------------------
    def offset_of(self, line: int) -> int:
        """The byte offset where line `line` starts (the file's size past the last line)."""
        checkpoints = self._checkpoints
        if line >= checkpoints.line_count:
            return checkpoints.size
        line = max(0, line)
        index = bisect_right(checkpoints.first_lines, line) - 1
        first = checkpoints.first_lines[index]
        if line == first:
            return checkpoints.offsets[index]
        starts = self._block(checkpoints, index).starts
        return starts[line - first] if line - first < len(starts) else checkpoints.size

    def line_of(self, offset: int) -> int:
        """The number of the line holding byte `offset`."""
        return self.lines_of([offset])[0]

    def lines_of(self, offsets: Iterable[int]) -> list[int]:
        """`line_of` for many offsets: sorted ones share the newlines counted between them,
        so mapping every anchor of a log reads each block at most once."""
        checkpoints = self._checkpoints
        last_line = max(0, checkpoints.line_count - 1)
        result: list[int] = []
        known_offset, known_line = 0, 0  # the last offset mapped, and its line
        with self._reading() as fd:
            for offset in offsets:
                offset = min(max(0, offset), checkpoints.size)
                index = bisect_right(checkpoints.offsets, offset) - 1
                base = checkpoints.offsets[index]
                if not base <= known_offset <= offset:
                    known_offset, known_line = base, checkpoints.first_lines[index]
                known_line += self._count_newlines(fd, known_offset, offset)
                known_offset = offset
                result.append(min(known_line, last_line))
        return result

    @staticmethod
    def _count_newlines(fd: int, start: int, end: int) -> int:
        count = 0
        while start < end:
            chunk = os.pread(fd, min(end - start, COUNT_CHUNK), start)
            if not chunk:
                break
            count += chunk.count(b"\n")
            start += len(chunk)
        return count

    # -- search and failures ----------------------------------------------------------------
    def search(
        self,
        text: str,
        from_line: int,
        backwards: bool = False,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> int | None:
        """The line of the next match of `text` after line `from_line` (before it when
        `backwards`), wrapping around the file; None when there is none or when cancelled.

        Case-insensitive for ASCII letters, as `re.I` is on bytes: each chunk is lowered
        and searched with `bytes.find`, three times faster than an `re.I` pattern. A match
        hidden by an escape sequence inside it (`FAI\\x1b[0mLED`) is not found."""
        needle = text.encode("utf-8").lower()
        checkpoints = self._checkpoints
        if not needle or not checkpoints.line_count:
            return None
        size = checkpoints.size
        if backwards:
            pivot = self.offset_of(from_line)
            regions = [(0, pivot), (pivot, size)]
        else:
            pivot = self.offset_of(from_line + 1)
            regions = [(pivot, size), (0, pivot)]
        for start, end in regions:
            found = self._find(needle, start, end, backwards, cancelled)
            if found == -2:
                return None
            if found >= 0:
                return self.line_of(found)
        return None

    def _find(
        self, needle: bytes, start: int, end: int, backwards: bool, cancelled: Callable[[], bool]
    ) -> int:
        """The offset of the first (last when `backwards`) match that starts in
        [start, end); -1 when none, -2 when cancelled."""
        # Each chunk is read with len(needle) - 1 more bytes: exactly the matches that start
        # in it fit, the ones that run into the next chunk included.
        overlap = len(needle) - 1
        chunks = range(start, end, SEARCH_CHUNK)
        with self._reading() as fd:
            for chunk_start in reversed(chunks) if backwards else chunks:
                if cancelled():
                    return -2
                length = min(SEARCH_CHUNK, end - chunk_start) + overlap
                data = os.pread(fd, length, chunk_start).lower()
                found = data.rfind(needle) if backwards else data.find(needle)
                if found >= 0:
                    return chunk_start + found
        return -1

    def failure_lines(self) -> list[int]:
        """The lines of the log's failure anchors (tracebacks, pytest's FAILED lines, the
        runner's `Failed test flavor`), found by `cilog`'s chunk scan, in order."""
        with self._reading() as fd:
            hits = find_anchors(fd, self._checkpoints.size)
        offsets = [offset for offset, name in hits if name in FAILURE_ANCHORS]
        return sorted(set(self.lines_of(offsets)))
