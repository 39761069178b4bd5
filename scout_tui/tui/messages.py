"""What the console's workers and controllers tell its screen. Work runs off the event loop
and ends in one of these; only the screen's handlers touch widgets."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from textual.message import Message

from scout_tui.model import RunResult, TriageEntry

if TYPE_CHECKING:  # collection and publishing load when they first run
    from scout_tui.collect.events import Event
    from scout_tui.tui.proposal import PublishProposal


@dataclass
class Opened(Message):
    """The day's cached run (None: there is none) and the decisions, read off the loop."""

    run: RunResult | None
    entries: dict[str, TriageEntry]
    error: str | None = None
    kept_apart: str | None = None  # a poorer run of the day is kept apart: this says so
    published_at: datetime | None = None  # the day's report comment, when posted from here
    filed: frozenset[str] = frozenset()  # findings whose drafts publishes from here filed


@dataclass
class CheckoutStale(Message):
    """The checkout is much older than today (said after the first paint: it reads git)."""

    said: str


@dataclass
class Decided(Message):
    """A decision recorded (or refused): what the state store now holds, and what to say.
    `entries` None: the store could not be read back; what is shown stays."""

    entries: dict[str, TriageEntry] | None
    said: str
    severity: str = "information"
    select: str | None = None


@dataclass
class DecidedElsewhere(Message):
    """Another session (a second console, `scout triage`) changed the decisions: what the
    state store now holds."""

    entries: dict[str, TriageEntry]
    said: str


@dataclass
class PublishedElsewhere(Message):
    """The day's report went out since the console last looked (from another console or
    `scout publish`, sharing this state dir): when, and the drafts filed from here."""

    at: datetime
    filed: frozenset[str]


@dataclass
class CollectionEvent(Message):
    event: Event


@dataclass
class CollectionEnded(Message):
    error: str | None
    cancelled: bool


@dataclass
class ReproEnded(Message):
    returncode: int
    stopped: bool


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
    at: datetime | None = None  # when the day's report comment was posted (done)
    filed: frozenset[str] = frozenset()  # findings whose drafts publishes from here filed
