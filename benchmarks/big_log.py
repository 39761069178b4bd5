"""The log viewer on a 500 MB CI log: scan, first screen, jumps, paging and searches timed
with the Pilot, and the memory they cost.

    python benchmarks/big_log.py [--size-mb 500]

The log (written to a temporary directory, deleted at the end) is GitHub Actions
training noise (timestamps, ANSI colours, CRLF) with the runner's failures and pytest's
(tracebacks through torchtitan/experiments/graph_trainer, FAILED lines) every 100 MB, a
search target near the end and a last line. Prints figures; asserts no timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App

from scout_tui.analysis.ci.logindex import LogIndex
from scout_tui.sandbox.demo.ci_logs import EXP, actions_format, pytest_log, runner_log
from scout_tui.tui.screens.log_viewer import LogViewer
from scout_tui.tui.widgets.log_view import LogView

MB = 1024 * 1024
FAILURES_EVERY_MB = 100
NEEDLE = "needle-near-the-end"
NO_HIT = "zz-text-that-is-nowhere"
LAST_LINE = "LAST LINE of the job"


def noise_chunk(variant: int) -> bytes:
    """About 1 MiB of training-step lines; each variant numbers its steps apart."""
    lines = []
    for n in range(variant * 7_500, variant * 7_500 + 7_500):
        lines.append(
            f"2026-08-20T06:{n // 60 % 60:02d}:{n % 60:02d}.{n % 10_000_000:07d}Z [titan] "
            f"2026-08-20 06:00:00,000 - root - INFO - \x1b[31mstep: {n:>7}\x1b[39m  "
            f"\x1b[32mloss: 3.{n % 9999:04d}\x1b[39m  memory: 41.20GiB(43.3%)  tps: 6,521\r\n"
        )
    return "".join(lines).encode()


def write_log(path: Path, size_mb: int) -> tuple[int, int]:
    """The log; returns (root-cause offset, needle offset)."""
    chunks = [noise_chunk(variant) for variant in range(8)]
    failing = "".join(actions_format(iter([*runner_log(), *pytest_log()]))).encode()
    needle = f"2026-08-20T06:59:00.0000000Z marker {NEEDLE} here\r\n".encode()
    target = size_mb * MB
    next_failure = min(FAILURES_EVERY_MB * MB // 2, target * 0.45)
    root_offset = needle_offset = -1
    written = number = 0
    with open(path, "wb") as out:
        while written < target:
            chunk = chunks[number % len(chunks)]
            out.write(chunk)
            written += len(chunk)
            number += 1
            if written >= next_failure:
                if root_offset < 0:
                    root_offset = written + failing.index(b"torch._dynamo.exc.UserError")
                out.write(failing)
                written += len(failing)
                next_failure += FAILURES_EVERY_MB * MB
            if needle_offset < 0 and written >= target * 0.97:
                needle_offset = written
                out.write(needle)
                written += len(needle)
        out.write(f"2026-08-20T07:00:00.0000000Z {LAST_LINE}\r\n".encode())
    return root_offset, needle_offset


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def current_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class ViewerApp(App[None]):
    def __init__(self, viewer: LogViewer) -> None:
        super().__init__()
        self.viewer = viewer

    def on_mount(self) -> None:
        self.push_screen(self.viewer)


async def until(pilot, predicate: Callable[[], bool], seconds: float = 300.0) -> None:
    deadline = time.perf_counter() + seconds
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("the viewer did not get there")
        await pilot.pause(0.005)


def rows(view: LogView) -> list[str]:
    return [view.render_line(y).text for y in range(view.scrollable_content_region.height)]


async def drive(path: Path, root_offset: int, needle_offset: int) -> None:
    timings: list[tuple[str, float, str]] = []
    viewer = LogViewer(path, experiment=EXP, title=path.name, root_offset=root_offset)
    app = ViewerApp(viewer)
    rss_before = peak_rss_mb()
    print(f"peak RSS before opening: {rss_before:.1f} MB (now {current_rss_mb():.1f} MB)")
    async with app.run_test(size=(120, 40)) as pilot:
        start = time.perf_counter()
        await until(pilot, lambda: isinstance(app.screen, LogViewer))
        view = app.screen.query_one(LogView)
        await until(pilot, lambda: view.scanned)
        scanned = time.perf_counter()
        timings.append(
            ("scan (open to line count)", scanned - start, f"{view.index.line_count:,} lines")
        )
        await app.workers.wait_for_complete()  # the failure lines come after the count
        await pilot.pause()
        timings.append(
            (
                "failure lines (cilog anchors)",
                time.perf_counter() - scanned,
                f"{len(view.failures):,} lines",
            )
        )
        assert any("UserError" in row for row in rows(view)), "the root cause is not in view"

        # A screen of rows, cold (no decoded block, no rendered strip cached), as the
        # compositor asks for them: at the root cause, then a third into the log.
        for label, line in (
            ("first screen, at the root cause", view.current_line),
            ("a cold screen a third in", view.index.line_count // 3),
        ):
            view.index._blocks.clear()
            view._strips.clear()
            moment = time.perf_counter()
            view.go_to_line(line or 0)
            rows(view)
            timings.append((label, time.perf_counter() - moment, f"{len(rows(view))} rows"))

        # What a key costs the Pilot itself (it waits for the app to idle, twice).
        moment = time.perf_counter()
        for _ in range(10):
            await pilot.press("x")  # bound to nothing
        baseline = (time.perf_counter() - moment) / 10
        timings.append(("Pilot key press, unbound key", baseline, "in the figures below"))

        moment = time.perf_counter()
        await pilot.press("end")
        last = rows(view)[-1]
        timings.append(
            ("jump to the end (Pilot key)", time.perf_counter() - moment, last.strip()[-20:])
        )
        assert LAST_LINE in last

        await pilot.press("home")
        moment = time.perf_counter()
        for _ in range(50):
            await pilot.press("pagedown")
        elapsed = time.perf_counter() - moment
        timings.append(
            (
                "50 page-downs (Pilot keys)",
                elapsed,
                f"{elapsed / 50 * 1000:.1f} ms each, top line {round(view.scroll_y) + 1:,}",
            )
        )
        moment = time.perf_counter()
        for _ in range(50):
            view.action_page_down()
            rows(view)
        elapsed = time.perf_counter() - moment
        timings.append(
            (
                "50 page-downs (action + rows)",
                elapsed,
                f"{elapsed / 50 * 1000:.2f} ms each, top line {round(view.scroll_y) + 1:,}",
            )
        )

        needle_line = view.index.line_of(needle_offset)
        for label, text, done in (
            ("search near the end", NEEDLE, lambda: "at line" in viewer.status_text),
            ("search with no hit", NO_HIT, lambda: "no match" in viewer.status_text),
        ):
            viewer.status_text = ""
            moment = time.perf_counter()
            view.search(text)  # as enter in the search box does
            await until(pilot, done)
            timings.append((label, time.perf_counter() - moment, viewer.status_text))
        assert view.current_line == needle_line, "the search did not land on the needle"
        await pilot.press("escape")
        await pilot.pause()
        index_bytes = view.index.index_bytes
        cached_blocks = len(view.index._blocks)

    width = max(len(label) for label, _, _ in timings)
    for label, seconds, note in timings:
        print(f"{label:<{width}}  {seconds * 1000:9.1f} ms  {note}")
    print(
        f"peak RSS after: {peak_rss_mb():.1f} MB (now {current_rss_mb():.1f} MB); "
        f"+{peak_rss_mb() - rss_before:.1f} MB"
    )
    print(f"index: {index_bytes:,} bytes of checkpoints; {cached_blocks} decoded blocks cached")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--write-to", type=Path, help=argparse.SUPPRESS)  # the child's job
    args = parser.parse_args()
    if args.write_to is not None:
        print(json.dumps(write_log(args.write_to, args.size_mb)))
        return
    with tempfile.TemporaryDirectory(prefix="scout-big-log-") as folder:
        path = Path(folder) / "job.log"
        moment = time.perf_counter()
        # Written by a child process, so that this one's peak RSS is the viewer's alone.
        written = subprocess.run(
            [sys.executable, __file__, "--size-mb", str(args.size_mb), "--write-to", str(path)],
            check=True,
            capture_output=True,
            text=True,
        )
        root_offset, needle_offset = json.loads(written.stdout)
        size = path.stat().st_size
        print(f"wrote {size / MB:.0f} MiB in {time.perf_counter() - moment:.1f} s")
        # What the scan reads, without a viewer: the data layer alone.
        index = LogIndex(path)
        moment = time.perf_counter()
        index.scan()
        print(
            f"LogIndex.scan alone: {time.perf_counter() - moment:.2f} s, {index.line_count:,} lines"
        )
        index.close()
        asyncio.run(drive(path, root_offset, needle_offset))


if __name__ == "__main__":
    main()
