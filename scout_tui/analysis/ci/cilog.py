"""Analyse a CI job log: failing tests, root cause with the experiment's frames, torch
version, the failing tests' commands.

Logs come as GitHub Actions job logs (an ISO timestamp on every line, `##[group]` /
`##[error]` markers, ANSI colours, CRLF) or as `gh run view --log` output (job, step and
timestamp columns). Torchtitan's integration runner (tests/integration_tests/run_tests.py)
writes each test's output as a block of `[test_name] `-prefixed lines between
`===== [test_name] start … =====` / `command: … =====` headers and an `end of output (rc=N)`
footer, then raises `RuntimeError: N integration test(s) failed:` listing
`Failed test flavor: … (rc=N|timed out after Ns).` and `Command: …` per failure.

A log can be 500 MB of training noise. The scan never decodes it line by line: it reads
fixed-size chunks, finds anchors with `bytes.find` (C speed), and decodes only the few
lines around each hit; tracebacks are read forward from their anchor with `os.pread`.
Memory is bounded by the chunk size whatever the log's size.

The same chunk scan counts the log's lines and tells a text log from binary data (see
`scan_log`), so an empty or binary input is not mistaken for a green CI run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from scout_tui.errors import scrub

CHUNK = 8 * 1024 * 1024
LINE_LIMIT = 64 * 1024  # longer lines are cut: a log can hold binary junk without newlines
TRACEBACK_WINDOW = 512 * 1024  # how far past its first line a traceback is followed
TRACEBACK_LINES = 400

ANCHORS: dict[str, bytes] = {
    "traceback": b"Traceback (most recent call last)",
    "pytest_failed": b"FAILED ",
    "installed": b"Successfully installed",
    "command": b"Command: ",
    "summary": b"integration test(s) failed",
    "header": b"===== [",
    "flavor": b"Failed test flavor: ",
}

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_GH_COLUMNS = re.compile(r"^[^\t]*\t[^\t]*\t(?=\d{4}-\d{2}-\d{2}T)")
_TIMESTAMP = re.compile(r"^\ufeff?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z ?")
_WORKFLOW_CMD = re.compile(r"^##\[(?:error|warning|notice|debug|group|endgroup|section)\]")
_TEST_PREFIX = re.compile(r"^\[([\w.\-+]+)\] ?")
# torchrun writes `[rank0]:` then the line as is (`[rank0]:  File …`): a space after the
# colon is taken only before a word, never out of a traceback's indentation.
_RANK_PREFIX = re.compile(r"^\[(?:rank|default)(\d+)\]:(?: (?=\S))?")
# "start … end … flavor: … (rc=N)": the ends by one regex, the middle split by hand (lazy
# groups between repeated separators backtrack cubically on a hostile line).
_HEADER_START = re.compile(r"^===== \[([\w.\-+]+)\] start (.*) \(rc=(-?\d+)\) =====$")
_HEADER_COMMAND = re.compile(r"^===== \[([\w.\-+]+)\] command: (.*) =====$")
_HEADER_END = re.compile(r"^===== \[([\w.\-+]+)\] end of output \(rc=(-?\d+)\) =====$")
_FLAVOR = re.compile(r"Failed test flavor: (.*) \((rc=-?\d+|timed out after [^)]*)\)\.?\s*$")
_SUMMARY = re.compile(r"(\d+) integration test\(s\) failed")
_PYTEST_FAILED = re.compile(r"^FAILED (\S+?)(?: - (.*))?$")
_TORCH = re.compile(r"(?<![\w-])torch-(\d[\w.+!-]*)")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.+)$')  # the name, rstripped
_EXCEPTION = re.compile(
    r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning|"
    r"Timeout|Failed|Fault)\w*)(?::\s?(.*))?$"
)
_CHAIN = ("The above exception was the direct cause", "During handling of the above exception")


def _header_start(text: str) -> tuple[str, str, str] | None:
    """(test, flavor description, rc) of a runner's start header, else None."""
    match = _HEADER_START.match(text)
    if match is None:
        return None
    _, ended, after = match.group(2).partition(" end ")
    _, flavored, description = after.partition(" flavor: ")
    return (match.group(1), description, match.group(3)) if ended and flavored else None


WRAPPERS = (
    "ChildFailedError",
    "integration test(s) failed",
    "CalledProcessError",
    "Failed test flavor",
)


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str
    source: str = ""
    in_experiment: bool = False


@dataclass
class TracebackInfo:
    test: str | None
    rank: int | None
    offset: int
    exception: str  # "torch._dynamo.exc.UserError: message"
    frames: list[Frame]
    text: str
    chained: bool = False  # preceded by "The above exception was the direct cause…"

    @property
    def is_wrapper(self) -> bool:
        return any(marker in self.exception for marker in WRAPPERS)


@dataclass
class TestFailure:
    name: str
    kind: str  # "integration" | "pytest"
    error: str | None = None
    reason: str | None = None  # "rc=1", "timed out after 600s"
    command: str | None = None
    description: str | None = None
    frames: list[Frame] = field(default_factory=list)
    root_rule: str | None = None  # how the root cause was picked, said with it
    traceback: str | None = None
    root_offset: int | None = None  # where in the log the root cause's traceback starts
    log: str | None = field(default=None, compare=False)  # the file it was read from, if one


@dataclass
class LogAnalysis:
    failures: list[TestFailure] = field(default_factory=list)
    torch_version: str | None = None
    reported_failures: int | None = None  # N of "N integration test(s) failed"
    bytes_scanned: int = 0
    truncated: bool = False  # the log ended inside a test's output
    lines: int = 0  # text lines, the last one counted even without its newline
    binary: bool = False  # mostly not text: see `scan_log` for the rule

    @property
    def failing_tests(self) -> list[str]:
        return [failure.name for failure in self.failures]

    @property
    def holds_log(self) -> bool:
        """Whether the input held a text log at all: False when it has no line (an empty
        file, /dev/null) or is binary data. When this is False and no failure was found,
        say "no log lines in FILE" (exit 1), never "CI green"."""
        return self.lines > 0 and not self.binary


# -- lines -------------------------------------------------------------------------------
def clean(raw: bytes, known_tests: set[str] | None = None) -> tuple[str | None, int | None, str]:
    """Strip the layers a CI log wraps a line in: gh columns, timestamp, workflow command,
    ANSI colour, the runner's `[test] ` prefix, torchrun's `[rankN]:` prefix."""
    text = raw[:LINE_LIMIT].decode("utf-8", "replace").rstrip("\r\n")
    text = scrub(_ANSI.sub("", text))
    text = _GH_COLUMNS.sub("", text, count=1)
    text = _TIMESTAMP.sub("", text, count=1)
    text = _WORKFLOW_CMD.sub("", text, count=1)
    test = rank = None
    match = _TEST_PREFIX.match(text)
    if match and (known_tests is None or match.group(1) in known_tests):
        test = match.group(1)
        text = text[match.end() :]
    match = _RANK_PREFIX.match(text)
    if match:
        rank = int(match.group(1))
        text = text[match.end() :]
    return test, rank, text


class LogFile:
    """Random access to a log by offset, for the lines around anchors."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size

    def line_at(self, position: int) -> tuple[int, int, bytes]:
        start = max(0, position - LINE_LIMIT)
        before = os.pread(self.fd, position - start, start)
        newline = before.rfind(b"\n")
        line_start = start + newline + 1 if newline >= 0 else start
        after = os.pread(self.fd, LINE_LIMIT, position)
        newline = after.find(b"\n")
        line_end = position + (newline + 1 if newline >= 0 else len(after))
        return line_start, line_end, os.pread(self.fd, line_end - line_start, line_start)

    def lines_from(self, offset: int, limit: int) -> Iterator[tuple[int, int, bytes]]:
        data = os.pread(self.fd, limit, offset)
        position = 0
        while position < len(data):
            newline = data.find(b"\n", position)
            if newline < 0:
                if offset + len(data) < self.size:
                    return  # the window ended mid-line
                newline = len(data) - 1
            yield offset + position, offset + newline + 1, data[position : newline + 1]
            position = newline + 1


# Control bytes a text log does not hold (tab, newline, vertical tab, form feed, carriage
# return, backspace and escape are text: logs hold them).
_CONTROL = bytes(b for b in [*range(32), 127] if b not in b"\t\n\v\f\r\b\x1b")
_CONTROL_TO_NUL = bytes.maketrans(_CONTROL, b"\0" * len(_CONTROL))
TEXT_BLOCK = 512  # the binary rule's unit: see `scan_log`
TEXT_SHARE = 0.1  # under this share of text blocks, the data is binary
# CPython's forward search skips on the anchor's last byte, its backward search on the
# first. A space or `[` is everywhere in a log, so anchors ending in one are searched
# backwards (keyed on `F`, `C`, `=`): fewer false starts, a faster scan.
_BACKWARD = frozenset(name for name, anchor in ANCHORS.items() if anchor[-1:] in (b" ", b"["))


@dataclass
class LogScan:
    hits: list[tuple[int, str]]  # (offset, anchor name), in file order
    lines: int
    binary: bool


def _binary_bytes(chunk: bytes, limit: int) -> int:
    """Bytes of `chunk[:limit]` in TEXT_BLOCK-sized blocks that hold a control byte."""
    marks = chunk.translate(_CONTROL_TO_NUL)
    dirty = 0
    position = marks.find(b"\0", 0, limit)
    while position >= 0:
        block_end = (position // TEXT_BLOCK + 1) * TEXT_BLOCK
        dirty += min(block_end, limit) - (block_end - TEXT_BLOCK)
        position = marks.find(b"\0", block_end, limit)
    return dirty


def scan_log(fd: int, size: int, chunk_size: int = CHUNK) -> LogScan:
    """One pass over the log, `chunk_size` bytes at a time: every anchor's offset, the
    number of lines (the last one counted even without its newline) and whether the data
    is binary.

    Binary means that under a tenth (TEXT_SHARE) of the bytes are text, counted in blocks
    of TEXT_BLOCK bytes: a block is text when it holds no NUL and no other control byte
    (tab, CR, VT, form feed, backspace and escape are text; bytes >= 0x80 are too, for
    UTF-8). Random bytes, executables and compressed data are binary (their text share is
    0-4%); a log with a blob of junk inside is not, unless the junk is nine tenths of it.
    Blocks are only inspected in chunks that hold a NUL byte (a `memchr`), so a text log
    pays nothing for the rule and a chunk without NUL counts as text.
    """
    overlap = max(len(anchor) for anchor in ANCHORS.values()) - 1
    hits: list[tuple[int, str]] = []
    newlines = scanned = binary_bytes = 0
    last_byte = b""
    blank = True  # only whitespace so far: blank lines are no log either
    offset = 0
    while offset < size:
        chunk = os.pread(fd, chunk_size + overlap, offset)
        if not chunk:
            break
        limit = chunk_size if offset + chunk_size < size else len(chunk)
        for name, anchor in ANCHORS.items():
            if name in _BACKWARD:
                position = chunk.rfind(anchor, 0, limit + len(anchor) - 1)
                while position >= 0:
                    hits.append((offset + position, name))
                    position = chunk.rfind(anchor, 0, position + len(anchor) - 1)
            else:
                position = chunk.find(anchor)
                while 0 <= position < limit:
                    hits.append((offset + position, name))
                    position = chunk.find(anchor, position + 1)
        newlines += chunk.count(b"\n", 0, limit)
        if blank:  # a copy of the first chunk only, in any real log
            blank = not chunk[:limit].strip()
        if chunk.find(b"\0", 0, limit) >= 0:
            binary_bytes += _binary_bytes(chunk, limit)
        scanned += min(limit, len(chunk))
        last_byte = chunk[limit - 1 : limit] or last_byte
        offset += chunk_size
    hits.sort()
    lines = 0 if blank else newlines + (last_byte not in (b"", b"\n"))
    return LogScan(hits, lines, binary=scanned - binary_bytes < TEXT_SHARE * scanned)


def find_anchors(fd: int, size: int) -> list[tuple[int, str]]:
    """(offset, anchor name) of every anchor, in file order, reading CHUNK bytes at a time."""
    return scan_log(fd, size).hits


# -- analysis ------------------------------------------------------------------------------
def _read_traceback(
    log: LogFile,
    start: int,
    test: str | None,
    rank: int | None,
    known: set[str],
    experiment: str,
) -> TracebackInfo | None:
    frames: list[Frame] = []
    kept: list[str] = []
    pending_frame: Frame | None = None
    count = 0
    for _, _, raw in log.lines_from(start, TRACEBACK_WINDOW):
        line_test, line_rank, text = clean(raw, known)
        if (test is not None and line_test != test) or (rank is not None and line_rank != rank):
            continue  # another test's (or rank's) interleaved output
        count += 1
        if count > TRACEBACK_LINES:
            return None
        kept.append(text)
        if count == 1:
            continue
        frame = _FRAME.match(text)
        if frame:
            path = frame.group(1)
            pending_frame = Frame(
                path, int(frame.group(2)), frame.group(3).rstrip(), in_experiment=experiment in path
            )
            frames.append(pending_frame)
            continue
        if text.startswith((" ", "\t")) or not text.strip():
            if pending_frame is not None and text.strip() and not frames[-1].source:
                frames[-1] = Frame(
                    pending_frame.path,
                    pending_frame.line,
                    pending_frame.function,
                    text.strip(),
                    pending_frame.in_experiment,
                )
            continue
        if text.startswith(("^", "~")) or set(text.strip()) <= set("^~ "):
            continue
        # The first unindented line after the frames is the exception.
        return TracebackInfo(test, rank, start, text.strip(), frames, "\n".join(kept))
    return None


def _is_chained(log: LogFile, offset: int, test: str | None, known: set[str]) -> bool:
    """Whether the lines just before a traceback say it continues an earlier one."""
    start = max(0, offset - 4096)
    window = os.pread(log.fd, offset - start, start).split(b"\n")[-6:]
    for raw in window:
        line_test, _, text = clean(raw, known)
        if (test is None or line_test == test) and text.startswith(_CHAIN):
            return True
    return False


def _short_path(path: str, experiment: str) -> str:
    index = path.find(experiment)
    return path[index:] if index >= 0 else path


def analyse(path_or_fd: str | int, experiment: str) -> LogAnalysis:
    """Analyse a log file. `experiment` marks the frames that point into the experiment."""
    fd = os.open(path_or_fd, os.O_RDONLY) if isinstance(path_or_fd, str) else path_or_fd
    try:
        size = os.fstat(fd).st_size
        analysis = _analyse(LogFile(fd, size), experiment)
        if isinstance(path_or_fd, str):
            for failure in analysis.failures:
                failure.log = os.path.abspath(path_or_fd)
        return analysis
    finally:
        if isinstance(path_or_fd, str):
            os.close(fd)


def _analyse(log: LogFile, experiment: str) -> LogAnalysis:
    scan = scan_log(log.fd, log.size)
    result = LogAnalysis(bytes_scanned=log.size, lines=scan.lines, binary=scan.binary)
    hits = scan.hits
    # Pass 1: the headers name the tests, so `[name] ` can be told from `[titan] ` noise.
    known: set[str] = set()
    headers: dict[str, dict[str, str]] = {}
    ended: set[str] = set()
    lines: dict[int, tuple[int, int, bytes]] = {}
    for offset, name in hits:
        if name != "header":
            continue
        line_start, line_end, raw = log.line_at(offset)
        lines[offset] = (line_start, line_end, raw)
        _, _, text = clean(raw)
        if started := _header_start(text):
            name, description, rc = started
            known.add(name)
            headers.setdefault(name, {}).update(description=description, rc=rc)
        elif match := _HEADER_COMMAND.match(text):
            known.add(match.group(1))
            headers.setdefault(match.group(1), {})["command"] = match.group(2)
        elif match := _HEADER_END.match(text):
            known.add(match.group(1))
            ended.add(match.group(1))
            headers.setdefault(match.group(1), {})["rc"] = match.group(2)

    failures: dict[str, TestFailure] = {}
    tracebacks: list[TracebackInfo] = []
    last_flavor: TestFailure | None = None
    seen_lines: set[int] = set()
    for offset, name in hits:
        line_start, line_end, raw = lines.get(offset) or log.line_at(offset)
        if name != "traceback" and line_start in seen_lines:
            continue  # two anchors on one line
        seen_lines.add(line_start)
        test, rank, text = clean(raw, known)
        if name == "traceback":
            info = _read_traceback(log, line_start, test, rank, known, experiment)
            if info is not None:
                info.chained = _is_chained(log, line_start, test, known)
                tracebacks.append(info)
        elif name == "installed":
            versions = _TORCH.findall(text)
            if versions:
                result.torch_version = versions[-1]
        elif name == "summary":
            if match := _SUMMARY.search(text):
                result.reported_failures = int(match.group(1))
        elif name == "flavor":
            if match := _FLAVOR.search(text):
                description, reason = match.group(1), match.group(2)
                test_name = next(
                    (n for n, h in headers.items() if h.get("description") == description),
                    _name_before(log, line_start, known) or description,
                )
                failure = failures.setdefault(test_name, TestFailure(test_name, "integration"))
                failure.reason, failure.description = reason, description
                failure.command = failure.command or headers.get(test_name, {}).get("command")
                last_flavor = failure
        elif name == "command":
            index = text.find("Command: ")
            if index >= 0 and last_flavor is not None and last_flavor.command is None:
                last_flavor.command = text[index + len("Command: ") :].strip()
        elif (
            name == "pytest_failed"
            and test is None
            and (match := _PYTEST_FAILED.match(text.strip()))
        ):
            node = match.group(1)
            failure = failures.setdefault(node, TestFailure(node, "pytest"))
            failure.error = failure.error or (match.group(2) or None)
    # Tests whose block ended with a non-zero rc but that no summary listed (a log cut short
    # before the summary, say).
    for test_name, header in headers.items():
        if header.get("rc") not in (None, "0") and test_name not in failures:
            failure = TestFailure(test_name, "integration", reason=f"rc={header['rc']}")
            failure.command, failure.description = header.get("command"), header.get("description")
            failures[test_name] = failure
    result.truncated = bool(known - ended)
    for failure in failures.values():
        _attach_root_cause(failure, tracebacks, experiment)
    result.failures = list(failures.values())
    return result


def _name_before(log: LogFile, offset: int, known: set[str]) -> str | None:
    """The `  name:` line the runner prints just before a `Failed test flavor` line."""
    start = max(0, offset - 2048)
    for raw in reversed(os.pread(log.fd, offset - start, start).split(b"\n")[-3:]):
        _, _, text = clean(raw, known)
        match = re.match(r"^\s{2}([\w.\-+]+):\s*$", text)
        if match:
            return match.group(1)
    return None


def _attach_root_cause(
    failure: TestFailure, tracebacks: list[TracebackInfo], experiment: str
) -> None:
    """The root cause: in the test's own output, the first failing rank's chain, and the
    last exception of that chain (wrappers like ChildFailedError never count)."""
    own = [tb for tb in tracebacks if tb.test == failure.name and not tb.is_wrapper]
    if failure.kind == "pytest":
        own = [tb for tb in tracebacks if tb.test is None and not tb.is_wrapper]
        node_parts = failure.name.split("::")
        # pytest tracebacks carry no test prefix: keep the one that names this test.
        own = [tb for tb in own if any(f.function == node_parts[-1] for f in tb.frames)]
    if failure.kind == "pytest" and failure.error:
        failure.root_rule = "pytest's short test summary line"
    if not own:
        if failure.error is None and failure.reason:
            failure.root_rule = "no traceback in the log: the runner's failure line"
        return
    first_rank = own[0].rank
    chain: list[TracebackInfo] = []
    for tb in own:
        if tb.rank != first_rank:
            continue
        if chain and not tb.chained:
            break  # a new, unrelated traceback: the first chain is the story
        chain.append(tb)
    root = chain[-1]
    failure.root_offset = root.offset
    if failure.root_rule is None:
        whose = f"rank {first_rank}'s" if first_rank is not None else "the first"
        failure.root_rule = f"the last exception of {whose} traceback chain, wrappers skipped"
    failure.error = failure.error if failure.kind == "pytest" and failure.error else root.exception
    failure.frames = [
        Frame(_short_path(f.path, experiment), f.line, f.function, f.source, f.in_experiment)
        for f in root.frames
    ]
    failure.traceback = "\n\n".join(tb.text for tb in chain)
