"""Several experiments' runs at once (`scout open A B …`): one tree, an experiment per
top-level node, its sections under it with their counts. Enter opens the experiment's own
triage screen (its decisions, its publish target); escape there comes back here."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static, Tree

from scout_tui.history.baseline import is_past_day
from scout_tui.model import SECTIONS, Section
from scout_tui.session import Session
from scout_tui.store.state import StateError
from scout_tui.triage import decisions as triage
from scout_tui.tui.console import settle_memory
from scout_tui.tui.keys import binding
from scout_tui.tui.screens.triage import TriageScreen
from scout_tui.tui.widgets.key_footer import KeyFooter


@dataclass(frozen=True)
class Place:
    """A row of the overview: a run, or one of its sections."""

    index: int
    section: Section | None = None


@dataclass(frozen=True)
class Tally:
    """An experiment's run as the overview shows it."""

    findings: int  # to review (All Clear lines need none), as the triage screen counts
    reviewed: int
    sections: tuple[tuple[Section, int, int], ...]  # section, findings, of them P0
    error: str | None = None


class ExperimentsScreen(Screen[None]):
    BINDINGS = [
        binding("quit"),
        Binding("enter", "open_experiment", "Open", id="open_experiment"),
    ]

    @dataclass
    class Counted(Message):
        index: int
        tally: Tally

    def __init__(self, sessions: list[Session]) -> None:
        super().__init__()
        self.sessions = sessions
        self.opened: dict[int, TriageScreen] = {}

    def compose(self) -> ComposeResult:
        yield Static(
            Text(f"{len(self.sessions)} runs · enter opens one · escape there comes back here"),
            id="status",
        )
        tree: Tree[Place] = Tree("runs", id="experiments")
        tree.show_root = False
        tree.auto_expand = False  # enter opens a run; it does not fold it away
        for index in range(len(self.sessions)):
            tree.root.add(self._label(index, None), data=Place(index), expand=True)
        yield tree
        yield KeyFooter()

    def on_mount(self) -> None:
        tree = self.query_one(Tree)
        tree.focus()
        tree.move_cursor(tree.root.children[0])  # enter opens the first run at once
        self._count()

    def on_screen_resume(self) -> None:
        self._count()  # decisions made in an experiment's screen, or by `scout triage`

    @work(thread=True, exclusive=True, group="tally", exit_on_error=False)
    def _count(self) -> None:
        for index, session in enumerate(self.sessions):
            self.post_message(self.Counted(index, tally_of(session)))

    def on_experiments_screen_counted(self, message: ExperimentsScreen.Counted) -> None:
        if message.index == len(self.sessions) - 1:
            settle_memory()  # the runs are loaded: see `run_console`
        tree: Tree[Place] = self.query_one(Tree)
        node = tree.root.children[message.index]
        node.set_label(self._label(message.index, message.tally))
        node.remove_children()
        session = self.sessions[message.index]
        project, board = session.config.project, session.config.board
        past = session.bundle is not None and is_past_day(session.bundle.run.date)
        other = session.bundle is not None and session.repository != project.repo
        node.add_leaf(
            Text("review only: a past day's run is never published", style="dim")
            if past
            else Text(  # publishing refuses it: said here, not first at `P`
                f"not published: a run of {session.repository}, and the configuration "
                f"given for it ({session.config.source}) publishes to {project.repo}",
                style="yellow",
            )
            if other
            else Text(
                f"publishes to {project.repo}#{project.tracking_issue}, "
                f"board {board.owner}/{board.number}{_shipped_board(session)}",
                style="dim",
            ),
            data=Place(message.index),
        )
        for section, count, p0 in message.tally.sections:
            label = Text(f"{SECTIONS[section].short}  {count}")
            if p0:
                label.append(f"  ({p0} P0)", style="bold red")
            node.add_leaf(label, data=Place(message.index, section))

    def _label(self, index: int, tally: Tally | None) -> Text:
        session = self.sessions[index]
        day = session.bundle.run.date if session.bundle is not None else session.day
        label = Text.assemble(
            (f"{session.repository} · {session.experiment.rsplit('/', 1)[-1]}", "bold"),
            f" · {day}",
        )
        if session.bundle is not None:  # two runs of one day told apart: file, and when
            collected = session.bundle.run.collected_at
            label.append(
                f" · {session.bundle_path.name if session.bundle_path else 'bundle'}"
                + (f", collected {collected:%H:%M} UTC" if collected else ""),
                style="dim",
            )
        if tally is None:
            label.append("  counting…", style="dim")
        elif tally.error:
            label.append(f"  {tally.findings} to review · decisions unreadable: {tally.error}")
        else:
            label.append(f"  {tally.reviewed} of {tally.findings} reviewed")
        return label

    def on_tree_node_selected(self, event: Tree.NodeSelected[Place]) -> None:
        event.stop()
        if event.node.data is not None:
            self.open_experiment(event.node.data)

    def action_open_experiment(self) -> None:
        node = self.query_one(Tree).cursor_node
        if node is not None and node.data is not None:
            self.open_experiment(node.data)

    def open_experiment(self, place: Place) -> None:
        """The run's triage screen; on a section's row, at that section."""
        index = place.index
        screen = self.opened.get(index)
        if screen is None:
            screen = TriageScreen(self.sessions[index], None, collect=False, load_cached=True)
            self.opened[index] = screen
            self.app.install_screen(screen, f"run-{index}")
        self.app.push_screen(f"run-{index}")
        if place.section is not None:
            screen.show_section(place.section)


def _shipped_board(session: Session) -> str:
    """Said when the board is the shipped profile's, kept for another experiment."""
    inherited = any(note.startswith("[board]") for note in session.config.inherited)
    return " (the shipped profile's: set this experiment's own)" if inherited else ""


def tally_of(session: Session) -> Tally:
    """The run as its triage screen shows it: its findings by section after the reviewer's
    decisions, the P0s still open, and how many of those to review a reviewer decided."""
    run = session.cached_run()
    findings = run.findings if run is not None else []
    error: str | None = None
    try:
        entries = session.review.decisions()
    except StateError as exc:
        entries, error = {}, str(exc)
    counted = [f for f in findings if f.section is not Section.ALL_CLEAR]
    reviewed = sum(1 for f in counted if triage.reviewed(entries.get(f.fingerprint)))
    # As the run's tree counts its sections (where decisions placed them, drops included);
    # P0s still open: not dropped, not merged into another.
    rows = triage.decided(findings, entries)
    by_section = Counter(d.current.section for d in rows)
    p0 = Counter(
        d.current.section
        for d in rows
        if d.current.priority == "P0" and d.label not in ("dropped", "merged")
    )
    sections = tuple((s, by_section[s], p0[s]) for s in Section if by_section[s])
    return Tally(len(counted), reviewed, sections, error)
