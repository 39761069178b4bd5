"""One checkout's scout, as the CLI and the console both use it: its configuration, cache
and state; the day's run (collected, or as cached); the run as triaged; the report; the
publish plan; and the reviewer's actions with undo and redo.

Errors a user can act on come out as `UsageError` (bad usage or configuration) or
`ScoutError`; nothing here prints — `warn` is the caller's.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from scout_tui.config.endpoints import reviewer_config
from scout_tui.config.models import Config, ConfigError
from scout_tui.config.profile import (
    find_config,
    shipped_rule_kinds,
)
from scout_tui.errors import ScoutError, UsageError
from scout_tui.github.auth import find_token, missing_token
from scout_tui.history.baseline import check_date, stale_checkout, today_utc
from scout_tui.model import SECTIONS, Checkout, Finding, RunResult, Section
from scout_tui.source.checkout import find_checkout
from scout_tui.source.records import NotARepository
from scout_tui.store.cache import Cache, kept_apart_note, lost
from scout_tui.store.logs import RunLogs
from scout_tui.store.state import StateError, StateStore
from scout_tui.triage.review import Review
from scout_tui.triage.store import DecisionStore, scope_of

if TYPE_CHECKING:
    from scout_tui.analysis.ci.repro import ReproArgv
    from scout_tui.collect.events import Event
    from scout_tui.config.endpoints import Endpoints
    from scout_tui.github.api import BoardItem, GitHub
    from scout_tui.pipeline.day import RunOptions
    from scout_tui.publish.execute import Publisher
    from scout_tui.publish.plan import PublishPlan
    from scout_tui.source.tree import SourceTree
    from scout_tui.store.bundle import Bundle

# What the console's start on a cached run never needs — the pipeline (every collector,
# 190 ms of imports), publishing, GitHub, repro and bundle readers — is imported where it
# is used: the start pays for what its first paint shows.


@dataclass
class SessionOptions:
    repo: Path = Path(".")
    config: Path | None = None
    cache_dir: Path | None = None
    state_dir: Path | None = None
    as_of: date | None = None
    prior_dir: Path | None = None
    offline: bool = False
    only: Sequence[str] | None = None
    processes: int = 1  # >1 forks: only from a process with no other threads (the CLI)
    # GitHub's API: this, else $SCOUT_GITHUB_API_URL, the user's config, scout.toml
    api_url: str | None = None
    api_url_said: str = "--api-url"  # what chose `api_url`, as the publish target says
    token: str | None = field(default=None, repr=False)  # for api_url; else as auth finds it
    # `scout open FILE --repo PATH`: the reviewer's own checkout of the bundle's repository
    # (its scout.toml, and where a repro may run).
    reviewer_checkout: Path | None = None
    # The day publishing takes for today: the demo's own day, its GitHub's story told as of
    # then; None: today, UTC.
    publish_today: date | None = None
    # The day a run takes for today (the demo's own day: its stand-in torch is of then);
    # None: today, UTC.
    today: date | None = None
    # Who decides, as the state store's history names it: an undo made by another
    # session says so. The pid tells two consoles apart.
    origin: str = field(default_factory=lambda: f"the console (pid {os.getpid()})")


def utc_today() -> date:
    return today_utc()


class Session:
    def __init__(
        self, options: SessionOptions, warn: Callable[[str], None] = lambda message: None
    ) -> None:
        self.options = options
        self.warn = warn
        self.bundle: Bundle | None = None
        self.bundle_path: Path | None = None
        self.logs = RunLogs(None)
        if not options.repo.exists():
            raise UsageError(f"--repo {options.repo}: no such folder")
        try:
            self.checkout = find_checkout(options.repo)
        except NotARepository as exc:
            raise UsageError(str(exc)) from None
        self._source: SourceTree | None = None
        self._source_lock = threading.Lock()
        # A scout.toml is the checkout's, wherever in it --repo points.
        self.config, self.endpoints = _load_checked(
            options, options.config or find_config(Path(self.checkout.path))
        )
        self.repository = self.config.project.repo
        self.reviewer_checkout: Path | None = None
        self.experiment = self.config.project.experiment
        if options.as_of is not None:
            check_date(options.as_of, self.source, self.experiment)
        self.day = options.as_of or utc_today()
        self._open_stores()

    @classmethod
    def of_bundle(
        cls,
        path: Path,
        options: SessionOptions,
        warn: Callable[[str], None] = lambda message: None,
        bundle: Bundle | None = None,
    ) -> Session:
        """A bundle's run, reviewed here: no checkout needed. A bundle is data: where it is
        published (host, repository, issue, board, links) is the reviewer's configuration
        (`reviewer_config_path`), and its decisions are filed under `bundle:<repo>/<experiment>`
        (where tomorrow's bundle finds them), never under a path the bundle names. `bundle`:
        the file as already read."""
        from scout_tui.store.bundle import bundle_repository, read_bundle

        bundle = bundle if bundle is not None else read_bundle(path)
        session = cls.__new__(cls)
        session.options, session.warn = options, warn
        session.bundle, session.bundle_path = bundle, path
        run = bundle.run
        session.reviewer_checkout = None
        session.logs = RunLogs(bundle)
        if options.reviewer_checkout is not None:
            session.reviewer_checkout = Path(_checkout_at(options.reviewer_checkout).path)
        session.config, session.endpoints = _load_checked(options, reviewer_config_path(options))
        session._source, session._source_lock = None, threading.Lock()
        session.repository = bundle_repository(bundle) or session.config.project.repo
        session.checkout = Checkout.of(
            f"bundle:{session.repository}", f"bundle:{session.repository}"
        )
        session.experiment = run.experiment or session.config.project.experiment
        session.day = run.date
        session._open_stores()
        session.scope = f"bundle:{session.repository}/{session.experiment}"
        return session

    @classmethod
    def of_bundles(
        cls,
        paths: Sequence[Path],
        candidates: Sequence[SessionOptions],
        warn: Callable[[str], None] = lambda message: None,
    ) -> list[Session]:
        """Each bundle's session, with the reviewer's configuration of `candidates` whose
        project is the bundle's repository and experiment (else its repository; else the
        first: then publishing refuses, naming both repositories). Each configuration and
        each bundle is read once."""
        from scout_tui.store.bundle import bundle_repository, read_bundle

        configs = [_load_checked(o, reviewer_config_path(o))[0] for o in candidates]
        sessions = []
        for path in paths:
            bundle = read_bundle(path)

            def fits(config: Config, experiment_too: bool, bundle: Bundle = bundle) -> bool:
                project = config.project  # as `of_bundle` names the run's repository
                repository = bundle_repository(bundle) or project.repo
                experiment = bundle.run.experiment or project.experiment
                return project.repo == repository and (
                    not experiment_too or project.experiment == experiment
                )

            chosen = next(
                (o for o, c in zip(candidates, configs, strict=True) if fits(c, True)),
                next(
                    (o for o, c in zip(candidates, configs, strict=True) if fits(c, False)),
                    candidates[0],
                ),
            )
            sessions.append(cls.of_bundle(path, chosen, warn, bundle))
        return sessions

    @property
    def source(self) -> SourceTree | None:
        """The checkout's tree, read from git when first needed (a console opening a cached
        run never needs it before its first paint); None for a bundle."""
        if self.bundle is not None:
            return None
        with self._source_lock:
            if self._source is None:
                from scout_tui.source.tree import SourceTree

                self._source = SourceTree(self.options.repo)
            return self._source

    def _open_stores(self) -> None:
        options, warn = self.options, self.warn
        self.cache = Cache(options.cache_dir, warn=warn)
        self.state = StateStore(options.state_dir)
        self.decision_store = DecisionStore(self.state, options.origin)
        self.scope = scope_of(self.checkout, self.experiment)
        self._github: GitHub | None = None
        self._github_reason: str | None = None
        self.kept_apart: RunResult | None = None  # the day's fuller run, when collect's was not

    # -- where the run's things are, on this machine ------------------------------------------
    def workdir(self) -> Path | None:
        """Where a repro runs: the checkout; for a bundle only the reviewer's own (--repo)."""
        if self.bundle is not None:
            return self.reviewer_checkout
        path = Path(self.checkout.path)
        return path if path.is_dir() else None

    def repro(self, finding: Finding, test: str | None = None) -> tuple[ReproArgv, Path]:
        """What `r` runs for the finding (for `test`, one of its failing tests; else the
        first with a repro), and where; ReproError says why nothing runs."""
        from scout_tui.analysis.ci.repro import ReproError

        workdir = self.workdir()
        if workdir is None and self.bundle is not None:
            raise ReproError(
                f"a bundle's repro runs only in your own checkout of "
                f"{self.repository}: scout open FILE --repo PATH"
            )
        if workdir is None:
            raise ReproError(f"the checkout {self.checkout.path} is not here")
        return self.derived_repro(finding, test), workdir

    def derived_repro(self, finding: Finding, test: str | None = None) -> ReproArgv:
        """The finding's repro (of `test`, when given) in one of the shapes scout runs. A
        bundle's stored commands are never used: they are derived again, by scout's
        parser, from the bundle's log excerpt."""
        from scout_tui.analysis.ci.repro import ReproError, repro_argv

        if self.bundle is not None:
            command = self._excerpt_command(finding, test)
        elif test is not None:
            command = finding.evidence.repros.get(test)
        else:
            command = finding.evidence.repro
        if not command:
            which = f" for {test}" if test else ""
            raise ReproError(f"this finding has no repro command{which}")
        return repro_argv(command)

    def _excerpt_command(self, finding: Finding, test: str | None) -> str | None:
        from scout_tui.analysis.ci.cilog import analyse
        from scout_tui.analysis.ci.repro import failure_repro

        kept = self.logs.log_file(finding)
        if kept is None:
            return None
        fd = os.open(kept.path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            failures = analyse(fd, self.experiment).failures
        finally:
            os.close(fd)
        wanted = [test] if test is not None else finding.evidence.failing_tests
        named = [f for f in failures if f.name in wanted] or ([] if test else failures)
        return next((r for f in named if (r := failure_repro(f)) is not None), None)

    # -- GitHub ------------------------------------------------------------------------------
    @property
    def api_url(self) -> str:
        return self.endpoints.api_url

    @property
    def web_url(self) -> str:
        return self.endpoints.web_url

    def github(self) -> tuple[GitHub | None, str]:
        """The GitHub client, or None and why (said as "skipped — <why>")."""
        if self._github is None and self._github_reason is None:
            if self.options.offline:
                self._github_reason = "offline"  # said as "skipped — offline"
            else:
                token = self.options.token or find_token(self.api_url)
                if token is None:
                    self._github_reason = missing_token(self.api_url)
                else:
                    # PyGithub costs 160 ms to import: paid when GitHub is first needed.
                    from scout_tui.github.client import GitHubClient

                    self._github = GitHubClient(
                        self.api_url, token, self.config.github, cache=self.cache
                    )
        return self._github, self._github_reason or ""

    # -- the day's run ------------------------------------------------------------------
    def run_options(self) -> RunOptions:
        from scout_tui.pipeline.day import RunOptions

        github, reason = self.github()
        return RunOptions(
            repo=Path(self.checkout.path),
            config=self.config,
            as_of=self.options.as_of,
            prior_dir=self.options.prior_dir,
            offline=self.options.offline,
            only=self.options.only,
            processes=self.options.processes,
            github=github,
            github_reason=reason,
            journaled_items=self._journaled_items() if github is not None else {},
            web_url=self.web_url,
            cache=self.cache,
            today=self.options.today,
        )

    def events(self, cancel: threading.Event | None = None) -> Iterator[Event]:
        """Collect, streaming every event; the finished run is cached (unless cancelled)."""
        from scout_tui.collect.events import RunFinished, RunKeptApart
        from scout_tui.pipeline.day import run_events

        if self.bundle is not None:
            raise UsageError(
                f"{self.bundle_path} is a bundle: it was collected on another "
                "machine; collect there, or on a checkout of your own"
            )
        try:
            options = self.run_options()
            if options.github is not None:
                options.github.new_run()  # unreachable or rate-limited last time: ask again
            # A kept run made with another configuration or other prior reports no longer
            # stands for the day: the new run replaces it, however much less it looked at.
            cached = None if self.options.only else self.cached_run()
            replace = cached is not None and self.stale(cached) is not None
            for event in run_events(options, cancel):
                if isinstance(event, RunFinished):
                    # Said before the run itself, so the console never shows the poorer run.
                    kept = self.cache.put_run(event.result, replace=replace)
                    if kept is not None:
                        yield RunKeptApart(kept, kept_apart_note(event.result, kept))
                yield event
        except (NotARepository, ConfigError, FileNotFoundError) as exc:
            raise UsageError(str(exc)) from None

    def collect(
        self,
        on_event: Callable[[Event], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> RunResult:
        """The run just made (cached, or kept apart as poorer: `kept_apart` is then the
        day's fuller run, which stays the day's run)."""
        from scout_tui.collect.events import RunFinished, RunKeptApart, RunWarning

        result = None
        self.kept_apart = None
        for event in self.events(cancel):
            if on_event is not None:
                on_event(event)
            elif isinstance(event, RunWarning):
                self.warn(event.message)
            if isinstance(event, RunFinished):
                result = event.result
            elif isinstance(event, RunKeptApart):
                self.kept_apart = event.kept
                self.warn(event.message)
        assert result is not None
        return result

    def cached_run(self) -> RunResult | None:
        if self.bundle is not None:
            return self.bundle.run
        only = list(self.options.only) if self.options.only else None
        return self.cache.get_run(self.checkout, self.experiment, self.day, only)

    def glance_run(self) -> RunResult | None:
        """The glance of the day's cached run (`store.cache.glance_of`): what the console
        paints first, before the whole run is read. None: read the run itself."""
        if self.bundle is not None:
            return None
        only = list(self.options.only) if self.options.only else None
        return self.cache.get_glance(self.checkout, self.experiment, self.day, only)

    def poorer_run(self) -> RunResult | None:
        """The day's latest run kept apart because it looked at less than the day's run."""
        if self.bundle is not None or self.options.only:
            return None
        return self.cache.poorer_run(self.checkout, self.experiment, self.day)

    def kept_apart_notice(self, run: RunResult | None) -> str | None:
        """What to say beside the day's run `run` when a poorer run is kept apart."""
        if run is None or run.only is not None:
            return None
        poorer = self.poorer_run()
        # Kept apart against this run: one that replaced it forgot the poorer run.
        return kept_apart_note(poorer, run) if poorer is not None and lost(poorer, run) else None

    def stale(self, cached: RunResult) -> str | None:
        """Why the cached run no longer stands for the day: it read other prior reports
        than --prior names, or was made with another configuration; None: it stands."""
        prior = self.options.prior_dir
        if prior is not None and cached.prior_source != str(prior.resolve()):
            read = (
                f"read prior reports from {cached.prior_source}"
                if cached.prior_source and not cached.prior_source.startswith("skipped")
                else "read no prior reports"
            )
            return f"the cached run {read}, not those in {prior}"
        from scout_tui.pipeline.day import config_digest

        if cached.config_digest not in (None, config_digest(self.config)):
            return "the configuration changed since the cached run"
        return None

    def scanned_commit(self) -> str | None:
        """The commit a run would scan now: HEAD, or the last commit of --date's day."""
        if self.source is None:
            return self.bundle.run.head if self.bundle else None
        if self.options.as_of is None:
            return self.source.head()
        end = datetime.combine(self.options.as_of + timedelta(days=1), time(), UTC)
        return self.source.commit_before(end)

    def stale_checkout(self) -> str | None:
        """What to say when today's run is of a checkout much older than today (not pulled);
        None for a fresh one, a named day's run, or a bundle (its day is its own)."""
        if self.source is None or self.options.as_of is not None:
            return None
        head = self.source.head()
        today = self.options.today or today_utc()
        return stale_checkout(self.source, head, today) if head else None

    def day_run(
        self,
        recollect: bool = False,
        on_event: Callable[[Event], None] | None = None,
        stale_ok: bool = False,
        say_kept_apart: bool = True,
    ) -> RunResult:
        """The day's run: the cached one (what was reviewed is what gets published), or a
        new collection when there is none, when asked, or when --prior names other
        reports than the cached run read. `stale_ok` (the triage commands: what they list
        and decide on is the run reviewed): such a run is used as it is, and said so."""
        cached = None if recollect else self.cached_run()
        why = self.stale(cached) if cached is not None else None
        if why is not None and stale_ok:
            self.warn(f"{why}: using the cached run as it is (`scout collect` collects again)")
        elif why is not None:
            self.warn(f"{why}: collecting again")
            cached = None
        if cached is None:
            if not recollect and why is None:  # which checkout, cache and day, said
                self.warn(
                    f"no run of {self.day} for {self.checkout.path} in {self.cache.directory}:"
                    " collecting one"
                )
            fresh = self.collect(on_event)  # kept apart when poorer: it said so
            return self.kept_apart or fresh
        notice = self.kept_apart_notice(cached) if say_kept_apart else None
        if notice is not None:
            self.warn(notice)
        stale = self.stale_checkout()  # a collect said so; a run read from the cache too
        if stale is not None:
            self.warn(stale)
        now = self.scanned_commit()
        if cached.head and now and cached.head != now:
            when = cached.collected_at.strftime("%H:%M UTC") if cached.collected_at else "earlier"
            self.warn(
                f"the cached run scanned {cached.head[:12]} ({when}); the checkout is now "
                f"at {now[:12]}: using the cached run, which is what was reviewed "
                "(--recollect to collect again)"
            )
        return cached

    @property
    def review(self) -> Review:
        """The reviewer's decisions on this run, and their actions (each one undoable)."""
        return Review(self.decision_store, self.scope, self.checkout, self.experiment)

    # -- what leaves -----------------------------------------------------------------------
    def run_problems(self, run: RunResult) -> list[str]:
        """What makes a run a poor one to publish: collectors that failed or were skipped
        (--offline included: it is being published online now). Said before publishing,
        with --recollect as the way out."""
        problems = [
            f"{state.title} {state.state}" + (f": {state.reason}" if state.reason else "")
            for state in run.collectors
            if state.state in ("failed", "skipped", "cancelled")
        ]
        if not run.prior_reports and (run.prior_source or "").startswith("skipped"):
            # Nothing known of what was reported already: carried items look new, and
            # their drafts would be filed a second time.
            problems.append(
                f"no prior report was read ({run.prior_source}): findings "
                "reported before would be filed again as new"
            )
        return problems

    def report_markdown(self, run: RunResult) -> str:
        """`scout report`: every finding whole but for its long lists (the JSON has them)."""
        from scout_tui.pipeline.day import render_markdown
        from scout_tui.report.render import Layout

        return render_markdown(run, Layout(list_items=self.config.report.max_list_items))

    def posted_markdown(self, run: RunResult, room: int = 0) -> str:
        """The report as publishing posts it: cut to fit GitHub's comment limit with room
        for the board links publishing adds, and `room` characters more (a person's text)."""
        from scout_tui.pipeline.day import render_markdown
        from scout_tui.report.render import COMMENT_LIMIT, ReportTooLong, fit_report

        board = self.config.board
        url = (
            f"{self.web_url}/users/{board.owner}/projects/{board.number}"
            f"?pane=issue&itemId={'9' * 20}"
        )
        links = sum(1 for f in run.findings if f.board_item and f.board is None)
        reserve = links * len(f" ([board item]({url}))")
        if reserve + room >= COMMENT_LIMIT:
            raise ReportTooLong(
                f"{links:,} new Action Items: their board links alone ({reserve:,} characters) "
                f"leave no room in a GitHub comment ({COMMENT_LIMIT:,}); drop or merge some"
            )
        return fit_report(
            lambda layout: render_markdown(run, layout),
            self.config.report.max_list_items,
            COMMENT_LIMIT - reserve - room,
        )

    def plan(self, run: RunResult, board_items: list[BoardItem] | None = None) -> PublishPlan:
        """What publishing `run` (triaged) would do; with the board's items, the findings
        already on it are duplicates, not drafts."""
        from scout_tui.publish.plan import plan_against_board

        if board_items is None:
            return plan_against_board(self.config, run, self.posted_markdown(run), None, None)
        publisher = self.publisher()
        return plan_against_board(
            self.config,
            run,
            self.posted_markdown(run),
            board_items,
            publisher.scout(),
            publisher.journaled_status_lines(run.date.isoformat()),
        )

    def board_items(self) -> list[BoardItem]:
        github, reason = self.github()
        if github is None:
            raise ScoutError(f"the board cannot be read: {reason}")
        board_config = self.config.board
        board = github.board(board_config.owner, board_config.number, board_config.status_field)
        return github.board_items(board, board_config.status_field)

    def published_at(self, day: date) -> datetime | None:
        """When `day`'s report comment was posted to this session's target from this state
        dir (None: not yet, or the journal cannot be read)."""
        from scout_tui.publish.journal import Journal
        from scout_tui.publish.target import Target

        target = Target.of(self.config, self.api_url, self.web_url)
        try:
            return Journal(self.state).done_at(target.journal_scope, day.isoformat(), "comment")
        except StateError:
            return None

    def filed(self) -> frozenset[str]:
        """The findings whose Backlog drafts publishes from this state dir filed."""
        return frozenset(self._journaled_items().values())

    def _journaled_items(self) -> dict[str, str]:
        """The board items this state dir's publishes added (scout's, whoever the token)."""
        from scout_tui.publish.journal import Journal
        from scout_tui.publish.target import Target

        target = Target.of(self.config, self.api_url, self.web_url)
        try:
            return Journal(self.state).items(target.journal_scope)
        except StateError as exc:  # a damaged store costs the collection nothing but this
            self.warn(f"{exc}: drafts are matched by their creator only")
            return {}

    def publish_target(self) -> str:
        """Where publishing goes and which configuration says so: the confirmation and the
        dry run name it."""
        project, board = self.config.project, self.config.board
        return (
            f"{project.repo}#{project.tracking_issue} and the board {board.owner}/"
            f"{board.number} (from {self.config.source}) on {self.api_url} (from "
            f"{self.endpoints.api_from}), links to {self.web_url}"
        )

    def merge_notes(self, parts: Sequence[Finding], target: Finding) -> list[str]:
        """What merging `parts` into `target` loses that the reviewer should hear: a part of
        a higher priority than the target's (it is said at the target's); each part that
        would file a Backlog draft, joining a finding that files none and has no board item
        to share."""
        from scout_tui.publish.plan import wants_draft
        from scout_tui.triage.decisions import edited

        entries = self.review.decisions()
        into = edited(target, entries.get(target.fingerprint))
        shown = [edited(part, entries.get(part.fingerprint)) for part in parts]
        notes = [
            f"{part.fingerprint} is {part.priority.value}: it is said at "
            f"{target.fingerprint}'s {into.priority.value} (promote it to raise it)"
            for part in shown
            if part.priority is not None
            and into.priority is not None
            and part.priority.value < into.priority.value  # "P0" < "P1": higher
        ]
        if wants_draft(into) or into.board is not None or into.section is Section.ALL_CLEAR:
            return notes  # (a merge into an All Clear line is refused)
        return notes + [
            f"{part.fingerprint}: its Backlog draft is no longer filed (it joins "
            f"{target.fingerprint} in {SECTIONS[into.section].short}, which files none)"
            for part in shown
            if wants_draft(part)
        ]

    def publisher(self, note: Callable[[str], None] = lambda message: None) -> Publisher:
        from scout_tui.publish.execute import Publisher
        from scout_tui.publish.target import Target

        if self.bundle is not None and self.repository != self.config.project.repo:
            raise UsageError(
                f"the bundle is a run of {self.repository}; your configuration "
                f"({self.config.source}) publishes to {self.config.project.repo}: "
                f"give the scout.toml for {self.repository} (--config FILE, "
                "or --repo with your checkout)"
            )
        github, reason = self.github()
        if github is None:
            raise UsageError(f"publishing needs GitHub: {reason}")
        target = Target.of(self.config, self.api_url, self.web_url)
        return Publisher(
            github,
            self.state,
            self.config,
            target,
            self.posted_markdown,
            note,
            today=self.options.publish_today,
        )


def reviewer_config_path(options: SessionOptions) -> Path | None:
    """The scout.toml a bundle is reviewed and published with: --config, else the one of
    --repo's checkout, else of the checkout around the current folder; None: the shipped
    default. Never the bundle's own: a file from elsewhere does not say where the token goes."""
    if options.config is not None:
        return options.config
    if options.reviewer_checkout is not None:
        return find_config(Path(_checkout_at(options.reviewer_checkout).path))
    try:
        return find_config(Path(find_checkout(Path.cwd()).path))
    except NotARepository:
        return None


def _checkout_at(folder: Path) -> Checkout:
    if not folder.is_dir():
        raise UsageError(f"--repo {folder}: no such folder")
    try:
        return find_checkout(folder)
    except NotARepository as exc:
        raise UsageError(str(exc)) from None


def _load_checked(options: SessionOptions, path: Path | None) -> tuple[Config, Endpoints]:
    """`reviewer_config`, its rule kinds checked at once; errors as UsageError."""
    try:
        config, chosen = reviewer_config(path, options.api_url, options.api_url_said)
        if set(config.rules) - shipped_rule_kinds():  # a typo'd kind: said at once
            from scout_tui.pipeline.day import check_rule_kinds

            check_rule_kinds(config)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return config, chosen
