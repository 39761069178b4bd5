"""Which findings a reviewer asks for: the console's `/` filter and `scout triage list
FILTER`, one syntax — words over title, body and files (case-insensitive, all must
appear), and the tokens p0 p1 p2 new carried dropped unreviewed (all must hold). A token in
quotes ("dropped") is a word."""

from __future__ import annotations

from dataclasses import dataclass

from scout_tui.model import Status
from scout_tui.triage.decisions import Decided

FILTER_TOKENS = frozenset({"p0", "p1", "p2", "new", "carried", "dropped", "unreviewed"})


@dataclass(frozen=True)
class Filter:
    words: tuple[str, ...] = ()
    tokens: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, text: str) -> Filter:
        words: list[str] = []
        tokens: set[str] = set()
        for part in text.lower().split():
            quoted = len(part) > 2 and part[0] == part[-1] and part[0] in "\"'"
            if quoted:
                words.append(part[1:-1])
            else:
                (tokens.add if part in FILTER_TOKENS else words.append)(part)
        return cls(tuple(words), frozenset(tokens))

    def __bool__(self) -> bool:
        return bool(self.words or self.tokens)

    def matches(self, decided: Decided, reviewed: bool) -> bool:
        """`decided`: the finding as the reviewer left it; `reviewed`: whether they did."""
        finding = decided.current
        status = decided.original.status
        failed = {
            "new": status is not Status.NEW,
            "carried": status is not Status.CARRIED,
            "dropped": decided.label != "dropped",
            "unreviewed": reviewed,
        }
        for token in self.tokens:
            if token in ("p0", "p1", "p2"):
                if finding.priority is None or finding.priority.value.lower() != token:
                    return False
            elif failed[token]:
                return False
        if self.words:
            haystack = " ".join(  # a fingerprint (or a prefix of it) finds its finding too
                [
                    finding.title,
                    finding.body,
                    *(ref.path for ref in finding.files),
                    decided.original.fingerprint,
                ]
            ).lower()
            return all(word in haystack for word in self.words)
        return True
