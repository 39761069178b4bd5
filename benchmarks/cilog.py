"""Benchmark: CI log analysis throughput and peak memory, next to grep over the same file.

    python benchmarks/cilog.py [--mb 500] [--inputs]

Builds a log that is mostly training noise (step/loss lines with ANSI colours, GitHub
Actions timestamps) with the runner's failures spread through it, then times, in one run:
`grep -c -E 'Traceback|FAILED|Successfully installed|Command: |integration test\\(s\\) failed'`
and `analyse()` in a fresh process (for its peak RSS). Targets: within 5x grep; memory flat
(the same peak RSS for a tenth of the log).

--inputs also times `open_log` + `analyse()` on the log piped through standard input
(spooled to a temporary file) and gzip-compressed (decompressed into the spool), each in
a fresh process fed by `cat`: what `scout ci-log -` and `scout ci-log job.log.gz` cost.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scout_tui.sandbox.demo.ci_logs import write_noisy_log

GREP = r"Traceback|FAILED|Successfully installed|Command: |integration test\(s\) failed"
INPUT_PROBE = """
import json, resource, sys, time
from scout_tui.analysis.ci.cilog import analyse
from scout_tui.analysis.ci.log_input import open_log
start = time.perf_counter()
with open_log("-") as log:
    spooled = time.perf_counter() - start
    result = analyse(log.fd, "torchtitan/experiments/graph_trainer")
print(json.dumps({"seconds": time.perf_counter() - start, "spool": spooled, "kind": log.kind,
                  "failures": len(result.failures),
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""
PROBE = """
import json, resource, sys, time
from scout_tui.analysis.ci.cilog import analyse
start = time.perf_counter()
result = analyse(sys.argv[1], "torchtitan/experiments/graph_trainer")
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "failures": len(result.failures),
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def probe(path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def input_probe(path: Path) -> dict:
    """open_log("-") + analyse() in a fresh process whose stdin is `cat path` (a pipe)."""
    command = 'cat "$2" | exec "$0" -c "$1"'
    done = subprocess.run(
        ["bash", "-c", command, sys.executable, INPUT_PROBE, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def gzip_file(source: Path, target: Path) -> None:
    with open(source, "rb") as plain, gzip.open(target, "wb", compresslevel=1) as packed:
        shutil.copyfileobj(plain, packed, 1024 * 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument(
        "--inputs",
        action="store_true",
        help="also time standard input and gzip input through open_log",
    )
    args = parser.parse_args()
    inputs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big.log", Path(tmp) / "small.log"
        write_noisy_log(big, args.mb)
        write_noisy_log(small, max(1, args.mb // 10))
        subprocess.run(["cat", str(big)], stdout=subprocess.DEVNULL, check=True)  # warm cache
        start = time.perf_counter()
        grep = subprocess.run(["grep", "-c", "-E", GREP, str(big)], capture_output=True, text=True)
        grep_seconds = time.perf_counter() - start
        ours = probe(big)
        ours_small = probe(small)
        size = big.stat().st_size
        if args.inputs:
            inputs["stdin"] = input_probe(big)
            gzip_file(big, Path(tmp) / "big.log.gz")
            inputs["gzip"] = input_probe(Path(tmp) / "big.log.gz")
    print(f"log                {size / 2**20:,.0f} MiB, {int(grep.stdout or 0):,} anchor lines")
    print(f"grep -c -E         {grep_seconds:.2f} s  ({size / 2**20 / grep_seconds:,.0f} MiB/s)")
    print(
        f"scout analyse      {ours['seconds']:.2f} s  ({size / 2**20 / ours['seconds']:,.0f} "
        f"MiB/s), {ours['failures']} failing tests"
    )
    print(f"ratio              {ours['seconds'] / grep_seconds:.2f}x grep (target: within 5x)")
    print(
        f"peak RSS           {ours['rss_kib'] / 1024:.0f} MiB on the full log, "
        f"{ours_small['rss_kib'] / 1024:.0f} MiB on a tenth of it (flat: the same)"
    )
    for label, run in inputs.items():
        print(
            f"{label + ' via open_log':<19}{run['seconds']:.2f} s  (spooling "
            f"{run['spool']:.2f} s), {run['failures']} failing tests, kind {run['kind']}, "
            f"peak RSS {run['rss_kib'] / 1024:.0f} MiB"
        )


if __name__ == "__main__":
    main()
