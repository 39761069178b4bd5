"""The on-disk cache: collector runs per checkout, experiment and day; torch commits; later
API responses with their ETags. Everything here can be rebuilt: the user's own data
(triage decisions, the publish journal) lives in the state store, never here.

Values are stored as JSON text, never pickles, and validated on the way out. What can go
wrong, and what happens:
- a cache that fails its integrity check is moved aside (kept, for a post-mortem) and
  rebuilt — and the warning says where it went only when the move happened;
- a read-only cache file or folder is opened read-only: runs are read, nothing is saved;
- a cache that cannot be opened at all is left alone and the command goes on without one;
- a value that does not validate is dropped with a warning.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any, Protocol, TypeVar

import diskcache
import platformdirs
from pydantic import BaseModel, ValidationError

from scout_tui.errors import sigint_received
from scout_tui.model import Checkout, CollectorState, Finding, RunResult

CACHE_VERSION = "v2"  # v2: runs keyed by checkout; triage moved to the state store
DB_NAME = "cache.db"  # diskcache's
GIT_ANSWERS = "git-answers.sqlite"  # what git answered at commit ids (source.answers)
FILE_FACTS = "file-facts.sqlite"  # what the analyses read in each blob (source.facts)
BISECT = "bisect"  # `scout bisect`: an environment per nightly (GBs each), logs, results
M = TypeVar("M", bound=BaseModel)
_SQLITE_ERRORS = (sqlite3.Error, OSError, EOFError)


POORER = "/poorer"  # the day's latest run that looked at less than the day's kept run
GLANCE = "glance/"  # beside each run: its glance (`glance_of`), what a first paint reads
# What a first paint leaves out of each finding: the bulk of a run's bytes (tracebacks,
# frames, bodies), none of what its line in the tree shows.
_UNSEEN_AT_A_GLANCE = ("body", "suggested_fix", "files", "items", "evidence", "aliases")


def glance_of(run: RunResult) -> RunResult:
    """`run` with each finding cut to what its line in the console's tree shows (title,
    section, priority, status, board) — a tenth of the run to read before the first paint.
    Never published nor decided on: the console takes the whole run before either."""
    blank = {
        name: Finding.model_fields[name].get_default(call_default_factory=True)
        for name in _UNSEEN_AT_A_GLANCE
    }
    return run.model_copy(update={"findings": [f.model_copy(update=blank) for f in run.findings]})


def lost(new: RunResult, kept: RunResult) -> list[CollectorState]:
    """The collectors done in `kept` that are not done in `new` (skipped, failed, cancelled
    or absent): what makes `new` the poorer run. Finding counts never decide; a run that
    gained a collector but lost another is still poorer."""
    done = {state.name for state in new.collectors if state.state == "done"}
    return [state for state in kept.collectors if state.state == "done" and state.name not in done]


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("scout-tui", appauthor=False))


class _Store(Protocol):
    def get(self, key: str) -> object: ...
    def set(self, key: str, value: str) -> object: ...
    def delete(self, key: str) -> object: ...
    def iterkeys(self) -> Iterator[object]: ...
    def volume(self) -> int: ...
    def clear(self) -> int: ...
    def close(self) -> None: ...


class _ReadOnlyStore:
    """diskcache's table read with a read-only SQLite connection: JSON text values only
    (stored inline, or in a file beside the database when large)."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        path = directory / DB_NAME
        try:
            self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            self._db.execute("SELECT count(*) FROM Cache").fetchone()
        except sqlite3.Error:
            # A WAL database in a read-only folder cannot even be read normally.
            self._db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
            self._db.execute("SELECT count(*) FROM Cache").fetchone()
        self._disk = diskcache.Disk(str(directory))

    def get(self, key: str) -> object:
        row = self._db.execute(
            "SELECT mode, filename, value FROM Cache WHERE key = ? AND raw = 1", (key,)
        ).fetchone()
        if row is None:
            return None
        mode, filename, value = row
        if mode not in (diskcache.core.MODE_RAW, diskcache.core.MODE_TEXT):
            return None  # never unpickle
        return self._disk.fetch(mode, filename, value, False)

    def set(self, key: str, value: str) -> None:
        return None

    def delete(self, key: str) -> None:
        return None

    def iterkeys(self) -> Iterator[object]:
        for (key,) in self._db.execute("SELECT key FROM Cache WHERE raw = 1 ORDER BY rowid"):
            yield key

    def volume(self) -> int:
        return sum(f.stat().st_size for f in self._directory.rglob("*") if f.is_file())

    def clear(self) -> int:
        raise OSError(f"{self._directory} is read-only")

    def close(self) -> None:
        self._db.close()


class _NoStore:
    """No cache at all: nothing is found, nothing is kept."""

    def get(self, key: str) -> object:
        return None

    def set(self, key: str, value: str) -> None:
        return None

    def delete(self, key: str) -> None:
        return None

    def iterkeys(self) -> Iterator[object]:
        return iter(())

    def volume(self) -> int:
        return 0

    def clear(self) -> int:
        return 0

    def close(self) -> None:
        return None


def _read_only(directory: Path) -> bool:
    database = directory / DB_NAME
    if not os.access(directory, os.W_OK):
        return True
    return database.exists() and not os.access(database, os.W_OK)


def _is_corrupt(exc: BaseException) -> bool:
    """An integrity problem of the file itself, as opposed to permissions or locking."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and (
        "not a database" in text or "malformed" in text or "corrupt" in text
    )


def _integrity_problem(database: Path) -> str | None:
    """What SQLite's quick check says is wrong with the file, or None (also when the file
    cannot be checked for another reason: opening it will say what)."""
    if not database.exists():
        return None
    try:
        db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            rows = db.execute("PRAGMA quick_check").fetchall()
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        return str(exc) if _is_corrupt(exc) else None
    verdict = "; ".join(str(row[0]) for row in rows[:3])
    return None if verdict == "ok" else verdict


class Cache:
    def __init__(
        self,
        directory: Path | None = None,
        *,
        warn: Callable[[str], None] = lambda message: None,
        create: bool = True,
    ) -> None:
        """`create=False` opens only a cache that exists (`cache info`, `cache clear`)."""
        self.root = directory or default_cache_dir()
        self.directory = self.root / CACHE_VERSION
        self._warn = warn
        self.read_only = False
        self.exists = (self.directory / DB_NAME).exists()
        self._store: _Store = self._open() if (create or self.exists) else _NoStore()

    # -- opening ----------------------------------------------------------------------
    def _open(self) -> _Store:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._warn(
                f"cannot create the cache at {self.directory} ({exc.strerror or exc}); "
                "going on without a cache"
            )
            return _NoStore()
        if _read_only(self.directory):
            return self._open_read_only()
        problem = _integrity_problem(self.directory / DB_NAME)
        if problem:
            return self._move_aside(problem)
        try:
            return diskcache.Cache(str(self.directory))
        except _SQLITE_ERRORS as exc:
            if _is_corrupt(exc):
                return self._move_aside(exc)
            if isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc).lower():
                return self._open_read_only()
            self._warn(
                f"cannot open the cache at {self.directory} ({type(exc).__name__}: "
                f"{exc}); going on without a cache"
            )
            return _NoStore()

    def _open_read_only(self) -> _Store:
        self.read_only = True
        if not (self.directory / DB_NAME).exists():
            self._warn(
                f"the cache folder {self.directory} is read-only; going on without a "
                "cache (nothing will be saved)"
            )
            return _NoStore()
        try:
            store = _ReadOnlyStore(self.directory)
        except sqlite3.Error as exc:
            self._warn(
                f"the cache at {self.directory} is read-only and cannot be read ({exc}); "
                "going on without a cache"
            )
            return _NoStore()
        self._warn(f"the cache at {self.directory} is read-only: reading it, saving nothing")
        return store

    def _move_aside(self, problem: object) -> _Store:
        aside = self.directory.with_name(f"{CACHE_VERSION}.corrupt-{int(time.time())}")
        try:
            self.directory.rename(aside)
        except OSError as exc:
            self._warn(
                f"the cache at {self.directory} is corrupt ({problem}) and cannot be moved "
                f"aside ({exc.strerror or exc}); going on without a cache"
            )
            return _NoStore()
        self._warn(
            f"the cache at {self.directory} was corrupt ({problem}); moved it to {aside} "
            "and started a fresh one"
        )
        try:
            return diskcache.Cache(str(self.directory))
        except _SQLITE_ERRORS as exc:
            self._warn(
                f"cannot start a fresh cache at {self.directory} ({exc}); going on without a cache"
            )
            return _NoStore()

    def close(self) -> None:
        self._store.close()

    # -- values -----------------------------------------------------------------------
    def _get(self, key: str, model: type[M]) -> M | None:
        try:
            raw = self._store.get(key)
        except (*_SQLITE_ERRORS, ValueError) as exc:
            self._warn(f"cache entry {key} unreadable ({exc}); ignoring it")
            return None
        if raw is None:
            return None
        try:
            if not isinstance(raw, str):
                raise TypeError(f"expected JSON text, found {type(raw).__name__}")
            return model.model_validate_json(raw)
        except (ValidationError, TypeError, ValueError) as exc:
            if sigint_received():  # a Ctrl-C inside validation, not a bad value
                raise KeyboardInterrupt from None
            reason = str(exc).splitlines()[0]
            self._warn(f"cache entry {key} is invalid ({reason}); dropping it")
            self._forget(key)
            return None

    def _forget(self, key: str) -> None:
        with contextlib.suppress(*_SQLITE_ERRORS):
            self._store.delete(key)

    def _put(self, key: str, value: BaseModel, exclude_defaults: bool = False) -> None:
        try:
            self._store.set(key, value.model_dump_json(exclude_defaults=exclude_defaults))
        except _SQLITE_ERRORS as exc:
            self._warn(f"cannot save {key} in the cache ({exc}); going on")

    # -- runs ------------------------------------------------------------------------
    @staticmethod
    def _run_key(
        checkout: Checkout, experiment: str, day: date, only: list[str] | None = None
    ) -> str:
        key = f"run/{checkout.id}/{experiment}/{day.isoformat()}"
        return key + ("/only=" + ",".join(sorted(only)) if only else "")

    def put_run(self, run: RunResult, replace: bool = False) -> RunResult | None:
        """The day's run. A run of some collectors (--only) is kept apart, so it never
        replaces the day's full run; a cancelled run is not kept. A run poorer than the
        kept one (`lost`) is kept apart too, the latest poorer run in place of an older one:
        then the kept, fuller run is returned. `replace`: the kept run no longer stands for
        the day (another configuration, other prior reports), whatever it looked at."""
        if run.checkout is None or run.cancelled:
            return None
        key = self._run_key(run.checkout, run.experiment, run.date, run.only)
        kept = None if run.only or replace else self._get(key, RunResult)
        if kept is not None and lost(run, kept):
            self._put(key + POORER, run)
            return kept
        self._put(key, run)
        # Without its defaults: a finding's empty evidence alone is half of its glance.
        self._put(GLANCE + key, glance_of(run), exclude_defaults=True)
        self._forget(key + POORER)
        return None

    def poorer_run(self, checkout: Checkout, experiment: str, day: date) -> RunResult | None:
        """The latest run of the day kept apart because it was poorer than the day's."""
        return self._get(self._run_key(checkout, experiment, day) + POORER, RunResult)

    def get_run(
        self, checkout: Checkout, experiment: str, day: date, only: list[str] | None = None
    ) -> RunResult | None:
        return self._get(self._run_key(checkout, experiment, day, only), RunResult)

    def get_glance(
        self, checkout: Checkout, experiment: str, day: date, only: list[str] | None = None
    ) -> RunResult | None:
        """The glance of the day's run (`glance_of`), when one was kept with it."""
        return self._get(GLANCE + self._run_key(checkout, experiment, day, only), RunResult)

    # -- plain values (torch commits, later API responses) -----------------------------
    def get_value(self, key: str, model: type[M]) -> M | None:
        return self._get(f"value/{key}", model)

    def put_value(self, key: str, value: BaseModel) -> None:
        self._put(f"value/{key}", value)

    # -- housekeeping ------------------------------------------------------------------
    def info(self) -> dict[str, object]:
        """Where the cache is and what it holds; per day, the run kept for it and the poorer
        one kept apart, if any."""
        keys = [k for k in self._store.iterkeys() if isinstance(k, str)]
        kept = sorted(
            k for k in keys if k.startswith("run/") and "/only=" not in k and not k.endswith(POORER)
        )
        days = []
        for key in sorted(kept, key=lambda k: (k.rsplit("/", 1)[-1], k)):
            summary = self._summary(key)
            if summary is None:
                continue
            poorer = self._summary(key + POORER) if key + POORER in keys else None
            if poorer is not None:
                poorer["lost"] = [t for t in summary["done"] if t not in poorer["done"]]
            days.append({"day": key.rsplit("/", 1)[-1], **summary, "poorer": poorer})
        return {
            "path": str(self.directory),
            "exists": self.exists,
            "read_only": self.read_only,
            "bytes": self._store.volume(),
            # what git answered at commit ids, kept for rescans (`cache clear` removes it)
            "git_answers_bytes": self._volume(GIT_ANSWERS),
            # what the analyses read in each file, kept for rescans (`cache clear` too)
            "file_facts_bytes": self._volume(FILE_FACTS),
            # `scout bisect`'s environments, each with its size (`cache clear` removes them)
            "bisect_environments": self._environments(),
            "entries": len(keys),
            "runs": sorted({day["day"] for day in days}),
            "days": days,
        }

    def _summary(self, key: str) -> dict[str, Any] | None:
        """A cached run in brief, read as plain JSON (a listing validates no findings)."""
        try:
            raw = self._store.get(key)
            data = json.loads(raw) if isinstance(raw, str) else None
        except (*_SQLITE_ERRORS, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        states = [s for s in data.get("collectors") or [] if isinstance(s, dict)]
        found = data.get("checkout")
        checkout: dict[str, Any] = found if isinstance(found, dict) else {}
        return {
            "checkout": checkout.get("path"),
            "experiment": data.get("experiment"),
            "collected_at": data.get("collected_at"),
            "done": [s.get("title") for s in states if s.get("state") == "done"],
            "not_done": [s.get("title") for s in states if s.get("state") != "done"],
            "findings": len(data.get("findings") or []),
        }

    def blob_path(self, *parts: str) -> Path | None:
        """A file of the cache's own for a large value (a CI job log), streamed to disk and
        never held in memory; None when the cache cannot be written."""
        if self.read_only or isinstance(self._store, _NoStore):
            return None
        path = self.directory.joinpath("blobs", *parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return path

    def git_answers_path(self) -> Path | None:
        """Where what git answered at commit ids is kept from run to run (see
        `source.answers`); None when the cache cannot be written."""
        return self._kept_path(GIT_ANSWERS)

    def file_facts_path(self) -> Path | None:
        """Where what the analyses read in each blob is kept from run to run (see
        `source.facts`); None when the cache cannot be written."""
        return self._kept_path(FILE_FACTS)

    def _kept_path(self, name: str) -> Path | None:
        if self.read_only or isinstance(self._store, _NoStore):
            return None
        return self.directory / name

    def bisect_dir(self) -> Path:
        return self.directory / BISECT

    def _environments(self) -> list[dict[str, object]]:
        envs = self.bisect_dir() / "envs"
        if not envs.is_dir():
            return []
        return [
            {"path": str(path), "bytes": _tree_bytes(path)}
            for path in sorted(envs.iterdir())
            if path.is_dir()
        ]

    def _volume(self, name: str) -> int:
        return sum(
            path.stat().st_size for path in self.directory.glob(f"{name}*") if path.is_file()
        )

    def clear(self) -> int:
        removed = self._store.clear()
        for kept in (GIT_ANSWERS, FILE_FACTS):
            for name in (kept, f"{kept}-wal", f"{kept}-shm"):
                with contextlib.suppress(FileNotFoundError):
                    (self.directory / name).unlink()
                    removed += name == kept
        for folder in (self.directory / "blobs", self.bisect_dir()):
            if folder.is_dir():
                removed += sum(1 for p in folder.rglob("*") if p.is_file())
                shutil.rmtree(folder, ignore_errors=True)
        return removed


def _tree_bytes(path: Path) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def kept_apart_note(poorer: RunResult, kept: RunResult) -> str:
    """What a user is told when the day's run stays the fuller one: when each ran, and
    what the poorer one lost, grouped by how ("X, Y skipped — offline; Z failed")."""
    return (
        f"a poorer {run_time(poorer)}run is kept apart ({lost_text(poorer, kept)}): the "
        f"fuller {run_time(kept)}run stays the day's run"
    )


def lost_text(poorer: RunResult, kept: RunResult) -> str:
    """The collectors done in `kept` that `poorer` lacks, grouped by how it ended them."""
    ended = {state.name: state for state in poorer.collectors}
    how: dict[str, list[str]] = {}
    for state in lost(poorer, kept):
        now = ended.get(state.name)
        said = (
            "not run"
            if now is None
            else f"skipped — {now.reason}"
            if now.state == "skipped" and now.reason
            else now.state
        )
        how.setdefault(said, []).append(state.title)
    return "; ".join(f"{', '.join(titles)} {said}" for said, titles in how.items())


def run_time(run: RunResult) -> str:
    """When a run was collected, as said beside another run of the day ("10:40 UTC ")."""
    return f"{run.collected_at:%H:%M} UTC " if run.collected_at else ""
