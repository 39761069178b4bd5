"""`scout ci-log`, `scout repro`, `scout torch-commit`: CI failure analysis from the shell."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

from packaging.version import InvalidVersion, Version

from scout_tui.analysis.ci.cilog import LogAnalysis, analyse
from scout_tui.analysis.ci.log_input import LogInputError, open_log
from scout_tui.analysis.ci.repro import (
    ReproArgv,
    ReproError,
    failure_repro,
    gpus_of,
    left_out,
    repro_argv,
    repro_command,
)
from scout_tui.cli.common import config_near, warn
from scout_tui.cli.output import dumps, write_output
from scout_tui.collect.ci_failures import ci_finding
from scout_tui.errors import EXIT_FAILURE, EXIT_OK, ScoutError, UsageError
from scout_tui.model import RegressionRow
from scout_tui.nightlies.regression import commit_for, regression_range
from scout_tui.nightlies.wheels import NightlyError
from scout_tui.report.render import render_item
from scout_tui.repro.lock import BoxLock
from scout_tui.repro.process import ProcessGroup
from scout_tui.store.cache import Cache
from scout_tui.store.state import StateStore


def _analyse(path: str, experiment: str) -> LogAnalysis:
    """Any log a user has: a file, stdin, a pipe, gzip, GitHub's .zip log archive. Input
    that holds no log (empty, /dev/null, binary data) is an error, never "CI green"."""
    try:
        with open_log(path) as log:
            analysis = analyse(log.fd, experiment)
    except LogInputError as exc:
        raise (UsageError if exc.usage else ScoutError)(exc.message) from None
    except OSError as exc:
        raise ScoutError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not analysis.failures and not analysis.holds_log:
        if analysis.binary:
            raise ScoutError(f"{log.name} is binary data, not a log")
        raise ScoutError(f"no log lines in {log.name}")
    return analysis


def _as_json(path: str, analysis: LogAnalysis) -> dict:
    failures = []
    for failure in analysis.failures:
        data = asdict(failure)
        data["repro"] = failure_repro(failure)
        failures.append(data)
    return {
        "schema_version": 1,
        "file": path,
        "bytes": analysis.bytes_scanned,
        "lines": analysis.lines,
        "torch_version": analysis.torch_version,
        "reported_failures": analysis.reported_failures,
        "truncated": analysis.truncated,
        "failing_tests": analysis.failing_tests,
        "failures": failures,
    }


def _human(analysis: LogAnalysis) -> str:
    if not analysis.failures:
        return "no failing tests found in this log"
    out = [
        f"{len(analysis.failures)} failing test(s)"
        + (f", torch {analysis.torch_version}" if analysis.torch_version else "")
    ]
    if analysis.truncated:
        out.append("(the log ends inside a test's output: it may be truncated)")
    for failure in analysis.failures:
        out.append("")
        out.append(f"✗ {failure.name}" + (f"  [{failure.reason}]" if failure.reason else ""))
        if failure.error:
            out.append(f"  error: {failure.error}")
            if failure.root_rule:
                out.append(f"  (picked by: {failure.root_rule})")
        for frame in failure.frames:
            if frame.in_experiment:
                out.append(f"    {frame.path}:{frame.line} in {frame.function}")
                if frame.source:
                    out.append(f"      {frame.source}")
        repro = failure_repro(failure)
        if repro:
            out.append(f"  repro: {repro}")
    return "\n".join(out)


def cmd_ci_log(args: argparse.Namespace) -> int:
    config = config_near(args.repo, args.config)
    analysis = _analyse(args.file, config.project.experiment)
    if args.json:
        write_output(dumps(_as_json(args.file, analysis)), None)
    elif args.report:
        rows: list[RegressionRow] = []
        compare: str | None = None
        if args.passing_version or analysis.torch_version:
            if analysis.torch_version is None:
                warn("no torch version in the log: no regression range")
            elif args.offline:
                warn("regression range: skipped — offline")
            else:
                cache = Cache(args.cache_dir, warn=warn)
                rows, compare = regression_range(
                    config, analysis.torch_version, args.passing_version, cache, note=warn
                )
        finding = ci_finding(config, Path(args.file).name, analysis, rows, compare)
        write_output(
            "## CI Failures\n\n"
            + (render_item(finding) if finding else "CI green, nothing to report"),
            None,
        )
    else:
        write_output(_human(analysis), None)
    return EXIT_OK


def cmd_repro(args: argparse.Namespace) -> int:
    if args.json and args.run:
        raise UsageError("--json prints the repro; --run runs it: one or the other")
    if args.nightly and not args.run:
        raise UsageError("--nightly says where --run runs the repro: give --run too")
    test = None
    if args.command_line is not None:
        try:
            repro = repro_command(args.command_line)
            repro_argv(repro)  # refused before anything is said of how it would run
        except ReproError as exc:
            raise UsageError(str(exc)) from None
        if repro != " ".join(args.command_line.split()):  # what scout changed, said
            dropped = left_out(args.command_line)
            besides = f" (left out: {', '.join(dropped)})" if dropped else ""
            print(f"scout: as scout runs it: {repro}{besides}", file=sys.stderr)
    else:
        analysis = _analyse(args.log, config_near(args.repo, None).project.experiment)
        found = [(f.name, r) for f in analysis.failures if (r := failure_repro(f)) is not None]
        named = [(name, r) for name, r in found if name == args.test] if args.test else found
        if not named and not args.test:  # the log's fault, not the command's: exit 1
            raise ScoutError(f"no failing test with a repro in {args.log}")
        if not named:
            tests = ", ".join(name for name, _ in found)
            known = f" (those with one: {tests})" if found else ""
            raise UsageError(f"no failing test named {args.test} with a repro in {args.log}{known}")
        test, repro = named[0]
    try:  # the shapes scout runs, whether or not it runs it now: a repro is one of them
        argv = repro_argv(repro)
    except ReproError as exc:
        raise UsageError(str(exc)) from None
    if test is None and argv.argv[0] == "pytest":  # the test a pytest line names
        test = next((word for word in argv.argv[1:] if "::" in word), None)
    if args.json:
        document = {
            "command": repro,
            "cwd": str(Path(args.repo).resolve()),
            "ngpu": gpus_of(argv),
            "test": test,
        }
        write_output(dumps(document), None)
        return EXIT_OK
    if not args.run:
        write_output(repro, None)
        return EXIT_OK
    repo = Path(args.repo)
    with BoxLock(StateStore(args.state_dir).directory, f"scout repro --run: {argv.display()}"):
        run_env = dict(argv.env)
        if args.nightly:  # in that nightly's environment (bisect's own, when it has one)
            from scout_tui.cli.bisect import nightly_environment

            nightly_env = nightly_environment(
                args.nightly, repo.resolve(), argv, args.index_url, args.cache_dir
            )
            run_env = {**nightly_env, **run_env}
        return _run_repro(argv, repo, run_env)


def _run_repro(argv: ReproArgv, repo: Path, variables: dict[str, str]) -> int:
    print(f"$ {argv.display()}", file=sys.stderr, flush=True)
    try:
        # Its own process group: Ctrl-C stops torchrun's workers too, not the shell alone.
        group = ProcessGroup(argv.argv, repo, env=variables)
    except OSError as exc:
        print(f"scout: error: cannot run the repro: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    try:
        for line in group.lines():
            print(line, flush=True)
        return group.wait()
    except BaseException:  # Ctrl-C, a closed pipe: nothing of it keeps running
        group.stop()
        try:  # and what it wrote before it stopped is not lost in the pipe
            for line in group.rest():
                print(line, flush=True)
        except OSError:  # the reader went away (a closed pipe): nothing more to say
            pass
        raise


def cmd_torch_commit(args: argparse.Namespace) -> int:
    try:  # before any network call: a typo must not cost a download
        Version(args.version)
    except InvalidVersion:
        raise UsageError(
            f"not a torch version: {args.version!r} (e.g. 2.13.0.dev20260819+cu130)"
        ) from None
    config = config_near(args.repo, args.config)
    cache = Cache(args.cache_dir, warn=warn)
    try:
        found = commit_for(
            config,
            args.version,
            cache,
            args.index_url,
            args.python_tag,
            note=lambda message: print(message, file=sys.stderr),
        )
    except NightlyError as exc:
        print(f"scout: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    write_output(found.model_dump_json(indent=2) if args.json else found.commit, None)
    return EXIT_OK
