"""The collector protocol, what collectors share (finding builder, context, needs), and the
lookup of the collectors `collect/registry.py` lists.

A collector is a small class with a name, what it needs (repo / network / token / torch)
and a generator that yields findings and progress as it goes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from scout_tui.collect.events import (
    CollectorFinished,
    CollectorStarted,
    ConfigWarned,
    Event,
    FindingFound,
    Progress,
)
from scout_tui.config.models import Config, Rule
from scout_tui.errors import UsageError, scrub
from scout_tui.model import (
    PRIORITIZED,
    ConfigWarning,
    Evidence,
    FileRef,
    Finding,
    Priority,
    PriorReport,
    Section,
    Severity,
    Status,
    fingerprint,
)

if TYPE_CHECKING:
    from scout_tui.github.api import GitHub
    from scout_tui.source.tree import SourceTree
    from scout_tui.store.cache import Cache


class Need(StrEnum):
    REPO = "repo"
    NETWORK = "network"
    TORCH = "torch"
    GITHUB = "github"  # a GitHub connection: a token, and the host answering


class Skipped(Exception):
    """Raised by a collector that cannot run; the message is the reason shown to users."""


@dataclass
class CollectorContext:
    """Everything a collector may look at. The token is here, never in anything saved."""

    config: Config
    repo_path: Path
    as_of: date
    since: datetime
    until: datetime
    source: SourceTree
    prior_reports: list[PriorReport] = field(default_factory=list)
    baseline_commit: str | None = None  # newest commit at or before `since`
    head_commit: str | None = None  # newest commit at or before `until`
    online: bool = False
    # GitHub, or why there is none ("offline", "no GitHub token (…)"): what GitHub
    # collectors say when they are skipped.
    github: GitHub | None = None
    github_reason: str = "no GitHub connection"
    web_url: str = "https://github.com"  # where GitHub's links point (the API's own web)
    # For network collectors (threads of the parent process): logs and lookups kept.
    cache: Cache | None = None
    torch_root: Path | None = None
    torch_reason: str = "torch not installed"  # why `torch_root` is None
    cancelled: threading.Event = field(default_factory=threading.Event)
    # A run as of a day before yesterday: what GitHub says now is not what it said then.
    past_day: bool = False
    # Where a shallow clone's history is cut, and why the baseline is missing when it is.
    shallow_roots: frozenset[str] = frozenset()
    history_gap: str | None = None

    def since_words(self) -> str:
        """What "new since …" compares with: the prior report's day, or, on a first run
        (no prior report: no baseline), the start of the run's own day — said so."""
        if self.prior_reports:
            return f"since {self.since.date()}"
        return "today (first report: no baseline before the day's start)"

    def finding(
        self,
        collector: str,
        kind: str,
        key: tuple[str, ...],
        title: str,
        body: str = "",
        *,
        suggested_fix: str = "",
        files: list[FileRef] | None = None,
        items: list[str] | None = None,
        evidence: Evidence | None = None,
        aliases: list[str] | None = None,
    ) -> Finding:
        """A finding whose section, priority, severity and board flag come from the rules."""
        return born(
            Placement.by(self.config.rule(kind)),
            collector,
            kind,
            fingerprint(kind, *key),
            title,
            body,
            suggested_fix=suggested_fix,
            files=files,
            items=items,
            evidence=evidence,
            aliases=aliases,
        )


@dataclass(frozen=True)
class Placement:
    """Where a finding lands: its section, priority, severity and board flag."""

    section: Section
    priority: Priority | None = None
    severity: Severity | None = None
    board_item: bool = False

    @classmethod
    def by(cls, rule: Rule) -> Placement:
        """As the kind's rule says; a priority only where the section carries one."""
        priority = rule.priority if rule.section in PRIORITIZED else None
        return cls(rule.section, priority, rule.severity, rule.board_item)


def born(
    placement: Placement,
    collector: str,
    kind: str,
    fingerprint: str,
    title: str,
    body: str = "",
    *,
    suggested_fix: str = "",
    files: list[FileRef] | None = None,
    items: list[str] | None = None,
    evidence: Evidence | None = None,
    aliases: list[str] | None = None,
    status: Status = Status.NEW,
    status_update: str | None = None,
    first_reported: date | None = None,
) -> Finding:
    """The one place a finding is made, by a collector or by reconcile. Text is scrubbed
    where it is read; what is composed from it is scrubbed once more here, so a reader that
    missed it costs nothing."""
    return Finding(
        collector=collector,
        kind=kind,
        title=scrub(title),
        body=scrub(body),
        suggested_fix=scrub(suggested_fix),
        section=placement.section,
        priority=placement.priority,
        severity=placement.severity,
        board_item=placement.board_item,
        files=files or [],
        items=[scrub(item) for item in items or []],
        evidence=evidence or Evidence(),
        fingerprint=fingerprint,
        aliases=aliases or [],
        status=status,
        status_update=status_update,
        first_reported=first_reported,
    )


class Lifetime(StrEnum):
    """How long a kind's finding lives, and what ends it."""

    # A state of the tree: Resolved only when its check finds it on the prior report's
    # commit and not on today's.
    STANDING = "standing"
    # Something that happened since the baseline: it leaves the report when the baseline
    # moves past it, never "Resolved".
    NEWS = "news"
    # Seen on GitHub, not in the tree: gone when GitHub says so.
    OBSERVED = "observed"


@dataclass(frozen=True)
class Kind:
    """A finding kind, declared once by the collector that makes it. Where it lands
    (section, priority, board item) is the team's `[rules]`; how it lives is here."""

    name: str
    lifetime: Lifetime = Lifetime.STANDING
    # One of a series (a TODO's blocker closed, a PR merged): a new one under another key
    # follows up the one reported before.
    follows_up: bool = False
    # Said together with the others of its kind in one FYI line, never on its own.
    folded: bool = False
    # Whether a hand-written prior item's title says this kind of problem: only for kinds
    # whose check is exhaustive for what the item names, so it can be Resolved like
    # scout's own.
    said_by: Callable[[str], bool] | None = None
    # How an item reads, for kinds whose items are keys (a change's type and fields):
    # status updates name items in these words. Other kinds' items read as themselves.
    words: Callable[[str], str] | None = None

    def says(self, item: str) -> str:
        return item if self.words is None else self.words(item)


def spec_of(kinds: Mapping[str, Kind], kind: str) -> Kind:
    """A kind's spec; a kind no collector declares (reconcile's own, a retired one) is a
    standing one with no traits."""
    return kinds.get(kind) or Kind(kind)


@dataclass(frozen=True)
class Unchecked:
    """What a collector could not check this run (the file that says it could not be read):
    its findings of every kind under `key` (of `kinds`, when given) are neither found nor
    gone today."""

    key: tuple[str, ...]
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Note:
    """A line for the run's record of the collector (`collectors[].notes` in `--json`):
    what it did that scout.toml does not say, and nothing is wrong with — a watched
    surface followed to where it lives at the scanned commit, say."""

    text: str


class Collector:
    """What every collector is: the class attributes say what it makes and needs; `collect`
    yields as it goes."""

    name: ClassVar[str]
    title: ClassVar[str]
    section: ClassVar[Section]  # where its "skipped — reason" line goes in the report
    needs: ClassVar[frozenset[Need]]
    kinds: ClassVar[tuple[Kind, ...]]
    # Optional, for running in several processes: collectors with the same `shares` read
    # the same files and stay in one process; `cost` balances the processes.
    # shares: ClassVar[str]; cost: ClassVar[int]

    @classmethod
    def folds(cls, kind: str) -> bool:
        """Whether findings of `kind` are said together in one FYI line."""
        return any(k.folded for k in cls.kinds if k.name == kind)

    # A ConfigWarning: scout.toml names something the repository no longer has (said apart
    # from the findings; never in the report). A Note: said in the run's record only.
    def collect(
        self, ctx: CollectorContext
    ) -> Iterator[Finding | Progress | ConfigWarning | Unchecked | Note]:
        raise NotImplementedError


def kinds_of(collectors: Iterable[type[Collector]]) -> dict[str, Kind]:
    """The kinds the collectors make, by name."""
    return {kind.name: kind for cls in collectors for kind in cls.kinds}


def all_kinds() -> dict[str, Kind]:
    """Every kind a collector makes, by name, in report order."""
    return kinds_of(registered().values())


def registered() -> dict[str, type[Collector]]:
    """All collectors by name, in report order (`collect/registry.py` lists them)."""
    from scout_tui.collect.registry import COLLECTORS

    named = {cls.name: cls for cls in COLLECTORS}
    if len(named) != len(COLLECTORS):
        raise ValueError("two collectors in collect/registry.py have the same name")
    return named


def collector_sections() -> dict[str, Section]:
    return {name: cls.section for name, cls in registered().items()}


def select_collectors(only: Sequence[str] | None) -> list[type[Collector]]:
    available = registered()
    if not only:
        return list(available.values())
    unknown = [name for name in only if name not in available]
    if unknown:
        raise UsageError(f"unknown collector {', '.join(unknown)}; known: {', '.join(available)}")
    return [available[name] for name in dict.fromkeys(only)]


@dataclass(frozen=True)
class Unmet:
    reason: str
    by_request: bool  # the user asked for it (--offline): not a problem for --strict


def unmet_need(cls: type[Collector], ctx: CollectorContext) -> Unmet | None:
    """Why this collector cannot run in this context, or None."""
    checks: list[tuple[Need, Callable[[], bool], str, bool]] = [
        (Need.NETWORK, lambda: ctx.online, "offline", True),
        (Need.GITHUB, lambda: ctx.github is not None, ctx.github_reason, False),
        (Need.TORCH, lambda: ctx.torch_root is not None, ctx.torch_reason, False),
    ]
    for need, ok, reason, by_request in checks:
        if need in cls.needs and not ok():
            return Unmet(reason, by_request)
    return None


__all__ = [
    "CollectorFinished",
    "CollectorStarted",
    "ConfigWarned",
    "Event",
    "FindingFound",
    "Progress",
    "Skipped",
]


@dataclass(frozen=True)
class Located:
    """Where a file scout.toml names is at the scanned commit (None: not there), and what
    to say about that: nothing, a note, or a warning."""

    path: str | None
    said: ConfigWarning | Note | None = None


def locate_path(ctx: CollectorContext, collector: str, where: str, path: str) -> Located:
    """A file scout.toml names, at the scanned commit. scout.toml is written for the
    checkout's HEAD: a past commit that has the file under its former name (followed back
    there) or not yet is said in a note; a file the checkout's HEAD lacks too is
    scout.toml's to fix (a warning)."""
    if ctx.source.exists(path):
        return Located(path)
    if not ctx.source.leads_outside(path):
        fate = ctx.source.earlier_path(path, ctx.head_commit or "HEAD")
        commit = fate.commit
        if fate.kind in ("moved", "later") and commit is not None:
            when = f"{commit.sha[:10]} ({commit.summary}, {commit.date.date()})"
            if fate.moved_to and ctx.source.exists(fate.moved_to):
                said = f"{where}: {path} is {fate.moved_to} at this commit (renamed in {when})"
                return Located(fate.moved_to, Note(said + ": read there."))
            return Located(None, Note(f"{where}: {path} is not there yet (added in {when})."))
    return Located(None, missing_path_warning(ctx, collector, where, path))


def missing_path_warning(
    ctx: CollectorContext, collector: str, where: str, path: str
) -> ConfigWarning:
    """scout.toml names a file the checkout does not have: moved (and where), removed (and
    when), or never there — one line for the person who keeps scout.toml."""
    if ctx.source.leads_outside(path):
        said = f"{where}: {path} is a symlink out of the repository: not read."
        return ConfigWarning(collector=collector, subject=where, message=said)
    head = ctx.head_commit or "HEAD"
    fate = ctx.source.path_fate(path, head)
    commit = fate.commit
    when = f"{commit.sha[:10]} ({commit.summary}, {commit.date.date()})" if commit else "?"
    if fate.kind == "moved" and fate.moved_to and ctx.source.exists(fate.moved_to):
        said = f"{where}: {path} moved to {fate.moved_to} in {when}; point scout.toml at it."
    elif fate.kind in ("moved", "removed"):
        said = f"{where}: {path} was removed in {when}; remove it from scout.toml."
    else:
        said = f"{where}: {path} does not exist, and never did in this history."
    return ConfigWarning(
        collector=collector,
        subject=where,
        message=said,
        moved_to=fate.moved_to,
        commit=commit.sha if commit else None,
    )


def skipped_file_warning(collector: str, path: str, why: str) -> ConfigWarning:
    """A file too big to read, or Python `ast` cannot take: skipped, the run goes on."""
    message = f"{path}: skipped — {why}; the other files were read."
    return ConfigWarning(collector=collector, subject=path, message=message)
