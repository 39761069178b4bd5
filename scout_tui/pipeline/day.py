"""baseline → collectors → reconcile: one run, streamed as events from start to finish."""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from scout_tui.analysis.text.markdown import neutralize_line
from scout_tui.collect.base import (
    Collector,
    CollectorContext,
    all_kinds,
    collector_sections,
    kinds_of,
    select_collectors,
)
from scout_tui.collect.events import (
    CollectorFinished,
    ConfigWarned,
    Event,
    FindingFound,
    RunFinished,
    RunStarted,
    RunWarning,
)
from scout_tui.collect.runner import stream
from scout_tui.config.models import Config, ConfigError
from scout_tui.github.api import GitHub, GitHubError, board_item_url
from scout_tui.history.baseline import (
    Window,
    check_date,
    in_window,
    is_past_day,
    load_prior_dir,
    since_from,
    stale_checkout,
    today_utc,
)
from scout_tui.history.judge import PriorCheck
from scout_tui.history.reconcile import reconcile
from scout_tui.model import (
    PRIORITIZED,
    BoardRef,
    CollectorState,
    ConfigWarning,
    Finding,
    IgnoredReports,
    PriorReport,
    RunResult,
    Section,
)
from scout_tui.pipeline.priors import (
    check_at,
    check_prior_commit,
    reports_on_github,
    since_last_scan,
    untrusted_reports_warning,
)
from scout_tui.report.board import Scout, board_index
from scout_tui.report.render import FULL, Layout, render_report
from scout_tui.source.answers import GitAnswers
from scout_tui.source.blobs import BlobStore
from scout_tui.source.facts import FileFacts
from scout_tui.source.records import NotARepository
from scout_tui.source.tree import SourceTree
from scout_tui.store.cache import Cache


@dataclass
class RunOptions:
    repo: Path
    config: Config
    as_of: date | None = None
    prior_dir: Path | None = None
    offline: bool = False
    only: Sequence[str] | None = None
    processes: int = 1  # >1: forked processes (CLI only; never from a threaded app)
    github: GitHub | None = field(default=None, repr=False)
    github_reason: str = "no GitHub connection"  # why `github` is None
    # board items this state dir's publishes added: item id → the fingerprint it was added for
    journaled_items: Mapping[str, str] = field(default_factory=dict)
    cache: Cache | None = field(default=None, repr=False)
    web_url: str = "https://github.com"  # for board item links
    # Blob texts, parsed trees and commit indexes kept across runs over one history (dated
    # runs of consecutive days read most files unchanged); each run makes its own if None.
    blobs: BlobStore | None = field(default=None, repr=False)
    # The day the run takes for today (the demo's own day); None: today, UTC. A run as of an
    # earlier day cannot use the installed torch: it is today's.
    today: date | None = None
    # For a dated run, the moment whose branch state is scanned (a morning run of that day);
    # None: the day's end, its last commit.
    moment: datetime | None = None


PAST_TORCH = "not reconstructible for a past day (the installed torch is today's)"
RECONCILE_KINDS = {"resolved"}  # made by reconcile, not by a collector, and configurable
# Kinds scout made once and says otherwise now (a rule for one is accepted, and unused):
# surface_not_found is a configuration warning of scout.toml's, not a project finding.
RETIRED_KINDS = {"surface_not_found"}


def find_torch_root(configured: str) -> Path | None:
    """Where the installed torch's sources are, without importing it."""
    if configured:
        root = Path(configured).expanduser()
        return root if root.is_dir() else None
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def check_rules(config: Config, collectors: Sequence[type[Collector]]) -> None:
    """Every kind a selected collector can produce needs a rule; say so before running."""
    missing = sorted(kind for kind in kinds_of(collectors) if kind not in config.rules)
    if missing:
        raise ConfigError(
            f"{config.source}: [rules] has no entry for finding kind "
            + ", ".join(repr(kind) for kind in missing)
            + "; add e.g. `"
            + missing[0]
            + ' = { section = "fyi" }`'
        )


def check_rule_kinds(config: Config) -> None:
    """A rule for a kind no collector makes is a typo, said at once (not silently unused)."""
    known = set(all_kinds()) | RECONCILE_KINDS | RETIRED_KINDS
    unknown = sorted(set(config.rules) - known)
    if unknown:
        raise ConfigError(
            f"{config.source}: [rules.{unknown[0]}] is for no kind of finding "
            f"scout makes (known: {', '.join(sorted(known))})"
        )


def config_digest(config: Config) -> str:
    """What a run depends on in its configuration: a cached run made with another is stale."""
    relevant = config.model_dump_json(exclude={"keys", "github"})
    return hashlib.sha1(relevant.encode()).hexdigest()[:16]


@dataclass
class Prepared:
    ctx: CollectorContext
    priors: list[PriorReport]
    prior_source: str
    warnings: list[str]
    ignored_reports: list[IgnoredReports] = field(default_factory=list)


def blob_store(options: RunOptions) -> BlobStore:
    """A store for the runs over one history, what git answered at commit ids and what the
    analyses read in each blob kept in the cache dir from run to run (tomorrow's rescan at
    an unchanged tree reads them)."""
    cache = options.cache
    answers = cache.git_answers_path() if cache is not None else None
    facts = cache.file_facts_path() if cache is not None else None
    return BlobStore(GitAnswers(answers), FileFacts(facts))


def prepare(options: RunOptions, cancel: threading.Event | None = None) -> Prepared:
    """The context a run's collectors share: window, baseline, checkout. A dated run scans
    the day's last commit, read from git: the work tree (and what is uncommitted in it) is
    not looked at."""
    cancel = cancel or threading.Event()
    source = SourceTree(options.repo, cancel=cancel, blobs=options.blobs or blob_store(options))
    window = Window.for_date(options.as_of)
    config = options.config
    if options.as_of is not None:
        check_date(options.as_of, source, config.project.experiment)
        dated = source.commit_before(min(options.moment or window.until, window.until))
        if dated is not None:  # that day's tree, from git: the work tree is not read
            source = SourceTree(options.repo, cancel=cancel, at=dated, blobs=source.blobs)
    if not source.exists(config.project.experiment):
        raise NotARepository(
            f"{source.root} has no {config.project.experiment}/ — is this the right checkout? "
            f"([project] experiment in {config.source})"
        )
    head = source.head()
    if head is None:
        raise NotARepository(f"{source.root} has no commits yet")
    warnings: list[str] = []
    if options.as_of is None:  # today's report of an old tree: said, never passed off
        stale = stale_checkout(source, head, options.today or today_utc())
        if stale:
            warnings.append(stale)
    # The installed torch is today's: what it defines says nothing of a past day.
    past = options.as_of is not None and options.as_of < (options.today or today_utc())
    torch_root = None if past else find_torch_root(config.torch.root)
    torch_reason = PAST_TORCH if past else "torch not installed"
    ignored: list[IgnoredReports] = []
    if options.prior_dir is not None:  # the user's own files: trusted
        all_reports = load_prior_dir(options.prior_dir, warnings.append)
        prior_source = str(options.prior_dir.resolve())
    elif options.github is not None:
        all_reports, prior_source, ignored = reports_on_github(options, window, warnings)
    else:
        all_reports = []
        prior_source = f"skipped — {options.github_reason} (or use --prior DIR)"
    priors = in_window(all_reports, window.as_of, config.windows.prior_report_days)
    since = since_from(priors, window)
    baseline = since_last_scan(source, priors, source.commit_before(since), head)
    roots = source.shallow_roots()
    gap = None
    if roots:
        gap = (
            f"shallow clone: the history is cut at {len(roots)} commit(s) "
            "(`git fetch --unshallow` gives what the history checks need)"
        )
        warnings.append(f'{gap}; ages and "since" before the cut are not claimed')
        if baseline is None or baseline in roots:
            baseline = None  # the baseline is before the cut: nothing to compare with
    ctx = CollectorContext(
        config=config,
        repo_path=source.root,
        as_of=window.as_of,
        since=since,
        until=window.until,
        source=source,
        prior_reports=priors,
        baseline_commit=baseline,
        head_commit=head,
        online=not options.offline,
        github=options.github,
        github_reason=options.github_reason,
        web_url=options.web_url.rstrip("/"),
        cache=options.cache,
        torch_root=torch_root,
        torch_reason=torch_reason,
        cancelled=cancel,
        past_day=is_past_day(options.as_of),
        shallow_roots=roots,
        history_gap=gap,
    )
    return Prepared(ctx, priors, prior_source, warnings, ignored)


def _with_board(options: RunOptions, findings: list[Finding], warnings: list[str]) -> list[Finding]:
    """Each finding that has a board item, with its link and status (scout's drafts are
    matched by their fingerprint marker, any item by title)."""
    if options.github is None:
        return findings
    if is_past_day(options.as_of):
        warnings.append("board items: skipped — not reconstructible for a past day")
        return findings
    board_config = options.config.board
    try:
        board = options.github.board(
            board_config.owner, board_config.number, board_config.status_field
        )
        scout = Scout(options.github.viewer(), options.journaled_items)
        index = board_index(options.github.board_items(board, board_config.status_field), scout)
    except GitHubError as exc:
        warnings.append(f"board items: skipped — {exc}")
        return findings
    linked = []
    for finding in findings:
        item = index.item_for(
            finding.fingerprint, finding.title, by_title=finding.section in PRIORITIZED
        )
        if item is not None:
            url = board_item_url(options.web_url, board, item)
            finding = finding.model_copy(
                update={"board": BoardRef(item_id=item.id, url=url, status=item.status)}
            )
        linked.append(finding)
    return linked


def run_events(options: RunOptions, cancel: threading.Event | None = None) -> Iterator[Event]:
    """The whole run as events, the last one `RunFinished` with the reconciled result.

    Setting `cancel` stops every collector promptly (inside long steps, not only between
    findings); the run still finishes, with the collectors that did not end `cancelled`.
    """
    cancel = cancel or threading.Event()
    collectors = select_collectors(options.only)
    check_rules(options.config, collectors)
    prepared = prepare(options, cancel)
    ctx = prepared.ctx
    checkout = ctx.source.checkout()
    yield RunStarted(
        date=ctx.as_of,
        since=ctx.since,
        checkout=checkout,
        head=ctx.head_commit,
        baseline_commit=ctx.baseline_commit,
        collectors=[
            CollectorState(name=cls.name, title=cls.title, state="pending") for cls in collectors
        ],
        prior_reports=[report.date for report in prepared.priors],
        prior_source=prepared.prior_source,
    )
    for warning in prepared.warnings:
        yield RunWarning(warning)
    findings: list[Finding] = []
    config_warnings: list[ConfigWarning] = []
    for note in ctx.config.inherited:
        subject, _, message = note.partition(": ")
        inherited = ConfigWarning(
            collector="scout.toml", subject=subject, message=f"{subject}: {message}"
        )
        config_warnings.append(inherited)
        yield ConfigWarned(inherited)
    if prepared.ignored_reports:
        untrusted = untrusted_reports_warning(prepared.ignored_reports)
        config_warnings.append(untrusted)
        yield ConfigWarned(untrusted)
    states: dict[str, CollectorState] = {}
    for event in stream(ctx, collectors, options.processes):
        if isinstance(event, FindingFound):
            findings.append(event.finding)
        elif isinstance(event, ConfigWarned):
            said = (event.warning.subject, event.warning.message)
            if said in {(w.subject, w.message) for w in config_warnings}:
                continue  # a file several processes met: said once
            config_warnings.append(event.warning)
        elif isinstance(event, CollectorFinished):
            states[event.state.name] = event.state
        yield event
    # Collectors finish in any order (processes, threads): the run lists findings in the
    # collectors' order and each collector's own, so reports and publish plans are stable.
    rank = {cls.name: n for n, cls in enumerate(collectors)}
    findings.sort(key=lambda finding: rank.get(finding.collector, len(rank)))
    ordered_states = [states[cls.name] for cls in collectors]
    completed = {s.name for s in ordered_states if s.state == "done"}
    completed_kinds = set(kinds_of(cls for cls in collectors if cls.name in completed))
    found = _dedupe(findings)
    checks: list[PriorCheck] = []

    def recheck(kinds: frozenset[str]) -> PriorCheck | None:
        check = check_prior_commit(options, ctx, prepared.priors[-1], kinds, cancel)
        checks.extend([check] if check else [])
        return check

    reconciled = reconcile(
        found,
        prepared.priors,
        fyi_suppress_after=ctx.config.windows.fyi_suppress_after,
        completed_kinds=completed_kinds,
        unchecked={fp for state in ordered_states for fp in state.unchecked},
        unchanged_lines={
            kind: rule.unchanged for kind, rule in ctx.config.rules.items() if rule.unchanged
        },
        kinds=all_kinds(),
        inventories=frozenset(
            kind for kind, rule in ctx.config.rules.items() if rule.report == "growth"
        ),
        unreported=frozenset(
            kind for kind, rule in ctx.config.rules.items() if rule.report == "never"
        ),
        recheck=recheck,
        resolved_section=(
            rule.section if (rule := ctx.config.rules.get("resolved")) else Section.ALL_CLEAR
        ),
    )
    reconciled.findings[:] = _name_gone_in(
        options, ctx, reconciled.findings, checks[0] if checks else None, cancel
    )
    board_warnings: list[str] = []
    linked = _with_board(options, reconciled.findings, board_warnings)
    for warning in board_warnings:
        yield RunWarning(warning)
    yield RunFinished(
        RunResult(
            date=ctx.as_of,
            since=ctx.since,
            repo=str(ctx.source.root),
            checkout=checkout,
            experiment=ctx.config.project.experiment,
            collected_at=datetime.now(UTC),
            head=ctx.head_commit,
            baseline_commit=ctx.baseline_commit,
            prior_reports=prepared.priors,
            prior_source=prepared.prior_source,
            ignored_reports=prepared.ignored_reports,
            collectors=ordered_states,
            findings=linked,
            suppressed=reconciled.suppressed,
            quiet=reconciled.quiet,
            left_out=reconciled.left_out,
            only=[cls.name for cls in collectors] if options.only else None,
            config_digest=config_digest(options.config),
            cancelled=any(state.state == "cancelled" for state in ordered_states),
            config_warnings=sorted(
                config_warnings, key=lambda w: (rank.get(w.collector, len(rank)), w.subject)
            ),
        )
    )


def run(
    options: RunOptions,
    on_event: Callable[[Event], None] | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """`run_events` for callers that only want the result (and maybe to watch)."""
    result = None
    for event in run_events(options, cancel):
        if on_event is not None:
            on_event(event)
        if isinstance(event, RunFinished):
            result = event.result
    assert result is not None
    return result


def _name_gone_in(
    options: RunOptions,
    ctx: CollectorContext,
    findings: list[Finding],
    check: PriorCheck | None,
    cancel: threading.Event,
) -> list[Finding]:
    """A Resolved line on evidence names the commit it went in: between the prior
    report's commit and today's (first parent), the first on which its check no longer
    finds it — searched by halves, a check run per probe."""
    if check is None or ctx.head_commit is None or check.head == ctx.head_commit:
        return findings
    commits = ctx.source.first_parent_range(check.head, ctx.head_commit)
    probes: dict[tuple[str, frozenset[str]], set[str]] = {}

    def gone_at(index: int, fingerprint: str, kinds: frozenset[str]) -> bool:
        if index == len(commits) - 1:
            return True  # today's run did not find it
        key = (commits[index].sha, kinds)
        if key not in probes:
            found, _ = check_at(options, ctx, commits[index].sha, ctx.as_of, kinds, cancel)
            probes[key] = {fp for f in found for fp in (f.fingerprint, *f.aliases)}
        return fingerprint not in probes[key]

    named = []
    for finding in findings:
        held = finding.evidence.found_as
        if (
            finding.kind == "resolved"
            and finding.evidence.found_at == check.head
            and held
            and commits
        ):
            kinds = frozenset({held.rsplit("-", 1)[0]})
            low, high = 0, len(commits) - 1
            while low < high:
                middle = (low + high) // 2
                if gone_at(middle, held, kinds):
                    high = middle
                else:
                    low = middle + 1
            fix = commits[low]
            by = f"`{fix.sha[:10]}` ({neutralize_line(fix.summary)})"
            # The first commit whose tree the check no longer finds it in: what it shows is
            # said (a TODO whose comment went), not that the code was fixed.
            finding = finding.model_copy(update={"body": f"{finding.body}; gone in {by}"})
        named.append(finding)
    return named


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding per fingerprint (a collector may meet the same problem twice)."""
    seen: dict[str, Finding] = {}
    for finding in findings:
        seen.setdefault(finding.fingerprint, finding)
    return list(seen.values())


def priors_unread(run: RunResult) -> str | None:
    """Why the run read no prior report, when it read none because it could not (offline, no
    token): not the same as a first report, which has none to read."""
    source = run.prior_source or ""
    return source if not run.prior_reports and source.startswith("skipped") else None


def render_markdown(run: RunResult, layout: Layout = FULL) -> str:
    """A run's report, as it is rendered for the comment (the day's collectors' sections)."""
    return render_report(
        run.date,
        run.findings,
        run.collectors,
        collector_sections(),
        layout,
        head=run.head,
        quiet=run.quiet,
        first=not run.prior_reports,
        priors_unread=priors_unread(run),
        withheld=run.withheld,
    )
