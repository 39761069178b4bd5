"""A modal that answers once, and holds the keys typed past the key that answers it."""

from __future__ import annotations

import collections
import functools
import time
import weakref
from collections.abc import Callable
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


RESENT_WAIT = 1.0  # seconds keys read after re-sent ones wait for them, at most


class KeyOrder:
    """Keys held back (for a dialog, an answer) and sent to the app again go before the
    keys the terminal sent after them: a key already in the app's queue when they are
    re-sent waits behind them instead of passing them (`P d escape n`: the escape and `n`
    must reach the question after `d` has, not before)."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._resent: collections.deque[events.Key] = collections.deque()
        self._behind: list[events.Key] = []
        self._since = 0.0
        self._parked: list[events.Key] = []
        self._parked_at = 0.0
        self._ready: Callable[[], bool] = lambda: True
        self._unparked: weakref.WeakSet[events.Key] = weakref.WeakSet()

    def resend(self, keys: list[events.Key]) -> None:
        for key in keys:
            again = typed(self.app, key.key, key.character)
            self._resent.append(again)
            self.app.post_message(again)
        self._since = time.monotonic()

    def park(self, event: events.Key, ready: Callable[[], bool]) -> bool:
        """A key that came before where it goes could take it (a dialog just pushed, its
        field not focused yet: the key would be lost): kept, and the keys after it, until
        `ready()` (RESENT_WAIT at most). False: it was parked once already."""
        if event in self._unparked:
            return False
        self._parked.append(event)
        if len(self._parked) == 1:
            self._ready, self._parked_at = ready, time.monotonic()
            self.app.call_after_refresh(self._unpark)
        return True

    def _unpark(self) -> None:
        if not self._ready() and time.monotonic() - self._parked_at < RESENT_WAIT:
            self.app.call_after_refresh(self._unpark)
            return
        parked, self._parked = self._parked, []
        start = len(self._resent)
        self.resend(parked)
        self._unparked.update(list(self._resent)[start:])

    def waits(self, event: events.Key) -> bool:
        """Whether `event` must wait behind keys re-sent or parked before it (it is kept,
        and sent again after them)."""
        if self._parked:  # every key after a parked one waits with it, re-sent ones too
            if event in self._resent:
                self._resent.remove(event)
            self._parked.append(event)
            return True
        if self._resent and event is self._resent[0]:
            self._resent.popleft()
            return False
        if not self._resent:
            return False
        if time.monotonic() - self._since > RESENT_WAIT:  # a re-sent key was lost
            self._resent.clear()
            return False
        self._behind.append(event)
        return True

    def handled(self) -> None:
        """After each key: once the re-sent keys have all arrived, those that waited go."""
        if not self._resent and self._behind:
            behind, self._behind = self._behind, []
            self.resend(behind)


def resend(app: App[Any], keys: list[events.Key]) -> None:
    """`keys` to the app again, before any key read after them (the app's `KeyOrder`)."""
    order = getattr(app, "key_order", None)
    if isinstance(order, KeyOrder):
        order.resend(keys)
    else:
        for key in keys:
            app.post_message(typed(app, key.key, key.character))


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
        resend(self.app, late or [])

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
