"""`scout bisect`: the first torch nightly that fails the repro, on this box."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from scout_tui.analysis.ci.repro import ReproError, repro_argv, repro_command
from scout_tui.cli.output import dumps, write_output
from scout_tui.config.profile import load_config, load_user_config
from scout_tui.errors import EXIT_FAILURE, EXIT_OK, ScoutError, UsageError
from scout_tui.nightlies.bisect import Found, Request, bisect
from scout_tui.nightlies.envs import Environments, Recipe
from scout_tui.nightlies.index import nightly
from scout_tui.nightlies.wheels import NightlyError
from scout_tui.repro.lock import BoxLock
from scout_tui.store.cache import Cache
from scout_tui.store.state import StateStore


def cmd_bisect(args: argparse.Namespace) -> int:
    for flag, text in (("--good", args.good), ("--bad", args.bad)):
        try:
            nightly(text)
        except ValueError as exc:
            raise UsageError(f"{flag}: {exc}") from None
    if args.runs < 1 or args.keep_envs < 1 or args.timeout <= 0:
        raise UsageError("--runs, --keep-envs and --timeout take a positive number")
    try:
        command = repro_command(args.command_line)
        argv = repro_argv(command)
    except ReproError as exc:
        raise UsageError(str(exc)) from None
    repo = Path(args.repo).resolve()
    shipped = load_config(None)
    # The index decides what code runs: the user's choice or scout's, never a checkout's.
    index_url = args.index_url or load_user_config().nightly_index or shipped.torch.nightly_index
    requirements = tuple(p for p in (repo / "requirements.txt",) if p.is_file())
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    request = Request(
        good=args.good,
        bad=args.bad,
        argv=[*argv.argv],
        command=command,
        cwd=repo,
        head=_head(repo),
        recipe=Recipe(index_url, requirements, ("pytest",) if argv.argv[0] == "pytest" else ()),
        timeout=args.timeout,
        runs=args.runs,
        verify_good=args.verify_good,
        python_tag=interpreter,
    )
    if argv.env:
        request = _with_env(request, argv.env)
    root = Cache(args.cache_dir).bisect_dir()  # `cache info` lists it, `cache clear` empties it
    environments = Environments(root / "envs", args.keep_envs)

    def say(message: str) -> None:
        print(f"scout: {message}", file=sys.stderr, flush=True)

    def line(text: str) -> None:  # the repro's own output, as it runs
        if not args.json:
            print(f"  | {text}", file=sys.stderr, flush=True)

    holder = f"scout bisect {args.good}..{args.bad}: {command}"
    try:
        with BoxLock(StateStore(args.state_dir).directory, holder):
            verdict, found = bisect(
                request, index_url, root, environments, shipped.torch.compare_url, say, line
            )
    except NightlyError as exc:
        raise ScoutError(str(exc)) from None
    if args.json:
        write_output(dumps(found.as_json()), None)
    else:
        write_output(_summary(found), None)
    return EXIT_OK if verdict.found else EXIT_FAILURE


def _with_env(request: Request, env: dict[str, str]) -> Request:
    from dataclasses import replace

    # NGPU=n ./run_train.sh: the assignment goes to the command's environment, not argv.
    return replace(request, argv=["env", *(f"{k}={v}" for k, v in env.items()), *request.argv])


def _head(repo: Path) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
        )
    except OSError:
        return "no-git"
    return done.stdout.strip() if done.returncode == 0 else "no-git"


def _summary(found: Found) -> str:
    lines = [f"decision: {found.decision}"]
    for label, end in (("first bad", found.first_bad), ("last good", found.last_good)):
        if end:
            lines.append(f"{label}: torch {end['version']} (commit {end['commit'] or 'unknown'})")
    if found.compare_url:
        lines.append(f"compare: {found.compare_url}")
    for item in found.could_not_test:
        lines.append(f"could not test: torch {item['nightly']} — {item['why']}")
    lines.append(
        f"runs: {len(found.runs)} for {found.candidates} nightlies (at most {found.most_runs} "
        "plus one per untestable)"
    )
    return "\n".join(lines)
