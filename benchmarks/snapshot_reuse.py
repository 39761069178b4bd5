"""Dated collects read from git, with and without a shared BlobStore: what `scout replay`
(one run a day over a month) saves by reading and parsing a blob once across days.

Printed, in one process: a cold dated collect (a store of its own), the same collect again
with the first one's store, then 7 consecutive days ending on that day with one store; each
in seconds and as a ratio to the cold one. All local collectors, offline, in this process
(forked collector processes would fill their own copies of the store, not the shared one).

    python benchmarks/snapshot_reuse.py                     # the sample world, built here
    python benchmarks/snapshot_reuse.py --repo PATH --date 2026-08-21 [--config FILE]
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from scout_tui.cli.dispatch import GC_THRESHOLDS
from scout_tui.collect.base import Need, select_collectors
from scout_tui.config.models import Config
from scout_tui.config.profile import find_config, load_config
from scout_tui.errors import UsageError
from scout_tui.history.baseline import today_utc
from scout_tui.pipeline.day import RunOptions, run
from scout_tui.source.blobs import BlobStore

DAYS = 7


def local_collectors() -> list[str]:
    return [
        cls.name for cls in select_collectors(None) if not cls.needs & {Need.NETWORK, Need.GITHUB}
    ]


def collect(repo: Path, config: Config, day: date, store: BlobStore) -> tuple[float, int, str]:
    """Seconds, findings and the scanned commit of one dated collect with `store`."""
    options = RunOptions(
        repo=repo, config=config, as_of=day, offline=True, only=local_collectors(), blobs=store
    )
    start = time.perf_counter()
    result = run(options)
    return time.perf_counter() - start, len(result.findings), result.head or "?"


def last_commit_day(repo: Path) -> date:
    stamp = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%ct", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return datetime.fromtimestamp(int(stamp), UTC).date()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="default: the sample world, built in a temp dir")
    parser.add_argument("--config", type=Path)
    parser.add_argument(
        "--date",
        type=date.fromisoformat,
        help="the last day (default: HEAD's day, or today, whichever is earlier)",
    )
    args = parser.parse_args()
    gc.set_threshold(*GC_THRESHOLDS)  # as `scout` itself runs
    with tempfile.TemporaryDirectory() as scratch:
        if args.repo is None:
            from scout_tui.sandbox.demo.sample import build_sample

            sample = build_sample(Path(scratch) / "sample", today_utc())
            repo, config_path = sample.repo, args.config or sample.config
        else:
            repo = args.repo.resolve()
            config_path = args.config or find_config(repo)
        config = load_config(config_path)
        day = args.date or min(last_commit_day(repo), today_utc())
        tracked = subprocess.run(
            ["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True
        ).stdout.count("\n")
        print(f"repository          {repo} ({tracked} files)")
        print(f"collectors          {', '.join(local_collectors())} (offline, 1 process)")
        collect(repo, config, day, BlobStore())  # imports and the page cache, not counted
        store = BlobStore()
        cold, findings, head = collect(repo, config, day, store)
        print(f"cold, {day}     {cold:6.2f} s   1.00x  ({findings} findings, {head[:10]})")
        again, _, _ = collect(repo, config, day, store)
        print(f"again, shared store {again:6.2f} s  {again / cold:5.2f}x")
        days = [day - timedelta(days=n) for n in range(DAYS - 1, -1, -1)]
        shared = BlobStore()
        total, ran = 0.0, 0
        for one in days:
            try:
                seconds, findings, head = collect(repo, config, one, shared)
            except UsageError as exc:  # before the experiment's (or the branch's) first commit
                print(f"  {one}        skipped: {exc}")
                continue
            total, ran = total + seconds, ran + 1
            print(
                f"  {one}        {seconds:6.2f} s  {seconds / cold:5.2f}x  "
                f"({findings} findings, {head[:10]})"
            )
        if ran:
            print(
                f"{ran} days, one store {total:6.2f} s  {total / cold:5.2f}x the cold one "
                f"(each alone: ~{ran:.2f}x); {total / ran:.2f} s a day"
            )


if __name__ == "__main__":
    main()
