"""What the analyses read in each file, kept by blob id in the cache dir from run to run.

A `per_tree` analysis of a tree read from a blob is answered from here when an earlier run
asked it the same question of the same blob; the tree is then never parsed (`pyast.Module`
parses on first look). A file is what its blob id says, whatever the day: everything the
day changes (the window, ages, priors, git's answers at a new head) is still worked out
afresh, from these facts. A rescan at an unchanged tree reads each file and hashes it, and
parses nothing a kept answer covers.

Values are plain data as JSON, tagged where JSON has no such type (tuples, sets, dicts
with any keys, scout's own dataclasses and enums), never pickle: the cache is data, not
code, redacted as it is written (a file's path may hold a token). A fact is keyed by the
code that found it (a digest of scout's analysis sources) and
Python's version: an upgrade, or an edited rule, reads every file afresh. An answer about
several files is kept in a row of its own (by the digest of all their blob ids), so a row
does not grow with each day's combination and an unused one is dropped.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from scout_tui.analysis.python.pyast import MISSING
from scout_tui.errors import redact
from scout_tui.source.kept import KeptTable

_BIG = 10**4000  # Python's JSON writes no integer of more than 4,300 digits
PARSES = "parses"  # the fact of a blob's parse: "" when `ast` takes it, else why not
_CODE = ("analysis", "collect", "source", "model.py")  # the code that finds the facts


class NotPlain(Exception):
    """A value that cannot be kept as plain data (a tree's nodes, a path): memory only."""


class FileFacts(KeptTable):
    """Facts by blob: read a blob's row on its first question; new facts are written when
    the run's collectors end (`flush`), merged with what another process wrote meanwhile."""

    TABLE = "facts"

    def __init__(self, path: Path | None) -> None:
        super().__init__(path)
        self._rows: dict[str, dict[str, Any]] = {}  # blob → fact → value
        self._new: dict[str, dict[str, Any]] = {}
        self._read: set[str] = set()  # rows found on disk: kept alive while they are used

    def get(self, blob: str, key: str) -> Any:
        if self._off:
            return MISSING
        with self._lock:
            row = self._row(blob)
            if key not in row:
                return MISSING
            value = row[key]
            if type(value) is _Written:  # decoded on first use: one bad value costs itself
                try:
                    value = row[key] = json.loads(value, object_hook=_tagged)
                except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
                    del row[key]  # damaged, or a class that changed: found again
                    return MISSING
            return value

    def put(self, blob: str, key: str, value: Any) -> None:
        if self._off:
            return
        try:
            data = json.dumps(encode(value), separators=(",", ":"))
        except (NotPlain, RecursionError, ValueError):
            return
        with self._lock:
            self._row(blob)[key] = value
            self._new.setdefault(blob, {})[key] = data

    def flush(self) -> None:
        """Write the facts found since the last flush, and mark the rows read as used (a
        row is dropped 14 days after it was last written or used)."""
        with self._lock:
            new, self._new = self._new, {}
            read, self._read = self._read - set(new), set()
            if not new and not read:
                return
            db = self._connection()
            if db is None:
                return
            now = int(time.time())
            try:
                with db:
                    for blob, facts in new.items():
                        row = {**self._stored(db, blob), **facts}
                        # A path may hold a token: redacted before it is written.
                        text = redact(json.dumps(row, separators=(",", ":")))
                        db.execute(
                            "INSERT OR REPLACE INTO facts (key, value, written) VALUES (?, ?, ?)",
                            (_row_key(blob), text, now),
                        )
                    db.executemany(
                        "UPDATE facts SET written = ? WHERE key = ? AND written < ?",
                        [(now, _row_key(blob), now - 86400) for blob in sorted(read)],
                    )
            except sqlite3.Error:
                self._turn_off()

    def _row(self, blob: str) -> dict[str, Any]:
        row = self._rows.get(blob)
        if row is None:
            db = self._connection()
            try:
                stored = self._stored(db, blob) if db is not None else {}
            except sqlite3.Error:
                self._turn_off()
                stored = {}
            row = self._rows[blob] = {
                key: _Written(value) for key, value in stored.items() if type(value) is str
            }
            if row:
                self._read.add(blob)
        return row

    @staticmethod
    def _stored(db: sqlite3.Connection, blob: str) -> dict[str, Any]:
        """The blob's row as written: fact name → the value's JSON."""
        found = db.execute("SELECT value FROM facts WHERE key = ?", (_row_key(blob),)).fetchone()
        if found is None:
            return {}
        try:
            row = json.loads(found[0])
        except (ValueError, TypeError, RecursionError):
            return {}  # damaged: found again, then written anew
        return row if isinstance(row, dict) else {}


class _Written(str):
    """A value's JSON as read from its row, not decoded yet."""


def _row_key(blob: str) -> str:
    return f"{code_digest()}:{blob}"


_DIGEST: list[str] = []


def code_digest() -> str:
    """A digest of the code that finds facts, and of Python (whose `ast` they read)."""
    if not _DIGEST:
        digest = hashlib.sha256(sys.version.encode())
        package = Path(__file__).resolve().parent.parent
        for name in _CODE:
            code = package / name
            for path in [code] if code.is_file() else sorted(code.rglob("*.py")):
                digest.update(path.relative_to(package).as_posix().encode() + b"\0")
                digest.update(path.read_bytes())
        _DIGEST.append(digest.hexdigest()[:24])
    return _DIGEST[0]


def encode(value: Any) -> Any:
    """`value` as JSON data; NotPlain when it is not plain data."""
    kind = type(value)
    if kind is int and not -_BIG < value < _BIG:
        raise NotPlain("an integer past JSON's digits")  # a hostile literal: 0xfff…
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    if kind is list:
        return [encode(item) for item in value]
    if kind is tuple:
        return {"t": [encode(item) for item in value]}
    if kind is frozenset:
        return {"f": [encode(item) for item in value]}
    if kind is set:
        return {"s": [encode(item) for item in value]}
    if kind is dict:
        return {"d": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, enum.Enum) and _ours(kind):
        return {"e": _name(kind), "v": encode(value.value)}
    if dataclasses.is_dataclass(value) and _ours(kind):
        fields = dataclasses.fields(value)
        return {"c": _name(kind), "v": [encode(getattr(value, f.name)) for f in fields]}
    raise NotPlain(kind.__name__)


def decode(data: Any) -> Any:
    """The value `encode` wrote; ValueError (or TypeError) when the data is not its."""
    return json.loads(json.dumps(data), object_hook=_tagged)


def _tagged(data: dict[str, Any]) -> Any:
    """A JSON object `encode` wrote as the value it stands for (its items decoded already:
    `json` calls this innermost first)."""
    if len(data) == 1:
        tag, value = next(iter(data.items()))
        if tag == "t":
            return tuple(value)
        if tag == "f":
            return frozenset(value)
        if tag == "s":
            return set(value)
        if tag == "d":
            return {key: item for key, item in value}
    elif len(data) == 2 and "v" in data:
        if "e" in data:
            kind = _class(data["e"])
            if not issubclass(kind, enum.Enum):
                raise ValueError(data["e"])
            return kind(data["v"])
        if "c" in data:
            kind = _class(data["c"])
            fields = dataclasses.fields(kind) if dataclasses.is_dataclass(kind) else ()
            values = data["v"]
            if not fields or len(values) != len(fields):
                raise ValueError(data["c"])
            made: Any = object.__new__(kind)
            for field, item in zip(fields, values, strict=True):
                object.__setattr__(made, field.name, item)
            return made
    raise ValueError("not an encoded value")


def _ours(kind: type) -> bool:
    return kind.__module__.startswith("scout_tui.")


def _name(kind: type) -> str:
    return f"{kind.__module__}:{kind.__qualname__}"


def _class(name: str) -> type:
    """A class of scout's own, by the name `encode` wrote: looked up among the modules
    already imported (a fact never makes anything be imported)."""
    module_name, _, qualname = str(name).partition(":")
    module = sys.modules.get(module_name) if module_name.startswith("scout_tui.") else None
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if not isinstance(found, type) or not _ours(found):
        raise ValueError(name)
    return found
