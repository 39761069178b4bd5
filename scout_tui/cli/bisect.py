"""`scout bisect`: the first torch nightly that fails the repro, on this box."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import math
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from scout_tui.analysis.ci.ci_history import normalize_error
from scout_tui.analysis.ci.repro import ReproArgv, ReproError, repro_argv, repro_command
from scout_tui.cli.output import dumps, write_output
from scout_tui.config.profile import load_config, load_user_config
from scout_tui.errors import (
    EXIT_FAILURE,
    EXIT_OK,
    ScoutError,
    UsageError,
    clean,
    redact,
    register_secret,
)
from scout_tui.nightlies.bisect import BISECT_FORMAT, Found, Request, bisect
from scout_tui.nightlies.envs import Environments, InstallFailed, Recipe
from scout_tui.nightlies.index import RangeError, list_nightlies, nightly, resolve
from scout_tui.nightlies.trial import Expected
from scout_tui.nightlies.wheels import NightlyError
from scout_tui.report.schema import schema_of, schema_text
from scout_tui.repro.lock import BoxLock
from scout_tui.store.cache import Cache
from scout_tui.store.state import StateStore


@dataclass(frozen=True)
class Failure:
    """What is bisected: the nightly pair, the repro, and how CI saw the failure."""

    good: str
    bad: str
    command: str
    runs: int = 1
    timeout_is_failure: bool = False
    error: str | None = None  # CI's root cause, normalised: the bad end must fail with it
    said: tuple[str, ...] = ()  # what was taken from the day's run, told before the first run


BISECT_SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema" / "bisect.schema.json"


def render_schema() -> str:
    """`--json`'s schema as committed in schema/bisect.schema.json (`python -m
    scout_tui.cli.bisect` rewrites it; a test compares the two)."""
    return schema_text(schema_of(Found, BISECT_FORMAT.replace("/", ".v")))


def cmd_bisect(args: argparse.Namespace) -> int:
    for flag, text in (("--good", args.good), ("--bad", args.bad)):
        if text is None:
            continue
        try:
            nightly(text)
        except ValueError as exc:
            raise UsageError(f"{flag}: {exc}") from None
    runs_bad = args.runs is not None and args.runs < 1
    if runs_bad or args.keep_envs < 1 or not (math.isfinite(args.timeout) and args.timeout > 0):
        raise UsageError("--runs, --keep-envs and --timeout take a positive number")
    if args.test and args.command_line:
        raise UsageError("--test picks a failing test's repro; --command gives one: not both")
    failure = _failure(args)
    try:
        command = repro_command(failure.command)
        argv = repro_argv(command)
    except ReproError as exc:
        raise UsageError(str(exc)) from None
    for said in failure.said:  # a finding's text: no terminal control reaches the screen
        print(f"scout: {clean(said)}", file=sys.stderr)
    repo = Path(args.repo).resolve()
    index_url = chosen_index(args.index_url)
    request = Request(
        good=failure.good,
        bad=failure.bad,
        argv=[*argv.argv],
        command=command,
        cwd=repo,
        head=_checkout_state(repo),
        recipe=recipe_for(repo, argv, index_url),
        env=dict(argv.env),
        timeout=args.timeout,
        runs=args.runs or failure.runs,
        verify_good=args.verify_good,
        expected=Expected(failure.error, failure.timeout_is_failure),
        python_tag=f"cp{sys.version_info.major}{sys.version_info.minor}",
    )
    root = Cache(args.cache_dir).bisect_dir()  # `cache info` lists it, `cache clear` empties it
    environments = Environments(root / "envs", args.keep_envs)

    def say(message: str) -> None:
        print(f"scout: {clean(redact(message))}", file=sys.stderr, flush=True)

    def line(text: str) -> None:  # the repro's own output, as it runs
        if not args.json:
            print(f"  | {text}", file=sys.stderr, flush=True)

    holder = f"scout bisect {failure.good}..{failure.bad}: {command}"
    try:
        with BoxLock(StateStore(args.state_dir).directory, holder):
            compare_url = load_config(None).torch.compare_url
            verdict, found = bisect(
                request,
                index_url,
                root,
                environments,
                compare_url,
                say,
                line,
                _commit_counter(args, compare_url),
            )
    except RangeError as exc:
        raise UsageError(str(exc)) from None
    except NightlyError as exc:
        raise ScoutError(str(exc)) from None
    if args.json:
        write_output(dumps(found.as_json()), None)
    else:
        write_output(_summary(found), None)
    return EXIT_OK if verdict.found else EXIT_FAILURE


def _failure(args: argparse.Namespace) -> Failure:
    """The flags given, the rest from the day's CI failure finding of the checkout: its
    regression range (the last passing and the failing nightly), the failing test's repro
    (`--test`, else the first), three runs a nightly when CI saw the test intermittent, a
    timeout counted as the failure when CI's run of it timed out."""
    if args.good and args.bad and args.command_line:
        return Failure(args.good, args.bad, args.command_line)
    from scout_tui.session import Session, SessionOptions

    options = SessionOptions(
        repo=Path(args.repo),
        config=getattr(args, "config", None),
        cache_dir=args.cache_dir,
        state_dir=args.state_dir,
        offline=True,
    )
    run = Session(options).cached_run()
    missing = [f for f, v in (("--good", args.good), ("--bad", args.bad)) if v is None]
    missing += [] if args.command_line else ["--command (or --test)"]
    ask = f"give {', '.join(missing)}, or collect the day's run first (`scout collect`)"
    if run is None:
        raise UsageError(f"no run of today for {args.repo}: {ask}")
    for finding in run.findings:
        evidence = finding.evidence
        rows = {row.status: row.nightly for row in evidence.regression}
        if finding.kind != "ci_failure" or not evidence.repros:
            continue
        test = args.test or next(iter(evidence.repros))
        if test not in evidence.repros:
            continue
        if not (args.good or rows.get("pass")) or not (args.bad or rows.get("fail")):
            continue
        good, bad = args.good or _version(rows["pass"]), args.bad or _version(rows["fail"])
        said = [f"bisecting {finding.title} — {test}, from {good} (passed in CI) to {bad}"]
        runs = 1
        if evidence.test_classes.get(test) == "intermittent":
            runs = 3
            said.append("CI saw it fail intermittently: each nightly is run 3 times (--runs)")
        timed_out = "timed out" in evidence.test_reasons.get(test, "")
        if timed_out:
            said.append("CI's run of it timed out: a timeout here counts as the failure")
        command = args.command_line or evidence.repros[test]
        ci_error = normalize_error(evidence.test_errors.get(test)) or None
        if ci_error and not timed_out:
            said.append(f"CI's root cause, which the bad end must show: {ci_error}")
        return Failure(good, bad, command, runs, timed_out, ci_error, tuple(said))
    which = f" for the test {args.test}" if args.test else ""
    raise UsageError(f"no CI failure with a regression range and a repro{which} today: {ask}")


def _version(nightly_: str) -> str:
    """A regression row's nightly as the bisect names it (its build label dropped)."""
    return nightly_.split("+", 1)[0]


def _commit_counter(
    args: argparse.Namespace, compare_url: str
) -> Callable[[str, str], tuple[int | None, str | None]]:
    """How many PyTorch commits lie between two nightlies' commits, from GitHub's compare
    API on the API the user chose; (None, why) offline, with no token, or on an error."""
    match = re.search(r"://[^/]+/([\w.-]+/[\w.-]+)/compare/", compare_url)

    def count(old: str, new: str) -> tuple[int | None, str | None]:
        if args.offline:
            return None, "skipped — offline"
        if match is None:
            return None, f"skipped — no repository in the compare URL {compare_url}"
        from scout_tui.config.endpoints import reviewer_config
        from scout_tui.github.api import GitHubError
        from scout_tui.github.auth import find_token, missing_token
        from scout_tui.github.client import GitHubClient

        config, endpoints = reviewer_config(None, args.api_url)
        token = find_token(endpoints.api_url)
        if token is None:
            return None, f"skipped — {missing_token(endpoints.api_url)}"
        client = GitHubClient(endpoints.api_url, token, config.github)
        try:
            return client.commits_between(match.group(1), old, new), None
        except GitHubError as exc:
            return None, f"skipped — {exc}"

    return count


def chosen_index(flag: str | None) -> str:
    """The nightly index: `--index-url`, else the user's own config, else scout's default.
    Never a checkout's scout.toml or a bundle's: the index decides what code runs. A
    password in it is redacted wherever text is said."""
    url = flag or load_user_config().nightly_index or load_config(None).torch.nightly_index
    password = urlsplit(url).password
    if password:
        register_secret(password)
    return url


def recipe_for(repo: Path, argv: ReproArgv, index_url: str) -> Recipe:
    """torch from the index, the checkout's requirements file, pytest for a pytest repro."""
    requirements = tuple(p for p in (repo / "requirements.txt",) if p.is_file())
    return Recipe(index_url, requirements, ("pytest",) if argv.argv[0] == "pytest" else ())


def nightly_environment(
    wanted: str, repo: Path, argv: ReproArgv, index_flag: str | None, cache_dir: Path | None
) -> dict[str, str]:
    """What running in `wanted`'s environment sets (built if need be, bisect's own kept
    ones reused): `scout repro --run --nightly V`, the way a maintainer checks a fix."""
    try:
        asked = nightly(wanted)
    except ValueError as exc:
        raise UsageError(f"--nightly: {exc}") from None
    index_url = chosen_index(index_flag)
    try:
        found = resolve(asked, list_nightlies(index_url), index_url)
        root = Cache(cache_dir).bisect_dir()
        env = Environments(root / "envs").get(
            found,
            recipe_for(repo, argv, index_url),
            lambda m: print(f"scout: {m}", file=sys.stderr),
        )
    except (NightlyError, InstallFailed) as exc:
        raise ScoutError(f"torch {wanted}: {exc}") from None
    return env.variables()


def _checkout_state(repo: Path) -> str:
    """What the kept results are keyed by: HEAD, and a digest of what differs from it (an
    edit not committed is another repro; results from before it are not reused)."""

    def git(*args: str) -> bytes | None:
        try:
            done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True)
        except OSError:
            return None
        return done.stdout if done.returncode == 0 else None

    head = git("rev-parse", "HEAD")
    if head is None:
        return "no-git"
    digest = hashlib.sha256(git("diff", "HEAD", "--no-ext-diff", "--binary") or b"")
    untracked = (git("ls-files", "-z", "--others", "--exclude-standard") or b"").split(b"\0")
    for name in filter(None, untracked):
        digest.update(name)
        with contextlib.suppress(OSError):
            digest.update(hashlib.sha256((repo / name.decode()).read_bytes()).digest())
    return f"{head.decode().strip()}+{digest.hexdigest()[:16]}"


def _summary(found: Found) -> str:
    lines = [f"decision: {found.decision}"]
    for label, end in (("first bad", found.first_bad), ("last good", found.last_good)):
        if end:
            lines.append(f"{label}: torch {end.version} (commit {end.commit or 'unknown'})")
    if found.last_good and not found.last_good_passed_here:
        lines.append(
            "  (the last good one is CI's word: nothing passed on this box — --verify-good "
            "runs it here, and a box that fails every nightly the same way fails it too)"
        )
    if found.compare_url:
        lines.append(f"compare: {found.compare_url}")
    for item in found.could_not_test:
        lines.append(f"could not test: torch {item.nightly} — {item.why}")
    lines.append(
        f"runs: {len(found.runs)} for {found.candidates} nightlies (at most {found.most_runs} "
        "plus one per untestable)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    BISECT_SCHEMA_FILE.write_text(render_schema(), encoding="utf-8")
    print(f"wrote {BISECT_SCHEMA_FILE}")
