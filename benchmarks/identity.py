"""Harness: do two versions of scout write the same reports?

Runs the same scenarios with the code of two git revisions (each in its own worktree, in
fresh processes) and compares what a user sees: `scout report`, `scout report --json` (minus
`collected_at` and timings), `scout publish --dry-run`, and each replayed day's report.
Scenarios:

- `demo`: the demo of today, headless (report, JSON, and what it published), then
  `report`, `report --json` and `publish --dry-run --offline` on the state it left;
- `week`: `scout replay` of a week of a torchtitan clone (`--repo`), then `collect`,
  `report`, `report --json` and `publish --dry-run --offline` on its last day;
- `april`: `scout replay` of April 2026 on the same clone, seeded with the real report of
  April 2 (`--april-prior`, a folder holding `2026-04-02.md`);
- `across`: April replayed up to its middle by the `before` code and on from there by the
  `after` code, compared with the `after` code's own days: a report an older version wrote
  reads the same the next day (April's middle carries upstream surface changes).

`--moved-item-keys` compares across a change of a change's item keys: the digests in the
markers of upstream surface changes and their JSON items are left out of the comparison
(`across` shows that old markers still match).

Prints one line per compared output and `identical` or the first differing lines; exits 1
when anything differs.

    python benchmarks/identity.py --before d283d2e --after HEAD --repo /tmp/tt \\
        --april-prior /work/review/april-prior
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEEK = ("2026-07-01", "2026-07-07")
APRIL = ("2026-04-03", "2026-04-30")
MID_APRIL = ("2026-04-14", "2026-04-15")  # `across`: the before code's last day, the next
# Timings, and what derives from the scratch folder's path or a local server's port.
VOLATILE = {"collected_at", "seconds", "config_digest"}
CHANGE_KINDS = ("surface_changed", "surface_changed_unused", "surface_adapted")


class Side:
    """One revision's code, in a worktree, run as `python -m scout_tui`."""

    def __init__(self, code: Path, work: Path) -> None:
        self.code = code
        self.work = work
        self.work.mkdir(parents=True)

    def scout(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(self.code), "NO_COLOR": "1"}
        for name in ("GITHUB_TOKEN", "GH_TOKEN", "SCOUT_TOKEN"):
            env.pop(name, None)
        done = subprocess.run(
            [sys.executable, "-m", "scout_tui", *args],
            env=env,
            capture_output=True,
            text=True,
            cwd=self.work,
        )
        if check and done.returncode != 0:
            raise SystemExit(f"scout {' '.join(args)} failed ({done.returncode}): {done.stderr}")
        return done

    def same_text(self, text: str, moved: bool | None = None) -> str:
        """Text with this side's scratch folder and local servers named alike on both sides
        (and, when item keys moved, without the digests that moved)."""
        text = re.sub(
            r"127\.0\.0\.1[:_]\d+", "127.0.0.1:PORT", text.replace(str(self.work), "<work>")
        )
        moved = MOVED_ITEM_KEYS if moved is None else moved
        return moved_digests_dropped(text) if moved else text


def moved_digests_dropped(text: str) -> str:
    """Markers of upstream surface changes without their item digests."""
    kinds = "|".join(CHANGE_KINDS)
    text = re.sub(rf"(fp=(?:{kinds})-[0-9a-f]+ [^>]*?items=)[0-9a-f.]+", r"\1…", text)
    return re.sub(
        rf"(<!-- scout:folded kind=(?:{kinds}) )([^>]*)",
        lambda m: m.group(1) + re.sub(r":[0-9a-f.]+", ":…", m.group(2)),
        text,
    )


MOVED_ITEM_KEYS = False  # --moved-item-keys


def steady_json(text: str) -> str:
    def drop(value: object) -> object:
        if isinstance(value, dict):
            kept = {k: drop(v) for k, v in value.items() if k not in VOLATILE}
            if MOVED_ITEM_KEYS and (
                kept.get("kind") in CHANGE_KINDS
                or str(kept.get("fingerprint")).rsplit("-", 1)[0] in CHANGE_KINDS
            ):
                kept.pop("items", None)  # a finding's
                kept.pop("item_digests", None)  # a prior report's item
            if "git_dir" in kept:  # a checkout: its id is a digest of its path
                kept.pop("id", None)
            return kept
        if isinstance(value, list):
            return [drop(v) for v in value]
        return value

    return json.dumps(drop(json.loads(text)), indent=2, sort_keys=True)


def demo(side: Side) -> Iterator[tuple[str, str]]:
    base = side.work / "demo"
    shown = side.scout("demo", "--dir", str(base))
    yield "demo: report", shown.stdout
    yield (
        "demo: published",
        "\n".join(line for line in shown.stderr.splitlines() if line.startswith("published:")),
    )
    again = side.scout("demo", "--dir", str(side.work / "demo-json"), "--json")
    yield "demo: report --json", steady_json(again.stdout)
    kept = (
        "--repo", str(base / "repo"), "--config", str(base / "scout.toml"),
        "--cache-dir", str(base / "cache"), "--state-dir", str(base / "state"), "--offline",
    )  # fmt: skip
    yield "demo after: report", side.scout("report", *kept).stdout
    yield "demo after: report --json", steady_json(side.scout("report", *kept, "--json").stdout)
    plan = side.scout("publish", *kept, "--dry-run", check=False)
    yield "demo after: publish --dry-run", f"exit {plan.returncode}\n{plan.stdout}{plan.stderr}"


def day_reports(side: Side, out: Path, label: str) -> Iterator[tuple[str, str]]:
    for path in sorted(out.glob("20*.md")):
        yield f"{label}: {path.name}", path.read_text(encoding="utf-8")
    for path in sorted(out.glob("20*.json")):
        yield f"{label}: {path.name}", steady_json(path.read_text(encoding="utf-8"))


def week(side: Side, repo: Path) -> Iterator[tuple[str, str]]:
    out = side.work / "week"
    first, last = WEEK
    replayed = "replay", "--repo", str(repo), "--offline", "--from", first, "--to", last
    side.scout(*replayed, "--out", str(out))
    yield from day_reports(side, out, "week")
    kept = (
        "--repo", str(repo), "--offline", "--date", last,
        "--cache-dir", str(side.work / "cache"), "--state-dir", str(side.work / "state"),
    )  # fmt: skip
    side.scout("collect", *kept)
    yield "week last day: report", side.scout("report", *kept).stdout
    yield "week last day: report --json", steady_json(side.scout("report", *kept, "--json").stdout)
    plan = side.scout("publish", *kept, "--dry-run", check=False)
    yield "week last day: publish --dry-run", f"exit {plan.returncode}\n{plan.stdout}{plan.stderr}"


def april(side: Side, repo: Path, prior: Path) -> Iterator[tuple[str, str]]:
    out = side.work / "april"
    first, last = APRIL
    side.scout(
        "replay", "--repo", str(repo), "--offline", "--from", first, "--to", last,
        "--prior", str(prior), "--out", str(out),
    )  # fmt: skip
    yield from day_reports(side, out, "april")


def across(before: Side, after: Side, repo: Path, prior: Path) -> dict[str, str]:
    """April's second half by the after code, seeded with the first half the before code
    wrote, and seeded with the first half it wrote itself: the same days, each side."""
    first, last = APRIL
    middle, next_day = MID_APRIL
    found: dict[str, str] = {}
    for label, seed in (("before", before), ("after", after)):
        head = seed.work / "across-head"
        seed.scout(
            "replay", "--repo", str(repo), "--offline", "--from", first, "--to", middle,
            "--prior", str(prior), "--out", str(head),
        )  # fmt: skip
        tail = after.work / f"across-from-{label}"
        after.scout(
            "replay", "--repo", str(repo), "--offline", "--from", next_day, "--to", last,
            "--prior", str(head), "--out", str(tail),
        )  # fmt: skip
        for name, text in day_reports(after, tail, "across"):
            if name.split(": ")[1] < next_day:
                continue  # a seed's own day, as the code of its side wrote it
            if name.endswith(".json"):  # without the seed's words read back
                text = json.dumps({**json.loads(text), "prior_reports": None}, indent=2)
            text = after.same_text(text.replace(str(seed.work), str(after.work)), moved=False)
            found[f"{label}\x1f{name}"] = text.replace(tail.name, "across-from-SEED")
    return found


def outputs(side: Side, args: argparse.Namespace) -> dict[str, str]:
    found: dict[str, str] = {}
    runs: list[Iterator[tuple[str, str]]] = []
    if "demo" in args.only:
        runs.append(demo(side))
    if "week" in args.only and args.repo:
        runs.append(week(side, args.repo))
    if "april" in args.only and args.repo and args.april_prior:
        runs.append(april(side, args.repo, args.april_prior))
    for run in runs:
        for name, text in run:
            found[name] = side.same_text(text)
    return found


def worktree(rev: str, into: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(into), rev], check=True
    )
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="a git revision")
    parser.add_argument("--after", default="HEAD", help="a git revision, or WORKTREE")
    parser.add_argument("--repo", type=Path, help="a torchtitan clone (week, april)")
    parser.add_argument("--april-prior", type=Path, help="a folder holding 2026-04-02.md")
    parser.add_argument(
        "--only", default="demo,week,april,across", help="scenarios, comma-separated"
    )
    parser.add_argument(
        "--moved-item-keys",
        action="store_true",
        help="compare across a change of item keys (see the module's docstring)",
    )
    args = parser.parse_args()
    args.only = set(args.only.split(","))
    global MOVED_ITEM_KEYS
    MOVED_ITEM_KEYS = args.moved_item_keys
    scratch = Path(tempfile.mkdtemp(prefix="scout-identity-"))
    trees: list[Path] = []
    try:
        before_code = worktree(args.before, scratch / "code-before")
        trees.append(before_code)
        if args.after == "WORKTREE":
            after_code = ROOT
        else:
            after_code = worktree(args.after, scratch / "code-after")
            trees.append(after_code)
        before_side = Side(before_code, scratch / "before")
        after_side = Side(after_code, scratch / "after")
        before = outputs(before_side, args)
        after = outputs(after_side, args)
        if "across" in args.only and args.repo and args.april_prior:
            seeded = across(before_side, after_side, args.repo, args.april_prior)
            for key, text in seeded.items():
                label, name = key.split("\x1f")
                (before if label == "before" else after)[f"{name} (seeded by either)"] = text
    finally:
        for tree in trees:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)])
        shutil.rmtree(scratch, ignore_errors=True)
    differing = 0
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name), after.get(name)
        if old == new:
            print(f"identical  {name} ({len(new or ''):,} chars)")
            continue
        differing += 1
        print(f"DIFFERS    {name}")
        lines = difflib.unified_diff(
            (old or "").splitlines(), (new or "").splitlines(), "before", "after", lineterm=""
        )
        for line in list(lines)[:40]:
            print(f"    {line}")
    print(f"{len(before.keys() | after.keys()) - differing} identical, {differing} differing")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
