"""The triage screen: the day's run in a tree, its evidence beside it, a key per decision.

Every key is an `action_*` here (or on the tree, for moving and marking). Work that touches
SQLite, git, a process or GitHub goes to a controller in a worker; its message comes back
to a handler here, the only code that updates the widgets.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input
from textual.worker import get_current_worker

from scout_tui.errors import ScoutError
from scout_tui.model import Finding, RunResult, Section, TriageEntry
from scout_tui.session import Session
from scout_tui.store.state import StateError
from scout_tui.triage import decisions as triage
from scout_tui.tui.console import settle_memory
from scout_tui.tui.controllers.collection import Collection
from scout_tui.tui.controllers.decisions import DecisionQueue
from scout_tui.tui.controllers.editor import edit_in_editor
from scout_tui.tui.edit_document import Edited
from scout_tui.tui.keys import binding
from scout_tui.tui.messages import (
    CheckoutStale,
    CollectionEnded,
    CollectionEvent,
    Decided,
    DecidedElsewhere,
    GitHubStatus,
    Opened,
    Published,
    PublishedElsewhere,
)
from scout_tui.tui.screens.drop_reason import DropReason
from scout_tui.tui.view import Filter, changed_decisions, short_title
from scout_tui.tui.widgets.collectors_bar import CollectorsBar
from scout_tui.tui.widgets.finding_panes import FindingPanes
from scout_tui.tui.widgets.findings_tree import FindingsTree
from scout_tui.tui.widgets.key_footer import KeyFooter
from scout_tui.tui.widgets.log_pane import LogPane
from scout_tui.tui.widgets.publish_flow import PublishFlow
from scout_tui.tui.widgets.repro_flow import ReproFlow
from scout_tui.tui.widgets.status_line import StatusLine
from scout_tui.tui.widgets.workspace import Workspace

LIVE_REFRESH = 0.25  # seconds between tree rebuilds while findings stream in
PANES_DELAY = 0.04  # seconds the cursor rests before the panes follow it
FILTER_AS_TYPED = 0.15  # seconds the typing pauses before the tree narrows to the filter
STORE_ANSWER_HOLD = 2.0  # seconds, at most, keys typed after undo wait for the store's answer


def needs_whole_run(action: Callable[[TriageScreen], None]) -> Callable[[TriageScreen], None]:
    """An action that reads a finding's body, files or evidence, which a glance has not:
    pressed while the tree shows the glance, it reads the whole run first, on the loop (a
    tenth of a second at 5,000 findings; the keys after it wait, in order)."""

    @functools.wraps(action)
    def acted(screen: TriageScreen) -> None:
        if screen.glance is None or screen.take_whole_run():
            action(screen)

    return acted


class TriageScreen(Screen[None]):
    BINDINGS = [
        # The finding shown, from whichever pane has the focus (the log pane says `c`, `r`).
        binding("copy_repro"),
        binding("run_repro"),
        binding("open_url"),
        binding("open_log"),
        binding("filter"),
        binding("preview"),
        binding("publish"),
        binding("rerun"),
        binding("zoom"),
        binding("help"),
        Binding("escape", "unzoom_or_clear", "Back", show=False, id="back"),
    ]

    def __init__(
        self, session: Session, run: RunResult | None, *, collect: bool, load_cached: bool
    ) -> None:
        super().__init__()
        self.session = session
        self.run_result = run
        self.load_cached = load_cached and run is None
        self.collect_at_start = collect or (run is None and not load_cached)
        self.entries: dict[str, TriageEntry] = {}
        self.live: list[Finding] = []
        # The cached run's glance, shown until the whole run is read (`on_glanced`).
        self.glance: RunResult | None = None
        self.filter = Filter()
        self.collection: Collection | None = None
        self._kept: RunResult | None = None  # the day's run, when the collection's is poorer
        self._panes_timer: Timer | None = None
        self._store_answer_hold: Timer | None = None  # keys held until undo is answered
        self._filter_timer: Timer | None = None  # the tree narrowed as the filter is typed
        self._last_highlight = 0.0
        self._live_dirty = False
        self._pending_section: Section | None = None  # where the overview asked to open
        self._unfiltered_at: str | None = None  # the cursor's finding when a filter began
        self.decisions = DecisionQueue(session, self.post_message)
        # Held, not queried: the repro must be stopped at exit, when the screen's children
        # are already gone.
        self.repro_flow = ReproFlow(session)
        self.publish_flow = PublishFlow(session)

    # The screen's own keys do nothing under a modal: not shown there either.
    OWN_ACTIONS = frozenset(
        {"filter", "preview", "publish", "rerun", "zoom", "help"}
        | {"copy_repro", "run_repro", "open_url", "open_log"}
    )

    def focus_tree_for(self, key: str) -> None:
        """A triage key pressed in a pane (the diff, the log) acts on the finding the panes
        show, as in the tree: the focus goes to the tree now, before the key is routed,
        so that it and the keys typed after it all reach the tree, in order."""
        tree, focused = self.query_one(FindingsTree), self.app.focused
        if focused is None or focused is tree or isinstance(focused, Input):
            return  # (a filter's text is typed, not acted on)
        if tree.cursor_fingerprint is None:
            return
        bound = tree._bindings.key_to_bindings.get(key, [])
        if any(b.id for b in bound):  # scout's triage keys, not the Tree's moves
            self.set_focus(tree)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        above = self.app.screen is not self  # a modal, the log viewer
        return not (above and action in self.OWN_ACTIONS | {"unzoom_or_clear"})

    @property
    def findings(self) -> list[Finding]:
        if self.run_result is not None:
            return self.run_result.findings
        return self.glance.findings if self.glance is not None else self.live

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield Workspace(self.session, id="main")
        yield CollectorsBar(id="collectors")
        yield KeyFooter()
        yield self.publish_flow
        yield self.repro_flow

    def on_mount(self) -> None:
        status = self.query_one(StatusLine)
        checkout = Path(self.session.checkout.path).name
        status.where = f"{checkout}·{self.session.experiment.rsplit('/', 1)[-1]} {self.session.day}"
        self._record_decisions()
        status.busy = "opening the cached run…" if self.load_cached else ""
        if not (self.load_cached and self._open_at_a_glance()):
            self.decisions.open(self.run_result, self.load_cached)
        if self.collect_at_start:
            self.action_rerun()
        # Focused now, not after this handler (`focus()` waits a turn): a key typed at the
        # first frame goes to the tree, whose key routing keeps a burst in order.
        self.set_focus(self.query_one(FindingsTree), scroll_visible=False)
        self.set_interval(30, status.refresh)  # the run's age

    @work(thread=True, exclusive=True, group="triage", exit_on_error=False)
    def _record_decisions(self) -> None:
        worker = get_current_worker()
        self.decisions.run(lambda: worker.is_cancelled)

    def show_section(self, section: Section) -> None:
        """The cursor on `section`'s header: now, or once the run is on screen."""
        self._pending_section = section
        if self.run_result is not None:
            self._go_to_pending_section()

    def _go_to_pending_section(self) -> None:
        section, self._pending_section = self._pending_section, None
        tree = self.query_one(FindingsTree)
        if section is not None and tree.select_section(section):
            tree.focus()

    def _open_at_a_glance(self) -> bool:
        """The tree from the cached run's glance (`store.cache.glance_of`: each finding's
        line, a tenth of the run), read here so that the first frame holds it; the whole
        run is read off the loop once that frame is painted. False: no glance to read."""
        try:
            glance = self.session.glance_run()
            if glance is None:
                return False
            entries, filed = self.session.review.decisions(), self.session.filed()
        except (StateError, ScoutError):  # the whole run's read says what is wrong
            return False
        self.glance = glance
        self.query_one(CollectorsBar).show_run(glance)
        self.query_one(StatusLine).collected_at = glance.collected_at
        self.query_one(FindingsTree).filed = filed
        self._apply_entries(entries)
        self.call_after_refresh(self.decisions.read_whole_run)
        return True

    def on_opened(self, message: Opened) -> None:
        self.decisions.handled()
        status = self.query_one(StatusLine)
        status.busy = "" if self.collection is None else status.busy
        glanced, self.glance = self.glance is not None, None
        if message.run is not None and self.run_result is None:
            self.run_result = message.run
        if self.run_result is not None:
            self.query_one(CollectorsBar).show_run(self.run_result)
            status.collected_at = self.run_result.collected_at
        tree = self.query_one(FindingsTree)
        tree.filed = message.filed
        self._apply_entries(message.entries)
        if glanced:
            self._glance_replaced()
        if self._pending_section is not None:
            self.call_after_refresh(self._go_to_pending_section)
        if message.error:
            self.notify(message.error, severity="error", timeout=10)
        if message.kept_apart and message.run is self.run_result:
            status.keep_apart(message.kept_apart)
        if message.published_at is not None:
            status.published_at = message.published_at
        if self.load_cached and message.run is None and self.collection is None:
            self.action_rerun()  # nothing cached for the day: collect it
        # PyGithub's and GitPython's imports wait until the findings are on screen.
        self.call_after_refresh(self.publish_flow.check_github)
        self.call_after_refresh(self.decisions.check_checkout)
        if self.load_cached:
            self.call_after_refresh(settle_memory)

    def take_whole_run(self) -> bool:
        """The whole run in place of the glance, read here and now: a key needs a body
        before the worker's read is in (which then finds the run shown). False: the run
        cannot be read (said)."""
        try:
            run = self.session.cached_run()
        except (StateError, ScoutError) as exc:
            run, why = None, str(exc)
        else:
            why = "the cached run is gone or unreadable"
        if run is None:
            self.notify(f"cannot read the whole run: {why}", severity="error", timeout=8)
            return False
        self.glance, self.run_result = None, run
        self.query_one(CollectorsBar).show_run(run)
        self.query_one(StatusLine).collected_at = run.collected_at
        self._glance_replaced()
        return True

    def _glance_replaced(self) -> None:
        """The glance's rows become the whole run's, each with its body."""
        tree = self.query_one(FindingsTree)
        if not tree.take_findings(self.findings, self.entries, self.filter or None):
            self._show()
        self._show_panes(tree.cursor_fingerprint)

    def on_checkout_stale(self, message: CheckoutStale) -> None:
        self.notify(message.said, severity="warning", timeout=10)

    # -- the findings shown -----------------------------------------------------------------
    def _show(self) -> None:
        tree = self.query_one(FindingsTree)
        tree.show_findings(self.findings, self.entries, self.filter or None)
        self.query_one(StatusLine).counts(tree.reviewed, tree.total, len(tree.marked))
        self._show_panes(tree.cursor_fingerprint)

    def _apply_entries(self, entries: dict[str, TriageEntry]) -> None:
        before, self.entries = self.entries, entries
        tree, changed = self.query_one(FindingsTree), changed_decisions(before, entries)
        # A decision changes a finding's badges, seldom its place: relabelled alone.
        relabelled = None
        if tree.rows and not self.filter:
            relabelled = tree.relabel(changed, entries, before)
        if relabelled is None:
            self._show()
        elif relabelled:
            self.query_one(StatusLine).counts(tree.reviewed, tree.total, len(tree.marked))
            if tree.cursor_fingerprint in relabelled:  # its badges: in a frame of their own
                self._schedule_panes(tree.cursor_fingerprint)

    def _predict(
        self,
        findings: list[Finding],
        decide: Callable[[Finding, TriageEntry | None], TriageEntry | None],
    ) -> None:
        """Show a decision at once; the worker then records it and posts what the state
        store holds (the same, or what it refused, with why)."""
        entries = dict(self.entries)
        for finding in findings:
            entry = decide(finding, entries.get(finding.fingerprint))
            if entry is not None:
                entries[finding.fingerprint] = entry
        self._apply_entries(entries)

    def _schedule_panes(self, fingerprint: str | None) -> None:
        if self._panes_timer is not None:
            self._panes_timer.stop()
        self._panes_timer = self.set_timer(PANES_DELAY, lambda: self._show_panes(fingerprint))

    def _show_panes(self, fingerprint: str | None) -> None:
        if self.glance is not None:  # a glance has no bodies: the panes wait for the run
            return
        try:
            tree = self.query_one(FindingsTree)
        except NoMatches:  # a timer's last tick while the app closes
            return
        row = tree.row(fingerprint) if fingerprint else None
        empty = tree.placeholder(self.collection is not None, bool(self.filter))
        run = self.repro_flow.run
        if not (row and run and run.fingerprint == row.finding.fingerprint):
            run = None
        self.query_one(FindingPanes).show(row, empty, run, self.query_one(Workspace).zoomed)

    @on(FindingsTree.FindingHighlighted)
    def _highlighted(self, message: FindingsTree.FindingHighlighted) -> None:
        # One move shows the finding at once; holding a key down through 5,000 findings
        # renders the panes once, when the cursor rests.
        now = time.monotonic()
        if now - self._last_highlight > PANES_DELAY:
            if self._panes_timer is not None:
                self._panes_timer.stop()
                self._panes_timer = None
            self._show_panes(message.fingerprint)
        else:
            self._schedule_panes(message.fingerprint)
        self._last_highlight = now
        self.query_one(StatusLine).marked = len(self.query_one(FindingsTree).marked)

    def on_findings_tree_marks_changed(self, message: FindingsTree.MarksChanged) -> None:
        self.query_one(StatusLine).marked = message.marked

    # -- decisions --------------------------------------------------------------------------
    def on_decided(self, message: Decided) -> None:
        self.decisions.handled()
        # What the store held after this decision: not yet the decisions shown after it
        # (typed ahead, still queued), whose own answer comes next — applied, it would
        # take them back for a moment, and a key read meanwhile (`n`) would act on that.
        latest = not self.decisions.pending or message.severity == "error"
        if message.entries is not None and latest:
            self._apply_entries(message.entries)
        if message.select:
            self.query_one(FindingsTree).select_fingerprint(message.select)
        if message.said:
            self.notify(message.said, severity=message.severity, timeout=3)  # type: ignore[arg-type]
        if not self.decisions.pending:
            self._store_answered()

    def on_decided_elsewhere(self, message: DecidedElsewhere) -> None:
        if self.decisions.pending:  # this session's own answer carries the store's state
            return
        if changed_decisions(self.entries, message.entries):
            self._apply_entries(message.entries)
            self.notify(message.said, timeout=3)

    def _targets(self, action: str) -> list[Finding]:
        """The marked findings, else the cursor's; said when there is none. Marks a filter
        hides are acted on too: said with the action, so nothing happens unseen."""
        tree = self.query_one(FindingsTree)
        found = tree.targets_of(self.findings, action == "accept")
        if not found:
            header = tree.cursor_node is not None and tree.cursor_fingerprint is None
            hint = " (on a header, space marks every finding under it)" if header else ""
            self.notify(
                f"{action}: no finding under the cursor{hint}", severity="warning", timeout=3
            )
        hidden = sum(1 for f in found if tree.row(f.fingerprint) is None)  # rows shown only
        if hidden:
            self.notify(
                f"{action}: {hidden} of the {len(found)} marked are hidden by the filter",
                timeout=5,
            )
        return found

    def _cursor(self) -> Finding | None:
        return self.query_one(FindingsTree).cursor_finding

    def _one(self, action: str) -> Finding | None:
        """The finding a single-finding action applies to: the first marked one, else the
        cursor's."""
        return next(iter(self._targets(action)), None)

    def _original(self, finding: Finding) -> Finding:
        return next(f for f in self.findings if f.fingerprint == finding.fingerprint)

    def action_accept(self) -> None:
        findings = self._targets("accept")
        if len(findings) > 1:  # a bulk accept never takes a drop or a merge back unseen
            kept = {"dropped", "merged"}
            undone = {
                f.fingerprint
                for f in findings
                if (entry := self.entries.get(f.fingerprint)) and entry.decision in kept
            }
            if undone:
                findings = [f for f in findings if f.fingerprint not in undone]
                self.notify(
                    f"{len(undone)} dropped or merged finding(s) left as they were "
                    "(accept one alone to take its drop or merge back)",
                    severity="warning",
                    timeout=6,
                )
        if findings:
            self._predict(findings, lambda f, entry: triage.accept(f.fingerprint, entry))
            self.decisions.accept(findings)
            self.query_one(FindingsTree).clear_marks()

    def action_accept_next(self) -> None:
        tree = self.query_one(FindingsTree)
        # Chosen before the accept: under a filter it may take the finding (and its
        # section) off the tree, and the cursor lands on the next one already.
        accepted = frozenset(tree.marked | {tree.cursor_fingerprint or ""})
        following = tree.next_unreviewed(skip=accepted)
        self.action_accept()
        if following is None or not tree.select_fingerprint(following):
            tree.action_next_unreviewed()

    def action_demote(self) -> None:
        self._move(up=False)

    def action_promote(self) -> None:
        self._move(up=True)

    def _move(self, up: bool) -> None:
        if findings := self._targets("promote" if up else "demote"):
            tree = self.query_one(FindingsTree)
            # Shown at once, the cursor going with the finding: the store's answer then
            # moves it no more (a key typed after it moves on from where the finding went).
            self._predict(findings, lambda f, entry: triage.move(f, entry, up))
            self.decisions.move(findings, up)
            tree.clear_marks()

    def action_drop(self) -> None:
        findings = self._targets("drop")
        if not findings:  # the reason typed after `x` must not run as keys (`u` undoes)
            self.query_one(FindingsTree).skip_typed_answer()
            return
        what = f"{len(findings)} findings" if len(findings) > 1 else "this finding"

        def dropped(reason: str | None) -> None:
            if reason:
                self._predict(findings, lambda f, entry: triage.drop(f.fingerprint, entry, reason))
                self.decisions.drop(findings, reason)
                self.query_one(FindingsTree).clear_marks()

        self.app.push_screen(DropReason(what), dropped)

    @needs_whole_run
    def action_merge(self) -> None:
        if not self._targets("merge"):
            return
        tree = self.query_one(FindingsTree)
        target = self._cursor()
        by_fp = {f.fingerprint: f for f in self.findings}
        parts = [
            by_fp[fp]
            for fp in sorted(tree.marked)
            if fp in by_fp and (target is None or fp != target.fingerprint)
        ]
        if target is None or not parts:
            self.notify(
                "mark findings with space, then put the cursor on the one they join and press m",
                severity="warning",
                timeout=4,
            )
            return
        decided = self.entries.get(target.fingerprint)
        if decided is not None and decided.decision in ("dropped", "merged"):
            # Refused here, the marks kept: the store would refuse it by fingerprint.
            into = short_title(target.title, 60)
            self.notify(
                f"cannot merge into “{into}”: it is {decided.decision} — accept it first, "
                "or put the cursor on the finding to merge into",
                severity="warning",
                timeout=5,
            )
            return
        original = self._original(target)
        tree.clear_marks()
        self.decisions.merge(parts, original, select=target.fingerprint)

    def action_undo(self) -> None:
        self._keys_wait_for(self.decisions.undo)

    def action_redo(self) -> None:
        self._keys_wait_for(self.decisions.redo)

    def _keys_wait_for(self, ask: Callable[[], None]) -> None:
        """Undo and redo are the store's to answer (the last action may be another
        session's): nothing predicts them, so the keys typed after them wait for that
        answer, and act where it put the findings, as they would typed one at a time."""
        tree = self.query_one(FindingsTree)
        tree.hold_keys()
        if self._store_answer_hold is not None:
            self._store_answer_hold.stop()
        self._store_answer_hold = self.set_timer(STORE_ANSWER_HOLD, self._store_answered)
        ask()

    def _store_answered(self) -> None:
        if self._store_answer_hold is not None:
            self._store_answer_hold.stop()
            self._store_answer_hold = None
            self.query_one(FindingsTree).release_keys()

    @needs_whole_run
    def action_edit(self) -> None:
        if self._targets("edit") and (finding := self._cursor()) is not None:
            from scout_tui.tui.screens.edit_finding import EditFinding  # TextArea: when used

            self.app.push_screen(EditFinding(finding), lambda e: self._record_edit(finding, e))

    @needs_whole_run
    def action_edit_external(self) -> None:
        if self._targets("edit_external") and (finding := self._cursor()) is not None:
            outcome = edit_in_editor(finding, self.app.suspend)
            if outcome.said:
                self.notify(outcome.said, severity=outcome.severity, timeout=outcome.timeout)
            self._record_edit(finding, outcome.edited)

    def _record_edit(self, finding: Finding, edited: Edited | None) -> None:
        if edited is not None:
            self.decisions.edit(self._original(finding), finding, edited)

    # -- where a finding's evidence leads ------------------------------------------------------
    @needs_whole_run
    def action_copy_repro(self) -> None:
        if (finding := self._one("copy_repro")) is not None:
            self.repro_flow.copy(finding)

    @needs_whole_run
    def action_open_url(self) -> None:
        if (finding := self._one("open_url")) is not None:
            self.query_one(FindingPanes).open_url(finding)

    @needs_whole_run
    def action_open_log(self) -> None:
        if targets := self._targets("open_log"):
            self.query_one(FindingPanes).open_log(self._cursor() or targets[0])

    # -- the repro ----------------------------------------------------------------------------
    @needs_whole_run
    def action_run_repro(self) -> None:
        flow = self.repro_flow
        flow.toggle(None if flow.controller.running else self._one("run_repro"))

    def on_repro_flow_output(self, message: ReproFlow.Output) -> None:
        if self.query_one(FindingsTree).cursor_fingerprint == message.run.fingerprint:
            self.query_one(LogPane).append_run_output(message.run, message.lines)

    def on_repro_flow_changed(self, message: ReproFlow.Changed) -> None:
        self._show_panes(self.query_one(FindingsTree).cursor_fingerprint)

    # -- collection ---------------------------------------------------------------------------
    def action_rerun(self) -> None:
        if self.session.bundle is not None:
            self.notify(
                f"{self.session.bundle_path} is a bundle: collect on a checkout of "
                f"{self.session.repository} (`scout collect --bundle …`), then open "
                "the new one",
                severity="warning",
                timeout=8,
            )
            return
        if self.collection is not None:
            self.collection.cancel()
            self.notify("cancelling the collection…", timeout=2)
            return
        self.collection = Collection(self.session.options, self.session.api_url)
        self.live, self._kept = [], None
        self.query_one(StatusLine).busy = "collecting… (R cancels)"
        self._collect(self.collection)

    @work(thread=True, group="collect", exit_on_error=False)
    def _collect(self, collection: Collection) -> None:
        collection.post_events(self.post_message)

    def on_collection_event(self, message: CollectionEvent) -> None:
        from scout_tui.collect.events import (  # with the first collection
            FindingFound,
            RunFinished,
            RunKeptApart,
            RunStarted,
            RunWarning,
        )

        event = message.event
        self.query_one(CollectorsBar).follow(event)
        if isinstance(event, RunStarted):
            if self.run_result is None:
                self._show()
        elif isinstance(event, FindingFound):
            self.live.append(event.finding)
            if self.run_result is None and not self._live_dirty:
                self._live_dirty = True
                self.set_timer(LIVE_REFRESH, self._refresh_live)
        elif isinstance(event, RunWarning):
            self.notify(event.message, severity="warning", timeout=6)
        elif isinstance(event, RunKeptApart):
            # Said before RunFinished: the run just made looked at less than the day's (R
            # offline after an online run), so the day's fuller run stays on screen.
            self._kept = event.kept
            self.query_one(StatusLine).keep_apart(event.message)
        elif isinstance(event, RunFinished):
            if event.result.cancelled and self.run_result is not None:
                # A cancelled run is not the day's (nor cached): the run shown stays.
                self._kept = None
                self.query_one(CollectorsBar).show_run(self.run_result)
                return
            # The reconciled sections replace the live ones; the cursor keeps its finding.
            result, self._kept = self._kept or event.result, None
            if result is event.result and not result.cancelled:  # it replaced the day's run
                self.query_one(StatusLine).keep_apart(None)
            self.run_result = result
            self.query_one(StatusLine).collected_at = result.collected_at
            self.query_one(CollectorsBar).show_run(result)
            self._show()

    def _refresh_live(self) -> None:
        self._live_dirty = False
        if self.run_result is None:
            self._show()

    def on_collection_ended(self, message: CollectionEnded) -> None:
        self.collection = None
        self.query_one(StatusLine).busy = ""
        if message.cancelled:
            self.notify("collection cancelled", timeout=3)
        elif message.error:
            self.notify(f"collection failed: {message.error}", severity="error", timeout=10)
        if self.run_result is None:
            self._show()

    # -- GitHub, preview and publish -----------------------------------------------------------
    def on_git_hub_status(self, message: GitHubStatus) -> None:
        try:
            status, flow = self.query_one(StatusLine), self.publish_flow
        except NoMatches:  # the answer came as the app closed
            return
        status.online = "online" if message.online else f"offline ({flow.github_detail})"
        status.rate = message.detail if message.online else ""

    def on_published(self, message: Published) -> None:
        if message.at is not None:
            self.query_one(StatusLine).published_at = message.at
        tree = self.query_one(FindingsTree)
        if message.filed != tree.filed:  # drafts filed: their badges say so
            tree.filed = message.filed
            self._show()

    def on_published_elsewhere(self, message: PublishedElsewhere) -> None:
        # What the journal says is shown whoever wrote it; this console's own publish (it
        # may be waiting for the other's lock) says itself when it ends.
        status, tree = self.query_one(StatusLine), self.query_one(FindingsTree)
        if message.filed != tree.filed:
            tree.filed = message.filed
            self._show()
        if status.published_at != message.at:
            status.published_at = message.at
            if not self.publish_flow.publishing:
                self.notify("the day's report was published from another session", timeout=4)

    def on_publish_flow_busy(self, message: PublishFlow.Busy) -> None:
        self.query_one(StatusLine).busy = message.text
        if not message.text:  # the question is up (its dialog pushed), or will not be
            self.query_one(FindingsTree).release_keys()

    def triaged_run(self, reviewed_only: bool = False) -> RunResult | None:
        if self.run_result is None:
            return None
        run = self.session.review.triaged(self.run_result, self.entries)  # no SQLite on the loop
        if reviewed_only:
            reviewed = {fp for fp, entry in self.entries.items() if triage.reviewed(entry)}
            kept, withheld = [], Counter[Section]()
            for f in run.findings:  # All Clear lines need no review: they stay as said
                if f.fingerprint in reviewed or f.section is Section.ALL_CLEAR:
                    kept.append(f)
                else:
                    withheld[f.section] += 1  # said in its section, never "nothing"
            run = run.model_copy(update={"findings": kept, "withheld": dict(withheld)})
        return run

    @needs_whole_run
    def action_preview(self) -> None:
        run = self.triaged_run()
        if run is None:
            self.notify("nothing collected yet", severity="warning")
            return
        self.publish_flow.preview(run)

    @needs_whole_run
    def action_publish(self) -> None:
        run, reviewed = self.triaged_run(), self.triaged_run(reviewed_only=True)
        if run is None or reviewed is None or self.collection is not None:
            self.notify("wait for the collection to finish", severity="warning")
            return
        if run.cancelled:
            self.notify(
                "the collection was cancelled before every collector ended: R collects "
                "the day again (a cancelled run is never published)",
                severity="warning",
                timeout=6,
            )
            return
        # Keys typed after `P` (`P n`, `P escape`) are the question's, not the tree's: held
        # until it is up (GitHub is asked first), or until it is known there is none.
        tree = self.query_one(FindingsTree)
        tree.hold_keys()
        if not self.publish_flow.propose(run, reviewed, dict(self.entries)):
            tree.release_keys()

    # -- zoom, filter ---------------------------------------------------------------------------
    def action_zoom(self) -> None:
        """The focused pane alone on the screen, or back."""
        workspace = self.query_one(Workspace)
        if workspace.zoomed is None:
            workspace.zoom()
        else:
            workspace.unzoom()
        self._show_panes(self.query_one(FindingsTree).cursor_fingerprint)

    def action_unzoom_or_clear(self) -> None:
        workspace = self.query_one(Workspace)
        if workspace.zoomed is not None:
            self.action_zoom()
        elif workspace.filtering:
            self._set_filter("")
        elif self.app.screen_stack[0] is not self:  # one of several runs: back to all of them
            self.app.pop_screen()

    @needs_whole_run
    def action_filter(self) -> None:
        self.query_one(Workspace).open_filter()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, message: Input.Submitted) -> None:
        self._set_filter(message.value)

    @on(Input.Changed, "#filter")
    def _filter_typed(self, message: Input.Changed) -> None:
        """The tree narrows as the filter is typed, once the typing pauses."""
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(
            FILTER_AS_TYPED, lambda: self._filter_as_typed(message.value)
        )

    def _filter_as_typed(self, text: str) -> None:
        self._filter_timer = None
        box = self.query_one("#filter", Input)
        if not box.has_focus or box.value != text:  # submitted, closed or typed on since
            return
        tree = self.query_one(FindingsTree)
        before, self.filter = self.filter, Filter.parse(text)
        if self.filter and not before:
            self._unfiltered_at = tree.cursor_fingerprint
        self.query_one(StatusLine).filter_text = text.strip()
        if self.filter != before:
            self._show()

    def _set_filter(self, text: str) -> None:
        self.query_one(Workspace).show_filter(text)
        tree = self.query_one(FindingsTree)
        before, self.filter = self.filter, Filter.parse(text)
        if self.filter and not before:  # where to come back to when no match is left
            self._unfiltered_at = tree.cursor_fingerprint
        lost = tree.cursor_fingerprint is None  # the filter's result was empty
        self.query_one(StatusLine).filter_text = text.strip()
        if self.filter != before:  # the same filter shows the same findings: no rebuild
            self._show()
        if not self.filter and lost and self._unfiltered_at is not None:
            tree.select_fingerprint(self._unfiltered_at)  # after the rebuild's own cursor
        tree.focus()

    def action_help(self) -> None:
        from scout_tui.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.app.active_bindings))

    def shut_down(self) -> None:
        """The console is quitting. Nothing of a run may outlive it; the decisions worker
        ends after the jobs already queued (each one is a committed transaction or
        nothing)."""
        if self.collection is not None:
            self.collection.kill()
        self.repro_flow.stop(grace=2)  # nothing the console started keeps a GPU
        self.decisions.close()
