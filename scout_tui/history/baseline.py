"""The baseline: prior reports in the window, and the `since` moment they give (SPEC §2.0)."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from scout_tui.errors import UsageError, scrub
from scout_tui.model import PriorReport

if TYPE_CHECKING:
    from scout_tui.source.tree import SourceTree


@dataclass(frozen=True)
class Window:
    """The day a run is "as of", and the moments that bound its history."""

    as_of: date
    until: datetime

    @classmethod
    def for_date(cls, as_of: date | None, now: datetime | None = None) -> Window:
        if as_of is None:
            now = now or datetime.now(UTC)
            return cls(now.date(), now)
        # A named day, even today: the whole day, nothing after. The same --date gives the
        # same window whenever it runs, which is what makes a run reproducible.
        return cls(as_of, datetime.combine(as_of + timedelta(days=1), time(), UTC))


TODAY_VARIABLE = "SCOUT_TODAY"


def today_utc() -> date:
    """Today, UTC — or $SCOUT_TODAY (YYYY-MM-DD), the day a test suite or a reproduction
    pins, so what is "today" and "yesterday" does not move under it."""
    pinned = os.environ.get(TODAY_VARIABLE, "").strip()
    if pinned:
        try:
            return date.fromisoformat(pinned)
        except ValueError:
            raise UsageError(f"${TODAY_VARIABLE} {pinned!r} is not a date (YYYY-MM-DD)") from None
    return datetime.now(UTC).date()


def is_past_day(day: date | None) -> bool:
    """Older than yesterday: what GitHub says now (open pull requests, the board) no longer
    stands for that day. Yesterday's run (a morning's triage of last night's) still does."""
    return day is not None and day < today_utc() - timedelta(days=1)


STALE_CHECKOUT_DAYS = 7  # a checkout of a nightly-tracking experiment older than this


def stale_checkout(source: SourceTree, head: str, today: date) -> str | None:
    """What to say when HEAD is much older than the day the report is of: a checkout
    someone forgot to pull reads as today's report of an old tree."""
    made = source.committed_at(head)
    if made is None or (today - made.date()).days <= STALE_CHECKOUT_DAYS:
        return None
    return (
        f"the checkout's HEAD ({head[:10]}, {made.date()}) is "
        f"{(today - made.date()).days} days older than today: this report is of that "
        f"tree (`git pull` first, or give its day: --date {made.date()})"
    )


def check_date(
    day: date, source: SourceTree | None = None, experiment: str = "", flag: str = "--date"
) -> None:
    """The one check of every `--date` (and `flag`'s, a day given another way): a day scout
    can see, from the experiment's first commit (when `source` is given) to today, UTC.
    UsageError otherwise."""
    today = today_utc()
    if day > today:
        raise UsageError(f"{flag} {day.isoformat()} is after today ({today.isoformat()}, UTC)")
    first = source.first_commit_date(experiment or None) if source is not None else None
    if first is not None and day < first.date():
        where = f"{experiment}/" if experiment else "the repository"
        raise UsageError(
            f"{flag} {day.isoformat()} is before the first commit of {where} "
            f"({first.date().isoformat()}, UTC)"
        )
    # The day is scanned as its last commit on HEAD's first-parent chain: there must be one
    # (a history joined from elsewhere can hold older commits than the branch's first).
    end = datetime.combine(day + timedelta(days=1), time(), UTC)
    if source is not None and source.head() is not None and source.commit_before(end) is None:
        raise UsageError(
            f"{flag} {day.isoformat()} is before the first commit of this branch "
            "(HEAD's first-parent history)"
        )


def in_window(reports: Iterable[PriorReport], as_of: date, days: int) -> list[PriorReport]:
    """Reports from the `days` before `as_of` (today's own report is not a prior)."""
    first = as_of - timedelta(days=days)
    return sorted((r for r in reports if first <= r.date < as_of), key=lambda r: r.date)


def since_from(reports: list[PriorReport], window: Window) -> datetime:
    """The latest prior report's day; a first run looks back one day."""
    if reports:
        return datetime.combine(reports[-1].date, time(), UTC)
    return window.until - timedelta(days=1)


MAX_REPORT_BYTES = 2 * 1024 * 1024  # real reports are ~10 KB; more is not a report
_REPORT_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})\.md")
_REPLAY_OUTPUT = re.compile(r"\d{4}-\d{2}-\d{2}\.json|summary\.json")


def load_prior_dir(folder: Path, warn: Callable[[str], None]) -> list[PriorReport]:
    """Reports kept as `YYYY-MM-DD.md` files, oldest first.

    Anything else in the folder is skipped with a warning (hidden files and what `scout
    replay` writes beside its reports silently), as is a
    file that is empty, binary, over 2 MiB or unreadable. A report whose title gives
    another date is that date's; of two reports for one date, one is kept.
    """
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except NotADirectoryError:
        raise FileNotFoundError(
            f"--prior {folder} is a file: it takes the folder that holds the YYYY-MM-DD.md reports"
        ) from None
    except FileNotFoundError:
        raise FileNotFoundError(f"prior reports folder not found: {folder}") from None
    except OSError as exc:  # the CLI reports a FileNotFoundError as a usage error
        raise FileNotFoundError(f"prior reports folder cannot be read: {folder}: {exc}") from None
    from scout_tui.history.parse import is_report, report_date  # a run's, not a session's

    by_date: dict[date, tuple[PriorReport, Path]] = {}
    for entry in entries:
        path = Path(entry.path)
        if entry.name.startswith(".") or _REPLAY_OUTPUT.fullmatch(entry.name):
            continue  # .DS_Store, .gitkeep and the like; a replay's runs beside its reports
        named = _name_date(entry.name)
        if named is None:
            warn(f"{path}: skipped, {_why_not_a_report(entry)}")
            continue
        text = _read_report(path, warn)
        if text is None:
            continue
        try:
            report = _parsed(text, named, str(path))
        except ValueError as exc:
            warn(f"{path}: skipped, {exc}")
            continue
        if not is_report(text):
            warn(f"{path}: has no '# Nightly Scout Report' title; read as the report of {named}")
        elif report_date(text) is None:
            warn(f"{path}: its title has no valid date; read as the report of {named}")
        elif report.date != named:
            warn(f"{path}: its title says {report.date}, its name {named}; the title's date wins")
        if report.date in by_date:
            report, path = _keep_one(by_date[report.date], (report, path), warn)
        by_date[report.date] = (report, path)
    if not by_date:
        warn(f"{folder}: no prior reports in it (YYYY-MM-DD.md files): every finding is new")
    return [by_date[day][0] for day in sorted(by_date)]


def _why_not_a_report(entry: os.DirEntry[str]) -> str:
    match = re.fullmatch(r"(.*)\.md", entry.name)
    if _entry_is_dir(entry):
        return "a folder; prior reports are files named YYYY-MM-DD.md"
    if match and _REPORT_NAME.fullmatch(entry.name):
        return f"{match.group(1)} is not a date"
    return "not named YYYY-MM-DD.md"


def _entry_is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


@functools.lru_cache(maxsize=64)  # a replay reads its folder's reports back every day
def _parsed(text: str, named: date, source: str) -> PriorReport:
    """`parse_report`, once per text: the report is shared, and no caller changes it."""
    from scout_tui.history.parse import parse_report

    return parse_report(text, named, source=source)


def _name_date(name: str) -> date | None:
    match = _REPORT_NAME.fullmatch(name)
    if match is None:
        return None
    try:
        return date.fromisoformat(match.group(1))
    except ValueError:  # 2026-02-30.md
        return None


def _read_report(path: Path, warn: Callable[[str], None]) -> str | None:
    """The file's text, or None (and a warning saying why) when it cannot be a report."""
    try:
        if not path.is_file():
            warn(f"{path}: skipped, not a file")
            return None
        size = path.stat().st_size  # before reading: a 4 GB file is not read to be refused
        if size > MAX_REPORT_BYTES:
            warn(f"{path}: skipped, {size / 2**20:.1f} MiB is over the 2 MiB a report can be")
            return None
        with path.open("rb") as handle:
            data = handle.read(MAX_REPORT_BYTES + 1)  # it may have grown since
    except OSError as exc:
        warn(f"{path}: skipped, cannot be read: {exc.strerror or exc}")
        return None
    if len(data) > MAX_REPORT_BYTES:
        warn(f"{path}: skipped, over the 2 MiB a report can be")
        return None
    if b"\0" in data:
        warn(f"{path}: skipped, binary (it has NUL bytes)")
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        warn(f"{path}: skipped, not UTF-8 text (byte {data[exc.start]:#04x} at {exc.start})")
        return None
    if not text.strip():
        warn(f"{path}: skipped, empty")
        return None
    return scrub(text)


def _keep_one(
    first: tuple[PriorReport, Path], second: tuple[PriorReport, Path], warn: Callable[[str], None]
) -> tuple[PriorReport, Path]:
    """Of two reports for one date, the one whose file name is that date (the other's title
    claims it); else the first by name. Deterministic: the folder is read in name order."""
    day = first[0].date
    keep, drop = (second, first) if second[1].name == f"{day}.md" else (first, second)
    warn(f"{drop[1]}: skipped, a second report of {day}; kept {keep[1]}")
    return keep
