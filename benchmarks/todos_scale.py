"""The TODO collector on one experiment file holding 1k, 10k and 50k TODOs: wall time and
peak RSS of each (a process of its own per size), and how they grow. Linear means the
time ratio follows the TODO ratio and the memory stays near flat.

    python benchmarks/todos_scale.py [--sizes 1000 10000 50000]

Each size gets the sample repository's baseline (no history) in a temporary directory,
plus `many_todos.py` committed in the experiment; the collector runs offline as
`scout collect --only todos` does. Prints figures; asserts no timing.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from scout_tui.config.profile import load_config
from scout_tui.pipeline.day import RunOptions, run
from scout_tui.sandbox.demo.files import EXP
from scout_tui.sandbox.demo.sample import build_repo

TODAY = date(2026, 12, 2)
# Plain, owned, linked, waiting on an API, and a multi-line one: every path of the scan.
SHAPES = [
    "    x{n} = {n}  # TODO: plain note {n}",
    "    # TODO(alice): fold loop {n} into the next one",
    "    # FIXME: blocked on pytorch/pytorch#{n}",
    "    # HACK: use `torch.fx.passes.reinplace` once the nightly includes it ({n})",
    "    # XXX: item {n} continues\n    # on a second line",
]


def many_todos(count: int) -> str:
    lines = ['"""A module with many TODOs."""', "", "", "def f():"]
    lines += [SHAPES[n % len(SHAPES)].format(n=n) for n in range(count)]
    return "\n".join([*lines, "    return None", ""])


def one_size(count: int) -> None:
    """Runs in a process of its own: its peak RSS is this size's."""
    with tempfile.TemporaryDirectory() as temp:
        repo = build_repo(Path(temp) / "repo", TODAY, history=False)
        (Path(temp) / "repo" / EXP / "many_todos.py").write_text(many_todos(count))
        repo.index.add([f"{EXP}/many_todos.py"])
        repo.index.commit("many TODOs")
        started = time.perf_counter()
        result = run(
            RunOptions(
                repo=Path(temp) / "repo",
                config=load_config(None),
                as_of=None,
                offline=True,
                only=["todos"],
            )
        )
        seconds = time.perf_counter() - started
    state = result.collectors[0]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "todos": count,
                "state": state.state,
                "reason": state.reason,
                "findings": len(result.findings),
                "seconds": round(seconds, 2),
                "peak_mb": round(peak_mb),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one_size(args.one)
        return
    rows = []
    for count in args.sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(count)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
        row = rows[-1]
        print(
            f"{count:>7,} TODOs: {row['seconds']:>7.2f} s, peak {row['peak_mb']:>6,} MB, "
            f"{row['findings']} findings, collector {row['state']}",
            flush=True,
        )
    first, last = rows[0], rows[-1]
    print(
        f"{last['todos'] / first['todos']:.0f}x the TODOs: "
        f"{last['seconds'] / max(first['seconds'], 0.01):.1f}x the time, "
        f"{last['peak_mb'] / first['peak_mb']:.1f}x the peak memory"
    )


if __name__ == "__main__":
    main()
