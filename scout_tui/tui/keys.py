"""The console's actions: default keys and what each does, by the ids `[keys]` rebinds.

Each widget binds the actions it owns with `binding(id)`; the app applies the user's
`[keys]` table with `App.set_keymap`, and lists them all in the help screen and palette."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

from scout_tui.config.models import ACTION_IDS


@dataclass(frozen=True)
class Action:
    id: str
    key: str
    description: str  # the Footer's word
    help: str  # the help screen's and the palette's line
    show: bool = True  # in the Footer


ACTIONS: dict[str, Action] = {
    a.id: a
    for a in (
        Action("accept", "a", "Accept", "accept the finding(s) as they stand"),
        Action(
            "accept_next",
            "A",
            "Accept, next",
            "accept, then go to the next finding not yet reviewed",
            show=False,
        ),
        Action(
            "demote",
            "minus",
            "Demote",
            "P0 → P1 → P2 → FYI; Opportunities and Docs → FYI",
            show=False,
        ),
        Action(
            "promote",
            "plus",
            "Promote",
            "FYI, Opportunities, Docs → Action Items P2 → P1 → P0 (first back to where it was)",
            show=False,
        ),
        Action("drop", "x", "Drop", "drop with a reason (remembered: not proposed again)"),
        Action(
            "mark",
            "space",
            "Mark",
            "mark or unmark for a bulk action or a merge; on a section or priority: all in it",
            show=False,
        ),
        Action(
            "mark_filtered",
            "asterisk",
            "Mark all",
            "mark or unmark every finding shown (the filter's result)",
            show=False,
        ),
        Action(
            "merge",
            "m",
            "Merge",
            "merge the marked findings into the cursor's (one board item)",
            show=False,
        ),
        Action("edit", "e", "Edit", "edit title, priority and body", show=False),
        Action("edit_external", "E", "$EDITOR", "edit the finding in $EDITOR", show=False),
        Action("undo", "u", "Undo", "undo the last decision (survives a restart)"),
        Action("redo", "U", "Redo", "redo what undo undid", show=False),
        Action(
            "copy_repro",
            "c",
            "Copy repro",
            "copy the repro command (OSC 52: works over SSH)",
            show=False,
        ),
        Action(
            "run_repro",
            "r",
            "Run repro",
            "run the repro here (asks first; r again stops it "
            "and its workers), output in the log pane",
            show=False,
        ),
        Action(
            "open_url",
            "o",
            "Open URL",
            "open the finding's link (copied when no display)",
            show=False,
        ),
        Action(
            "open_log", "l", "Log", "the whole CI log: search it, jump between failures", show=False
        ),
        Action(
            "filter",
            "slash",
            "Filter",
            "filter: words, and p0 p1 p2 new carried dropped unreviewed",
        ),
        Action("preview", "p", "Preview", "the report as it will be published"),
        Action("publish", "P", "Publish", "publish: the report comment and Backlog drafts"),
        Action("rerun", "R", "Rerun", "collect again (cancel a running collection)"),
        Action("next_unreviewed", "n", "Next", "the next finding not yet reviewed", show=False),
        Action("zoom", "z", "Zoom", "zoom the focused pane, or back", show=False),
        Action("help", "question_mark", "Help", "the keys, and how copying works over SSH"),
        Action("quit", "q", "Quit", "quit (decisions are saved as they are made)"),
    )
}
assert set(ACTIONS) == set(ACTION_IDS), "the console's actions are the ids [keys] accepts"


KEY_SHOWN = {"minus": "-", "plus": "+", "slash": "/", "question_mark": "?", "asterisk": "*"}


def shown_key(key: str) -> str:
    """A key as a person types it: `-`, not `minus`."""
    return ",".join(KEY_SHOWN.get(part, part) for part in key.split(","))


def binding(action_id: str, *, on: str | None = None, priority: bool = False) -> Binding:
    """The action's binding; `on`: the node that runs it ("screen", "app"), when not the
    widget that binds it."""
    action = ACTIONS[action_id]
    run = f"{on}.{action_id}" if on else action_id
    return Binding(
        action.key, run, action.description, show=action.show, id=action_id, priority=priority
    )
