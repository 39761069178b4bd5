"""`scout collect`, `report`, `publish`, `cache`, `demo`."""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scout_tui.cache import Cache
from scout_tui.cli.common import cli_processes, open_session, progress, strict_exit, warn
from scout_tui.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, UsageError
from scout_tui.events import RunFinished, to_json_line
from scout_tui.output import check_target, dumps, write_output
from scout_tui.session import Session, SessionOptions, utc_today


@contextmanager
def _cancel_on_sigterm(cancel: threading.Event) -> Iterator[None]:
    """SIGTERM (the console cancelling a collection: it signals the process group) winds
    the run down; the collectors that did not finish are reported cancelled."""
    previous = signal.signal(signal.SIGTERM, lambda *_: cancel.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_collect(args: argparse.Namespace) -> int:
    if args.events and (args.json or args.output):
        raise UsageError("--events streams on stdout: it goes with neither --json nor -o")
    check_target(args.output)
    session = open_session(args)
    cancel = threading.Event()
    result = None
    with _cancel_on_sigterm(cancel):
        if args.events:
            for event in session.events(cancel):
                sys.stdout.write(to_json_line(event))
                sys.stdout.flush()
                if isinstance(event, RunFinished):
                    result = event.result
        else:
            result = session.collect(on_event=progress, cancel=cancel)
    assert result is not None
    if result.cancelled:
        print("scout: cancelled", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.events:
        return strict_exit(args, result)
    if args.json:
        write_output(result.model_dump_json(indent=2), args.output)
    else:
        counts: dict[str, int] = {}
        for finding in result.findings:
            counts[finding.section.value] = counts.get(finding.section.value, 0) + 1
        summary = ", ".join(f"{n} {section}" for section, n in counts.items()) or "no findings"
        write_output(f"{result.date}: {len(result.findings)} findings ({summary})", args.output)
    return strict_exit(args, result)


def cmd_report(args: argparse.Namespace) -> int:
    check_target(args.output)
    session = open_session(args)
    result = session.triaged(session.day_run(args.recollect, on_event=progress))
    if args.json:
        write_output(result.model_dump_json(indent=2), args.output)
    else:
        write_output(session.report_markdown(result), args.output)
    return strict_exit(args, result)


def cmd_publish(args: argparse.Namespace) -> int:
    session = open_session(args)
    result = session.triaged(session.day_run(args.recollect, on_event=progress))
    plan = session.plan(result)
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
    cache = Cache(args.cache_dir, warn=warn, create=False)
    if not cache.exists:
        if args.json and args.action == "info":
            write_output(dumps(cache.info()), None)
        else:
            nothing = "; nothing to clear" if args.action == "clear" else ""
            write_output(f"no cache at {cache.directory}{nothing}", None)
        return EXIT_OK
    if args.action == "clear":
        try:
            removed = cache.clear()
        except OSError as exc:
            raise UsageError(f"cannot clear the cache at {cache.directory}: "
                             f"{exc.strerror or exc}") from None  # fmt: skip
        write_output(f"cleared {removed} entries from {cache.directory} "
                     "(triage decisions are kept: they are not in the cache)", None)  # fmt: skip
        return EXIT_OK
    info = cache.info()
    if args.json:
        write_output(dumps(info), None)
    else:
        write_output("\n".join(f"{key}: {value}" for key, value in info.items()), None)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from scout_tui.demo.sample import build_sample

    today = args.as_of or utc_today()
    base = args.dir or Path(tempfile.mkdtemp(prefix="scout-demo-"))
    sample = build_sample(base, today)
    print(f"sample repository: {sample.repo}", file=sys.stderr)
    print(f"prior reports:     {sample.priors}", file=sys.stderr)
    session = Session(
        SessionOptions(repo=sample.repo, config=sample.config, cache_dir=sample.cache,
                       state_dir=sample.state, as_of=today, prior_dir=sample.priors,
                       offline=True, processes=cli_processes()),
        warn=warn,
    )  # fmt: skip
    result = session.triaged(session.collect(on_event=progress))
    if args.json:
        write_output(result.model_dump_json(indent=2), None)
    else:
        write_output(session.report_markdown(result), None)
    return EXIT_OK
