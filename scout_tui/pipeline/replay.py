"""`scout replay`: the daily runs a team would have had, one per calendar day.

Each day scans the tree as of that day's last commit (read from git, the work tree
untouched), reads the days before it back from the output folder exactly as prior reports
are read (same parser, same markers) and writes its own report there: the next day's prior.
The days share one store of parsed blobs, so a file unchanged for a month is parsed once.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from datetime import date, timedelta
from pathlib import Path

from scout_tui.collect.base import Lifetime, all_kinds
from scout_tui.config.models import Config
from scout_tui.errors import Cancelled, UsageError, scrub
from scout_tui.history.baseline import MAX_REPORT_BYTES, check_date, load_prior_dir
from scout_tui.history.parse import is_report
from scout_tui.model import SECTIONS, Finding, RunResult, Section, Status
from scout_tui.pipeline.day import RunOptions, blob_store, render_markdown, run
from scout_tui.report.render import Layout
from scout_tui.source.records import NotARepository
from scout_tui.source.tree import SourceTree
from scout_tui.store.state import StateStore
from scout_tui.triage.decisions import apply_triage
from scout_tui.triage.store import DecisionStore, scope_of

SUMMARY = "summary.json"
FORMAT = "scout-replay/1"  # what says a folder is a replay's (and which layout it has)


@dataclass
class ReplayOptions:
    base: RunOptions  # the checkout, configuration, GitHub (or offline) of every day's run
    first: date
    last: date
    out: Path
    prior: Path | None = None  # reports from before `first`, the user's own files
    state_dir: Path | None = None  # triage decisions applied only when given

    @property
    def repo(self) -> Path:
        return self.base.repo

    @property
    def config(self) -> Config:
        return self.base.config


@dataclass
class DayRow:
    """One line of the summary: what the day's report said and what it cost."""

    date: str
    head: str
    sections: dict[str, int]
    new: int
    carried: int
    resolved: int
    left_out: int
    action_items: int
    bytes: int
    seconds: float


def days(first: date, last: date) -> Iterator[date]:
    day = first
    while day <= last:
        yield day
        day += timedelta(days=1)


def row_of(result: RunResult, markdown: str, seconds: float) -> DayRow:
    shown = [f for f in result.findings if f.section is not Section.ALL_CLEAR]
    counts = {traits.column: 0 for traits in SECTIONS.values()}
    for finding in result.findings:
        counts[SECTIONS[finding.section].column] += 1
    return DayRow(
        date=result.date.isoformat(),
        head=result.head or "",
        sections=counts,
        new=sum(1 for f in shown if f.status is Status.NEW),
        carried=sum(1 for f in shown if f.status is Status.CARRIED),
        resolved=sum(1 for f in result.findings if f.kind == "resolved"),
        left_out=len(result.suppressed),
        action_items=sum(1 for f in result.findings if f.section is Section.ACTION_ITEMS),
        bytes=len(markdown.encode()),
        seconds=round(seconds, 2),
    )


class Folder:
    """The output folder: a replay's own, or empty. Files are written whole (a temporary
    file renamed), the JSON before the report, so a day with its report is complete."""

    def __init__(self, path: Path, options: ReplayOptions) -> None:
        self.path = path
        self.identity = {
            "format": FORMAT,
            "repo": str(options.repo.resolve()),
            "experiment": options.config.project.experiment,
        }
        self.first = options.first.isoformat()
        self.rows: dict[str, DayRow] = {}

    @staticmethod
    def check(path: Path) -> None:
        """UsageError unless `path` is a new or empty folder or a replay's: checked before
        anything is written there (the replay's cache included)."""
        if path.exists() and not path.is_dir():
            raise UsageError(f"--out {path} is a file: it takes a folder")
        if not path.is_dir() or (path / SUMMARY).exists():
            return
        if any(not entry.startswith(".") for entry in os.listdir(path)):
            raise UsageError(
                f"--out {path} is not empty and holds no replay ({SUMMARY}): "
                "choose an empty or new folder"
            )

    def open(self) -> None:
        self.check(self.path)
        self.path.mkdir(parents=True, exist_ok=True)
        summary = self.path / SUMMARY
        if not summary.exists():
            self._save()
            return
        try:
            kept = json.loads(summary.read_text(encoding="utf-8"))
            same = {key: kept.get(key) for key in self.identity} == self.identity
            rows = [DayRow(**row) for row in kept.get("days", [])]
        except (OSError, ValueError, TypeError) as exc:
            raise UsageError(f"--out {self.path}: {SUMMARY} cannot be read ({exc})") from None
        if not same:
            theirs = f"{kept.get('repo')}, {kept.get('experiment')}"
            raise UsageError(
                f"--out {self.path} holds a replay of another checkout or experiment ({theirs})"
            )
        started = kept.get("from")
        if started and started != self.first:
            # Each day is the next one's prior: a replay that began on another day holds a
            # chain that day's reports are not part of.
            raise UsageError(
                f"--out {self.path} holds a replay from {started}: resume it with "
                f"--from {started}, or replay from {self.first} into a new "
                "folder"
            )
        self.rows = {row.date: row for row in rows if self.complete(row.date)}

    def complete(self, day: str) -> bool:
        return (self.path / f"{day}.md").is_file() and (self.path / f"{day}.json").is_file()

    def write_day(self, result: RunResult, markdown: str, row: DayRow) -> None:
        day = result.date.isoformat()
        self._write(f"{day}.json", result.model_dump_json(indent=2) + "\n")
        self._write(f"{day}.md", markdown)
        self.rows[day] = row
        self._save()

    def seed(
        self, prior: Path, first: date, window_days: int, warn: Callable[[str], None]
    ) -> list[date]:
        """The reports of `prior` from the window before `first`, copied in (scrubbed):
        the folder then holds every report each day reads, so any day can be rerun alone
        with `scout collect --date D --prior OUT`."""
        seeded = []
        for report in load_prior_dir(prior, warn):
            if not first - timedelta(days=window_days) <= report.date < first:
                continue
            source = Path(report.source)
            if source.is_symlink():  # a link in the folder is not a report of it
                warn(f"{source}: a symlink, not copied into the replay")
                continue
            try:
                text = source.read_bytes()[: MAX_REPORT_BYTES + 1].decode("utf-8-sig")
            except (OSError, UnicodeDecodeError) as exc:
                warn(f"{source}: not copied ({exc})")
                continue
            if not is_report(text):
                warn(f"{source}: no '# Nightly Scout Report' title, not copied into the replay")
                continue
            self._write(f"{report.date.isoformat()}.md", scrub(text))
            seeded.append(report.date)
        return seeded

    def _write(self, name: str, text: str) -> None:
        handle, temporary = tempfile.mkstemp(dir=self.path, prefix=f".{name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(temporary, self.path / name)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _save(self) -> None:
        document = {
            **self.identity,
            "from": self.first,
            "days": [asdict(self.rows[d]) for d in sorted(self.rows)],
        }
        self._write(SUMMARY, json.dumps(document, indent=2) + "\n")


def check_days(options: ReplayOptions) -> None:
    """--from and --to through the one date validator, then in order."""
    try:
        source = SourceTree(options.repo)
    except NotARepository as exc:
        raise UsageError(str(exc)) from None
    for day, flag in ((options.first, "--from"), (options.last, "--to")):
        check_date(day, source, options.config.project.experiment, flag)
    if options.first > options.last:
        raise UsageError(f"--from {options.first} is after --to {options.last}")


def replay(
    options: ReplayOptions,
    on_day: Callable[[DayRow, bool], None],
    warn: Callable[[str], None],
    cancel: threading.Event | None = None,
) -> list[DayRow]:
    """Run every day from `first` to `last`; a day already complete in the folder (an
    interrupted replay) is kept and not run again. `on_day(row, reused)` after each."""
    check_days(options)
    folder = Folder(options.out, options)
    folder.open()
    if options.prior is not None:
        folder.seed(options.prior, options.first, options.config.windows.prior_report_days, warn)
    blobs = blob_store(options.base)
    decisions = _decisions(options)
    rows = []
    said: set[str] = set()  # scout.toml's own problems, said once for the whole replay
    for day in days(options.first, options.last):
        if cancel is not None and cancel.is_set():
            raise Cancelled
        key = day.isoformat()
        if key in folder.rows:
            rows.append(folder.rows[key])
            on_day(folder.rows[key], True)
            continue
        started = time.monotonic()
        result = run(
            replace(options.base, as_of=day, prior_dir=options.out, blobs=blobs), cancel=cancel
        )
        if result.cancelled:
            raise Cancelled
        for warning in result.config_warnings:
            if warning.message not in said:
                said.add(warning.message)
                warn(f"{day}: scout.toml: {warning.message}")
        if decisions is not None:
            result = result.model_copy(
                update={"findings": apply_triage(result.findings, decisions(result))}
            )
        markdown = render_markdown(result, Layout(list_items=options.config.report.max_list_items))
        row = row_of(result, markdown, time.monotonic() - started)
        folder.write_day(result, markdown, row)
        rows.append(row)
        on_day(row, False)
    return rows


def _decisions(options: ReplayOptions) -> Callable[[RunResult], dict] | None:
    if options.state_dir is None:
        return None
    store = DecisionStore(StateStore(options.state_dir))

    def decisions(result: RunResult) -> dict:
        if result.checkout is None:
            return {}
        return store.decisions(scope_of(result.checkout, result.experiment))

    return decisions


def flickers(out: Path, rows: list[DayRow]) -> int:
    """Churn over the days written in `out` (each day's shown findings, read back). News
    (kinds that age out) comes and goes by design and is not counted."""
    news = {name for name, kind in all_kinds().items() if kind.lifetime is Lifetime.NEWS}
    by_day = []
    for row in rows:
        try:
            run = RunResult.model_validate_json((out / f"{row.date}.json").read_text())
        except (OSError, ValueError):
            continue
        # Left out as quiet is not gone: it is there, unchanged.
        by_day.append([f for f in [*run.findings, *run.left_out] if f.kind not in news])
    return churn(by_day)


def churn(findings_by_day: list[list[Finding]], within: int = 3) -> int:
    """Items that appear and vanish again within `within` days: noise a reader saw once."""
    seen: dict[str, list[int]] = {}
    for n, findings in enumerate(findings_by_day):
        for finding in findings:
            if finding.kind != "resolved":
                seen.setdefault(finding.fingerprint, []).append(n)
    flickers = 0
    last = len(findings_by_day) - 1
    for present in seen.values():
        runs = _runs(present)
        flickers += sum(1 for start, end in runs if end - start + 1 < within and end < last)
    return flickers


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for index in indices:
        if runs and runs[-1][1] == index - 1:
            runs[-1] = (runs[-1][0], index)
        else:
            runs.append((index, index))
    return runs
