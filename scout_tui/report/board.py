"""Which board item is a finding's: the fingerprint marker its body carries (scout's own
drafts), else the same normalized title (an item someone filed by hand)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from scout_tui.github.api import BoardItem

_MARKED = re.compile(r"scout:fp=([\w.:-]+)")


def normalized_title(title: str) -> str:
    title = re.sub(r"^\s*(\[[^\]]*\]\s*)+", "", title)  # [NightlyScout][P1] prefixes
    return " ".join(re.sub(r"[`*_]", "", title).lower().split())


def fingerprints_in(body: str) -> list[str]:
    return _MARKED.findall(body)


def board_index(items: Iterable[BoardItem]) -> dict[str, BoardItem]:
    """Board items by the fingerprints their bodies carry and by normalized title."""
    index: dict[str, BoardItem] = {}
    for item in items:
        for fingerprint in fingerprints_in(item.body):
            index.setdefault(fingerprint, item)
    for item in items:
        index.setdefault(normalized_title(item.title), item)
    return index
