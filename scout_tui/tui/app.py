"""The console's App: the session, the reviewer's keymap, and the screens. The triage
screen does the work (`tui/screens/triage.py`); work off the event loop lives in
`tui/controllers/`, widgets in `tui/widgets/`, messages in `tui/messages.py`."""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

from scout_tui.model import RunResult
from scout_tui.session import Session
from scout_tui.tui.keys import ACTIONS, binding, shown_key
from scout_tui.tui.screens.modal import HOLD_AT_MOST, KeyOrder, Modal, typed
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
        # A dialog's priority keys sent the way the keys typed before them went.
        self._after_typed: weakref.WeakSet[events.Key] = weakref.WeakSet()
        self.key_order = KeyOrder(self)  # keys re-sent go before those read after them
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
        """Keys typed ahead act in order, each where the keys before it left things: keys
        to a dialog are held once a key that may answer it went in (`Modal.heard`), until it
        has answered and gone, or declined; keys after an enter or escape in an input (the
        filter) wait until the focus has left it — not typed into it."""
        if not isinstance(event, events.Key) or event.is_forwarded or not self._screen_stack:
            await super().on_event(event)
            return
        if self.key_order.waits(event):  # read after keys re-sent, not yet handled: after them
            return
        try:
            await self._route(event)
        finally:
            self.key_order.handled()

    async def _route(self, event: events.Key) -> None:
        modal = self.screen
        shown = self.shown_triage()
        tree = shown.query_one(FindingsTree) if shown is not None and shown.is_mounted else None
        if tree is not None and tree.holding_keys and self.focused is not tree:
            # Keys the tree holds for a dialog that is up but has not had them yet (`P d`):
            # a key read now goes after them, not straight to the dialog.
            if not await self._check_bindings(event.key, priority=True):
                tree.hold(event)
            return
        if self._input_held is not None or (isinstance(modal, Modal) and modal.holding):
            if not await self._check_bindings(event.key, priority=True):
                if self._input_held is not None:
                    self._input_held.append(event)
                elif isinstance(modal, Modal):
                    modal.hold(event)
            return
        if isinstance(modal, Modal) and event.key.startswith("alt+"):
            split = modal.unalt(event)
            if len(split) > 1:
                for key in split:
                    await self._route(key)
                return
        if isinstance(modal, TriageScreen):
            modal.focus_tree_for(event.key)
        focused = self.focused
        if isinstance(modal, Modal) and focused is None:
            # Just pushed, its field not focused yet: the key would reach the screen alone
            # and be lost (the first letter of a reason typed ahead).
            def ready(modal: Modal[Any] = modal) -> bool:
                return self.focused is not None or self.screen is not modal

            if self.key_order.park(event, ready):
                return
        if isinstance(modal, Modal) and focused is not None and modal.acts_at_once(event.key):
            # A dialog's priority key (ctrl+s saves) would act at once, before the keys typed
            # just ahead of it (the text, a tab) reach its fields: it goes the way they go,
            # through the focus and back up here, and acts when it arrives (`_on_key`).
            after = typed(self, event.key, event.character)
            self._after_typed.add(after)
            focused._forward_event(after)
            modal.heard(event.key)
            return
        await super().on_event(event)
        if isinstance(modal, Modal):
            modal.heard(event.key)
        elif isinstance(focused, Input) and event.key in ("enter", "escape"):
            self._hold_until_focus_leaves(focused)

    async def _on_key(self, event: events.Key) -> None:
        """(Textual runs `App._on_key` after this one, unless it is prevented.)"""
        if event in self._after_typed:
            self._after_typed.discard(event)
            if await self._check_bindings(event.key, priority=True):
                event.prevent_default()

    _input_held: list[events.Key] | None = None

    def _hold_until_focus_leaves(self, widget: Widget) -> None:
        self._input_held = []
        deadline = time.monotonic() + HOLD_AT_MOST

        def check() -> None:
            if self.focused is widget and time.monotonic() < deadline:
                self.call_after_refresh(check)
                return
            held, self._input_held = self._input_held, None
            self.key_order.resend(held or [])

        self.call_after_refresh(check)

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
