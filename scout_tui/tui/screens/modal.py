"""A modal that answers once, and holds the keys typed past the key that answers it."""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.screen import ModalScreen

ResultType = TypeVar("ResultType")
# A key that may answer (enter on an empty reason does not) holds the keys after it this
# long at most: then they go on to the modal, which is still there.
HOLD_AT_MOST = 0.5
HOLD_BOUND = 5.0  # after one of its bindings' keys: it answers; this only if it never does


def typed(app: App[Any], key: str, character: str | None) -> events.Key:
    """A key as if the terminal typed it now: from the app, so that it bubbles up to the app
    (whose bindings act on it) whichever widget makes it — a key made inside a dialog
    would stop at the dialog, its bindings never looked at."""
    made = events.Key(key, character)
    made.set_sender(app)
    return made


class Modal(ModalScreen[ResultType]):
    """Keys typed in one burst over SSH (`x dup enter down x dup2 enter`) reach a modal
    before it has read the one that answers it: held from that key on (the app asks
    `heard` after each key it hands in, and `hold`s the next), they go where the focus goes
    once it has answered (the tree, the next dialog), not into the closing dialog."""

    # Whether enter may answer: a dialog's input submits with it; a text area does not.
    ENTER_ANSWERS = True
    _late: list[events.Key] | None = None
    _holds = 0
    _answered = False

    def answer(self, result: ResultType) -> None:
        """Dismissed with `result`, once: keys read in the same burst as the one that
        answered reach the modal after it closed and must not answer again — Textual would
        pop a screen no longer there. The keys held go on once it has gone."""
        if self.is_current:
            callbacks = self._result_callbacks
            requester = callbacks[-1].requester if callbacks else None
            self._answered = True
            self.dismiss(result)
            # After the answer's callback (which may open the next dialog), in its queue.
            (requester or self.app).call_next(self.release_keys)

    @property
    def holding(self) -> bool:
        return self._late is not None

    def unalt(self, key: events.Key) -> list[events.Key]:
        """A terminal sends `escape` then a letter within ~50 ms as alt+letter: in a dialog
        that escape closes, nobody means alt+letter (it would be typed into the reason):
        escape, then the letter."""
        if not key.key.startswith("alt+") or not self._answers_on("escape"):
            return [key]
        rest = key.key.removeprefix("alt+")
        return [
            typed(self.app, "escape", "\x1b"),
            typed(self.app, rest, rest if len(rest) == 1 else None),
        ]

    def heard(self, key: str) -> None:
        """After a key that may answer, hold the keys that follow."""
        if self._late is None and self._answers_on(key):
            self._late = []
            self._holds += 1
            hold = self._holds
            # One of its bindings answers, or says it `declined` (the keys go on then); an
            # enter it does not bind may do neither: then they go on to the dialog soon.
            wait = HOLD_AT_MOST if key == "enter" and not self._bound(key) else HOLD_BOUND
            self.app.set_timer(wait, lambda: self.release_keys(hold))

    def declined(self) -> None:
        """The key that may have answered did not (an empty reason, a refused choice): the
        keys held after it go on to the dialog now."""
        if self._late is not None:
            self.release_keys()

    def hold(self, key: events.Key) -> None:
        assert self._late is not None
        self._late.append(key)

    def release_keys(self, hold: int | None = None) -> None:
        """The keys held, to the app in order: to where the focus is now (this modal,
        when the key did not answer after all)."""
        if hold is not None and hold != self._holds:
            return  # a later hold's keys: released when that one ends
        if self._answered and self in self.app.screen_stack:  # popped a moment later
            self.app.call_after_refresh(self.release_keys, hold)
            return
        late, self._late = self._late, None
        for key in late or []:
            self.app.post_message(typed(self.app, key.key, key.character))

    def acts_at_once(self, key: str) -> bool:
        """Whether `key` is one of the dialog's priority bindings (acted on by the app as it
        is read, before the keys already handed to the dialog's fields)."""
        return key in _binding_keys(type(self))[1]

    def _answers_on(self, key: str) -> bool:
        return self._bound(key) or (key == "enter" and self.ENTER_ANSWERS)

    def _bound(self, key: str) -> bool:
        return key in _binding_keys(type(self))[0]


@functools.cache
def _binding_keys(kind: type[Modal[Any]]) -> tuple[frozenset[str], frozenset[str]]:
    """The keys a dialog class binds, and those of its priority bindings (read once: asked
    on every key)."""
    bound: set[str] = set()
    priority: set[str] = set()
    for found in kind.BINDINGS:
        keys = {
            name.strip()
            for name in (found.key if isinstance(found, Binding) else found[0]).split(",")
        }
        bound |= keys
        if isinstance(found, Binding) and found.priority:
            priority |= keys
    return frozenset(bound), frozenset(priority)
