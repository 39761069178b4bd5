"""Benchmark: runs `scout bisect` uses against the number of nightlies n, end to end.

A local PEP 503 index serves stand-in torch nightlies (`scout_tui/sandbox/nightlies.py`),
the first bad one at a random place (seeded); each tried nightly is installed into an
environment of its own (uv when it is on PATH, else venv + pip) and the repro runs there.
Printed per n: the runs used, the bound (1 + ceil(log2 n), plus one per nightly that cannot
be tested), and the wall time; then the same with two untestable nightlies (an install
failure and a different error) in the range.

    python benchmarks/nightly_bisect.py [--sizes 2 4 8 16 32] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scout_tui.sandbox.demo.file_server import FileServer, Served
from scout_tui.sandbox.nightlies import (
    REPRO,
    nightly_builds,
    places,
    stand_in_checkout,
    stand_in_wheel,
)


def one(n: int, first_bad: int, untestable: dict[int, str], work: Path) -> dict:
    builds = nightly_builds(
        first_day=1,
        count=n + 1,
        first_bad=first_bad + 1,
        behaviours={index + 1: behaviour for index, behaviour in untestable.items()},
    )
    served = Served()
    for build in builds:
        wheel = stand_in_wheel(work / "wheels", build)
        served.files[wheel.name] = wheel
    repo = stand_in_checkout(work / "repo")
    with FileServer(served) as url:
        started = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "scout_tui",
                "bisect",
                "--good",
                builds[0].version,
                "--bad",
                builds[-1].version,
                "--command",
                REPRO,
                *places(repo, work / "cache", work / "state", url),
                "--keep-envs",
                "2",
                "--json",
            ],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
        )
        seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"scout bisect failed (exit {done.returncode}): {done.stderr}")
    if not done.stdout.strip():
        raise SystemExit(f"scout bisect said nothing (exit {done.returncode}): {done.stderr}")
    found = json.loads(done.stdout)
    return {
        "runs": len(found["runs"]),
        "untested": len(found["could_not_test"]),
        "found": (found["first_bad"] or {}).get("version") == builds[first_bad + 1].version,
        "decision": found["decision"],
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tool = (
        "uv"
        if any(
            Path(folder, "uv").is_file() for folder in os.environ.get("PATH", "").split(os.pathsep)
        )
        else "venv + pip"
    )
    print(f"environments built with {tool}; stand-in nightlies on a local index")
    print(
        f"{'n':>4} {'first bad':>9} {'untestable':>10} {'runs':>5} {'bound':>6} {'found':>6}  wall"
    )
    for n in args.sizes:
        for untestable in ({}, {0: "uninstallable", 1: "other-error"} if n >= 4 else None):
            if untestable is None:
                continue
            first_bad = rng.randrange(2 if untestable else 0, n)
            with tempfile.TemporaryDirectory() as work:
                result = one(n, first_bad, untestable, Path(work))
            bound = 1 + math.ceil(math.log2(n)) + result["untested"]
            found = "yes" if result["found"] else result["decision"]
            print(
                f"{n:>4} {first_bad + 1:>9} {len(untestable):>10} {result['runs']:>5} "
                f"{bound:>6} {found:>6}  {result['seconds']:.1f} s"
            )


if __name__ == "__main__":
    main()
