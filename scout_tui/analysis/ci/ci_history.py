"""Classify a workflow's failures over its recent scheduled runs, the way PyTorch's Dr. CI
classifies a pull request's, adapted to nightly history. Pure: runs in, classes out.

A failure's signature is the test and its root-cause exception, normalized (addresses,
numbers, quoted values and paths vary from run to run; the failure does not). For each
signature of the latest failing run:
- recurring: the run before failed with it too — a hard break;
- intermittent: an earlier run failed with it and a run between did not — likely flaky;
- new: its first appearance in the window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

RECURRING, INTERMITTENT, NEW = "recurring", "intermittent", "new failure"
_VARYING = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    (re.compile(r"(['\"]).*?\1"), "'…'"),
    (re.compile(r"(?:/[\w.+-]+)+/"), "…/"),
    (re.compile(r"\d+(?:\.\d+)?"), "N"),
]
ERROR_LIMIT = 160


def normalize_error(error: str | None) -> str:
    """The part of a root-cause line that stays the same from run to run."""
    if not error:
        return ""
    text = " ".join(error.split())
    for pattern, stand_in in _VARYING:
        text = pattern.sub(stand_in, text)
    return text[:ERROR_LIMIT]


@dataclass(frozen=True)
class Signature:
    test: str
    error: str  # normalized


@dataclass
class RunHistory:
    """One completed run: what failed in it (nothing: it passed)."""

    number: int
    url: str
    passed: bool
    signatures: set[Signature] = field(default_factory=set)


@dataclass(frozen=True)
class Classified:
    kind: str
    detail: str  # "also failed in run #11", "failed in run #9, passed in #10"...


def classify(runs: list[RunHistory]) -> dict[Signature, Classified]:
    """Classes for the newest run's signatures; `runs` newest first."""
    if not runs or runs[0].passed:
        return {}
    latest, earlier = runs[0], runs[1:]
    classes: dict[Signature, Classified] = {}
    for signature in latest.signatures:
        seen = [n for n, run in enumerate(earlier) if signature in run.signatures]
        if not seen:
            classes[signature] = Classified(NEW, "first seen in this window")
        elif seen[0] == 0:
            streak = 1
            while streak < len(earlier) and signature in earlier[streak].signatures:
                streak += 1
            numbers = ", #".join(str(run.number) for run in earlier[:streak])
            classes[signature] = Classified(RECURRING, f"also failed in run #{numbers}")
        else:
            between = earlier[: seen[0]]
            passed = ", #".join(str(run.number) for run in between)
            classes[signature] = Classified(
                INTERMITTENT, f"failed in run #{earlier[seen[0]].number}, passed in #{passed}"
            )
    return classes
