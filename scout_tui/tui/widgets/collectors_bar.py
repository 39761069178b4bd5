"""Each collector's state: running with progress, done with its count, skipped or failed
with why, cancelled; and how many things scout.toml names that the repository no longer
has (shown in full from the palette)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from scout_tui.model import CollectorState, ConfigWarning, RunResult

if TYPE_CHECKING:
    from scout_tui.collect.events import Event

SYMBOLS = {
    "pending": ("·", "dim"),
    "running": ("⟳", "yellow"),
    "done": ("✓", "green"),
    "skipped": ("–", "dim"),
    "failed": ("✗", "red"),
    "cancelled": ("⊘", "magenta"),
}


def collector_text(
    states: list[CollectorState], progress: dict[str, str], warnings: int = 0
) -> Text:
    text = Text()
    if warnings:  # first: it must show at 80 columns, however many collectors follow
        text.append(f"⚠ scout.toml: {warnings} (ctrl+p warnings)", style="bold yellow")
    for state in states:
        symbol, style = SYMBOLS[state.state]
        if text:
            text.append("  ")
        text.append(f"{symbol} {state.name}", style=style)
        if state.state == "running" and state.name in progress:
            text.append(f" {progress[state.name]}", style="dim")
        elif state.state == "done":
            text.append(f" {state.findings}", style="dim")
        elif state.state in ("skipped", "failed") and state.reason:
            text.append(f": {state.reason}", style="dim" if state.state == "skipped" else "red")
    return text


class CollectorsBar(Static):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.states: list[CollectorState] = []
        self.progress: dict[str, str] = {}
        self.warnings: list[ConfigWarning] = []

    def show_run(self, run: RunResult) -> None:
        """A run's collectors as they ended, and what its scout.toml names in vain."""
        self.set_states(run.collectors)
        self.set_warnings(run.config_warnings)

    def show_warnings(self) -> None:
        """The warnings in full (ctrl+p warnings)."""
        from scout_tui.tui.screens.preview import PreviewScreen

        text = (
            "\n".join(f"- **{w.collector}**: {w.message}" for w in self.warnings)
            or "scout.toml matches the repository: nothing to say."
        )
        self.app.push_screen(
            PreviewScreen(
                text,
                "scout.toml: configured things the repository "
                "no longer has (not findings: never published)",
            )
        )

    def set_warnings(self, warnings: list[ConfigWarning]) -> None:
        self.warnings = list(warnings)
        self._show()

    def warned(self, warning: ConfigWarning) -> None:
        self.warnings.append(warning)
        self._show()

    def set_states(self, states: list[CollectorState]) -> None:
        self.states = [state.model_copy() for state in states]
        self.progress = {}
        self._show()

    def update_state(self, state: CollectorState) -> None:
        for n, known in enumerate(self.states):
            if known.name == state.name:
                self.states[n] = state
                break
        else:
            self.states.append(state)
        self.progress.pop(state.name, None)
        self._show()

    def started(self, name: str) -> None:
        for state in self.states:
            if state.name == name:
                state.state = "running"
        self._show()

    def advanced(self, name: str, done: int, total: int | None) -> None:
        self.progress[name] = f"{done}/{total}" if total else str(done)
        self._show()

    def follow(self, event: Event) -> None:
        """A collection's event, as far as the bar shows it."""
        from scout_tui.collect.events import (  # with the first collection
            CollectorFinished,
            CollectorStarted,
            ConfigWarned,
            Progress,
            RunStarted,
        )

        if isinstance(event, RunStarted):
            self.set_states(event.collectors)
            self.set_warnings([])
        elif isinstance(event, CollectorStarted):
            self.started(event.collector)
        elif isinstance(event, Progress):
            self.advanced(event.collector, event.done, event.total)
        elif isinstance(event, CollectorFinished):
            self.update_state(event.state)
        elif isinstance(event, ConfigWarned):
            self.warned(event.warning)

    def _show(self) -> None:
        self.update(
            collector_text(self.states, self.progress, len(self.warnings))
            if self.states or self.warnings
            else ""
        )
        self.tooltip = "\n".join(
            f"{s.title}: {s.state}" + (f" — {s.reason}" if s.reason else "") for s in self.states
        )
