"""Benchmark: all local collectors on a repository, next to a floor measured in the same run.

The floor is what no implementation can skip: reading and `ast.parse`-ing every file the
collectors looked at (work tree and baseline blobs, each once) plus one `git log` over the
core paths. Targets: collectors within 2x the floor; under 3 s wall from a cold process on
torchtitan; growth linear in files and commits; a rescan at an unchanged tree (the next
morning, no new commit: what git answered at commit ids and what each file says, by blob id,
are kept in the cache dir) within 0.3x the floor. A work-tree grep is kept only when the
checkout matches HEAD.

    python benchmarks/collectors.py /path/to/torchtitan --date 2026-08-21 --prior DIR
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import gc
import multiprocessing
import queue
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from scout_tui.cli.common import cli_processes
from scout_tui.cli.dispatch import GC_THRESHOLDS
from scout_tui.collect.base import Need, select_collectors
from scout_tui.collect.runner import stream
from scout_tui.config.profile import find_config, load_config
from scout_tui.pipeline.day import RunOptions, prepare
from scout_tui.store.cache import Cache


def local_collectors() -> list[str]:
    return [
        cls.name for cls in select_collectors(None) if not cls.needs & {Need.NETWORK, Need.GITHUB}
    ]


def run_collectors(options: RunOptions, processes: int) -> tuple[float, object, int]:
    start = time.perf_counter()
    ctx = prepare(options).ctx
    findings = 0
    for event in stream(ctx, select_collectors(options.only), processes):
        if type(event).__name__ == "FindingFound":
            findings += 1
    return time.perf_counter() - start, ctx, findings


@dataclass
class FileSet:
    work_files: list[str]
    blobs: list[str]  # blob ids
    core_paths: list[str]
    baseline_commit: str | None
    head_commit: str | None


def _discover(options: RunOptions, out: multiprocessing.Queue) -> None:
    _, ctx, _ = run_collectors(options, 1)
    out.put(file_set(ctx))


def discover(options: RunOptions) -> FileSet:
    fork = multiprocessing.get_context("fork")
    out = fork.Queue()
    child = fork.Process(target=_discover, args=(options, out))
    child.start()
    while True:  # a child that died says so, instead of leaving this waiting forever
        try:
            found = out.get(timeout=5)
            break
        except queue.Empty:
            if not child.is_alive():
                raise SystemExit(f"the discovery run failed (exit {child.exitcode})") from None
    child.join()
    return found


def file_set(ctx) -> FileSet:
    source = ctx.source
    work_files = sorted(path for path, tree in source._trees.items() if tree is not None)
    # Only blobs that were parsed (workflow YAML read at the baseline is not Python), once each:
    # the blob store keys every parse by blob id, a work-tree file's included.
    from_work_tree = {id(tree) for tree in source._trees.values()}
    blobs = sorted(
        blob_id
        for blob_id, tree in source.blobs.parsed().items()
        if tree is not None and id(tree) not in from_work_tree
    )
    return FileSet(
        work_files,
        blobs,
        ctx.config.upstream.core_paths,
        ctx.baseline_commit,
        ctx.head_commit,
    )


def floor(repo: Path, files: FileSet) -> tuple[float, int, int]:
    """Read + parse each file the collectors parsed, once; one git log on the core paths."""
    work_files, blobs = files.work_files, files.blobs
    start = time.perf_counter()
    for path in work_files:
        with contextlib.suppress(SyntaxError):
            ast.parse((repo / path).read_text(encoding="utf-8", errors="replace"))
    if blobs:
        request = "".join(f"{blob}\n" for blob in blobs).encode()
        out = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "--batch"],
            input=request,
            capture_output=True,
            check=True,
        ).stdout
        position = 0
        while position < len(out):
            header_end = out.index(b"\n", position)
            header = out[position:header_end].split()
            if header[-1] == b"missing":
                position = header_end + 1
                continue
            size = int(header[2])
            body = out[header_end + 1 : header_end + 1 + size]
            position = header_end + 1 + size + 1
            if header[1] == b"blob":
                with contextlib.suppress(SyntaxError):
                    ast.parse(body.decode("utf-8", "replace"))
    core = files.core_paths
    rev = f"{files.baseline_commit}..{files.head_commit}" if files.baseline_commit else "HEAD"
    subprocess.run(
        ["git", "-C", str(repo), "log", "--name-only", "--format=%H %s", rev, "--", *core],
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - start, len(work_files), len(blobs)


def cold_process(repo: Path, args: argparse.Namespace, cache: Path) -> float:
    command = [
        sys.executable,
        "-m",
        "scout_tui",
        "collect",
        "--offline",
        "--repo",
        str(repo),
        "--cache-dir",
        str(cache),
        "--state-dir",
        str(cache / "state"),
    ]
    for name in local_collectors():
        command += ["--only", name]
    if args.date:
        command += ["--date", args.date.isoformat()]
    if args.prior:
        command += ["--prior", str(args.prior)]
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--date", type=date.fromisoformat)
    parser.add_argument("--prior", type=Path)
    parser.add_argument("--config", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    repo = args.repo.resolve()
    gc.set_threshold(*GC_THRESHOLDS)  # as `scout` itself runs
    config = load_config(args.config or find_config(repo))
    options = RunOptions(
        repo=repo,
        config=config,
        as_of=args.date,
        prior_dir=args.prior,
        offline=True,
        only=local_collectors(),
    )
    # One run learns which files the collectors parse (the floor's file set); in a child, so
    # that this process stays as small as a fresh `scout collect` when it forks collectors.
    ctx = discover(options)
    processes = cli_processes()
    ours, floors, rescans = [], [], []
    with tempfile.TemporaryDirectory() as kept:
        # A rescan: a new run (its own stores, as a new process has) over a cache dir that
        # a run at the same commit filled.
        rescan_options = dataclasses.replace(options, cache=Cache(Path(kept)))
        run_collectors(rescan_options, processes)
        for _ in range(args.runs):
            # Alternate so that neither side always meets a warmer page cache.
            seconds, _, findings = run_collectors(options, processes)
            ours.append(seconds)
            seconds, files, blobs = floor(repo, ctx)
            floors.append(seconds)
            rescans.append(run_collectors(rescan_options, processes)[0])
    with tempfile.TemporaryDirectory() as cache:
        cold = [cold_process(repo, args, Path(cache) / str(n)) for n in range(args.runs)]
        again = [cold_process(repo, args, Path(cache) / "0") for n in range(args.runs)]
    tracked = subprocess.run(
        ["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.count("\n")
    commits = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--count", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours_m, floor_m = statistics.median(ours), statistics.median(floors)
    print(f"repository        {repo} ({tracked} files, {commits} commits)")
    print(f"collectors        {', '.join(local_collectors())}: {findings} findings")
    print(f"files parsed      {files} from the work tree, {blobs} blobs from history")
    runs = ", ".join(f"{s:.2f}" for s in ours)
    print(f"collectors, warm  median {ours_m:.2f} s  (runs: {runs}; {processes} process(es))")
    runs = ", ".join(f"{s:.2f}" for s in floors)
    print(f"floor, warm       median {floor_m:.2f} s  (runs: {runs})")
    print(f"ratio             {ours_m / floor_m:.2f}x the floor (target: within 2x)")
    rescan_m = statistics.median(rescans)
    runs = ", ".join(f"{s:.2f}" for s in rescans)
    print(
        f"rescan, same tree median {rescan_m:.2f} s  (runs: {runs}; git's answers, file facts kept)"
    )
    print(f"ratio             {rescan_m / floor_m:.2f}x the floor (target: within 0.3x)")
    print(
        f"cold process      median {statistics.median(cold):.2f} s wall for `scout collect` "
        f"(runs: {', '.join(f'{s:.2f}' for s in cold)}; target: under 3 s on torchtitan)"
    )
    print(
        f"rescan process    median {statistics.median(again):.2f} s wall for `scout collect` "
        f"again over the same cache (runs: {', '.join(f'{s:.2f}' for s in again)})"
    )


if __name__ == "__main__":
    main()
