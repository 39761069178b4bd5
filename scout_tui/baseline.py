"""The baseline: prior reports in the window, and the `since` moment they give (SPEC §2.0)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from scout_tui.model import PriorReport
from scout_tui.report.parse import parse_report

_DATED_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")


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


def in_window(reports: Iterable[PriorReport], as_of: date, days: int) -> list[PriorReport]:
    """Reports from the `days` before `as_of` (today's own report is not a prior)."""
    first = as_of - timedelta(days=days)
    return sorted((r for r in reports if first <= r.date < as_of), key=lambda r: r.date)


def since_from(reports: list[PriorReport], window: Window) -> datetime:
    """The latest prior report's day; a first run looks back one day."""
    if reports:
        return datetime.combine(reports[-1].date, time(), UTC)
    return window.until - timedelta(days=1)


def load_prior_dir(folder: Path, warn: Callable[[str], None]) -> list[PriorReport]:
    """Reports kept as `YYYY-MM-DD.md` files. A file that cannot be read is skipped, loudly."""
    if not folder.is_dir():
        raise FileNotFoundError(f"prior reports folder not found: {folder}")
    reports = []
    for path in sorted(folder.glob("*.md")):
        name_date = _DATED_NAME.search(path.stem)
        fallback = None
        if name_date:
            try:
                fallback = date.fromisoformat(name_date.group(1))
            except ValueError:
                fallback = None
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
            reports.append(parse_report(text, fallback, source=str(path)))
        except (OSError, ValueError) as exc:
            warn(f"skipping prior report {path}: {exc}")
    return reports
