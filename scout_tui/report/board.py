"""Which board item is a finding's (`BoardIndex.item_for`, the one rule): scout's own draft by
the fingerprint marker it carries, else any item with the same normalized title (an item
someone filed by hand).

A marker is trusted only on a draft scout created: by the token's identity, or recorded in
this state dir's publish journal; anyone can paste `scout:fp=…` into an item of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scout_tui.github.api import BoardItem
from scout_tui.history.parse import LATER_ATTRIBUTES

DRAFT_SOURCE = "Source: Nightly Scout Report — "  # the first line of every draft scout files
# The marker as render.marker writes it, alone on its line: an HTML comment of its own.
_MARKER_LINE = re.compile(
    r"^<!-- scout:fp=([a-z][a-z0-9_]*-[0-9a-f]{12})(?: items=[0-9a-f.]*)?"
    r"(?: first=\d{4}-\d{2}-\d{2})?" + LATER_ATTRIBUTES + " -->$",
    re.MULTILINE,
)


def normalized_title(title: str) -> str:
    title = re.sub(r"^\s*(\[[^\]]*\]\s*)+", "", title)  # [NightlyScout][P1] prefixes
    return " ".join(re.sub(r"[`*_]", "", title).lower().split())


@dataclass(frozen=True)
class Scout:
    """Who scout is on the board: the token's login, and the items its journal recorded
    (item id → the fingerprint it was added for)."""

    login: str
    journaled: Mapping[str, str] = field(default_factory=dict)

    def created(self, item: BoardItem) -> bool:
        by_token = item.creator is not None and item.creator.lower() == self.login.lower()
        return by_token or item.id in self.journaled


def scout_fingerprint(item: BoardItem, scout: Scout | None) -> str | None:
    """The finding a board item is the draft of, when it is scout's own draft: what the
    journal recorded adding it for, else the one marker its body carries. Anyone who can
    edit the board can edit a draft: a body with a second marker (one pasted to make a
    finding look filed) matches nothing."""
    if scout is None or not scout.created(item) or item.content_type != "DraftIssue":
        return None
    if item.id in scout.journaled:
        return scout.journaled[item.id]
    if not item.body.startswith(DRAFT_SOURCE):
        return None
    found = set(_MARKER_LINE.findall(item.body))
    return found.pop() if len(found) == 1 else None


@dataclass
class BoardIndex:
    """Scout's drafts by fingerprint, every item by normalized title."""

    drafts: dict[str, BoardItem] = field(default_factory=dict)
    titles: dict[str, BoardItem] = field(default_factory=dict)

    def filed_by_hand(self, title: str) -> BoardItem | None:
        """An item with the same normalized title: someone filed it already."""
        return self.titles.get(normalized_title(title))

    def item_for(self, fingerprint: str, title: str, *, by_title: bool = True) -> BoardItem | None:
        """The board's item for a finding: scout's own draft by its fingerprint, else (when
        `by_title`) any item with the same normalized title. The one matching rule."""
        found = self.drafts.get(fingerprint)
        if found is None and by_title:
            found = self.filed_by_hand(title)
        return found


def board_index(items: Iterable[BoardItem], scout: Scout | None) -> BoardIndex:
    """`scout`: None when who scout is cannot be known, and then no marker counts."""
    items = list(items)
    index = BoardIndex()
    for item in items:
        fingerprint = scout_fingerprint(item, scout)
        if fingerprint is not None:
            index.drafts.setdefault(fingerprint, item)
    for item in items:
        index.titles.setdefault(normalized_title(item.title), item)
    return index
