"""Benchmark: what `scout replay` costs next to cold collects, measured in one run.

A cold collect is `scout collect --date D --offline` in a fresh process (its own cache), for
the first and the last day of the window; the replay is `scout replay` of the whole window
in one process. Printed: seconds, and the replay in cold collects (the goal: 7 days for
about two, 30 days for at most five). Blob parses are shared across a replay's days.

    python benchmarks/replay.py /path/to/torchtitan --from 2026-07-01 --to 2026-07-07
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path


def scout(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "scout_tui", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--from", dest="first", type=date.fromisoformat, required=True)
    parser.add_argument("--to", dest="last", type=date.fromisoformat, required=True)
    args = parser.parse_args()
    days = (args.last - args.first).days + 1
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        colds = [
            scout(
                "collect",
                "--repo",
                str(args.repo),
                "--offline",
                "--date",
                day.isoformat(),
                "--cache-dir",
                str(work / f"cache-{n}"),
                "--state-dir",
                str(work / "state"),
            )
            for n, day in enumerate((args.first, args.last))
        ]
        replay = scout(
            "replay",
            "--repo",
            str(args.repo),
            "--offline",
            "--from",
            args.first.isoformat(),
            "--to",
            args.last.isoformat(),
            "--out",
            str(work / "out"),
        )
    cold = sum(colds) / len(colds)
    print(f"cold collect (first, last day): {colds[0]:.2f} s, {colds[1]:.2f} s")
    print(f"replay of {days} days:          {replay:.2f} s, {replay / days:.2f} s a day")
    print(f"replay / cold collect:          {replay / cold:.1f} cold collects for {days} days")


if __name__ == "__main__":
    main()
