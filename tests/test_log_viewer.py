"""The log viewer: LogIndex on files written here (line counts, lines by number across
block boundaries, offsets, search, failure lines) and the LogViewer screen driven by a
Pilot over a 20 MB CI-like log."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, Static

from scout_tui.analysis.ci import logindex
from scout_tui.analysis.ci.logindex import (
    BLOCK,
    DISPLAY_CHARS,
    ELLIPSIS,
    LogIndex,
    clean_line,
    is_experiment_line,
)
from scout_tui.sandbox.demo.ci_logs import actions_format, pytest_log, runner_log
from scout_tui.tui.screens.log_viewer import LogViewer
from scout_tui.tui.widgets.log_view import LogView

EXP = "torchtitan/experiments/graph_trainer"
FAILURE_MARKERS = ("Traceback (most recent call last)", "FAILED ", "Failed test flavor: ")


def scanned(tmp_path: Path, data: bytes, name: str = "job.log") -> LogIndex:
    path = tmp_path / name
    path.write_bytes(data)
    index = LogIndex(path)
    assert index.scan()
    return index


def expected_lines(data: bytes) -> list[str]:
    """What the viewer should show, from the bytes: split on LF only, cleaned, cut."""
    if not data:
        return []
    raw = data.split(b"\n")
    if data.endswith(b"\n"):
        raw.pop()
    return [clean_line(line.decode("utf-8", "replace")) for line in raw]


# -- LogIndex: line counts --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "count", "lines"),
    [
        (b"", 0, []),
        (b"\n", 1, [""]),
        (b"one", 1, ["one"]),
        (b"one\n", 1, ["one"]),
        (b"one\ntwo", 2, ["one", "two"]),
        (b"one\n\n", 2, ["one", ""]),
        (b"a\r\nb\r\n", 2, ["a", "b"]),  # CRLF: the CR is not shown
        (b"a\r\nb", 2, ["a", "b"]),
    ],
)
def test_line_count_and_lines_of_small_files(tmp_path, data, count, lines):
    index = scanned(tmp_path, data)
    assert index.line_count == count
    assert index.lines(0, 10) == lines


def test_a_megabyte_line_without_newline_is_one_line_cut_for_display(tmp_path):
    data = b"x" * (1024 * 1024)
    index = scanned(tmp_path, data)
    assert index.line_count == 1
    [line] = index.lines(0, 5)
    assert line == "x" * (DISPLAY_CHARS - 1) + ELLIPSIS
    assert index.line_of(len(data) - 1) == 0

    # Lines after it still have their own numbers, and no checkpoint lands inside it.
    index = scanned(tmp_path, b"head\n" + data + b"\ntail one\ntail two", "after.log")
    assert index.line_count == 4
    assert index.lines(2, 5) == ["tail one", "tail two"]
    assert index.lines(0, 1) == ["head"]
    assert index.line_of(5 + 700_000) == 1
    assert index.offset_of(2) == 5 + len(data) + 1


def test_binary_bytes_have_their_newline_count_and_show_no_control_characters(tmp_path):
    data = random.Random(3).randbytes(3 * 1024 * 1024)
    index = scanned(tmp_path, data)
    assert index.line_count == data.count(b"\n") + (not data.endswith(b"\n"))
    lines = index.lines(0, index.line_count + 1)
    assert len(lines) == index.line_count
    assert not any(ch < " " or "\x7f" <= ch <= "\x9f" for line in lines for ch in line)


def test_missing_file_and_directory_raise_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        LogIndex(tmp_path / "absent.log").scan()
    with pytest.raises(OSError, match="not a regular file"):
        LogIndex(tmp_path).scan()


# -- LogIndex: lines by number across blocks ---------------------------------------------------
def block_crossing_log(size: int = 3 * 1024 * 1024) -> bytes:
    """Lines of every length, some ending exactly at a block boundary, some crossing
    one, a few longer than a block (and than the read window), tabs, ANSI and CRLF."""
    rng = random.Random(11)
    parts: list[bytes] = []
    written = 0
    number = 0
    while written < size:
        boundary = (written // BLOCK + 1) * BLOCK
        roll = rng.random()
        if roll < 0.05:  # ends right before the next boundary, its newline on it
            line = b"e" * max(0, boundary - written - 1)
        elif roll < 0.07:
            line = b"L" * rng.choice([70_000, 300_000])
        else:
            body = f"{number:07d}\tstep \x1b[32mloss\x1b[0m {rng.random():.6f}"
            line = (body + " w" * rng.randint(0, 90)).encode() + (b"\r" * (roll < 0.3))
        parts.append(line + b"\n")
        written += len(line) + 1
        number += 1
    parts.append(b"the last line, no newline")
    return b"".join(parts)


def test_lines_equal_the_file_split_at_every_block_boundary(tmp_path):
    data = block_crossing_log()
    expected = expected_lines(data)
    index = scanned(tmp_path, data)
    assert index.line_count == len(expected) == data.count(b"\n") + 1
    assert index.lines(0, len(expected) + 10) == expected
    # Windows around each block boundary, read cold (a fresh index, an empty cache).
    index = scanned(tmp_path, data, "cold.log")
    for block_start in range(BLOCK, len(data), BLOCK):
        line = data.count(b"\n", 0, block_start)
        start = max(0, line - 3)
        assert index.lines(start, 7) == expected[start : start + 7], block_start
    assert index.lines(len(expected) - 1, 5) == ["the last line, no newline"]
    assert index.lines(len(expected), 5) == []
    assert "\t" not in "".join(expected) and "\x1b" not in "".join(expected)
    assert len(index._blocks) <= logindex.CACHED_BLOCKS  # the LRU stays bounded


def test_offsets_and_line_numbers_agree_with_the_file(tmp_path):
    data = block_crossing_log(1024 * 1024)
    index = scanned(tmp_path, data)
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    rng = random.Random(5)
    for line in [0, 1, len(starts) - 1, *rng.sample(range(len(starts)), min(300, len(starts)))]:
        assert index.offset_of(line) == starts[line]
    offsets = sorted(rng.sample(range(len(data)), 500))
    expected = [data.count(b"\n", 0, offset) for offset in offsets]
    assert index.lines_of(offsets) == expected
    assert [index.line_of(offset) for offset in offsets[:50]] == expected[:50]
    assert index.line_of(len(data)) == len(starts) - 1


def test_the_index_is_sparse(tmp_path):
    data = block_crossing_log(8 * 1024 * 1024)
    index = scanned(tmp_path, data)
    assert index.index_bytes <= (len(data) // BLOCK + 1) * 16


def test_scan_reports_progress_and_can_be_cancelled(tmp_path):
    path = tmp_path / "big.log"
    path.write_bytes(b"0123456789\n" * 2_000_000)  # 22 MB: six chunks
    fractions: list[float] = []
    index = LogIndex(path)
    assert index.scan(fractions.append)
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(fractions) >= 5
    assert index.line_count == 2_000_000
    cancelled = LogIndex(path)
    assert not cancelled.scan(cancelled=lambda: True)
    assert cancelled.line_count == 0 and cancelled.lines(0, 5) == []


def test_clean_line_and_experiment_lines():
    assert clean_line("\x1b[31mred\x1b[0m\tx\r") == "red     x"
    assert clean_line("\x1b]8;;https://x\x07link\x1b]8;;\x07 ok\b") == "link ok"
    assert clean_line("é" * 3000) == "é" * (DISPLAY_CHARS - 1) + ELLIPSIS
    frame = f'  File "/workspace/{EXP}/trainer.py", line 233, in train_step'
    assert is_experiment_line(frame, EXP)
    assert is_experiment_line(frame.replace("/", "\\"), EXP)
    assert not is_experiment_line(f'  File "/workspace/{EXP}_old/x.py"', EXP)
    assert not is_experiment_line(frame, "")


# -- LogIndex: search and failures ---------------------------------------------------------
def test_search_forward_backward_and_wrapping(tmp_path):
    lines = [f"line {n}" for n in range(100_000)]
    lines[10] = "a Needle here"
    lines[50_000] = "another NEEDLE"
    lines[90_000] = "last needle"
    index = scanned(tmp_path, "\n".join(lines).encode())
    assert index.search("needle", 0) == 10
    assert index.search("needle", 10) == 50_000
    assert index.search("needle", 50_000) == 90_000
    assert index.search("needle", 90_000) == 10  # wraps around
    assert index.search("needle", 50_000, backwards=True) == 10
    assert index.search("needle", 10, backwards=True) == 90_000  # wraps around
    assert index.search("NEEDLE", -1) == 10
    assert index.search("no such text", 0) is None
    assert index.search("needle", 0, cancelled=lambda: True) is None


def test_search_finds_a_match_across_a_chunk_boundary(tmp_path):
    chunk = logindex.SEARCH_CHUNK
    data = bytearray(b"." * (3 * chunk))
    for offset in range(99, len(data), 100):
        data[offset] = 0x0A
    data[chunk - 3 : chunk + 3] = b"ABCDEF"  # the chunk boundary cuts it in two
    index = scanned(tmp_path, bytes(data))
    line = data.count(b"\n", 0, chunk - 3)
    assert index.search("abcdef", 0) == line
    assert index.search("abcdef", index.line_count - 1, backwards=True) == line


def test_failure_lines_are_the_tracebacks_and_failed_lines(tmp_path):
    text = "".join(actions_format(iter([*runner_log(), *pytest_log()])))
    index = scanned(tmp_path, text.encode())
    expected = [
        number
        for number, line in enumerate(text.split("\n"))
        if any(marker in line for marker in FAILURE_MARKERS)
    ]
    assert len(expected) > 10
    assert index.failure_lines() == expected


# -- the screen --------------------------------------------------------------------------------
@dataclass
class BigLog:
    path: Path
    line_count: int
    root_line: int
    root_offset: int
    failures: list[int]
    needles: list[int]  # lines holding "NEEDLE-7f3a"


def noise(first: int, count: int = 9_000) -> bytes:
    return "".join(
        f"2026-08-20T06:00:{n % 60:02d}.0000000Z [titan] \x1b[31mstep: {n:>6}\x1b[39m  "
        f"\x1b[32mloss: 3.{n % 9999:04d}\x1b[39m  memory: 41.20GiB  tps: 6,521\r\n"
        for n in range(first, first + count)
    ).encode()


@pytest.fixture(scope="module")
def big_log(tmp_path_factory) -> BigLog:
    """About 20 MB: noise, a needle, the runner's failures and pytest's, another needle,
    noise, a last line."""
    failing = "".join(actions_format(iter([*runner_log(), *pytest_log()]))).encode()
    needle = b"2026-08-20T06:00:00.0000000Z marker NEEDLE-7f3a here\r\n"
    pieces = [
        noise(0) * 8,
        needle,
        noise(9_000) * 4,
        failing,
        noise(18_000) * 6,
        needle,
        noise(27_000) * 4,
        b"2026-08-20T06:59:59.0000000Z LAST LINE\r\n",
    ]
    data = b"".join(pieces)
    path = tmp_path_factory.mktemp("big") / "job.log"
    path.write_bytes(data)
    root_offset = data.index(b"torch._dynamo.exc.UserError")
    text_lines = data.split(b"\n")[:-1]
    return BigLog(
        path=path,
        line_count=len(text_lines),
        root_line=data.count(b"\n", 0, root_offset),
        root_offset=root_offset,
        failures=[
            n
            for n, line in enumerate(text_lines)
            if any(marker.encode() in line for marker in FAILURE_MARKERS)
        ],
        needles=[n for n, line in enumerate(text_lines) if b"NEEDLE-7f3a" in line],
    )


class ViewerApp(App[None]):
    def __init__(self, viewer: LogViewer) -> None:
        super().__init__()
        self.viewer = viewer

    def on_mount(self) -> None:
        self.push_screen(self.viewer)


def rows(view: LogView) -> list[str]:
    """The rows the widget shows, as the compositor gets them."""
    return [view.render_line(y).text for y in range(view.scrollable_content_region.height)]


def shown_numbers(view: LogView) -> list[int]:
    """The gutter's line numbers (1-based, as the file numbers its lines), past the mark."""
    return [int(row[1:].split()[0]) for row in rows(view) if row[1:].strip()]


def header(app: App) -> str:
    return str(app.screen.query_one("#log-viewer-header", Static).render())


async def until(pilot, predicate, seconds: float = 30.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if predicate():
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise AssertionError("timed out")


async def opened(pilot, app: ViewerApp) -> LogView:
    """The viewer with its scan and failure scan done."""
    await until(pilot, lambda: isinstance(app.screen, LogViewer))
    view = app.screen.query_one(LogView)
    await app.workers.wait_for_complete()
    await until(pilot, lambda: view.scanned and bool(view.failures))
    await pilot.pause()
    return view


async def test_viewer_opens_on_the_root_cause_and_jumps(big_log):
    size = big_log.path.stat().st_size
    assert size > 19_000_000
    viewer = LogViewer(
        big_log.path, experiment=EXP, title="linux-job", root_offset=big_log.root_offset
    )
    app = ViewerApp(viewer)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await opened(pilot, app)
        assert view.failures == big_log.failures
        assert f"{big_log.line_count:,} lines" in header(app)
        assert f"{size / 1e6:.1f} MB" in header(app)
        # The root-cause line is in view, marked and numbered as the file numbers it.
        assert view.current_line == view.root_line == big_log.root_line
        [root_row] = [row for row in rows(view) if row.startswith("▶")]
        assert root_row.split()[0] == f"▶{big_log.root_line + 1}"
        assert "[rank0]:torch._dynamo" in root_row

        await pilot.press("f")
        next_failure = next(n for n in big_log.failures if n > big_log.root_line)
        assert view.current_line == next_failure
        assert next_failure + 1 in shown_numbers(view)
        # Where the jump landed is said, even when the line was in view already.
        place = view.failures.index(next_failure) + 1
        await pilot.pause()
        assert f"failure {place} of {len(view.failures)} · line {next_failure + 1:,}" in header(app)
        await pilot.press("F")
        assert view.current_line == max(n for n in big_log.failures if n < next_failure)
        await pilot.pause()
        assert f"failure {place - 1} of {len(view.failures)}" in header(app)

        # Search from here: the second needle, then `n` wraps to the first.
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"needle-7F3A", "enter")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: view.current_line == big_log.needles[1])
        assert any("NEEDLE-7f3a" in row for row in rows(view))
        assert f"line {big_log.needles[1] + 1:,} of" in header(app)
        assert "found 'needle-7F3A'" in header(app)
        assert app.focused is view
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: view.current_line == big_log.needles[0])
        assert any("NEEDLE-7f3a" in row for row in rows(view))

        await pilot.press("end")
        await pilot.pause()
        assert "LAST LINE" in rows(view)[-1]
        assert shown_numbers(view)[-1] == big_log.line_count
        await pilot.press("home")
        await pilot.pause()
        assert shown_numbers(view)[:2] == [1, 2]

        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, LogViewer)


async def test_viewer_without_a_root_opens_on_the_first_failure(big_log):
    app = ViewerApp(LogViewer(big_log.path, experiment=EXP, title="job"))
    async with app.run_test(size=(100, 30)) as pilot:
        view = await opened(pilot, app)
        await until(pilot, lambda: view.current_line == big_log.failures[0])
        assert big_log.failures[0] + 1 in shown_numbers(view)
        await pilot.press("g")  # no root cause known: the first failure
        assert view.current_line == big_log.failures[0]


async def test_experiment_frames_are_bold_yellow(big_log):
    app = ViewerApp(
        LogViewer(big_log.path, experiment=EXP, title="job", root_offset=big_log.root_offset)
    )
    async with app.run_test(size=(200, 30)) as pilot:  # wide: the frames' paths are in view
        view = await opened(pilot, app)
        strips = [view.render_line(y) for y in range(view.scrollable_content_region.height)]
        ours = [strip for strip in strips if f"/{EXP}/" in strip.text]
        theirs = [strip for strip in strips if "/site-packages/" in strip.text]
        assert ours and theirs
        for strip in ours:
            styles = [segment.style for segment in strip if f"/{EXP}/" in segment.text]
            assert styles and all(s.bold and s.color.triplet.hex == "#ffff00" for s in styles)
        for strip in theirs:
            assert not any(
                segment.style.bold for segment in strip if "/site-packages/" in segment.text
            )


async def test_a_narrow_viewer_leaves_ci_timestamps_out_and_t_brings_them_back(big_log):
    """At 60 columns a CI timestamp would take half of each row: left out, so the message
    shows; `t` shows them (and hides them again); wide, they show."""
    stamped = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
    for size, shown in (((60, 20), False), ((200, 30), True)):
        app = ViewerApp(
            LogViewer(big_log.path, experiment=EXP, title="job", root_offset=big_log.root_offset)
        )
        async with app.run_test(size=size) as pilot:
            view = await opened(pilot, app)
            gutter = view._gutter_width()
            bodies = [row[gutter:] for row in rows(view) if row.strip()]
            assert bodies
            assert any(stamped.match(body) for body in bodies) is shown
            await pilot.press("t")
            await pilot.pause()
            bodies = [row[gutter:] for row in rows(view) if row.strip()]
            assert any(stamped.match(body) for body in bodies) is not shown


async def test_search_box_escape_closes_only_the_box_and_no_match_is_said(big_log):
    app = ViewerApp(LogViewer(big_log.path, experiment=EXP, title="job"))
    async with app.run_test(size=(100, 30)) as pilot:
        view = await opened(pilot, app)
        before = view.current_line
        await pilot.press("slash", "q")  # `q` is typed, it does not close the viewer
        assert app.focused.value == "q"
        await pilot.press("escape")
        assert isinstance(app.screen, LogViewer) and app.focused is view
        await pilot.press("slash", *"zz-no-such-text", "enter")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: "no match for 'zz-no-such-text'" in header(app))
        assert view.current_line == before
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, LogViewer)


async def test_missing_log_is_one_line_no_crash(tmp_path):
    missing = tmp_path / "gone.log"
    app = ViewerApp(LogViewer(missing, experiment=EXP, title="job"))
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LogViewer))
        await app.workers.wait_for_complete()
        message = app.screen.query_one("#log-viewer-message", Static)
        await until(pilot, lambda: message.display)
        assert str(message.render()) == f"cannot read {missing}: No such file or directory"
        assert not app.screen.query_one(LogView).display
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, LogViewer)


async def test_home_and_t_show_the_lines_from_their_first_column(big_log):
    """Scrolled sideways, `home` is the log's start: the first line from its first column
    (not `oup]Run tests`); `t` moves where lines start, so it shows them from there too.
    A page down keeps the sideways scroll (NEAR-MISS: only those two reset it)."""
    app = ViewerApp(
        LogViewer(big_log.path, experiment=EXP, title="job", root_offset=big_log.root_offset)
    )
    async with app.run_test(size=(60, 20)) as pilot:
        view = await opened(pilot, app)
        for key in ("right",) * 5:
            await pilot.press(key)
        await pilot.pause()
        assert view.scroll_offset.x > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert view.scroll_offset.x > 0
        await pilot.press("home")
        await pilot.pause()
        assert (view.scroll_offset.x, view.scroll_offset.y) == (0, 0)
        for key in ("right",) * 5:
            await pilot.press(key)
        await pilot.press("t")
        await pilot.pause()
        assert view.scroll_offset.x == 0


async def test_the_footer_names_the_search_and_timestamp_keys_at_80_columns(big_log):
    """`n` (next match) and `t` (timestamps) are in the footer beside g, f, / and escape, and
    all of them fit 80 columns; how to close the viewer is never the one left out."""
    from textual.widgets._footer import FooterKey

    from scout_tui.tui.widgets.key_footer import KeyFooter

    app = ViewerApp(
        LogViewer(big_log.path, experiment=EXP, title="job", root_offset=big_log.root_offset)
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(pilot, app)
        await pilot.pause(0.1)
        keys = app.screen.query_one(KeyFooter).query(FooterKey)
        said = {key.description for key in keys}
        assert {"Match", "Timestamps", "Root cause", "Failure", "Close"} <= said
        assert all(key.region.right <= 80 and key.region.width > 0 for key in keys)
