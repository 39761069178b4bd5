"""The findings model: what a collector finds, what a reviewer decides, what a run records.

These are pydantic models because they cross boundaries: the cache, `--json`, bundles and
the committed JSON Schema read and write them. What a section is (`SECTIONS`) is plain
data beside them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 2  # 2: checkout, experiment, collected_at, only, cancelled


class Section(StrEnum):
    """Report sections, in the order the report renders them."""

    CI_FAILURES = "ci_failures"
    ACTION_ITEMS = "action_items"
    CARRIED_FORWARD = "carried_forward"
    OPPORTUNITIES = "opportunities"
    FYI = "fyi"
    DOCS = "docs"
    ALL_CLEAR = "all_clear"


@dataclass(frozen=True)
class SectionTraits:
    """What a section is, said once: every stage asks this table, never its own set."""

    heading: str  # the report's heading
    short: str  # the console tree's heading, and a hand-written heading's usual name
    column: str  # `scout replay`'s summary column
    # P0–P2 priorities, a board item each, a Backlog draft when new, and carried when the
    # check that made it could not run today
    prioritized: bool = False
    # to consider, not to act on: carried in one line; demoted to FYI, promoted to Action
    # Items; ranked after every prioritized finding
    advisory: bool = False
    checkbox: bool = False  # a task-list item in the report
    collapsed: bool = False  # folded in the report when it has items
    # says something is wrong or worth attention: an item of it gone today may be Resolved
    resolvable: bool = True
    # a rule or a reviewer may place a finding here (Carried Forward is reconcile's to say)
    placeable: bool = True


SECTIONS: dict[Section, SectionTraits] = {
    Section.CI_FAILURES: SectionTraits("CI Failures", "CI Failures", "ci", prioritized=True),
    Section.ACTION_ITEMS: SectionTraits(
        "Action Items (new findings)", "Action Items", "action", prioritized=True, checkbox=True
    ),
    Section.CARRIED_FORWARD: SectionTraits(
        "Carried Forward (from prior reports, re-investigated)",
        "Carried Forward",
        "carried_fwd",
        prioritized=True,
        checkbox=True,
        placeable=False,
    ),
    Section.OPPORTUNITIES: SectionTraits(
        "Opportunities (things to consider)", "Opportunities", "opp", advisory=True
    ),
    Section.FYI: SectionTraits(
        "FYI (awareness, no action needed)", "FYI", "fyi", advisory=True, collapsed=True
    ),
    Section.DOCS: SectionTraits("Docs", "Docs", "docs", advisory=True),
    Section.ALL_CLEAR: SectionTraits(
        "All Clear", "All Clear", "clear", collapsed=True, resolvable=False
    ),
}
PRIORITIZED = frozenset(s for s, traits in SECTIONS.items() if traits.prioritized)
ADVISORY = frozenset(s for s, traits in SECTIONS.items() if traits.advisory)


class Priority(StrEnum):
    P0 = "P0"
    P1 = "P1"
    P2 = "P2"


class Severity(StrEnum):
    BLOCKING = "blocking"
    SHOULD_FIX = "should-fix"
    NICE_TO_HAVE = "nice-to-have"


class Status(StrEnum):
    NEW = "new"
    CARRIED = "carried"
    RESOLVED = "resolved"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FileRef(_Model):
    path: str
    line: int | None = None


class RegressionRow(_Model):
    nightly: str
    status: Literal["pass", "fail"]
    commit: str | None = None


class TracebackFrame(_Model):
    path: str
    line: int
    function: str
    source: str = ""
    in_experiment: bool = False


class Evidence(_Model):
    """What backs a finding up; the console's diff and log panes show these."""

    diff: str | None = None
    traceback: str | None = None
    frames: list[TracebackFrame] = Field(default_factory=list)
    failing_tests: list[str] = Field(default_factory=list)
    error: str | None = None
    regression: list[RegressionRow] = Field(default_factory=list)
    compare_url: str | None = None
    repro: str | None = None
    repros: dict[str, str] = Field(
        default_factory=dict,
        description="Each failing test's repro, by test name (`repro` is the first one's).",
    )
    test_classes: dict[str, str] = Field(
        default_factory=dict,
        description="How each failing test failed over the window: recurring, intermittent "
        "or new failure.",
    )
    test_reasons: dict[str, str] = Field(
        default_factory=dict,
        description="Why each failing test's run ended, when its log says: `rc=1`, "
        "`timed out after 600s`.",
    )
    test_errors: dict[str, str] = Field(
        default_factory=dict,
        description="Each failing test's root-cause line, as its log gives it.",
    )
    context: str | None = None
    urls: list[str] = Field(default_factory=list)
    log_path: str | None = Field(
        default=None, description="The whole CI log, as kept on the machine that collected it."
    )
    log_offset: int | None = Field(
        default=None, description="Where in that log the root cause's traceback starts."
    )
    found_at: str | None = Field(
        default=None,
        description="Resolved on evidence: the commit the prior report scanned, where the "
        "check found what is gone today.",
    )
    found_as: str | None = Field(
        default=None, description="Resolved on evidence: the fingerprint it was found as there."
    )


class BoardRef(_Model):
    item_id: str
    url: str | None = None
    status: str | None = None


# The status updates that say a carried finding changed since the prior report (its draft
# on the board gets a status line); each starts the update's sentence.
WORSENED = "situation worsened"
PARTIAL_FIX = "partial fix landed"
MATERIAL_CHANGES = (WORSENED, PARTIAL_FIX)


class Finding(_Model):
    """One thing the scout found. Section and priority start from the `[rules]` table."""

    collector: str
    kind: str
    title: str
    body: str = ""
    suggested_fix: str = ""
    section: Section
    priority: Priority | None = None
    severity: Severity | None = None
    board_item: bool = False
    files: list[FileRef] = Field(default_factory=list)
    # The sub-problems this finding groups (untested passes, failing tests...). Their
    # digests travel in the report marker so tomorrow's run can tell "partial fix landed"
    # from "situation worsened".
    items: list[str] = Field(default_factory=list)
    evidence: Evidence = Field(default_factory=Evidence)
    fingerprint: str
    # Earlier fingerprints of the same thing (its state before, a key scheme that moved):
    # a prior report's marker with one of them is this finding.
    aliases: list[str] = Field(default_factory=list)
    status: Status = Status.NEW
    status_update: str | None = None
    first_reported: date | None = None
    # Set by reconcile when a carried finding is unchanged and its rule asks for one line.
    unchanged_line: str | None = None
    board: BoardRef | None = None
    # The reviewer's decision once triaged ("accepted"; "edited" when changed by hand;
    # "promoted" when moved up into Action Items, which files a draft even if carried);
    # dropped and merged-away findings are not in what is published at all.
    decision: Literal["accepted", "edited", "promoted"] | None = None


def fingerprint(kind: str, *key: str) -> str:
    """A stable id from the kind and a key that never contains a line number."""
    digest = hashlib.sha1("\x1f".join((kind, *key)).encode()).hexdigest()[:12]
    return f"{kind}-{digest}"


def item_digest(item: str) -> str:
    return hashlib.sha1(item.encode()).hexdigest()[:6]


def set_digest(digests: Iterable[str]) -> str:
    """One digest of a set of item digests."""
    return hashlib.sha1(".".join(sorted(set(digests))).encode()).hexdigest()[:12]


class CollectorState(_Model):
    name: str
    title: str
    state: Literal["pending", "running", "done", "skipped", "failed", "cancelled"]
    reason: str | None = None
    findings: int = 0
    seconds: float | None = None
    by_request: bool = Field(
        default=False,
        description="Skipped because the user asked for it (--offline): not a problem for "
        "--strict.",
    )
    unchecked: list[str] = Field(
        default_factory=list,
        description="Fingerprints the collector could not check this run (a file it could "
        "not read): never called resolved, carried as not re-checked.",
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What the collector did that scout.toml does not say and nothing is wrong "
        "with: a watched surface followed to where it lives at the scanned commit, a "
        "configured file a later commit adds.",
    )


class PriorItem(_Model):
    """An item parsed from a prior report."""

    section: Section
    priority: Priority | None = None
    title: str
    text: str
    first_reported: date | None = None
    fingerprint: str | None = None
    item_digests: list[str] | None = None
    board_url: str | None = None
    checked: bool = False


class QuietMark(_Model):
    """An FYI a report left out as unchanged noise: the state it went quiet in travels in
    the report, so the next day keeps it out while its items stay the same."""

    fingerprint: str
    item_digests: list[str] = Field(default_factory=list)
    since: date = Field(description="The date of the last report that listed it.")
    first_reported: date | None = None
    # A long list travels as one digest of its items and their count (the report stays
    # short); then what changed is said as counts.
    set_digest: str | None = None
    count: int | None = None


class PriorReport(_Model):
    date: date
    source: str
    items: list[PriorItem] = Field(default_factory=list)
    quiet: list[QuietMark] = Field(default_factory=list)
    head: str | None = Field(
        default=None, description="The commit the report's run scanned (its report marker)."
    )
    posted_at: datetime | None = Field(
        default=None, description="When the comment was posted, for a report without head."
    )


class Checkout(_Model):
    """Which checkout a run scanned. Runs and triage decisions are filed under `id`, so a
    second worktree, a fork or the demo repository never sees another checkout's."""

    path: str = Field(description="The resolved top-level directory of the work tree.")
    git_dir: str = Field(description="The resolved git common directory.")
    id: str = Field(description="A digest of both.")

    @classmethod
    def of(cls, path: str, git_dir: str) -> Checkout:
        digest = hashlib.sha1(f"{path}\0{git_dir}".encode()).hexdigest()[:16]
        return cls(path=path, git_dir=git_dir, id=digest)


class TriageEntry(_Model):
    """A reviewer's decision on one finding, kept in the state store by fingerprint."""

    fingerprint: str
    decision: Literal["accepted", "dropped", "merged"] | None = None
    reason: str | None = None
    merged_into: str | None = None
    section: Section | None = None
    priority: Priority | None = None
    priority_set: bool = False  # distinguishes "set to no priority" from "not touched"
    title: str | None = None
    body: str | None = None
    updated: datetime | None = None


class ConfigWarning(_Model):
    """Something in scout.toml that no longer matches the repository: scout's own health,
    said to the person who keeps scout.toml — never a finding of the project's report."""

    collector: str
    subject: str = Field(description="What scout.toml names, as it names it.")
    message: str = Field(description="One line: what is wrong, since when, what to do.")
    moved_to: str | None = Field(
        default=None, description="Its new home, when certain (scout followed it today)."
    )
    commit: str | None = Field(default=None, description="The commit that moved or removed it.")


class IgnoredReports(_Model):
    """Report comments on the tracking issue by someone scout does not trust."""

    author: str
    count: int


class RunResult(_Model):
    """One collection run: the `--json` interface and what the cache keeps per day."""

    schema_version: int = SCHEMA_VERSION
    date: date
    since: datetime
    repo: str
    checkout: Checkout | None = None
    experiment: str = ""
    collected_at: datetime | None = None
    head: str | None = Field(
        default=None,
        description="The commit scanned: HEAD, or with --date the last commit of that day.",
    )
    baseline_commit: str | None = None
    prior_reports: list[PriorReport] = Field(default_factory=list)
    prior_source: str | None = None
    ignored_reports: list[IgnoredReports] = Field(
        default_factory=list,
        description="Report comments not read as prior reports: their authors are neither the "
        "token's user nor in [project] trusted_authors.",
    )
    collectors: list[CollectorState] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    suppressed: list[str] = Field(
        default_factory=list, description="Fingerprints of FYI items left out as noise."
    )
    quiet: list[QuietMark] = Field(
        default_factory=list,
        description="The FYI items left out as unchanged, with the state they went quiet in.",
    )
    left_out: list[Finding] = Field(
        default_factory=list,
        description="The findings left out of the report: unchanged noise, inventories that "
        "did not grow, and kinds the rules never report.",
    )
    withheld: dict[Section, int] = Field(
        default_factory=dict,
        description="Findings left out of a reviewed-only report until someone reviews them, "
        'counted by section: the report says so there, never "nothing to report".',
    )
    only: list[str] | None = Field(
        default=None, description="The collectors asked for with --only; null: all of them."
    )
    cancelled: bool = Field(default=False, description="Stopped before every collector ended.")
    config_digest: str | None = Field(
        default=None, description="Of the configuration the run was made with."
    )
    config_warnings: list[ConfigWarning] = Field(
        default_factory=list,
        description="scout.toml's own problems: configured things that no longer exist.",
    )

    @property
    def complete(self) -> bool:
        """A run of every collector to its end: the only kind that stands for the day."""
        return self.only is None and not self.cancelled
