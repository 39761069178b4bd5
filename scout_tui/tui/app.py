"""The triage console: the day's run in a tree, its evidence beside it, the reviewer's
decisions kept in the state store, and a publish one key away.

Slow work never runs on the event loop: collection is a child process read by a thread
worker; decisions, the GitHub checks and the publish run in thread workers that talk back
only through messages.
"""

from __future__ import annotations

import gc
import os
import queue
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import webbrowser
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult, SuspendNotSupported, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input
from textual.worker import get_current_worker

from scout_tui.analysis.ci.repro import ReproArgv, ReproError
from scout_tui.collect.events import (
    CollectorFinished,
    CollectorStarted,
    ConfigWarned,
    Event,
    FindingFound,
    Progress,
    RunFinished,
    RunKeptApart,
    RunStarted,
    RunWarning,
)
from scout_tui.errors import ScoutError, UsageError, redact
from scout_tui.github.api import GitHubError
from scout_tui.history.baseline import is_past_day
from scout_tui.model import Finding, RunResult, Section, TriageEntry
from scout_tui.repro.process import ProcessGroup
from scout_tui.session import Session
from scout_tui.store.state import Change, StateError
from scout_tui.triage import decisions as triage
from scout_tui.tui.collection import Collection
from scout_tui.tui.edit_document import BadDocument, finding_document, parse_document
from scout_tui.tui.keys import ACTIONS, binding
from scout_tui.tui.screens.drop_reason import DropReason
from scout_tui.tui.screens.edit_finding import Edited, EditFinding
from scout_tui.tui.screens.preview import PreviewScreen
from scout_tui.tui.screens.publish import (
    ConfirmPublish,
    PublishProgress,
    PublishProposal,
)
from scout_tui.tui.screens.repro import ConfirmRepro
from scout_tui.tui.view import Filter, Row, reviewed_count, rows_of, sections
from scout_tui.tui.widgets.collectors_bar import CollectorsBar
from scout_tui.tui.widgets.detail_pane import DetailPane
from scout_tui.tui.widgets.diff_pane import DiffPane
from scout_tui.tui.widgets.findings_tree import FindingsTree
from scout_tui.tui.widgets.log_pane import REPRO_LINES, LogPane, ReproRun
from scout_tui.tui.widgets.status_line import StatusLine

LIVE_REFRESH = 0.25  # seconds between tree rebuilds while findings stream in
PANES_DELAY = 0.04  # seconds the cursor rests before the panes follow it
QUIET_VERBS = {"accepted", "demoted", "promoted", "dropped"}


class ScoutApp(App[int]):
    CSS_PATH = "scout.tcss"
    TITLE = "scout"
    BINDINGS = [
        binding("filter"),
        binding("preview"),
        binding("publish"),
        binding("rerun"),
        binding("zoom"),
        binding("help"),
        binding("quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, id="quit_ctrl_q", priority=True),
        Binding("escape", "unzoom_or_clear", "Back", show=False, id="back"),
    ]

    # -- messages from the thread workers ---------------------------------------------------
    @dataclass
    class CollectionEvent(Message):
        event: Event

    @dataclass
    class CollectionEnded(Message):
        error: str | None
        cancelled: bool

    @dataclass
    class Decided(Message):
        entries: dict[str, TriageEntry]
        said: str
        severity: str = "information"
        select: str | None = None

    @dataclass
    class ReproEnded(Message):
        returncode: int
        stopped: bool

    @dataclass
    class Opened(Message):
        """The day's cached run (None: there is none) and the decisions, read off the loop."""

        run: RunResult | None
        entries: dict[str, TriageEntry]
        error: str | None = None
        kept_apart: str | None = None  # a poorer run of the day is kept apart: this says so

    @dataclass
    class GitHubStatus(Message):
        online: bool
        detail: str

    @dataclass
    class Proposed(Message):
        proposal: PublishProposal | None
        error: str | None

    @dataclass
    class PublishNote(Message):
        line: str

    @dataclass
    class Published(Message):
        title: str
        markdown: str

    def __init__(
        self,
        session: Session,
        run: RunResult | None = None,
        *,
        demo: bool = False,
        collect: bool = False,
        load_cached: bool = False,
    ) -> None:
        """`load_cached`: read the day's cached run in a worker once the frame is up (the
        console's start), collecting when there is none; else show `run`, or collect."""
        super().__init__()
        self.session = session
        self.run_result = run
        self.demo = demo
        self.load_cached = load_cached and run is None
        self.collect_at_start = collect or (run is None and not load_cached)
        self.entries: dict[str, TriageEntry] = {}
        self.rows: list[Row] = []
        self._row_index: dict[str, int] = {}
        self._titles: dict[str, str] = {}
        self._reviewed = self._total = 0
        self.live: list[Finding] = []
        self.filter = Filter()
        self.collection: Collection | None = None
        self._kept: RunResult | None = None  # the day's run, when the collection's is poorer
        self.zoomed: str | None = None  # the id of the pane zoomed with z
        self.github_ok: bool | None = None
        self.github_detail = ""
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self.pending_decisions = 0
        self._panes_timer: Timer | None = None
        self.repro: ReproRun | None = None  # the last repro run from the console
        self._repro_group: ProcessGroup | None = None
        self._repro_lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._repro_timer: Timer | None = None
        self._last_highlight = 0.0
        self._live_dirty = False
        self._experiment = session.experiment
        self.set_keymap(dict(session.config.keys))

    # The main screen's actions: not from a screen above it (the log viewer, a modal).
    MAIN_SCREEN_ACTIONS = frozenset(
        {"filter", "preview", "publish", "rerun", "zoom", "help", "unzoom_or_clear"}
    )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in self.MAIN_SCREEN_ACTIONS and len(self.screen_stack) > 1)

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(
                    placeholder="filter: words, p0 p1 p2 new carried dropped unreviewed",
                    id="filter",
                )
                yield FindingsTree(id="tree")
            with Vertical(id="right"):
                yield DetailPane(id="detail")
                yield DiffPane(id="diff")
                yield LogPane(id="log")
        yield CollectorsBar(id="collectors")
        yield Footer()

    def notify(self, message: str, *, markup: bool = False, **options: Any) -> None:
        """Notifications carry data (titles, paths, errors): never read as Rich markup."""
        super().notify(message, markup=markup, **options)

    def on_mount(self) -> None:
        status = self.query_one(StatusLine)
        checkout = Path(self.session.checkout.path).name
        status.where = f"{checkout}·{self._experiment.rsplit('/', 1)[-1]} {self.session.day}"
        self.query_one("#filter").display = False
        self.query_one(DiffPane).display = False
        self.query_one(LogPane).display = False
        self._triage_worker()
        self._open()
        if self.collect_at_start:
            self.action_rerun()
        self.query_one(FindingsTree).focus()
        self.set_interval(30, status.refresh)  # the run's age

    def _open(self) -> None:
        load = self.load_cached

        def job() -> None:
            run, entries, error, notice = self.run_result, {}, None, None
            try:
                run = self.session.cached_run() if load else run
                notice = self.session.kept_apart_notice(run)
                entries = self.session.decisions()
            except (StateError, ScoutError) as exc:  # the run is still shown, undecided
                error = redact(str(exc))
            self.post_message(self.Opened(run, entries, error, notice))

        status = self.query_one(StatusLine)
        status.busy = "opening the cached run…" if load else ""
        self._queue(job)

    def on_scout_app_opened(self, message: Opened) -> None:
        self.pending_decisions -= 1
        status = self.query_one(StatusLine)
        status.busy = "" if self.collection is None else status.busy
        if message.run is not None and self.run_result is None:
            self.run_result = message.run
        if self.run_result is not None:
            bar = self.query_one(CollectorsBar)
            bar.set_states(self.run_result.collectors)
            bar.set_warnings(self.run_result.config_warnings)
            status.collected_at = self.run_result.collected_at
        self._apply_entries(message.entries)
        if message.error:
            self.notify(message.error, severity="error", timeout=10)
        if message.kept_apart and message.run is self.run_result:
            self._say_kept_apart(message.kept_apart)
        if self.load_cached and message.run is None and self.collection is None:
            self.action_rerun()  # nothing cached for the day: collect it
        # PyGithub's import and the first request wait until the findings are on screen.
        self.call_after_refresh(self._check_github)
        if self.load_cached:
            self.call_after_refresh(_settle_memory)

    # -- the findings shown -----------------------------------------------------------------
    @property
    def findings(self) -> list[Finding]:
        return self.run_result.findings if self.run_result is not None else self.live

    def _queue(self, job: Callable[[], None]) -> None:
        """Each job ends in exactly one Decided (or Opened) message."""
        self.pending_decisions += 1
        self._jobs.put(job)

    def _show(self) -> None:
        self.rows = rows_of(self.findings, self.entries)
        self._row_index = {row.fingerprint: n for n, row in enumerate(self.rows)}
        self._titles = {row.fingerprint: row.finding.title for row in self.rows}
        tree = self.query_one(FindingsTree)
        tree.show(sections(self.rows, self.filter or None))
        self._reviewed, self._total = reviewed_count(self.rows)
        status = self.query_one(StatusLine)
        status.reviewed = f"{self._reviewed} of {self._total} reviewed"
        status.marked = len(tree.marked)
        self._show_panes(tree.cursor_fingerprint)

    def _apply_entries(self, entries: dict[str, TriageEntry]) -> None:
        before, self.entries = self.entries, entries
        changed = {
            fp
            for fp in before.keys() | entries.keys()
            if _decision(before.get(fp)) != _decision(entries.get(fp))
        }
        if not self.rows or not self._relabel(changed, before):
            self._show()

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

    def _relabel(self, changed: set[str], before_entries: dict[str, TriageEntry]) -> bool:
        """Findings whose decision changed but not their place: relabel them alone (a
        rebuild of 5,000 nodes is what a keypress must not cost). False: rebuild."""
        if self.filter:
            return False
        if not changed:
            return True
        index = self._row_index
        if not changed <= index.keys():
            return False
        # A merge changes its target's badge too.
        for fp in list(changed):
            for entry in (self.entries.get(fp), before_entries.get(fp)):
                if entry is not None and entry.merged_into in index:
                    changed.add(entry.merged_into)
        titles = self._titles
        fresh = rows_of(
            [self.rows[index[fp]].decided.original for fp in changed], self.entries, titles
        )
        for row in fresh:
            old = self.rows[index[row.fingerprint]].finding
            if (old.section, old.priority) != (row.finding.section, row.finding.priority):
                return False
        tree = self.query_one(FindingsTree)
        for row in fresh:
            old = self.rows[index[row.fingerprint]]
            if row.finding.section is not Section.ALL_CLEAR:
                self._reviewed += int(row.reviewed) - int(old.reviewed)
            self.rows[index[row.fingerprint]] = row
            tree.refresh_row(row)
        tree.refresh_counts()
        self.query_one(StatusLine).reviewed = f"{self._reviewed} of {self._total} reviewed"
        self.query_one(StatusLine).marked = len(tree.marked)
        if tree.cursor_fingerprint in changed:  # its badges: in a frame of their own
            self._schedule_panes(tree.cursor_fingerprint)
        return True

    def _schedule_panes(self, fingerprint: str | None) -> None:
        if self._panes_timer is not None:
            self._panes_timer.stop()
        self._panes_timer = self.set_timer(PANES_DELAY, lambda: self._show_panes(fingerprint))

    def _show_panes(self, fingerprint: str | None) -> None:
        try:
            tree = self.query_one(FindingsTree)
        except NoMatches:  # a timer's last tick while the app closes
            return
        row = tree.row(fingerprint) if fingerprint else None
        if self.collection is not None and not self.rows:
            empty = "Collecting…"
        elif not self.rows:
            empty = "No findings."
        elif self.filter and tree.cursor_fingerprint is None and not tree.targets():
            empty = "No finding matches the filter (escape clears it)."
        else:
            empty = "Select a finding."
        self.query_one(DetailPane).show(row, empty)
        finding = row.finding if row else None
        diff, log = self.query_one(DiffPane), self.query_one(LogPane)
        diff.display = diff.show(finding) or self.zoomed == "diff"
        run = (
            self.repro
            if finding and self.repro and (self.repro.fingerprint == finding.fingerprint)
            else None
        )
        log.show_run(run)
        has_log = self.session.has_log(finding)  # no disk here: this runs per cursor move
        log.display = (
            log.show(finding, self._experiment, has_log) or run is not None or self.zoomed == "log"
        )

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

    # -- decisions (in the triage worker, one at a time, in order) ----------------------------
    @work(thread=True, exclusive=True, group="triage", exit_on_error=False)
    def _triage_worker(self) -> None:
        worker = get_current_worker()
        while not worker.is_cancelled:  # cancelled when the app exits, however it exits
            try:
                job = self._jobs.get(timeout=0.2)
            except queue.Empty:
                continue
            if job is None:
                return
            try:
                job()
            except (triage.TriageError, StateError, ScoutError) as exc:
                self.post_message(self.Decided(self._decisions(), redact(str(exc)), "error"))
            except Exception as exc:  # never lose the console to one bad decision
                self.post_message(
                    self.Decided(self._decisions(), redact(f"{type(exc).__name__}: {exc}"), "error")
                )

    def _decisions(self) -> dict[str, TriageEntry]:
        try:
            return self.session.decisions()
        except (StateError, ScoutError):
            return self.entries

    def _decide(
        self, act: Callable[[], list[Change] | str], verb: str, select: str | None = None
    ) -> None:
        def job() -> None:
            done = act()
            if isinstance(done, str):
                said = done
            elif not done:
                said = "nothing changed"
            elif verb in QUIET_VERBS and len(done) == 1:
                said = ""  # the badge says it; a toast per keypress costs a layout
            else:
                said = f"{verb} {len(done)} finding(s)"
            self.post_message(self.Decided(self.session.decisions(), said, select=select))

        self._queue(job)

    def on_scout_app_decided(self, message: Decided) -> None:
        self.pending_decisions -= 1
        self._apply_entries(message.entries)
        if message.select:
            self.query_one(FindingsTree).select_fingerprint(message.select)
        if message.said:
            self.notify(message.said, severity=message.severity, timeout=3)  # type: ignore[arg-type]

    def _findings(self, fingerprints: list[str]) -> list[Finding]:
        by_fp = {f.fingerprint: f for f in self.findings}
        return [by_fp[fp] for fp in fingerprints if fp in by_fp]

    @on(FindingsTree.ActionRequested)
    def _requested(self, message: FindingsTree.ActionRequested) -> None:
        action, tree = message.action, self.query_one(FindingsTree)
        session = self.session
        if action == "undo":
            self._decide(lambda: _undo_said(session.undo(), "undid", "undo"), "")
            return
        if action == "redo":
            self._decide(lambda: _undo_said(session.redo(), "redid", "redo"), "")
            return
        findings = [
            f
            for f in self._findings(message.fingerprints)
            if f.section is not Section.ALL_CLEAR or action == "accept"
        ]
        if not findings:
            self.notify("no finding under the cursor", severity="warning", timeout=2)
            return
        finding = findings[0] if not tree.marked else None
        if action == "accept":
            self._predict(findings, lambda f, entry: triage.accept(f.fingerprint, entry))
            self._decide(lambda: session.accept(findings), "accepted")
        elif action in ("demote", "promote"):
            up = action == "promote"

            def move() -> list[Change] | str:
                changes, stuck = session.move(findings, up)
                if stuck and not changes:
                    return f"already at the {'top' if up else 'bottom'}"
                return changes

            self._predict(findings, lambda f, entry: triage.move(f, entry, up))
            self._decide(move, action + "d", select=message.cursor)
        elif action == "drop":
            what = f"{len(findings)} findings" if len(findings) > 1 else "this finding"

            def dropped(reason: str | None) -> None:
                if reason:
                    self._predict(
                        findings, lambda f, entry: triage.drop(f.fingerprint, entry, reason)
                    )
                    self._decide(lambda: session.drop(findings, reason), "dropped")
                    tree.marked.clear()

            self.push_screen(DropReason(what), dropped)
            return
        elif action == "merge":
            self._merge(message)
            return
        elif action == "edit":
            self._edit(self._current(message.cursor))
            return
        elif action == "edit_external":
            self._edit_external(self._current(message.cursor))
            return
        elif action == "copy_repro":
            self._copy_repro(finding or findings[0])
            return
        elif action == "run_repro":
            self._run_repro(finding or findings[0])
            return
        elif action == "open_log":
            self._open_log(self._current(message.cursor) or findings[0])
            return
        elif action == "open_url":
            self._open_url(finding or findings[0])
            return
        if tree.marked and action in ("accept", "demote", "promote"):
            tree.marked.clear()

    def _current(self, fingerprint: str | None) -> Finding | None:
        tree = self.query_one(FindingsTree)
        row = tree.row(fingerprint) if fingerprint else None
        return row.finding if row else None

    def _merge(self, message: FindingsTree.ActionRequested) -> None:
        tree = self.query_one(FindingsTree)
        target = self._current(message.cursor)
        parts = [
            f
            for f in self._findings(sorted(tree.marked))
            if target is None or f.fingerprint != target.fingerprint
        ]
        if target is None or not parts:
            self.notify(
                "mark findings with space, then put the cursor on the one they join and press m",
                severity="warning",
                timeout=4,
            )
            return
        original = next(f for f in self.findings if f.fingerprint == target.fingerprint)
        tree.marked.clear()
        self._decide(
            lambda: self.session.merge(parts, original), "merged", select=target.fingerprint
        )

    def _edit(self, finding: Finding | None) -> None:
        if finding is None:
            return
        original = next(f for f in self.findings if f.fingerprint == finding.fingerprint)

        def saved(edited: Edited | None) -> None:
            if edited is None:
                return
            self._decide(
                lambda: self.session.edit(
                    original,
                    title=edited.title,
                    body=edited.body,
                    priority=edited.priority,
                    set_priority=edited.priority != finding.priority,
                ),
                "edited",
                select=finding.fingerprint,
            )

        self.push_screen(EditFinding(finding), saved)

    def _copy_repro(self, finding: Finding) -> None:
        repro = finding.evidence.repro
        if self.session.bundle is not None:  # what `r` would run, never the bundle's string
            try:
                repro = self.session.derived_repro(finding).display()
            except ReproError:
                repro = None
        if not repro:
            self.notify("this finding has no repro command", severity="warning", timeout=2)
            return
        self.copy_to_clipboard(repro)
        self.notify("repro copied (OSC 52; in tmux: set -g set-clipboard on)", timeout=3)

    def _open_url(self, finding: Finding) -> None:
        urls = (
            ([finding.board.url] if finding.board and finding.board.url else [])
            + finding.evidence.urls
            + ([finding.evidence.compare_url] if finding.evidence.compare_url else [])
        )
        if not urls:
            self.notify("this finding has no link", severity="warning", timeout=2)
            return
        url = urls[0]
        if graphical_browser(os.environ, sys.platform):
            self.run_worker(lambda: webbrowser.open(url), thread=True)
            self.notify(f"opening {url}", timeout=3)
        else:  # over SSH: no browser here; the URL to the reviewer's own clipboard
            self.copy_to_clipboard(url)
            self.notify(f"no display: copied (OSC 52) {url}", timeout=8)

    # -- $EDITOR ----------------------------------------------------------------------------
    def _edit_external(self, finding: Finding | None) -> None:
        if finding is None:
            return
        original = next(f for f in self.findings if f.fingerprint == finding.fingerprint)
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        handle, name = tempfile.mkstemp(prefix="scout-finding-", suffix=".md")
        path = Path(name)
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(finding_document(finding))
        try:
            code = self._run_editor([*shlex.split(editor), str(path)])
        except (OSError, ValueError) as exc:
            path.unlink(missing_ok=True)
            self.notify(f"cannot start the editor {editor!r}: {exc}", severity="error", timeout=8)
            return
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            edited = parse_document(text)
        except BadDocument as exc:  # the text is kept: nothing typed is lost
            self.notify(
                f"not recorded — {exc}; your text is kept in {path}", severity="error", timeout=12
            )
            return
        path.unlink(missing_ok=True)
        if code != 0:
            self.notify(
                f"the editor exited with status {code}: nothing recorded",
                severity="warning",
                timeout=6,
            )
        elif edited is None:
            self.notify("the file was emptied: edit cancelled", timeout=3)
        elif (edited.title, edited.priority, edited.body) == (
            finding.title,
            finding.priority,
            finding.body.strip(),
        ):
            self.notify("nothing changed", timeout=2)
        else:
            self._decide(
                lambda: self.session.edit(
                    original,
                    title=edited.title,
                    body=edited.body,
                    priority=edited.priority,
                    set_priority=edited.priority != finding.priority,
                ),
                "edited",
                select=finding.fingerprint,
            )

    def _run_editor(self, command: list[str]) -> int:
        if shutil.which(command[0]) is None:  # checked first: a failed start inside suspend
            raise OSError(f"{command[0]}: not found")  # would leave the terminal suspended
        try:
            with self.suspend():  # the editor gets the terminal; the console comes back after
                try:
                    return subprocess.call(command)
                except OSError as exc:  # raised inside, the console would not resume
                    error = exc
            raise error
        except SuspendNotSupported:  # headless (tests): an editor that needs no terminal
            return subprocess.call(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    # -- the repro ----------------------------------------------------------------------------
    def _run_repro(self, finding: Finding) -> None:
        if self._repro_group is not None:
            self.notify("stopping the repro and everything it started…", timeout=3)
            self.run_worker(self._repro_group.stop, thread=True, group="repro-stop")
            return
        try:
            repro, workdir = self.session.repro(finding)
        except ReproError as exc:
            self.notify(f"no repro to run: {exc}", severity="warning", timeout=8)
            return

        def answered(run: bool | None) -> None:
            if run:
                self._start_repro(finding, repro, workdir)

        self.push_screen(ConfirmRepro(repro.display(), str(workdir)), answered)

    def _start_repro(self, finding: Finding, repro: ReproArgv, workdir: Path) -> None:
        try:
            group = ProcessGroup(repro.argv, workdir, env=repro.env)
        except OSError as exc:
            self.notify(f"cannot start the repro: {exc}", severity="error", timeout=8)
            return
        self._repro_group = group
        self.repro = ReproRun(finding.fingerprint, repro.display())
        self._repro_timer = self.set_interval(0.1, self._drain_repro)
        self._read_repro(group)
        self._show_panes(self.query_one(FindingsTree).cursor_fingerprint)

    @work(thread=True, group="repro", exit_on_error=False)
    def _read_repro(self, group: ProcessGroup) -> None:
        # Lines go through a queue the app drains ten times a second: a chatty training
        # run must not flood the event loop with a message per line.
        for line in group.lines():
            self._repro_lines.put(line)
        self.post_message(self.ReproEnded(group.wait(), group.cancelled))

    def _drain_repro(self) -> None:
        run = self.repro
        lines: list[str] = []
        while True:
            try:
                lines.append(self._repro_lines.get_nowait())
            except queue.Empty:
                break
        if run is None or not lines:
            return
        run.lines = (run.lines + lines)[-REPRO_LINES:]
        if self.query_one(FindingsTree).cursor_fingerprint == run.fingerprint:
            self.query_one(LogPane).append_run_output(run, lines)

    def on_scout_app_repro_ended(self, message: ReproEnded) -> None:
        self._drain_repro()
        if self._repro_timer is not None:
            self._repro_timer.stop()
        self._repro_group = None
        if self.repro is not None:
            self.repro.running, self.repro.returncode = False, message.returncode
            self.repro.stopped = message.stopped
            self.repro.lines.append(
                "[stopped: its whole process group]"
                if message.stopped
                else f"[exit status {message.returncode}]"
            )
            said = "stopped" if message.stopped else f"ended: exit status {message.returncode}"
            self.notify(
                f"repro {said}",
                severity="information" if message.returncode == 0 else "warning",
                timeout=5,
            )
        self._show_panes(self.query_one(FindingsTree).cursor_fingerprint)

    # -- the whole log --------------------------------------------------------------------------
    def _open_log(self, finding: Finding) -> None:
        kept = self.session.log_file(finding)
        if kept is None:
            self.notify("no CI log kept for this finding", severity="warning", timeout=3)
            return
        from scout_tui.tui.screens.log_viewer import LogViewer

        self.push_screen(
            LogViewer(
                kept.path,
                experiment=self._experiment,
                title=finding.title,
                root_offset=kept.root_offset,
            )
        )

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
        try:
            for event in collection.events():
                self.post_message(self.CollectionEvent(event))
        except OSError as exc:
            self.post_message(self.CollectionEnded(f"cannot start the collection: {exc}", False))
            return
        ended = collection.ended
        cancelled = collection.cancelled
        self.post_message(self.CollectionEnded(ended.error if ended else None, cancelled))

    def on_scout_app_collection_event(self, message: CollectionEvent) -> None:
        event = message.event
        bar = self.query_one(CollectorsBar)
        if isinstance(event, RunStarted):
            bar.set_states(event.collectors)
            bar.set_warnings([])
            if self.run_result is None:
                self._show()
        elif isinstance(event, CollectorStarted):
            bar.started(event.collector)
        elif isinstance(event, Progress):
            bar.advanced(event.collector, event.done, event.total)
        elif isinstance(event, FindingFound):
            self.live.append(event.finding)
            if self.run_result is None and not self._live_dirty:
                self._live_dirty = True
                self.set_timer(LIVE_REFRESH, self._refresh_live)
        elif isinstance(event, CollectorFinished):
            bar.update_state(event.state)
        elif isinstance(event, RunWarning):
            self.notify(event.message, severity="warning", timeout=6)
        elif isinstance(event, ConfigWarned):
            bar.warned(event.warning)
        elif isinstance(event, RunKeptApart):
            # Said before RunFinished: the run just made looked at less than the day's (R
            # offline after an online run), so the day's fuller run stays on screen.
            self._kept = event.kept
            self._say_kept_apart(event.message)
        elif isinstance(event, RunFinished):
            # The reconciled sections replace the live ones; the cursor keeps its finding.
            result, self._kept = self._kept or event.result, None
            if result is event.result and not result.cancelled:  # it replaced the day's run
                self._say_kept_apart(None)
            self.run_result = result
            self.query_one(StatusLine).collected_at = result.collected_at
            bar.set_states(result.collectors)
            bar.set_warnings(result.config_warnings)
            self._show()

    def _say_kept_apart(self, notice: str | None) -> None:
        """A poorer run is kept apart: said once in full, and kept on the status line."""
        status = self.query_one(StatusLine)
        status.kept_apart = "poorer run kept apart" if notice else ""
        if notice:
            self.notify(notice, severity="warning", timeout=10)

    def _refresh_live(self) -> None:
        self._live_dirty = False
        if self.run_result is None:
            self._show()

    def on_scout_app_collection_ended(self, message: CollectionEnded) -> None:
        self.collection = None
        self.query_one(StatusLine).busy = ""
        if message.cancelled:
            self.notify("collection cancelled", timeout=3)
        elif message.error:
            self.notify(f"collection failed: {message.error}", severity="error", timeout=10)
        if self.run_result is None:
            self._show()

    # -- GitHub ---------------------------------------------------------------------------------
    @work(thread=True, group="github", exit_on_error=False)
    def _check_github(self) -> None:
        github, reason = self.session.github()
        if github is None:
            self.post_message(self.GitHubStatus(False, reason))
            return
        try:
            github.viewer()
        except GitHubError as exc:
            self.post_message(self.GitHubStatus(False, f"GitHub cannot be reached: {exc}"))
            return
        limit = github.rate_limit()
        self.post_message(
            self.GitHubStatus(True, f"rate {limit.remaining}/{limit.limit}" if limit else "")
        )

    def on_scout_app_git_hub_status(self, message: GitHubStatus) -> None:
        self.github_ok, self.github_detail = message.online, message.detail
        try:
            status = self.query_one(StatusLine)
        except NoMatches:  # the answer came as the app closed
            return
        why = "--offline" if self.session.options.offline else message.detail
        self.github_detail = why
        status.online = "online" if message.online else f"offline ({why})"
        status.rate = message.detail if message.online else ""

    # -- preview and publish --------------------------------------------------------------------
    def triaged_run(self, reviewed_only: bool = False) -> RunResult | None:
        if self.run_result is None:
            return None
        run = self.session.triaged(self.run_result)
        if reviewed_only:
            reviewed = {fp for fp, entry in self.entries.items() if triage.reviewed(entry)}
            run = run.model_copy(
                update={"findings": [f for f in run.findings if f.fingerprint in reviewed]}
            )
        return run

    def action_preview(self) -> None:
        run = self.triaged_run()
        if run is None:
            self.notify("nothing collected yet", severity="warning")
            return
        try:  # what publishing would post: cut to GitHub's limit, like the dry run
            posted = self.session.posted_markdown(run)
        except ScoutError as exc:
            self.notify(str(exc), severity="error")
            return
        self.push_screen(PreviewScreen(posted, "Report preview (as it will be posted)"))

    def action_publish(self) -> None:
        if self.run_result is None or self.collection is not None:
            self.notify("wait for the collection to finish", severity="warning")
            return
        if self.session.bundle is not None and is_past_day(self.run_result.date):
            self.notify(
                f"the run of {self.run_result.date} is a past day's (a replay, an old "
                "bundle): it is reviewed here, never published",
                severity="error",
                timeout=6,
            )
            return
        if self.github_ok is False:
            self.notify(
                f"publishing needs GitHub: {self.github_detail}", severity="error", timeout=6
            )
            return
        self.query_one(StatusLine).busy = "preparing the publish…"
        self._propose(self.triaged_run(), self.triaged_run(reviewed_only=True))

    @work(thread=True, group="publish", exit_on_error=False)
    def _propose(self, run: RunResult, reviewed: RunResult) -> None:
        session = self.session
        try:
            publisher = session.publisher()
            publisher.check_access()
            note = None
            try:
                items = session.board_items()
            except GitHubError as exc:
                items, note = None, str(exc)
            existing = publisher.todays_comment(run)
            comment = (
                f"edit today's comment ({existing.url})"
                if existing
                else "post a new report comment"
            )
            undecided = sum(
                1
                for f in run.findings
                if f.section is not Section.ALL_CLEAR
                and not triage.reviewed(self.entries.get(f.fingerprint))
            )
            target = session.publish_target()
            proposal = PublishProposal(
                session.plan(run, items),
                session.plan(reviewed, items),
                target,
                comment,
                undecided,
                note,
                tuple(session.run_problems(run)),
            )
            self.post_message(self.Proposed(proposal, None))
        except (GitHubError, ScoutError) as exc:
            self.post_message(self.Proposed(None, redact(str(exc))))

    def on_scout_app_proposed(self, message: Proposed) -> None:
        self.query_one(StatusLine).busy = ""
        if message.proposal is None:
            self.notify(f"cannot publish: {message.error}", severity="error", timeout=10)
            return

        def chosen(choice: str | None) -> None:
            if choice is None:
                self.notify("nothing published", timeout=2)
            elif choice == "dry":
                plan = message.proposal.plan
                text = "\n".join(
                    [
                        f"# Dry run: {plan.summary()}",
                        "",
                        *(f"- {step.description}" for step in plan.steps),
                        "",
                        "---",
                        "",
                        plan.report,
                    ]
                )
                self.push_screen(PreviewScreen(text, "Dry run: nothing is sent"))
            else:
                run = self.triaged_run(reviewed_only=choice == "reviewed")
                screen = PublishProgress(f"Publishing {message.proposal.plan.summary()}…")
                self.push_screen(screen)
                self._publish(run)

        self.push_screen(ConfirmPublish(message.proposal), chosen)

    @work(thread=True, group="publish", exit_on_error=False)
    def _publish(self, run: RunResult) -> None:
        session = self.session
        try:
            outcome = session.publisher(
                note=lambda line: self.post_message(self.PublishNote(redact(line)))
            ).publish(run)
        except UsageError as exc:  # refused before anything was written (a day it cannot post)
            self.post_message(self.Published("Nothing published", f"**{redact(str(exc))}**"))
            return
        except (GitHubError, ScoutError) as exc:
            # Only a failure that may pass (5xx, rate limit, network) is worth another try.
            again = (
                "\n\nWhat was done is journaled: publish again to finish."
                if isinstance(exc, GitHubError) and exc.transient
                else ""
            )
            self.post_message(self.Published("Publish stopped", f"**{redact(str(exc))}**{again}"))
            return
        lines = [f"- {line}" for line in outcome.summary()]
        markdown = "\n".join(["## Published", "", *lines, "", *self._github_view(run)])
        self.post_message(self.Published("Published", markdown))

    def _github_view(self, run: RunResult) -> list[str]:
        """The tracking issue and the board as GitHub now holds them (in the worker)."""
        session, config = self.session, self.session.config
        try:
            items = session.board_items()
        except GitHubError as exc:
            return [f"(the board cannot be read: {exc})"]
        lines = [
            f"## Board {config.board.owner}/projects/{config.board.number}",
            "",
            "| status | item |",
            "| --- | --- |",
        ]
        for item in items:
            title = item.title.replace("|", "\\|")
            lines.append(f"| {item.status or 'no status'} | {title} |")
        return lines

    def on_scout_app_publish_note(self, message: PublishNote) -> None:
        if isinstance(self.screen, PublishProgress):
            self.screen.add_line(message.line)

    def on_scout_app_published(self, message: Published) -> None:
        if isinstance(self.screen, PublishProgress):
            self.screen.finish(message.title, message.markdown)
        else:
            self.push_screen(PreviewScreen(message.markdown, message.title))
        self.query_one(StatusLine).busy = ""

    # -- panes, filter, help --------------------------------------------------------------------
    def action_zoom(self) -> None:
        """The focused pane alone on the screen, or back."""
        if self.zoomed is not None:
            self.zoomed = None
            for widget in self.query(".zoom-hidden, .zoom-full"):
                widget.remove_class("zoom-hidden", "zoom-full")
            self._show_panes(self.query_one(FindingsTree).cursor_fingerprint)
            return
        focused = self.focused
        for pane_id in ("tree", "detail", "diff", "log"):
            pane = self.query_one(f"#{pane_id}")
            if focused is not None and (focused is pane or pane in focused.ancestors):
                self.zoomed = pane_id
        if self.zoomed is None:
            return
        hidden = {
            "tree": ["#right"],
            "detail": ["#left", "#diff", "#log"],
            "diff": ["#left", "#detail", "#log"],
            "log": ["#left", "#detail", "#diff"],
        }[self.zoomed]
        for selector in hidden:
            self.query_one(selector).add_class("zoom-hidden")
        if self.zoomed == "tree":
            self.query_one("#left").add_class("zoom-full")

    def action_unzoom_or_clear(self) -> None:
        if self.zoomed is not None:
            self.action_zoom()
        elif self.query_one("#filter", Input).display:
            self._set_filter("")

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, message: Input.Submitted) -> None:
        self._set_filter(message.value)

    def _set_filter(self, text: str) -> None:
        box = self.query_one("#filter", Input)
        box.value = text
        box.display = bool(text.strip())
        self.filter = Filter.parse(text)
        self.query_one(StatusLine).filter_text = text.strip()
        self._show()
        self.query_one(FindingsTree).focus()

    def action_help(self) -> None:
        keys = {
            b.id: key
            for key, bindings in self.active_bindings.items()
            for b in [bindings.binding]
            if b.id
        }
        from scout_tui.tui.screens.help import HelpScreen  # Markdown: imported when asked

        self.push_screen(HelpScreen(keys))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        tree = self.query_one(FindingsTree)
        for action in ACTIONS.values():
            target = tree if hasattr(tree, f"action_{action.id}") else self
            yield SystemCommand(
                action.id.replace("_", " ").capitalize(),
                action.help,
                lambda t=target, a=action.id: t.run_action(a),
            )
        yield SystemCommand(
            "Warnings of scout.toml",
            "what scout.toml names that the repository no longer has, and where it went",
            self._show_config_warnings,
        )

    def _show_config_warnings(self) -> None:
        warnings = self.query_one(CollectorsBar).warnings
        text = (
            "\n".join(f"- **{w.collector}**: {w.message}" for w in warnings)
            or "scout.toml matches the repository: nothing to say."
        )
        self.push_screen(
            PreviewScreen(
                text,
                "scout.toml: configured things the repository "
                "no longer has (not findings: never published)",
            )
        )

    async def action_quit(self) -> None:
        self.exit(0)

    def on_unmount(self) -> None:
        # Nothing of a run may outlive the console; the decisions worker ends after the
        # jobs already queued (each one is a committed transaction or nothing).
        if self.collection is not None:
            self.collection.kill()
        if self._repro_group is not None:  # nothing the console started keeps a GPU
            self._repro_group.stop(grace=2)
        self._jobs.put(None)


TEXT_BROWSERS = {"lynx", "w3m", "links", "elinks", "www-browser"}


def graphical_browser(env: Mapping[str, str], platform: str) -> bool:
    """Whether `o` may start a browser: a display (X, Wayland, a Mac or Windows desktop)
    and not a text browser, which would draw over the console."""
    if env.get("BROWSER", "").split(os.pathsep)[0].rsplit("/", 1)[-1] in TEXT_BROWSERS:
        return False
    if platform in ("darwin", "win32"):
        return not env.get("SSH_CONNECTION")
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def _settle_memory() -> None:
    """The console's start (`run_console`) turns the cyclic garbage collector off while the
    run loads; once the tree is up, everything alive then is frozen out of its passes —
    a full pass over a 5,000-finding run costs 130–250 ms, a keypress's worth of stutter
    several times a minute — and the collector runs again for what comes after."""
    gc.freeze()
    gc.enable()


def _decision(entry: TriageEntry | None) -> TriageEntry | None:
    """The entry as the screen shows it: when it was recorded does not show."""
    return entry.model_copy(update={"updated": None}) if entry is not None else None


def _undo_said(action, done: str, op: str) -> str:
    if action is None:
        return f"nothing to {op}"
    return f"{done}: {action.label}"
