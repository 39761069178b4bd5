"""A grouped finding's items as reports name them: in markers, by the digest of each item's
key; in status updates, in the words of its kind. Pure: no I/O.

Reports written before a change's items were keys took its digest from its words. Those
digests are matched by `_digest_before_keys` alone, so that the day after an upgrade reads
"no change" where nothing changed; nothing else reads or writes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from scout_tui.analysis.python.changes import (
    Added,
    Change,
    CheckAdded,
    DefaultChanged,
    KindChanged,
    Removed,
    Reordered,
    Reshaped,
    ReturnsChanged,
    TypeChanged,
    ValuesChanged,
    change_of,
)
from scout_tui.collect.base import Kind
from scout_tui.model import Finding, item_digest, set_digest


@dataclass(frozen=True)
class Items:
    """A finding's items, each with the digests a marker may name it by."""

    own: dict[str, str]  # item → the digest of its key
    before_keys: dict[str, str]  # item → the digest a report before keys gave it
    said: dict[str, str]  # item → its words

    @classmethod
    def of(cls, finding: Finding, kind: Kind) -> Items:
        own = {item: item_digest(item) for item in finding.items}
        before = {
            item: _digest_before_keys(item) or digest
            for item, digest in own.items()
            if kind.words is not None
        }
        return cls(own, before, {item: kind.says(item) for item in own})

    def __len__(self) -> int:
        return len(self.own)

    def digests(self) -> set[str]:
        """The digests today's markers carry."""
        return set(self.own.values())

    def compared(self, before: Iterable[str]) -> tuple[list[str], int]:
        """The items a marker's digests do not name (in their words, in digest order), and
        how many of its digests name no item today."""
        prior = set(before)
        added = sorted(
            (item for item in self.own if not self._names(item) & prior), key=self.own.__getitem__
        )
        named = {digest for item in self.own for digest in self._names(item)}
        return [self.said[item] for item in added], len(prior - named)

    def same_as(self, before: Iterable[str]) -> bool:
        added, removed = self.compared(before)
        return not added and not removed

    def within(self, before: Iterable[str]) -> bool:
        """Every item is one the marker names."""
        return not self.compared(before)[0]

    def same_set(self, digest: str) -> bool:
        """Whether one digest of a whole set (a long quiet list) is of these items."""
        sets = [self.digests(), {self.before_keys.get(i, d) for i, d in self.own.items()}]
        return any(set_digest(digests) == digest for digests in sets)

    def _names(self, item: str) -> set[str]:
        return {self.own[item], self.before_keys.get(item, self.own[item])}


def _digest_before_keys(item: str) -> str | None:
    """The digest a report written before item keys gave a change: that of its words then.
    Frozen: rewording the report changes nothing here."""
    change = change_of(item)
    if change is None or isinstance(change, CheckAdded):
        return None  # a kind of change newer than item keys: never written as words
    return item_digest(_words_before_keys(change))


def _words_before_keys(change: Change) -> str:
    match change:
        case Added(subject, name, kind):
            return f"{subject} `{name}` added" + (f" ({kind})" if kind else "")
        case Removed(subject, name):
            return f"{subject} `{name}` removed"
        case TypeChanged(subject, name, before, after, widened):
            said = f"{subject} `{name}` type `{before}` → `{after}`"
            return said + (f", a base class of `{before}`: what fit still fits" if widened else "")
        case DefaultChanged(subject, name, before, after):
            return f"{subject} `{name}` default `{before}` → `{after}`"
        case ValuesChanged(name, removed, added):
            listed = [
                f"{verb} " + ", ".join(f"`{v}`" for v in values)
                for verb, values in (("removed", removed), ("added", added))
                if values
            ]
            return f"field `{name}` allowed values: {'; '.join(listed)}"
        case KindChanged(name, kind, was):
            return f"parameter `{name}` became {kind} (was {was})"
        case Reordered(order):
            return "parameters reordered: " + ", ".join(order)
        case ReturnsChanged(after, before):
            return f"returns {after} (was {before})"
        case Reshaped(qualname, how):
            return {
                "no longer a class": f"`{qualname}` is no longer a class",
                "class or function": f"`{qualname}` changed between class and function",
            }.get(how, f"`{qualname}` appeared or disappeared")
    raise AssertionError(change)
