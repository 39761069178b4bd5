"""`scout collect`, `report`, `publish`, `cache`, `demo`."""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

from scout_tui import __version__
from scout_tui.cli.common import cli_processes, open_session, progress, strict_exit, warn
from scout_tui.cli.output import check_target, dumps, probe_writable, write_output
from scout_tui.collect.events import Event, RunFinished, RunWarning, to_json_line
from scout_tui.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, ScoutError, UsageError
from scout_tui.github.api import GitHubError
from scout_tui.history.baseline import check_date
from scout_tui.model import RunResult, Status
from scout_tui.publish.document import PlanDocument
from scout_tui.publish.plan import PublishPlan
from scout_tui.session import Session, SessionOptions, utc_today
from scout_tui.store.bundle import make_bundle, write_bundle
from scout_tui.store.cache import Cache, lost_text, run_time
from scout_tui.store.state import StateError, StateStore


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
    if args.bundle is not None and str(args.bundle) == "-":  # stdout has the run's report
        raise UsageError("--bundle takes a file name, not - (stdout is the report, or --json)")
    check_target(args.bundle, "--bundle")
    if args.bundle is not None:
        probe_writable(args.bundle, "--bundle")  # not after an hour of collecting
    session = open_session(args)
    cancel = threading.Event()
    result = None
    warnings: list[str] = []
    with _cancel_on_sigterm(cancel):
        if args.events:
            for event in session.events(cancel):
                sys.stdout.write(to_json_line(event))
                sys.stdout.flush()
                if isinstance(event, RunWarning):
                    warnings.append(event.message)
                if isinstance(event, RunFinished):
                    result = event.result
        else:

            def said(event: Event) -> None:
                if isinstance(event, RunWarning):
                    warnings.append(event.message)
                progress(event)

            result = session.collect(on_event=said, cancel=cancel)
    assert result is not None
    if result.cancelled:
        print("scout: cancelled", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.bundle is not None:
        _write_bundle(session, result, warnings, args.bundle)
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
    failed = _failed_on(session, result, args.fail_on)
    return max(strict_exit(args, result), EXIT_FAILURE if failed else EXIT_OK)


def _failed_on(session: Session, run: RunResult, rules: list[tuple[str, str]]) -> bool:
    """`--fail-on`: whether a finding not dropped in triage matches a rule, each said."""
    if not rules:
        return False
    try:
        findings = session.review.triaged(run).findings  # a dropped one alerts nobody
    except StateError:
        findings = run.findings
    rank = {"P0": 0, "P1": 1, "P2": 2}
    failed = False
    for which, priority in rules:
        matched = [
            f
            for f in findings
            if f.priority is not None
            and rank[f.priority.value] <= rank[priority]
            and (which == "any" or f.status is Status.NEW)
        ]
        if matched:
            failed = True
            titles = "; ".join(
                f"[{f.priority.value if f.priority else ''}] {f.title}" for f in matched[:5]
            )
            more = f" (+{len(matched) - 5} more)" if len(matched) > 5 else ""
            print(
                f"scout: fail-on {which}:{priority}: {len(matched)} finding(s) — {titles}{more}",
                file=sys.stderr,
            )
    return failed


def _write_bundle(session: Session, run: RunResult, warnings: list[str], path: Path) -> None:
    bundle = make_bundle(
        run, session.config.model_dump(mode="json"), warnings, __version__, datetime.now(UTC)
    )
    try:
        size = write_bundle(bundle, path)
    except OSError as exc:
        raise ScoutError(f"--bundle {path}: cannot write: {exc.strerror or exc}") from None
    print(
        f"scout: bundle {path} ({size / 1024:.0f} KiB, {len(run.findings)} findings, "
        f"{len(bundle.logs)} log excerpt(s)): `scout open {path}` reviews it",
        file=sys.stderr,
    )


def cmd_open(args: argparse.Namespace) -> int:
    """Bundles (or runs) reviewed here: the console in a terminal, else their reports."""
    files = bundle_files(args.file)
    base = dict(
        cache_dir=args.cache_dir,
        state_dir=args.state_dir,
        offline=args.offline,
        api_url=args.api_url,
    )
    candidates = (
        [SessionOptions(config=config, **base) for config in args.config or []]
        or [SessionOptions(reviewer_checkout=checkout, **base) for checkout in args.repo or []]
        or [SessionOptions(**base)]
    )
    sessions = Session.of_bundles(files, candidates, warn=warn)
    for path, session in zip(files, sessions, strict=True):
        assert session.bundle is not None
        named = f"{path.name}: " if len(files) > 1 else ""
        for line in session.bundle.warnings:
            warn(f"{named}when collected: {line}")
        print(f"scout: {named}publishing goes to {session.publish_target()}", file=sys.stderr)
        for note in session.config.inherited:  # e.g. the shipped board, kept for its experiment
            warn(f"{named}{session.config.source}: {note}")
    if sys.stdin.isatty() and sys.stdout.isatty() and args.console is not None:
        chosen = [(path, session.options) for path, session in zip(files, sessions, strict=True)]
        return args.console(candidates[0], bundles=chosen)
    reports = [s.report_markdown(s.review.triaged(s.bundle.run)) for s in sessions if s.bundle]
    if len(reports) > 1:  # told apart as `head` tells files apart
        reports = [f"==> {path} <==\n{text}" for path, text in zip(files, reports, strict=True)]
    write_output("\n\n".join(reports), None)
    return EXIT_OK


BUNDLE_SUFFIXES = (".json", ".json.gz")


def bundle_files(given: list[Path]) -> list[Path]:
    """The files named, with a folder's bundles and runs (*.json, *.json.gz, by name) in its
    place; each file once."""
    found: list[Path] = []
    for path in given:
        if path.is_dir():
            inside = sorted(
                p for p in path.iterdir() if p.is_file() and p.name.endswith(BUNDLE_SUFFIXES)
            )
            if not inside:
                raise UsageError(f"{path}: no bundle or run (*.json, *.json.gz) in this folder")
            found += inside
        else:
            found.append(path)
    seen: set[Path] = set()
    unique = []
    for path in found:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            unique.append(path)
    return unique


def cmd_report(args: argparse.Namespace) -> int:
    if args.json and args.as_posted:
        raise UsageError("--as-posted prints the Markdown a publish posts: not with --json")
    check_target(args.output)
    session = open_session(args)
    run = (
        _poorer_run(session, args)
        if args.poorer
        else session.day_run(args.recollect, on_event=progress)
    )
    try:
        result = session.review.triaged(run)
    except StateError as exc:  # reading loses nothing: the report, untriaged, and why
        warn(f"{exc}; the report is untriaged: none of your decisions is applied")
        result = run
    if args.json:
        write_output(result.model_dump_json(indent=2), args.output)
    elif args.as_posted:
        write_output(session.posted_markdown(result), args.output)
    else:
        write_output(session.report_markdown(result), args.output)
    return strict_exit(args, result)


def _poorer_run(session: Session, args: argparse.Namespace) -> RunResult:
    """`report --poorer`: the day's poorer run kept apart, said to be that."""
    if args.recollect or args.only:
        raise UsageError(
            f"--poorer reports the poorer run of the day kept apart: not with "
            f"{'--recollect' if args.recollect else '--only'}"
        )
    poorer, day = session.poorer_run(), session.cached_run()
    if poorer is None or day is None or session.kept_apart_notice(day) is None:
        raise UsageError(
            f"no poorer run of {session.day} is kept apart (`scout cache info` "
            "lists the days that have one)"
        )
    warn(
        f"the poorer {run_time(poorer)}run kept apart ({lost_text(poorer, day)}), not the "
        f"day's run (the fuller {run_time(day)}run)"
    )
    return poorer


def cmd_publish(args: argparse.Namespace) -> int:
    if args.json and not args.dry_run:
        raise UsageError("--json prints the plan of a dry run: add --dry-run")
    session = open_session(args)
    github, reason = session.github()
    if not args.dry_run:
        if github is None:
            raise UsageError(f"publishing needs GitHub: {reason} (--dry-run shows the plan)")
        if not args.yes and not sys.stdin.isatty():
            raise UsageError(
                "publishing asks for a confirmation: run it in a terminal, or "
                "pass --yes (every finding not dropped counts as accepted)"
            )
        try:  # before anything else: a token that cannot write, or a day it cannot post
            publisher = session.publisher(note=warn)
            publisher.check_access()
            publisher.check_day(session.day)
        except GitHubError as exc:
            raise ScoutError(str(exc)) from None
    refusal = _refusal(session) if args.dry_run and github is not None else None
    if args.dry_run and github is None and not session.options.offline:
        refusal = f"publishing needs GitHub: {reason}"  # what the publish itself would say
    result = session.review.triaged(session.day_run(args.recollect, on_event=progress))
    items = None
    if github is not None and refusal is None:
        try:
            items = session.board_items()
        except GitHubError as exc:
            if not args.dry_run:
                raise
            reason = str(exc)
    for problem in session.run_problems(result):
        warn(f"the run being published is partial — {problem} (--recollect collects again)")
    plan = session.plan(result, items)
    if args.dry_run:
        note = refusal or reason
        edits = _comment_edited(session, result) if items is not None else None
        if args.json:
            document = PlanDocument.of(
                plan, session.config, session.publish_target(), items is not None, note, edits
            )
            write_output(document.model_dump_json(indent=2), None)
        else:
            write_output(_plan_text(plan, session, items is not None, note, edits), None)
        if refusal is not None:  # a check for cron: this plan would not go through
            print(f"scout: error: publishing would fail: {refusal}", file=sys.stderr)
            return EXIT_FAILURE
        return EXIT_OK
    if not args.yes:
        print(
            f"Publish {plan.date}: {plan.summary()} to {session.publish_target()}", file=sys.stderr
        )
        answer = input("Go ahead? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("nothing published", file=sys.stderr)
            return EXIT_OK
    try:
        outcome = session.publisher(note=warn).publish(result)
    except GitHubError as exc:
        if not exc.transient:  # another try would be refused the same way
            raise ScoutError(str(exc)) from None
        raise ScoutError(f"{exc} — what was done is journaled: run it again to finish") from None
    write_output("\n".join(outcome.summary()), None)
    return EXIT_OK


def _refusal(session: Session) -> str | None:
    """Why GitHub would refuse this publish (a refused or expired token, missing scopes, a
    day it may not post under), asked as a publish asks before writing; None when it would
    not, or when GitHub could not be asked (the plan then says the board went unchecked)."""
    try:
        publisher = session.publisher(note=warn)
        publisher.check_access()
        publisher.check_day(session.day)
    except GitHubError as exc:
        return None if exc.transient else str(exc)
    except ScoutError as exc:
        return str(exc)
    return None


def _comment_edited(session: Session, run: RunResult) -> str | None:
    """The URL of today's report comment a publish of `run` would edit; None: a new one."""
    try:
        existing = session.publisher().todays_comment(run)
    except (GitHubError, UsageError):
        return None
    return existing.url if existing is not None else None


def _plan_text(
    plan: PublishPlan, session: Session, board_checked: bool, reason: str, edits: str | None
) -> str:
    if edits:
        comment = f"  edits today's report comment {edits}"
    elif board_checked:
        comment = "  posts a new report comment"
    else:  # GitHub was not asked: whether today's comment exists is not known
        comment = "  posts a new report comment, or edits today's if there is one"
    out = [
        f"Publish plan for {plan.date}: {plan.summary()}",
        f"  to {session.publish_target()}",
        comment,
        "",
    ]
    if not board_checked:
        out.append(f"  (the board was not checked for duplicates: {reason})")
    out += [f"  {step.description}" for step in plan.steps]
    out += [f"  already on the board, no new draft: {title}" for title in plan.duplicates]
    out += [f"  status line for the draft {line.title}: {line.text}" for line in plan.status_lines]
    out += [
        "",
        "=" * 72,
        f"Report comment on {session.config.project.repo}#{plan.tracking_issue}:",
        "=" * 72,
        plan.report,
    ]
    for draft in plan.drafts:
        out += ["=" * 72, f"Draft: {draft.title}", "=" * 72, draft.body, ""]
    return "\n".join(out)


def cmd_cache(args: argparse.Namespace) -> int:
    cache = Cache(args.cache_dir, warn=warn, create=False)
    state = StateStore(getattr(args, "state_dir", None)).path
    # Where the decisions are, said beside the cache so nobody looks for them in it.
    kept_apart = {"state_store": str(state), "state_store_exists": state.is_file()}
    if not cache.exists:
        if args.json and args.action == "info":
            write_output(dumps({**cache.info(), **kept_apart}), None)
        else:
            nothing = "; nothing to clear" if args.action == "clear" else ""
            write_output(f"no cache at {cache.directory}{nothing}", None)
        return EXIT_OK
    if args.action == "clear":
        try:
            removed = cache.clear()
        except OSError as exc:
            raise ScoutError(
                f"cannot clear the cache at {cache.directory}: {exc.strerror or exc}"
            ) from None
        write_output(
            f"cleared {removed} entries from {cache.directory} "
            "(triage decisions are kept: they are not in the cache)",
            None,
        )
        return EXIT_OK
    info = cache.info()
    if args.json:
        write_output(dumps({**info, **kept_apart}), None)
    else:
        days = info.pop("days")
        environments = info.pop("bisect_environments")
        lines = [
            f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}"
            for key, value in info.items()
        ]
        assert isinstance(days, list)
        lines += [f"  {_day_line(day)}" for day in days]
        assert isinstance(environments, list)
        lines += [
            f"bisect environment: {env['path']} ({env['bytes'] / 2**20:,.0f} MiB)"
            for env in environments
        ]
        lines.append(
            f"state store (decisions, publish journal; never cleared): {state}"
            + ("" if state.is_file() else " (none yet)")
        )
        write_output("\n".join(lines), None)
    return EXIT_OK


def _day_line(day: dict) -> str:
    """One day's kept run in `cache info`, and the poorer one kept apart if any."""
    line = f"{day['day']} {day['experiment']} in {day['checkout']}: {_run_line(day)}"
    poorer = day["poorer"]
    if poorer is not None:
        line += (
            f"; a poorer run is kept apart: {_run_line(poorer)}, "
            f"without {', '.join(poorer['lost'])} (`scout report --poorer`)"
        )
    return line


def _run_line(run: dict) -> str:
    when = (
        f"collected {run['collected_at'][:16].replace('T', ' ')} UTC"
        if run["collected_at"]
        else "collected at an unknown time"
    )
    done = len(run["done"])
    return (
        f"{when}, {done} of {done + len(run['not_done'])} collectors done, "
        f"{run['findings']} findings"
    )


def cmd_demo(args: argparse.Namespace) -> int:
    """The whole loop with no network and no token: a sample repository, a local GitHub
    holding the prior reports, the board, CI runs and open work; in a terminal the console
    opens on it, otherwise a collection, the report and a publish run headless."""
    from scout_tui.config.profile import in_checkout
    from scout_tui.sandbox.demo.running import running_demo
    from scout_tui.sandbox.demo.sample import demo_may_use

    if args.as_of is not None:
        check_date(args.as_of)  # the sample is built around that day: no first commit yet
    if args.dir is not None and in_checkout(args.dir / "scout.toml"):
        # There its scout.toml is the checkout's file, which may not name the local hosts
        # the demo serves: refused here, not as a trust error about them.
        raise UsageError(
            f"--dir {args.dir} is inside a git checkout, where a scout.toml is taken as "
            "the checkout's own and the demo's local GitHub is not trusted: give a folder "
            "outside any checkout (or no --dir: a temporary one)"
        )
    if args.dir is not None and not demo_may_use(args.dir):
        raise UsageError(
            f"--dir {args.dir} holds files no earlier `scout demo` made: give the demo an "
            "empty or new folder (it writes its repository, scout.toml and stores there)"
        )
    today = args.as_of or utc_today()
    base = args.dir or Path(tempfile.mkdtemp(prefix="scout-demo-"))
    console = getattr(args, "console", None)
    if console is None or args.json or not (sys.stdout.isatty() and sys.stdin.isatty()):
        try:
            return _headless_demo(args, base, today)
        finally:
            if args.dir is None:  # nothing in a headless run's temporary folder is kept
                shutil.rmtree(base, ignore_errors=True)
    with running_demo(base, today) as demo:
        _say_demo(demo)
        code = console(demo.session_options(today=today), demo=True)
        sample = demo.sample
        print(
            f"the demo's decisions are kept in {base}; to review them again (offline: "
            f"its local GitHub is gone): scout --repo {sample.repo} --config "
            f"{sample.config} --cache-dir {sample.cache} --state-dir {sample.state} "
            f"--date {today} --offline",
            file=sys.stderr,
        )
        return code


def _say_demo(demo, removed: bool = False) -> None:
    after = " (removed when the demo ends; --dir DIR keeps it)" if removed else ""
    print(f"sample repository: {demo.sample.repo}{after}", file=sys.stderr)
    print(
        f"local GitHub:      {demo.github.url} (prior reports on the tracking issue)",
        file=sys.stderr,
    )


def _headless_demo(args: argparse.Namespace, base: Path, today: date) -> int:
    from scout_tui.sandbox.demo.running import running_demo

    with running_demo(base, today) as demo:
        _say_demo(demo, removed=args.dir is None)
        session = Session(demo.session_options(cli_processes(), today), warn=warn)
        made = session.collect(on_event=progress)
        result = session.review.triaged(session.kept_apart or made)  # the day's run: the fuller one
        if args.json:
            write_output(result.model_dump_json(indent=2), None)
        else:
            write_output(session.report_markdown(result), None)
        for line in session.publisher(note=warn).publish(result).summary():
            print(f"published: {line}", file=sys.stderr)
    return EXIT_OK
