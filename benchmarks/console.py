"""The console with 5,000 findings: time to first paint and keypress latency, with the
Pilot (in-process) and through a real terminal (tmux), measured in one run.

    python benchmarks/console.py [--findings 5000] [--presses 20]

First frame: from `scout` starting until its layout is on the tmux pane (the status line
names the checkout; the cached run is then read in a worker). First paint: from the app's
start until the tree holds every finding (Pilot), or from `scout` starting until the status
line says "0 of N reviewed" on the tmux pane. Keypress:
`a` (accept) until the tree shows the finding accepted (the decision is committed to the
state store in between), then `down` (Pilot) or `n` (tmux: the next unreviewed finding);
through tmux, polled with `capture-pane`."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from scout_tui.model import RunResult, Section, fingerprint
from scout_tui.sandbox.demo.running import running_demo
from scout_tui.session import Session
from scout_tui.tui.app import ScoutApp
from scout_tui.tui.widgets.findings_tree import FindingsTree

TODAY = date(2026, 12, 2)


def big_run(run: RunResult, count: int) -> RunResult:
    """The demo's run with its findings repeated, each with its own fingerprint."""
    base = [f for f in run.findings if f.section is not Section.ALL_CLEAR]
    findings = []
    for n in range(count):
        finding = base[n % len(base)]
        findings.append(
            finding.model_copy(
                update={
                    "title": f"{finding.title} #{n}",
                    "fingerprint": fingerprint(finding.kind, finding.fingerprint, str(n)),
                }
            )
        )
    return run.model_copy(update={"findings": findings})


async def pilot_figures(session: Session, run: RunResult, presses: int) -> tuple[float, list]:
    app = ScoutApp(session, load_cached=True)  # as `scout` opens it: the run read by a worker
    started = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.query_one(FindingsTree)
        while len(tree._finding_rows) < len(run.findings) or tree.cursor_fingerprint is None:
            await pilot.pause(0.005)
        first_paint = time.perf_counter() - started
        latencies = []
        for _ in range(presses):
            while tree.cursor_fingerprint is None:  # a section's line: on to a finding
                await pilot.press("down")
            fp = tree.cursor_fingerprint
            began = time.perf_counter()
            await pilot.press("a")
            while "accepted" not in tree.row(fp).badges:
                await pilot.pause(0.001)
            latencies.append(time.perf_counter() - began)
            await pilot.press("down")
        await pilot.press("q")
    return first_paint, latencies


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def wait_for(text: str, timeout: float = 60, every: float = 0.005) -> float:
    """Poll the pane. Each capture-pane is a process: on two cores, polling the start every
    5 ms would take the CPU the console needs to start."""
    began = time.perf_counter()
    while time.perf_counter() - began < timeout:
        if text in tmux("capture-pane", "-p", "-t", "bench"):
            return time.perf_counter() - began
        time.sleep(every)
    raise TimeoutError(f"{text!r} never appeared")


def terminal_figures(opts, count: int, presses: int) -> tuple[float, float, list]:
    command = [
        sys.executable,
        "-m",
        "scout_tui",
        "--repo",
        str(opts.repo),
        "--config",
        str(opts.config),
        "--cache-dir",
        str(opts.cache_dir),
        "--state-dir",
        str(opts.state_dir),
        "--date",
        TODAY.isoformat(),
        "--offline",
    ]
    tmux("kill-session", "-t", "bench") if subprocess.run(
        ["tmux", "has-session", "-t", "bench"], capture_output=True
    ).returncode == 0 else None
    began = time.perf_counter()
    tmux(
        "new-session",
        "-d",
        "-s",
        "bench",
        "-x",
        "120",
        "-y",
        "40",
        "env TERM=xterm-256color " + " ".join(command),
    )
    first_frame = time.perf_counter() - began
    first_frame += wait_for(opts.repo.name, every=0.02)
    first_paint = time.perf_counter() - began
    first_paint += wait_for(f"0 of {count} reviewed", every=0.02)
    time.sleep(0.5)  # a person's first keypress comes later than the first paint
    latencies = []
    for n in range(1, presses + 1):
        began = time.perf_counter()
        tmux("send-keys", "-t", "bench", "a")
        wait_for(f"{n} of {count} reviewed")
        latencies.append(time.perf_counter() - began)
        tmux("send-keys", "-t", "bench", "n")  # the next unreviewed finding
        time.sleep(0.15)  # a person's keys come apart: `a` is not timed with Down's render
    tmux("send-keys", "-t", "bench", "q")
    return first_frame, first_paint, latencies


def show(name: str, first_paint: float, latencies: list[float]) -> None:
    ms = sorted(1000 * s for s in latencies)
    print(
        f"{name:<10} first paint {first_paint:6.2f} s (target < 1 s)   keypress median "
        f"{statistics.median(ms):6.1f} ms, p90 {ms[int(len(ms) * 0.9) - 1]:6.1f} ms, max "
        f"{ms[-1]:6.1f} ms (target < 50 ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--findings", type=int, default=5000)
    parser.add_argument("--presses", type=int, default=20)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="scout-bench-console-"))
    try:
        with running_demo(base, TODAY) as demo:
            opts = demo.session_options(today=TODAY)
            session = Session(opts)
            run = big_run(session.collect(), args.findings)
            session.cache.put_run(run)
            print(f"{len(run.findings)} findings")
            show("Pilot", *asyncio.run(pilot_figures(Session(opts), run, args.presses)))
            if shutil.which("tmux"):
                shutil.rmtree(opts.state_dir, ignore_errors=True)  # nothing reviewed yet
                first_frame, *figures = terminal_figures(opts, len(run.findings), args.presses)
                print(f"tmux       first frame {first_frame:6.2f} s")
                show("tmux", *figures)
            else:
                print("tmux: skipped — tmux is not installed")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
