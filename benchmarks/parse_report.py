"""Benchmark: `parse_report` time and peak memory on large prior reports, by shape.

    python benchmarks/parse_report.py [--mb 5 50] [--shapes mixed one_line ...] [--source DIR]

Each report is generated at the given size in one of these shapes, then parsed in a fresh
process (for its peak RSS, which includes the report text itself):

    many_items   tens of thousands of short rendered items with markers
    long_lines   items whose lines are 100 KB each
    wrapped      few items, each wrapped over many indented lines
    fenced       one item holding a huge fenced block
    one_line     one item on a single line the size of the report
    padded       aligned text: headings and unbolded items with runs of spaces inside
    tiny         a short item per line (`- x`): the cost of one item, times a million
    mixed        all of the above but tiny (whose items alone take ~1 KB each), a share each

Linear means 50 MB costs ten times what 5 MB does. No target is asserted: the figures are
printed to compare before and after a change; `--source DIR` parses with the `scout_tui`
in DIR instead, e.g. `git archive HEAD~3 scout_tui | tar -x -C /tmp/before`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

PROBE = """
import json, resource, sys, time
from scout_tui.history.parse import parse_report
text = open(sys.argv[1], encoding="utf-8").read()
start = time.perf_counter()
report = parse_report(text)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "items": len(report.items),
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""
HEAD = "# Nightly Scout Report — 2026-04-02\n\nScope: a generated report.\n"
SECTIONS = ["CI Failures", "Action Items (new findings)", "Opportunities", "FYI", "All Clear"]
WORDS = [
    "the",
    "pass",
    "reorders",
    "`bucket_all_gathers`",
    "calls",
    "in",
    "`fsdp_passes.py`",
    "so",
    "that",
]


def words(count: int, seed: int) -> str:
    return " ".join(WORDS[(seed + k) % len(WORDS)] for k in range(count))


def item(n: int, summary: str, *rest: str) -> str:
    marker = f"<!-- scout:fp=kind-{n:012x} items=ab12cd first=2026-03-01 -->"
    lines = [f"- [ ] **[P1] Finding {n} about `module_{n}.py`** — {summary} {marker}", *rest]
    return "\n".join(lines) + "\n"


def many_items(size: int) -> Iterator[str]:
    n = 0
    while True:
        yield item(n, words(12, n), f"  Files: `torchtitan/x_{n}.py:{n}`")
        n += 1


def long_lines(size: int) -> Iterator[str]:
    n = 0
    while True:
        yield item(n, words(12_000, n), "  " + words(12_000, n + 1))
        n += 1


def wrapped(size: int) -> Iterator[str]:
    n = 0
    while True:
        yield item(n, words(8, n), *("  " + words(10, n + k) for k in range(20_000)))
        n += 1


def fenced(size: int) -> Iterator[str]:
    yield item(0, "a huge traceback", "  ```")
    n = 0
    while True:
        yield f'  File "x_{n}.py", line {n}, in f\n    - ## {words(6, n)} ``` x\n'
        n += 1


def one_line(size: int) -> Iterator[str]:
    yield item(0, words(size // 6, 0))
    while True:
        yield ""


def padded(size: int) -> Iterator[str]:
    n = 0
    while True:
        rows = (f"- check {n}.{k}{' ' * 120}{words(3, k)}\n  {words(8, k)}\n" for k in range(10))
        yield f"### Group {n}{' ' * 120}(aligned)\n\n" + "".join(rows) + "\n"
        n += 1


def tiny(size: int) -> Iterator[str]:
    while True:
        yield "- x\n" * 1000


SHAPES: dict[str, Callable[[int], Iterator[str]]] = {
    "many_items": many_items,
    "long_lines": long_lines,
    "wrapped": wrapped,
    "fenced": fenced,
    "one_line": one_line,
    "padded": padded,
    "tiny": tiny,
}


def write_report(path: Path, shape: str, megabytes: float) -> None:
    """Write a report of about `megabytes` MB in `shape`, its items spread over sections."""
    size = int(megabytes * 1_000_000)
    shapes = [shape] if shape != "mixed" else [s for s in SHAPES if s != "tiny"]
    share = size // len(shapes)
    with path.open("w", encoding="utf-8") as out:
        out.write(HEAD)
        for index, name in enumerate(shapes):
            out.write(f"\n## {SECTIONS[index % len(SECTIONS)]}\n\n")
            written = 0
            for chunk in SHAPES[name](share):
                if written >= share:
                    break
                out.write(chunk)
                written += len(chunk)
            if name == "fenced":
                out.write("  ```\n")


def probe(path: Path, source: Path | None) -> dict:
    # `python -c` puts its working directory first on sys.path, before the installed copy.
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=source,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[5, 50])
    parser.add_argument("--shapes", nargs="+", default=["mixed"], choices=[*SHAPES, "mixed"])
    parser.add_argument("--source", type=Path, help="a folder holding the scout_tui to time")
    args = parser.parse_args()
    print(f"{'shape':<12} {'MB':>6} {'seconds':>9} {'peak RSS MiB':>13} {'items':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes:
            for megabytes in args.mb:
                path = Path(tmp) / f"{shape}-{megabytes}.md"
                write_report(path, shape, megabytes)
                result = probe(path, args.source)
                print(
                    f"{shape:<12} {path.stat().st_size / 1e6:>6.1f} {result['seconds']:>9.2f} "
                    f"{result['rss_kib'] / 1024:>13.0f} {result['items']:>7}",
                    flush=True,
                )
                path.unlink()


if __name__ == "__main__":
    main()
