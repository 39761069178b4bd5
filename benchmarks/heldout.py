"""The held-out windows (benchmarks/heldout.toml): replay them, hand a blind reviewer what
the reports said, and score the review.

    python benchmarks/heldout.py replay --repo TORCHTITAN --out DIR [--scout CHECKOUT] [--only NAME]
    python benchmarks/heldout.py merge --a DIR_A --b DIR_B --out DIR [--only NAME]
    python benchmarks/heldout.py carry --judged SHEET --to SHEET --out FILE
    python benchmarks/heldout.py score [--run A|B] benchmarks/review/*.md

`replay` runs `scout replay --offline` of each window from its warm-up day, with scout taken
from CHECKOUT (default: this repository), in a fresh process, its own cache and no state dir.
It writes DIR/NAME/replay/ (the reports) and DIR/NAME/review.md: the reviewer's sheet, one
row per finding the reports of the window's own days show (each once, on the first day it
shows), to be filled in blind — the reviewer sees the day's report and the repository at
that day, not scout's code.

`merge` puts two replays of the same windows (two scout versions, say before and after a
change) on one sheet: a finding both made with the same section, priority and title is one
row (`in` = `AB`), the others say which run made them, and DIR/NAME/A and …/B hold each
run's reports. The reviewer is not told which run is which.

`score` reads filled sheets and prints, per window and in all: findings, useful at the right
priority, false claims, false P0/P1, and fixes not applicable as written.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLUMNS = [
    "id",
    "in",
    "day",
    "section",
    "priority",
    "kind",
    "title",
    "true",
    "useful",
    "priority ok",
    "fix ok",
    "wanted instead / notes",
]
RUBRIC = """\
For each row, with the day's report (`replay/DAY.md`; on a merged sheet `A/DAY.md` or
`B/DAY.md`, whichever the `in` column names — either when it says `AB`) and the repository
as it was that day (`git -C REPO show REV:path`, REV = the last commit of that day), write:
- **true**: `y` if what the finding claims is so in the code at that day, `n` if not.
- **useful**: `y` if a graph_trainer maintainer would want to read it that day (it leads to an
  action or a decision, or is a fair FYI), `n` if it is noise.
- **priority ok**: `y` if its section/priority is right; else the right one (e.g. `FYI`, `P2`).
- **fix ok**: `y` if its suggested fix could be applied as written, `n` if not, `-` if none.
- **notes**: why, and anything the day's report should have said and did not.
"""


def windows(path: Path, only: str | None) -> list[dict[str, str]]:
    table = tomllib.loads(path.read_text())["window"]
    return [w for w in table if only is None or w["name"] == only]


def days(first: str, last: str) -> list[str]:
    start, end = date.fromisoformat(first), date.fromisoformat(last)
    return [(start + timedelta(n)).isoformat() for n in range((end - start).days + 1)]


def replay(args: argparse.Namespace) -> None:
    scout = args.scout.resolve()
    for window in windows(args.windows, args.only):
        folder = args.out / window["name"]
        reports = folder / "replay"
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "scout_tui",
                "replay",
                "--repo",
                str(args.repo),
                "--from",
                window["warmup_from"],
                "--to",
                window["last"],
                "--out",
                str(reports),
                "--offline",
            ],
            check=True,
            cwd=folder,
            env={
                **os.environ,
                "PYTHONPATH": str(scout),
                "XDG_CACHE_HOME": str(folder / "cache"),
                "XDG_DATA_HOME": str(folder / "data"),
            },
            stdout=subprocess.DEVNULL,
        )
        rows = sheet_rows(reports, days(window["first"], window["last"]))
        (folder / "review.md").write_text(sheet(window, rows, args.repo))
        print(
            f"{window['name']}: {len(rows)} findings to review, "
            f"replayed in {time.perf_counter() - started:.0f} s → {folder / 'review.md'}"
        )


def sheet_rows(reports: Path, reviewed: list[str]) -> list[list[str]]:
    seen: set[str] = set()
    rows = []
    for day in reviewed:
        run = json.loads((reports / f"{day}.json").read_text())
        for finding in run["findings"]:
            if finding["fingerprint"] in seen or finding["section"] == "all_clear":
                continue
            seen.add(finding["fingerprint"])
            title = finding["title"].replace("|", "\\|")
            rows.append(
                [
                    finding["fingerprint"],
                    "",
                    day,
                    finding["section"],
                    finding["priority"] or "",
                    finding["kind"],
                    title,
                    *[""] * 5,
                ]
            )
    return rows


def sheet(window: dict[str, str], rows: list[list[str]], repo: Path, made: str = "") -> str:
    made = made or (
        f"Made by `python benchmarks/heldout.py replay --repo {repo} --out DIR "
        f"--only {window['name']}` (`scout replay --from {window['warmup_from']} "
        f"--to {window['last']} --offline`)."
    )
    lines = [
        f"# Blind review: {window['first']} … {window['last']}",
        "",
        made,
        "",
        RUBRIC,
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
        *("| " + " | ".join(row) + " |" for row in rows),
        "",
    ]
    return "\n".join(lines)


def merge(args: argparse.Namespace) -> None:
    for window in windows(args.windows, args.only):
        name = window["name"]
        folder = args.out / name
        folder.mkdir(parents=True, exist_ok=True)
        merged: dict[tuple[str, ...], list[str]] = {}
        for label, source in (("A", args.a), ("B", args.b)):
            shutil.copytree(source / name / "replay", folder / label, dirs_exist_ok=True)
            for cells in table_rows((source / name / "review.md").read_text()):
                key = tuple(cells[c] for c in ("id", "section", "priority", "title"))
                if key in merged:
                    merged[key][1] += label
                    merged[key][2] = min(merged[key][2], cells["day"])
                else:
                    merged[key] = [cells.get(c, "") if c != "in" else label for c in COLUMNS]
        rows = sorted(merged.values(), key=lambda row: (row[2], row[3], row[4], row[6]))
        made = (
            f"Made by `python benchmarks/heldout.py merge --a DIR_A --b DIR_B --out DIR "
            f"--only {name}` from two `heldout.py replay` runs of this window "
            f"(`scout replay --from {window['warmup_from']} --to {window['last']} --offline`)."
        )
        for row in rows:
            row[5] = row[5].replace("|", "\\|")
        (folder / "review.md").write_text(sheet(window, rows, args.a, made))
        both = sum(row[1] == "AB" for row in rows)
        print(f"{name}: {len(rows)} rows ({both} made by both) → {folder / 'review.md'}")


JUDGED = ("true", "useful", "priority ok", "fix ok", "wanted instead / notes")


def carry(args: argparse.Namespace) -> None:
    """A sheet of a later run (`--to`, from `merge`) with the judgments of a reviewed sheet
    (`--judged`) carried over to the rows that are the same finding (id, section, priority,
    title); the rows left blank are findings nobody judged, listed to be judged."""
    judged = {
        tuple(cells[c] for c in ("id", "section", "priority", "title")): cells
        for cells in table_rows(args.judged.read_text())
    }
    lines, blank = [], []
    for line in args.to.read_text().splitlines():
        rows = table_rows(line) if line.startswith("| ") and not line.startswith("| id ") else []
        if rows and "title" in rows[0]:
            cells = rows[0]
            key = tuple(cells[c] for c in ("id", "section", "priority", "title"))
            if key in judged:
                cells.update({c: judged[key].get(c, "") for c in JUDGED})
            else:
                blank.append(f"{cells['day']} {cells['kind']}: {cells['title']}")
            line = "| " + " | ".join(cells.get(c, "").replace("|", "\\|") for c in COLUMNS) + " |"
        lines.append(line)
    note = (
        f"<!-- NOT blind: judgments carried from {args.judged.name} by finding; "
        f"{len(blank)} row(s) no one judged. -->"
    )
    args.out.write_text(note + "\n" + "\n".join(lines) + "\n")
    print(f"{args.out}: {len(blank)} row(s) not judged" + "".join(f"\n  {b}" for b in blank))


def score(args: argparse.Namespace) -> None:
    totals = [0, 0, 0, 0, 0]
    header = ("window", "findings", "useful+prio", "false", "false P0/P1", "bad fix")
    print("{:<24} {:>8} {:>11} {:>5} {:>11} {:>7}".format(*header))
    for path in args.sheets:
        counts = [0, 0, 0, 0, 0]
        for cells in table_rows(path.read_text()):
            if args.run and args.run not in cells.get("in", "") and cells.get("in"):
                continue
            yes = {c: cells.get(c, "").strip().lower().startswith("y") for c in COLUMNS}
            counts[0] += 1
            counts[1] += yes["useful"] and yes["priority ok"]
            false = cells.get("true", "").strip().lower().startswith("n")
            counts[2] += false
            counts[3] += false and cells.get("priority", "").strip() in ("P0", "P1")
            counts[4] += cells.get("fix ok", "").strip().lower().startswith("n")
        totals = [t + c for t, c in zip(totals, counts, strict=True)]
        print(_line(path.stem, counts))
    if len(args.sheets) > 1:
        print(_line("all", totals))


def _line(name: str, counts: list[int]) -> str:
    share = f"{counts[1] / counts[0]:.0%}" if counts[0] else "-"
    return (
        f"{name:<24} {counts[0]:>8} {counts[1]:>5} {share:>5} {counts[2]:>5} "
        f"{counts[3]:>11} {counts[4]:>7}"
    )


def table_rows(text: str) -> list[dict[str, str]]:
    """The data rows of the sheet's table, by the header's column names: cells split on
    unescaped pipes."""
    rows, header = [], COLUMNS
    for line in text.splitlines():
        if not line.startswith("| "):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if cells and cells[0] == "id":
            header = cells
            continue
        rows.append(dict(zip(header, cells, strict=False)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("replay")
    run.add_argument("--repo", type=Path, required=True)
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--scout", type=Path, default=HERE.parent)
    run.add_argument("--only")
    run.add_argument("--windows", type=Path, default=HERE / "heldout.toml")
    merged = commands.add_parser("merge")
    merged.add_argument("--a", type=Path, required=True)
    merged.add_argument("--b", type=Path, required=True)
    merged.add_argument("--out", type=Path, required=True)
    merged.add_argument("--only")
    merged.add_argument("--windows", type=Path, default=HERE / "heldout.toml")
    carried = commands.add_parser("carry")
    carried.add_argument("--judged", type=Path, required=True)
    carried.add_argument("--to", type=Path, required=True)
    carried.add_argument("--out", type=Path, required=True)
    scored = commands.add_parser("score")
    scored.add_argument("--run", choices=("A", "B"), help="score only the rows this run made")
    scored.add_argument("sheets", type=Path, nargs="+")
    args = parser.parse_args()
    {"replay": replay, "merge": merge, "carry": carry, "score": score}[args.command](args)


if __name__ == "__main__":
    main()
