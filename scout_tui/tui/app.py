"""The console's App: the session, the reviewer's keymap, and the screens. The triage
screen does the work (`tui/screens/triage.py`); work off the event loop lives in
`tui/controllers/`, widgets in `tui/widgets/`, messages in `tui/messages.py`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from scout_tui.model import RunResult
from scout_tui.session import Session
from scout_tui.tui.keys import ACTIONS, binding, shown_key
from scout_tui.tui.screens.modal import Modal
from scout_tui.tui.screens.triage import TriageScreen
from scout_tui.tui.widgets.collectors_bar import CollectorsBar
from scout_tui.tui.widgets.findings_tree import FindingsTree


class ScoutApp(App[int]):
    CSS_PATH = "scout.tcss"
    TITLE = "scout"
    BINDINGS = [
        binding("quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, id="quit_ctrl_q", priority=True),
        Binding("ctrl+c", "quit", "Quit", show=False, id="quit_ctrl_c", priority=True),
    ]

    def __init__(
        self,
        session: Session,
        run: RunResult | None = None,
        *,
        demo: bool = False,
        collect: bool = False,
        load_cached: bool = False,
        more: Sequence[Session] = (),
    ) -> None:
        """`load_cached`: read the day's cached run in a worker once the frame is up (the
        console's start), collecting when there is none; else show `run`, or collect.
        `more`: other bundles' sessions; then an overview of them all comes first."""
        super().__init__()
        self.session = session
        self.demo = demo
        self.overview = None
        if more:  # several runs: their overview first
            from scout_tui.tui.screens.experiments import ExperimentsScreen

            self.overview = ExperimentsScreen([session, *more])
        self._triage = (
            None if more else TriageScreen(session, run, collect=collect, load_cached=load_cached)
        )
        self.set_keymap(dict(session.config.keys))

    @property
    def triage(self) -> TriageScreen:
        """The triage screen: the only one, or (several runs) the one open now."""
        shown = self.shown_triage()
        if shown is None:
            raise LookupError("no run is open: the overview is shown")
        return shown

    def shown_triage(self) -> TriageScreen | None:
        stacked = [s for s in self.screen_stack if isinstance(s, TriageScreen)]
        return stacked[-1] if stacked else self._triage

    def get_default_screen(self) -> Screen[Any]:
        return self.overview or self.triage

    async def on_event(self, event: events.Event) -> None:
        """A key to a dialog goes through it: held once a key that may answer it went in
        (`Modal.deliver`), so that keys typed past it reach what comes next."""
        modal = self.screen if self._screen_stack else None
        if not isinstance(event, events.Key) or event.is_forwarded or not isinstance(modal, Modal):
            await super().on_event(event)
            return
        if event.key.startswith("alt+") and len(split := modal.unalt(event)) > 1:
            for key in split:
                await self.on_event(key)
            return
        if modal.holding and not await self._check_bindings(event.key, priority=True):
            modal.hold(event)
            return
        await super().on_event(event)
        modal.heard(event.key)

    def notify(self, message: str, *, markup: bool = False, **options: Any) -> None:
        """Notifications carry data (titles, paths, errors): never read as Rich markup,
        whoever sends them (a widget's `notify` asks for markup unless told not to)."""
        super().notify(message, markup=False, **options)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """scout's own actions only, each with its key as `[keys]` left it (Textual's
        theme and screenshot commands are not what a reviewer looks for here)."""
        triage = self.shown_triage()
        if triage is None:  # the overview: its keys are in its footer
            return
        tree = triage.query_one(FindingsTree)
        keys = self.session.config.keys
        for action in ACTIONS.values():
            target = next(t for t in (tree, triage, self) if hasattr(t, f"action_{action.id}"))
            key = shown_key(keys.get(action.id, action.key))
            yield SystemCommand(
                f"{action.id.replace('_', ' ').capitalize()}  ({key})",
                action.help,
                lambda t=target, a=action.id: t.run_action(a),
            )
        yield SystemCommand(
            "Warnings of scout.toml",
            "what scout.toml names that the repository no longer has, and where it went",
            triage.query_one(CollectorsBar).show_warnings,
        )

    async def action_quit(self) -> None:
        self.exit(0)

    def on_unmount(self) -> None:
        screens = list(self.overview.opened.values()) if self.overview else [self.triage]
        for screen in screens:
            screen.shut_down()
