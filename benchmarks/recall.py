"""Recall on the maintainers' fixes (benchmarks/fixes.toml): would scout have flagged each
fix the day before it landed, and how long before?

    python benchmarks/recall.py --repo TORCHTITAN [--scout CHECKOUT] [--fixes FILE]
        [--only SHA-PREFIX] [--exclude-heldout] [--jobs N] [--lookback DAYS]

For each fix, scout (taken from CHECKOUT, default: this repository) runs `report --json
--offline` as of the day before the fix. A fix is flagged when a finding of its kind (or, in
the second column, of any kind but All Clear) mentions one of its `match` strings in its
title, items, files, body or suggested fix. For a flagged fix the days 7, 14 and 30 before it
are probed too, stopping at the first that does not flag it: the lead time is the longest
offset that did.

News (a surface that changed, tests switched off) is said once, the day after it happened,
and stays on the board from there. So that a probe sees the news of the days before it, as a
team running scout every morning would have seen it, each probe reads one prior report: an
empty report of DAYS before (`--lookback`, default 7; 0: no prior, the day's own news only)
that names the commit scanned then. It is written here, never by scout: no scout run happens
on that day.

`--exclude-heldout` keeps every scout run out of the held-out windows (benchmarks/heldout.toml,
warm-up days included): a fix whose day before is held out is skipped, a lead-time probe on a
held-out day ends the probing (the lead is then "at least"), and a probe's prior report is moved
forward to the last held-out day it would cover, so no held-out day's news is read either.

Runs on the same day are shared; scout's cache, state and the day's JSON live in
$TMPDIR/scout-recall/KEY, KEY naming the checkout, its commit and its uncommitted changes,
so a rerun of the same tree reuses them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LEAD_OFFSETS = (7, 14, 30)
NOT_FLAGS = {"all_clear"}  # a section that says all is well flags nothing
# Kinds whose evidence is on GitHub (CI runs, an upstream PR's state): an offline run never
# gives them, so their fixes are also counted apart.
ONLINE_KINDS = {"ci_failure", "todo_unblocked"}


@dataclass
class Fix:
    commit: str
    day: date
    what: str
    kinds: list[str]
    match: list[str]
    in_scope: bool = True
    why: str = ""
    skipped: str = ""
    exact: dict[str, str] | None = None  # the finding of the fix's kind that flags it
    other: dict[str, str] | None = None  # else the first finding of any kind that does
    lead: int | None = None
    lead_floor: bool = False  # probing stopped at a held-out day: the lead is at least this


@dataclass
class Prober:
    repo: Path
    scout: Path
    work: Path
    lookback: int
    heldout: list[tuple[date, date]]
    exclude_heldout: bool
    runs: dict[date, list[dict[str, Any]]] = field(default_factory=dict)

    def held(self, day: date) -> bool:
        return any(first <= day <= last for first, last in self.heldout)

    def findings(self, day: date) -> list[dict[str, Any]]:
        if day not in self.runs:
            self.runs[day] = self._run(day)
        return self.runs[day]

    def _run(self, day: date) -> list[dict[str, Any]]:
        if self.exclude_heldout and self.held(day):
            raise RuntimeError(f"{day} is held out: no scout run there")
        saved = self.work / "runs" / f"{day}.json"
        if saved.exists():
            return json.loads(saved.read_text())["findings"]
        saved.parent.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "scout_tui",
            "report",
            "--repo",
            str(self.repo),
            "--date",
            day.isoformat(),
            "--offline",
            "--json",
            "--cache-dir",
            str(self.work / "cache"),
            "--state-dir",
            str(self.work / "state"),
            "-o",
            str(saved.with_suffix(".tmp")),
        ]
        prior = self._prior(day)
        if prior is not None:
            command += ["--prior", str(prior)]
        done = subprocess.run(
            command,
            cwd=self.work,
            env={**os.environ, "PYTHONPATH": str(self.scout)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        if done.returncode != 0 and "is before the first commit of" in done.stderr:
            return []  # a probe before the experiment existed: nothing could be flagged
        if done.returncode != 0:
            raise RuntimeError(f"scout report --date {day} failed: {done.stderr[-2000:]}")
        saved.with_suffix(".tmp").replace(saved)
        return json.loads(saved.read_text())["findings"]

    def _prior(self, day: date) -> Path | None:
        """A folder holding one empty report of `lookback` days before `day` (see above)."""
        if self.lookback <= 0:
            return None
        start = day - timedelta(self.lookback)
        if self.exclude_heldout:
            covered = [start + timedelta(n) for n in range(1, self.lookback + 1)]
            held = [d for d in covered if self.held(d)]
            start = max([start, *held])
        head = _git(
            self.repo,
            "rev-list",
            "-1",
            "--first-parent",
            f"--before={start + timedelta(1)}T00:00:00Z",
            "HEAD",
        )
        if not head:
            return None
        folder = self.work / "prior" / day.isoformat()
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.md"):
            if old.name != f"{start}.md":
                old.unlink()
        (folder / f"{start}.md").write_text(
            f"# Nightly Scout Report — {start}\n\n<!-- scout:run head={head} -->\n"
        )
        return folder


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def checkout_key(scout: Path, repo: Path, lookback: int) -> str:
    """What a saved run depends on: the scout tree (commit and uncommitted changes, not
    benchmarks/), the repository scanned and the prior's lookback."""
    digest = hashlib.sha256()
    for part in (
        str(scout),
        _git(scout, "rev-parse", "HEAD"),
        _git(scout, "diff", "HEAD", "--", ".", ":!benchmarks"),
        _git(scout, "status", "--porcelain", "--", ".", ":!benchmarks"),
        str(repo.resolve()),
        _git(repo, "rev-parse", "HEAD"),
        str(lookback),
    ):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:16]


def load_fixes(path: Path, only: str | None) -> list[Fix]:
    fixes = []
    for row in tomllib.loads(path.read_text())["fix"]:
        if only and not row["commit"].startswith(only):
            continue
        kinds = row["kind"] if isinstance(row["kind"], list) else [row["kind"]]
        fixes.append(
            Fix(
                commit=row["commit"],
                day=date.fromisoformat(row["date"]),
                what=row["what"],
                kinds=kinds,
                match=row["match"],
                in_scope=row.get("in_scope", True),
                why=row.get("why", ""),
            )
        )
    return sorted(fixes, key=lambda f: (f.day, f.commit))


def load_heldout(path: Path) -> list[tuple[date, date]]:
    windows = tomllib.loads(path.read_text())["window"]
    return [
        (date.fromisoformat(w.get("warmup_from", w["first"])), date.fromisoformat(w["last"]))
        for w in windows
    ]


def text_of(finding: dict[str, Any]) -> str:
    parts: list[str] = [
        str(finding.get("title") or ""),
        str(finding.get("body") or ""),
        str(finding.get("suggested_fix") or ""),
        *(str(item) for item in finding.get("items") or []),
        *(str(f.get("path") or "") for f in finding.get("files") or []),
    ]
    return "\n".join(parts)


def flagging(fix: Fix, findings: Iterable[dict[str, Any]], exact: bool) -> dict[str, str] | None:
    for finding in findings:
        if finding.get("section") in NOT_FLAGS:
            continue
        if exact and finding.get("kind") not in fix.kinds:
            continue
        haystack = text_of(finding)
        if any(needle in haystack for needle in fix.match):
            return {"kind": str(finding["kind"]), "title": str(finding.get("title") or "")}
    return None


def run_all(prober: Prober, days: Iterable[date], jobs: int) -> None:
    todo = sorted({d for d in days if d not in prober.runs})
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for day, findings in zip(todo, pool.map(prober._run, todo), strict=True):
            prober.runs[day] = findings


def measure(fixes: list[Fix], prober: Prober, jobs: int) -> None:
    for fix in fixes:
        if prober.exclude_heldout and prober.held(fix.day - timedelta(1)):
            fix.skipped = "held out"
    live = [f for f in fixes if not f.skipped]
    run_all(prober, (f.day - timedelta(1) for f in live), jobs)
    for fix in live:
        found = prober.findings(fix.day - timedelta(1))
        fix.exact = flagging(fix, found, exact=True)
        fix.other = None if fix.exact else flagging(fix, found, exact=False)
        if fix.exact or fix.other:
            fix.lead = 1
    probing = [f for f in live if f.lead]
    for offset in LEAD_OFFSETS:
        ready = []
        for fix in probing:
            day = fix.day - timedelta(offset)
            if prober.exclude_heldout and prober.held(day):
                fix.lead_floor = True
                continue
            ready.append(fix)
        run_all(prober, (f.day - timedelta(offset) for f in ready), jobs)
        probing = []
        for fix in ready:
            found = prober.findings(fix.day - timedelta(offset))
            if flagging(fix, found, exact=fix.exact is not None):
                fix.lead = offset
                probing.append(fix)


def report(fixes: list[Fix], args: argparse.Namespace) -> None:
    print(
        f"# recall on {args.fixes.name}: scout {args.scout}, repo {args.repo}, "
        f"lookback {args.lookback} d{', held-out days excluded' if args.exclude_heldout else ''}"
    )
    header = f"{'date':<10} {'commit':<10} {'kind':<22} {'flagged':<7} {'lead':>5}  by / what"
    print(header)
    print("-" * len(header))
    for fix in fixes:
        if fix.skipped:
            state, lead, by = "skip", "", fix.skipped
        else:
            hit = fix.exact or fix.other
            state = "exact" if fix.exact else "any" if fix.other else "-"
            if not fix.in_scope:
                state = f"({state})"
            lead = f"{'≥' if fix.lead_floor else ''}{fix.lead}d" if fix.lead else ""
            by = f"{hit['kind']}: {hit['title'][:70]}" if hit else ""
        print(f"{fix.day} {fix.commit[:9]:<10} {fix.kinds[0]:<22} {state:<7} {lead:>5}  {by}")
        print(f"{'':<51}  {fix.what[:100]}")
        if not fix.in_scope:
            print(f"{'':<51}  out of scope: {fix.why}")
    counted = [f for f in fixes if not f.skipped and f.in_scope]
    exact = [f for f in counted if f.exact]
    other = [f for f in counted if f.exact or f.other]
    leads = [f.lead for f in exact if f.lead]
    print()
    skipped = sum(bool(f.skipped) for f in fixes)
    out = sum(not f.in_scope and not f.skipped for f in fixes)
    print(
        f"fixes: {len(fixes)}, skipped (held out): {skipped}, out of scope: {out}, "
        f"counted: {len(counted)}"
    )
    if counted:
        print(f"recall, exact kind: {len(exact)}/{len(counted)} = {len(exact) / len(counted):.0%}")
        print(f"recall, any finding: {len(other)}/{len(counted)} = {len(other) / len(counted):.0%}")
        offline = [f for f in counted if f.kinds[0] not in ONLINE_KINDS]
        hits = [f for f in offline if f.exact]
        if offline:
            print(
                f"recall, exact kind, leaving out the {len(counted) - len(offline)} fixes only "
                f"an online run could flag ({', '.join(sorted(ONLINE_KINDS))}): "
                f"{len(hits)}/{len(offline)} = {len(hits) / len(offline):.0%}"
            )
    if leads:
        print(
            f"lead time (exact kind), median: {statistics.median(leads):g} d "
            f"(probed 1, 7, 14, 30 d before; n = {len(leads)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--scout", type=Path, default=HERE.parent)
    parser.add_argument("--fixes", type=Path, default=HERE / "fixes.toml")
    parser.add_argument("--only", help="a commit prefix: that fix alone")
    parser.add_argument("--exclude-heldout", action="store_true")
    parser.add_argument("--heldout", type=Path, default=HERE / "heldout.toml")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--lookback", type=int, default=7)
    args = parser.parse_args()
    args.scout = args.scout.resolve()
    fixes = load_fixes(args.fixes, args.only)
    key = checkout_key(args.scout, args.repo, args.lookback)
    work = Path(tempfile.gettempdir()) / "scout-recall" / key
    work.mkdir(parents=True, exist_ok=True)
    prober = Prober(
        repo=args.repo.resolve(),
        scout=args.scout,
        work=work,
        lookback=args.lookback,
        heldout=load_heldout(args.heldout),
        exclude_heldout=args.exclude_heldout,
    )
    measure(fixes, prober, args.jobs)
    report(fixes, args)


if __name__ == "__main__":
    main()
