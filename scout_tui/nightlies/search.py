"""Which nightly to try next, and what the tries so far decide: a binary search over the
nightlies between a good and a bad one that steps around the ones it cannot test.

Pure: the tries come in as data, the next nightly and the verdict go out. The order of the
runs is the contract: the bad end first (does the failure reproduce on this box at all?),
the good end only when asked to verify it (CI's word is trusted otherwise), then the middle
of what is left open, so that n candidates take 1 + ceil(log2 n) runs, plus one for each
nightly that could not be tested.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    UNTESTABLE = "could not test"


class Decision(StrEnum):
    FOUND = "found"  # the first bad nightly, next to the last good one
    NARROWED = "narrowed"  # only nightlies that could not be tested are left between them
    NOT_REPRODUCED = "does not reproduce"  # the bad end passes on this box
    BAD_END_UNTESTABLE = "the bad end could not be tested"
    GOOD_END_FAILS = "the good end fails too"
    GOOD_END_UNTESTABLE = "the good end could not be tested"


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    last_good: str | None = None
    first_bad: str | None = None
    untested_between: tuple[str, ...] = ()  # each may be the first bad one

    @property
    def found(self) -> bool:
        return self.decision is Decision.FOUND


@dataclass(frozen=True)
class Search:
    """`candidates`: the nightlies after `good` up to and including the bad one, oldest
    first (the bad one last)."""

    good: str
    candidates: tuple[str, ...]
    verify_good: bool = False

    def __post_init__(self) -> None:
        if not self.candidates:
            raise ValueError("no nightly after the good one: nothing to search")
        if self.good in self.candidates:
            raise ValueError(f"the good nightly {self.good} is among the candidates")

    @property
    def bad(self) -> str:
        return self.candidates[-1]

    def next(self, tried: dict[str, Outcome]) -> str | None:
        """The nightly to run next; None once `verdict` is final."""
        if self.bad not in tried:
            return self.bad
        if tried[self.bad] is not Outcome.FAIL:
            return None
        if self.verify_good:
            if self.good not in tried:
                return self.good
            if tried[self.good] is not Outcome.PASS:
                return None
        low, high = self._bounds(tried)
        open_ = [i for i in range(low + 1, high) if self.candidates[i] not in tried]
        if not open_:
            return None
        middle = (low + high) / 2  # the untestable ones make it off-centre: nearest to it
        return self.candidates[min(open_, key=lambda i: (abs(i - middle), i))]

    def verdict(self, tried: dict[str, Outcome]) -> Verdict:
        """What the tries decide; call once `next` is None."""
        at_bad = tried.get(self.bad)
        if at_bad is Outcome.PASS:
            return Verdict(Decision.NOT_REPRODUCED, first_bad=None)
        if at_bad is not Outcome.FAIL:
            return Verdict(Decision.BAD_END_UNTESTABLE)
        if self.verify_good:
            at_good = tried.get(self.good)
            if at_good is Outcome.FAIL:  # no bound: the failure is older than the range
                return Verdict(Decision.GOOD_END_FAILS)
            if at_good is not Outcome.PASS:
                return Verdict(Decision.GOOD_END_UNTESTABLE)
        low, high = self._bounds(tried)
        last_good = self.candidates[low] if low >= 0 else self.good
        between = tuple(self.candidates[low + 1 : high])
        untested = tuple(n for n in between if tried.get(n) is Outcome.UNTESTABLE)
        if len(untested) < len(between):
            raise ValueError("the search is not over: call verdict once next() is None")
        decision = Decision.NARROWED if untested else Decision.FOUND
        return Verdict(decision, last_good, self.candidates[high], untested)

    def _bounds(self, tried: dict[str, Outcome]) -> tuple[int, int]:
        """(the last passing index before the first failing one, or -1 for the good end;
        the first failing index). A pass after a fail (a flaky nightly) is not a bound."""
        high = next(i for i, n in enumerate(self.candidates) if tried.get(n) is Outcome.FAIL)
        passing = [i for i in range(high) if tried.get(self.candidates[i]) is Outcome.PASS]
        return (passing[-1] if passing else -1), high
