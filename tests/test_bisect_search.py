"""The nightly search: the runs it takes and what they decide, over every position of the
first bad nightly, with nightlies that cannot be tested around it."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from scout_tui.nightlies.search import Decision, Outcome, Search


def nightlies(n: int) -> tuple[str, tuple[str, ...]]:
    """The good nightly and the n after it, the last one bad."""
    names = [f"2.13.0.dev2026{6 + day // 28:02d}{1 + day % 28:02d}" for day in range(n + 1)]
    return names[0], tuple(names[1:])


def bisect(search: Search, outcome_of) -> tuple[list[str], dict[str, Outcome]]:
    tried: dict[str, Outcome] = {}
    runs = []
    while (nightly := search.next(tried)) is not None:
        assert nightly not in tried  # never the same nightly twice
        runs.append(nightly)
        tried[nightly] = outcome_of(nightly)
    return runs, tried


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 8, 9, 16, 17, 31])
def test_the_first_bad_nightly_in_one_run_plus_log2_n(n: int) -> None:
    good, candidates = nightlies(n)
    for first_bad in range(n):

        def outcome(nightly: str, first_bad: int = first_bad) -> Outcome:
            return Outcome.FAIL if candidates.index(nightly) >= first_bad else Outcome.PASS

        search = Search(good, candidates)
        runs, tried = bisect(search, outcome)
        assert runs[0] == candidates[-1]  # the failure reproduced first, at the bad end
        assert len(runs) <= 1 + math.ceil(math.log2(n))
        verdict = search.verdict(tried)
        assert verdict.decision is Decision.FOUND
        assert verdict.first_bad == candidates[first_bad]
        assert verdict.last_good == (candidates[first_bad - 1] if first_bad else good)


def test_nightlies_that_cannot_be_tested_are_stepped_around() -> None:
    """Each untestable nightly costs one run more, at most; the verdict never names one as
    the first bad: when only untestable ones are left between the bounds, it says so."""
    rng = random.Random(7)
    narrowed = 0
    for n, first_bad in itertools.product([4, 9, 20], range(20)):
        if first_bad >= n:
            continue
        good, candidates = nightlies(n)
        untestable = set(rng.sample(candidates[:-1], k=min(3, n - 1)))

        def outcome(
            nightly: str, first_bad: int = first_bad, untestable=untestable, candidates=candidates
        ) -> Outcome:
            if nightly in untestable:
                return Outcome.UNTESTABLE
            return Outcome.FAIL if candidates.index(nightly) >= first_bad else Outcome.PASS

        search = Search(good, candidates)
        runs, tried = bisect(search, outcome)
        assert len(runs) <= 1 + math.ceil(math.log2(n)) + len(untestable)
        verdict = search.verdict(tried)
        truth = candidates[first_bad]
        if verdict.decision is Decision.FOUND:
            assert verdict.first_bad == truth
        else:
            narrowed += 1
            assert verdict.decision is Decision.NARROWED
            assert verdict.untested_between
            assert set(verdict.untested_between) <= untestable
            assert truth in (*verdict.untested_between, verdict.first_bad)
    assert narrowed  # the sample holds untestable nightlies right before the first bad one


def test_the_ends_decide_first() -> None:
    good, candidates = nightlies(6)
    search = Search(good, candidates)
    runs, tried = bisect(search, lambda n: Outcome.PASS)
    assert runs == [candidates[-1]]
    assert search.verdict(tried).decision is Decision.NOT_REPRODUCED
    runs, tried = bisect(search, lambda n: Outcome.UNTESTABLE)
    assert runs == [candidates[-1]]
    assert search.verdict(tried).decision is Decision.BAD_END_UNTESTABLE
    verifying = Search(good, candidates, verify_good=True)
    runs, tried = bisect(verifying, lambda n: Outcome.FAIL)
    assert runs == [candidates[-1], good]
    assert verifying.verdict(tried).decision is Decision.GOOD_END_FAILS
    assert verifying.verdict(tried).first_bad is None  # nothing in the range is the first
    runs, tried = bisect(verifying, lambda n: Outcome.FAIL if n == candidates[-1] else Outcome.PASS)
    assert runs[:2] == [candidates[-1], good]
    assert len(runs) <= 2 + math.ceil(math.log2(6))
    assert verifying.verdict(tried).first_bad == candidates[-1]


def test_a_flaky_pass_after_a_failure_is_not_a_bound() -> None:
    good, candidates = nightlies(8)
    search = Search(good, candidates)
    tried = {candidates[-1]: Outcome.FAIL, candidates[2]: Outcome.FAIL, candidates[5]: Outcome.PASS}
    assert search.next(tried) in candidates[:2]


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="nothing to search"):
        Search("a", ())
    with pytest.raises(ValueError, match="among the candidates"):
        Search("a", ("a", "b"))
