"""The on-disk cache: collector runs per day, triage state, later API responses and the
publish journal.

Values are stored as JSON text, never pickles, and validated on the way out. A cache that
cannot be opened is moved aside (kept, for a post-mortem) and rebuilt; a value that does
not validate is dropped with a warning. Either way the run goes on.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TypeVar

import diskcache
import platformdirs
from pydantic import BaseModel, ValidationError

from scout_tui.model import RunResult
from scout_tui.triage import TriageEntry

CACHE_VERSION = "v1"
M = TypeVar("M", bound=BaseModel)


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("scout-tui", appauthor=False))


class Cache:
    def __init__(
        self,
        directory: Path | None = None,
        *,
        namespace: str = "default",
        warn: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.root = directory or default_cache_dir()
        self.directory = self.root / CACHE_VERSION
        self.namespace = namespace
        self._warn = warn
        self._store = self._open()

    def _open(self) -> diskcache.Cache:
        try:
            store = diskcache.Cache(str(self.directory))
            store.check(fix=False)  # reads every row: a truncated or garbled db raises here
            return store
        except (sqlite3.Error, OSError, EOFError) as exc:
            aside = self.directory.with_name(f"{CACHE_VERSION}.corrupt-{int(time.time())}")
            self._warn(
                f"cache at {self.directory} is unreadable ({type(exc).__name__}: {exc}); "
                f"moved it to {aside} and starting a fresh one"
            )
            try:
                self.directory.rename(aside)
            except OSError:
                import shutil

                shutil.rmtree(self.directory, ignore_errors=True)
            return diskcache.Cache(str(self.directory))

    def close(self) -> None:
        self._store.close()

    def _key(self, *parts: str) -> str:
        return "/".join((self.namespace, *parts))

    def _get(self, key: str, model: type[M]) -> M | None:
        try:
            raw = self._store.get(key)
        except (sqlite3.Error, OSError, EOFError, ValueError) as exc:
            self._warn(f"cache entry {key} unreadable ({exc}); ignoring it")
            return None
        if raw is None:
            return None
        try:
            if not isinstance(raw, str):
                raise TypeError(f"expected JSON text, found {type(raw).__name__}")
            return model.model_validate_json(raw)
        except (ValidationError, TypeError, ValueError) as exc:
            reason = str(exc).splitlines()[0]
            self._warn(f"cache entry {key} is invalid ({reason}); dropping it")
            self._store.delete(key)
            return None

    def _put(self, key: str, value: BaseModel) -> None:
        self._store.set(key, value.model_dump_json())

    # -- runs ------------------------------------------------------------------------
    def put_run(self, run: RunResult) -> None:
        self._put(self._key("run", run.date.isoformat()), run)

    def get_run(self, day: date) -> RunResult | None:
        return self._get(self._key("run", day.isoformat()), RunResult)

    def run_dates(self) -> list[date]:
        prefix = self._key("run", "")
        days = []
        for key in self._store.iterkeys():
            if isinstance(key, str) and key.startswith(prefix):
                try:
                    days.append(date.fromisoformat(key[len(prefix) :]))
                except ValueError:
                    continue
        return sorted(days)

    # -- triage ----------------------------------------------------------------------
    def triage(self) -> dict[str, TriageEntry]:
        prefix = self._key("triage", "")
        entries = {}
        for key in list(self._store.iterkeys()):
            if isinstance(key, str) and key.startswith(prefix):
                entry = self._get(key, TriageEntry)
                if entry is not None:
                    entries[entry.fingerprint] = entry
        return entries

    def put_triage(self, entry: TriageEntry) -> None:
        self._put(self._key("triage", entry.fingerprint), entry)

    # -- plain values (torch commits, later API responses) -----------------------------
    def get_value(self, key: str, model: type[M]) -> M | None:
        return self._get(self._key("value", key), model)

    def put_value(self, key: str, value: BaseModel) -> None:
        self._put(self._key("value", key), value)

    # -- housekeeping ------------------------------------------------------------------
    def info(self) -> dict[str, object]:
        keys = [k for k in self._store.iterkeys() if isinstance(k, str)]
        return {
            "path": str(self.directory),
            "bytes": self._store.volume(),
            "entries": len(keys),
            "runs": sorted({k.rsplit("/", 1)[1] for k in keys if "/run/" in k}),
            "triage_decisions": sum(1 for k in keys if "/triage/" in k),
        }

    def clear(self) -> int:
        return self._store.clear()
