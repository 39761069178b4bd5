"""What each headless subcommand does; `cli.py` only parses arguments."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from scout_tui.cache import Cache
from scout_tui.cli import EXIT_FAILURE, EXIT_OK, UsageError, dumps, write_output
from scout_tui.collectors.base import CollectorFinished, Event, FindingFound
from scout_tui.config import Config, ConfigError, find_config, load_config
from scout_tui.model import RunResult
from scout_tui.pipeline import RunOptions, collector_sections, find_token, run
from scout_tui.publish.plan import build_plan
from scout_tui.report.render import render_report
from scout_tui.source import NotARepository
from scout_tui.triage import apply_triage


def warn(message: str) -> None:
    print(f"scout: warning: {message}", file=sys.stderr)


def config_for(args: argparse.Namespace) -> Config:
    return _config(args)


def cli_processes() -> int:
    """Collectors parse Python under the GIL: one process per core, two at most (measured:
    the collectors split two ways). SCOUT_PROCESSES=1 keeps everything in one process."""
    configured = os.environ.get("SCOUT_PROCESSES", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return min(2, os.cpu_count() or 1)


def _config(args: argparse.Namespace) -> Config:
    path = args.config
    if path is None:
        path = find_config(Path(args.repo))
    try:
        return load_config(path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _namespace(config: Config) -> str:
    return f"{config.project.repo}:{config.project.experiment}"


def _cache(args: argparse.Namespace, config: Config | None = None) -> Cache:
    return Cache(
        args.cache_dir,
        namespace=_namespace(config) if config else "default",
        warn=warn,
    )


def _progress(event: Event) -> None:
    if isinstance(event, CollectorFinished):
        state = event.state
        detail = {
            "done": f"done, {state.findings} finding{'s' if state.findings != 1 else ''}",
            "skipped": f"skipped — {state.reason}",
            "failed": f"failed — {state.reason}",
        }.get(state.state, state.state)
        seconds = f" ({state.seconds:.2f} s)" if state.seconds is not None else ""
        print(f"  {state.title}: {detail}{seconds}", file=sys.stderr)
    elif isinstance(event, FindingFound) and os.environ.get("SCOUT_VERBOSE"):
        print(f"    + {event.finding.title}", file=sys.stderr)


def _collect(args: argparse.Namespace, config: Config, cache: Cache) -> RunResult:
    options = RunOptions(
        repo=Path(args.repo),
        config=config,
        as_of=args.as_of,
        prior_dir=args.prior,
        offline=args.offline,
        only=args.only,
        warn=warn,
        token=None if args.offline else find_token(),
        processes=cli_processes(),
    )
    try:
        result = run(options, on_event=_progress)
    except (NotARepository, FileNotFoundError, ConfigError) as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:  # unknown collector name
        raise UsageError(str(exc)) from None
    cache.put_run(result)
    return result


def _run_for(args: argparse.Namespace, config: Config, cache: Cache, fresh: bool) -> RunResult:
    day = args.as_of or datetime.now(UTC).date()  # the day `collect` files its run under
    result = None if fresh else cache.get_run(day)
    if result is None:
        result = _collect(args, config, cache)
    return result


def _strict_exit(args: argparse.Namespace, result: RunResult) -> int:
    if args.strict and any(s.state in ("skipped", "failed") for s in result.collectors):
        return EXIT_FAILURE
    return EXIT_OK


def triaged(result: RunResult, cache: Cache) -> RunResult:
    """The run as it will be published: every finding not dropped counts as accepted."""
    return result.model_copy(update={"findings": apply_triage(result.findings, cache.triage())})


def report_markdown(result: RunResult) -> str:
    return render_report(result.date, result.findings, result.collectors, collector_sections())


def cmd_collect(args: argparse.Namespace) -> int:
    config = _config(args)
    cache = _cache(args, config)
    result = _collect(args, config, cache)
    if args.json:
        write_output(result.model_dump_json(indent=2), args.output)
    else:
        counts: dict[str, int] = {}
        for finding in result.findings:
            counts[finding.section.value] = counts.get(finding.section.value, 0) + 1
        summary = ", ".join(f"{n} {section}" for section, n in counts.items()) or "no findings"
        write_output(f"{result.date}: {len(result.findings)} findings ({summary})", args.output)
    return _strict_exit(args, result)


def cmd_report(args: argparse.Namespace) -> int:
    config = _config(args)
    cache = _cache(args, config)
    result = triaged(_run_for(args, config, cache, args.recollect), cache)
    if args.json:
        write_output(result.model_dump_json(indent=2), args.output)
    else:
        write_output(report_markdown(result), args.output)
    return _strict_exit(args, result)


def cmd_publish(args: argparse.Namespace) -> int:
    config = _config(args)
    cache = _cache(args, config)
    result = triaged(_run_for(args, config, cache, False), cache)
    plan = build_plan(config, result.date, report_markdown(result), result.findings)
    if not args.dry_run:
        print("scout: error: publishing needs the GitHub layer, which is not built yet; "
              "use --dry-run to see the plan", file=sys.stderr)  # fmt: skip
        return EXIT_FAILURE
    out = [f"Publish plan for {plan.date}: {plan.summary()}", ""]
    out += [f"  [skipped — no GitHub layer yet] {step.description}" for step in plan.steps]
    out += ["", "=" * 72, "Report comment:", "=" * 72, plan.report]
    for draft in plan.drafts:
        out += ["=" * 72, f"Draft: {draft.title}", "=" * 72, draft.body, ""]
    write_output("\n".join(out), None)
    return EXIT_OK


def cmd_cache(args: argparse.Namespace) -> int:
    cache = Cache(args.cache_dir, namespace="", warn=warn)
    if args.action == "clear":
        removed = cache.clear()
        write_output(f"cleared {removed} entries from {cache.directory}", None)
        return EXIT_OK
    info = cache.info()
    if args.json:
        write_output(dumps(info), None)
    else:
        write_output("\n".join(f"{key}: {value}" for key, value in info.items()), None)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from scout_tui.demo.sample import build_sample

    today = args.as_of or datetime.now(UTC).date()
    base = args.dir or Path(tempfile.mkdtemp(prefix="scout-demo-"))
    sample = build_sample(base, today)
    print(f"sample repository: {sample.repo}", file=sys.stderr)
    print(f"prior reports:     {sample.priors}", file=sys.stderr)
    config = load_config(sample.config)
    cache = Cache(sample.cache, namespace=_namespace(config), warn=warn)
    result = run(
        RunOptions(repo=sample.repo, config=config, as_of=today, prior_dir=sample.priors,
                   offline=True, warn=warn, processes=cli_processes()),
        on_event=_progress,
    )  # fmt: skip
    cache.put_run(result)
    if args.json:
        write_output(triaged(result, cache).model_dump_json(indent=2), None)
    else:
        write_output(report_markdown(triaged(result, cache)), None)
    return EXIT_OK


def _ci_commands():
    from scout_tui import ci_commands

    return ci_commands


COMMANDS = {
    "collect": cmd_collect,
    "report": cmd_report,
    "publish": cmd_publish,
    "cache": cmd_cache,
    "demo": cmd_demo,
    "ci-log": lambda args: _ci_commands().cmd_ci_log(args),
    "repro": lambda args: _ci_commands().cmd_repro(args),
    "torch-commit": lambda args: _ci_commands().cmd_torch_commit(args),
}


def dispatch(args: argparse.Namespace) -> int:
    try:
        return COMMANDS[args.command](args)
    except UsageError:
        raise
    except Exception as exc:  # the last line of defence: one line, no traceback
        if os.environ.get("SCOUT_DEBUG"):
            raise
        token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")
        message = f"{type(exc).__name__}: {exc}"
        if token:
            message = message.replace(token, "***")
        print(f"scout: error: {message}", file=sys.stderr)
        return EXIT_FAILURE
