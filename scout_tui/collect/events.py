"""What a run streams while it goes, in order: the run started, each collector started,
progressed, found, finished (done, skipped, failed or cancelled), warnings, and the run
finished with the reconciled result.

Plain dataclasses inside the process; one JSON object per line across a process boundary
(`scout collect --events`), which is how the console runs a collection in a child process.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from scout_tui.model import Checkout, CollectorState, ConfigWarning, Finding, RunResult


@dataclass(frozen=True)
class RunStarted:
    date: dt.date
    since: datetime
    checkout: Checkout
    head: str | None
    baseline_commit: str | None
    collectors: list[CollectorState]  # every selected collector, pending
    prior_reports: list[dt.date]  # the days of the prior reports read
    prior_source: str
    event: Literal["run_started"] = "run_started"


@dataclass(frozen=True)
class CollectorStarted:
    collector: str
    event: Literal["collector_started"] = "collector_started"


@dataclass(frozen=True)
class Progress:
    collector: str
    done: int
    total: int | None = None
    message: str = ""
    event: Literal["progress"] = "progress"


@dataclass(frozen=True)
class FindingFound:
    collector: str
    finding: Finding
    event: Literal["finding"] = "finding"


@dataclass(frozen=True)
class CollectorFinished:
    state: CollectorState
    event: Literal["collector_finished"] = "collector_finished"


@dataclass(frozen=True)
class RunWarning:
    """Something the user should know that is not a finding (a prior report skipped...)."""

    message: str
    event: Literal["warning"] = "warning"


@dataclass(frozen=True)
class ConfigWarned:
    """A collector found scout.toml naming something the repository no longer has."""

    warning: ConfigWarning
    event: Literal["config_warning"] = "config_warning"


@dataclass(frozen=True)
class RunFinished:
    result: RunResult
    event: Literal["run_finished"] = "run_finished"


@dataclass(frozen=True)
class RunKeptApart:
    """The run just made looked at less than the day's kept run (a collector done there is
    skipped, failed or absent here): it is kept apart, and `kept` stays the day's run."""

    kept: RunResult
    message: str
    event: Literal["run_kept_apart"] = "run_kept_apart"


Event = (
    RunStarted
    | CollectorStarted
    | Progress
    | FindingFound
    | CollectorFinished
    | RunWarning
    | ConfigWarned
    | RunFinished
    | RunKeptApart
)
_ADAPTER: TypeAdapter[Event] = TypeAdapter(Annotated[Event, Field(discriminator="event")])


def to_json_line(event: Event) -> str:
    return _ADAPTER.dump_json(event).decode() + "\n"


def from_json_line(line: str | bytes) -> Event:
    """Raises pydantic.ValidationError on a line that is not an event."""
    return _ADAPTER.validate_json(line)
