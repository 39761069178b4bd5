"""A bundle: a day's collection made somewhere (cron, a CI job, the GPU box), to be reviewed
anywhere else — offline, with nothing but the file.

One JSON document (gzip-compressed when its name ends in `.gz`, recognised by its bytes
when read): `bundle_version`, the run (findings with their evidence, collector states,
baseline, prior reports), the configuration it was collected with, an excerpt of each CI
log around its failure, and the warnings the collection gave. `scout open` also takes the
plain `collect --json` output (a run, following schema/run.schema.json).

A bundle comes from anywhere: it is data, never instructions. Both kinds of file are read
with a cap on their size (decompression streamed), every string and list is capped, and
every field scout acts on is checked before it is used: fingerprints have scout's shape,
names are plain file names, the repository and experiment are names, not paths.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import tempfile
import zlib
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scout_tui.errors import UsageError, scrub_data
from scout_tui.model import SCHEMA_VERSION, Finding, RunResult

BUNDLE_VERSION = 1
EXCERPT_BEFORE = 64 * 1024  # bytes of the log kept before the root cause (its context)
EXCERPT_AFTER = 192 * 1024  # and from it on (the traceback, the rest of the test's output)
_GZIP_MAGIC = b"\x1f\x8b"

# What `scout open` reads at most. A real day is a few MiB; these keep a hostile file from
# taking the machine's memory (a 4 MB gzip can hold 4 GiB).
MAX_DOCUMENT_BYTES = 128 * 1024 * 1024  # the JSON document, once decompressed
MAX_STRING_CHARS = 1024 * 1024  # any one string (a log excerpt is at most 256 KiB)
MAX_ITEMS = 20_000  # any one list or mapping (a run of 5,000 findings opens)
MAX_DEPTH = 32  # nesting of lists and mappings (a run nests 6 deep)
# Values in the whole document, counted before it is parsed: parsed, a million empty lists
# take 60 MB, and the byte cap alone let 120 MiB of `[],` take 6 GB (a run of 5,000 findings
# holds about 250,000).
MAX_VALUES = 2_000_000
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_READ_CHUNK = 1024 * 1024

FINGERPRINT = re.compile(r"[a-z][a-z0-9_]*-[0-9a-f]{12}")
REPOSITORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}")
_PATH_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")
_WEB_LINK = re.compile(r"https?://[^\s\x00-\x1f\x7f-\x9f]+", re.IGNORECASE)
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]{0,199}")


class LogExcerpt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The log's file name where it was collected.")
    size: int = Field(description="The whole log's size in bytes.")
    start: int = Field(description="Where in the whole log the excerpt starts (bytes).")
    root_offset: int | None = Field(
        default=None, description="The root cause: its character index in `text`."
    )
    text: str


class Bundle(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bundle_version: int = BUNDLE_VERSION
    scout_version: str
    created_at: datetime
    config: dict[str, Any] | None = Field(
        default=None, description="The configuration the run was collected with (no secrets)."
    )
    run: RunResult
    logs: dict[str, LogExcerpt] = Field(
        default_factory=dict, description="By finding fingerprint: its CI log around the failure."
    )
    warnings: list[str] = Field(default_factory=list, description="What the collection said.")


def bundle_repository(bundle: Bundle) -> str | None:
    """The GitHub repository (owner/name) the bundle's run is of, when it says (checked by
    read_bundle); a plain run does not."""
    project = (bundle.config or {}).get("project")
    return project.get("repo") if isinstance(project, dict) else None


class BundleError(UsageError):
    """A file `scout open` cannot take: said in one line, exit 2."""


def log_excerpt(finding: Finding) -> LogExcerpt | None:
    """The finding's CI log around its root cause (the whole log when it is small)."""
    evidence = finding.evidence
    if not evidence.log_path:
        return None
    try:
        with open(evidence.log_path, "rb") as log:
            size = os.fstat(log.fileno()).st_size
            root = evidence.log_offset if evidence.log_offset is not None else size
            start = max(0, root - EXCERPT_BEFORE)
            log.seek(start)
            raw = log.read(min(size, root + EXCERPT_AFTER) - start)
    except OSError:
        return None  # the log was not kept (read-only cache) or is gone: the evidence stays
    if start:  # begin on a whole line
        cut = raw.find(b"\n")
        raw, start = (raw[cut + 1 :], start + cut + 1) if cut >= 0 else (raw, start)
    root_in = (
        len(raw[: evidence.log_offset - start].decode("utf-8", "replace"))
        if evidence.log_offset is not None
        else None
    )
    return LogExcerpt(
        name=Path(evidence.log_path).name,
        size=size,
        start=start,
        root_offset=root_in,
        text=raw.decode("utf-8", "replace"),
    )


def make_bundle(
    run: RunResult, config: dict[str, Any], warnings: list[str], version: str, now: datetime
) -> Bundle:
    logs = {}
    for finding in run.findings:
        excerpt = log_excerpt(finding)
        if excerpt is not None:
            logs[finding.fingerprint] = excerpt
    return Bundle(
        scout_version=version, created_at=now, config=config, run=run, logs=logs, warnings=warnings
    )


def write_bundle(bundle: Bundle, path: Path) -> int:
    """Written whole or not at all (a temporary file renamed over the target); its size."""
    data = bundle.model_dump_json().encode()
    if path.name.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6, mtime=0)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(data)


def check_version(path: Path, name: str, found: object, known: int) -> None:
    """The one rule for the formats scout writes: every older version is read forever; a
    newer one is one line saying to upgrade (what it added cannot be guessed)."""
    if not isinstance(found, int) or isinstance(found, bool) or found < 1:
        raise BundleError(f"{path}: {name} {found!r} is not a version")
    if found > known:
        raise BundleError(
            f"{path}: {name} {found} is newer than this scout reads ({known}): upgrade scout-tui"
        )


def read_bundle(path: Path) -> Bundle:
    """A bundle, or a plain `collect --json` run wrapped as one (with no configuration);
    checked as untrusted input either way."""
    raw = _read_capped(path)
    _check_value_count(path, raw)
    try:
        document = scrub_data(json.loads(raw))  # no token, no control characters
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(f"{path}: not a scout bundle or run (not JSON: {exc})") from None
    except RecursionError:
        raise BundleError(f"{path}: not a scout bundle or run (nested too deeply)") from None
    del raw
    if not isinstance(document, dict):
        raise BundleError(f"{path}: not a scout bundle or run (a JSON {type(document).__name__})")
    _check_sizes(path, document)
    if "bundle_version" in document:
        check_version(path, "bundle_version", document["bundle_version"], BUNDLE_VERSION)
        run = document.get("run")
        if isinstance(run, dict) and "schema_version" in run:
            check_version(path, "run.schema_version", run["schema_version"], SCHEMA_VERSION)
        bundle = _validated(path, Bundle, document)
        run_at = "run."
    elif "findings" in document and "schema_version" in document:
        check_version(path, "schema_version", document["schema_version"], SCHEMA_VERSION)
        run = _validated(path, RunResult, document)
        bundle = Bundle(
            scout_version="", run=run, created_at=run.collected_at or datetime.now().astimezone()
        )
        run_at = ""
    else:
        raise BundleError(f"{path}: not a scout bundle or run (no bundle_version, no findings)")
    _check_fields(path, bundle, run_at)
    return bundle


def _check_value_count(path: Path, raw: bytes) -> None:
    """At most MAX_VALUES values, counted on the bytes (separators and containers, less
    those inside strings) before `json.loads` builds them — without a copy of the document
    (a blanked copy was a third of the peak's memory)."""
    marks = (b",", b"[", b"{")
    values = sum(raw.count(mark) for mark in marks)
    # Each string is a value: past the limit in strings alone, the file is refused before
    # they are looked at one by one (millions of them would take seconds).
    strings = (raw.count(b'"') - raw.count(b'\\"')) // 2  # at least this many
    if values > MAX_VALUES and strings <= MAX_VALUES:
        for string in _STRING.finditer(raw):  # what strings hold is not the document's
            text = string.group()
            values -= sum(text.count(mark) for mark in marks)
    values = max(values, strings)
    if values > MAX_VALUES:
        raise BundleError(
            f"{path}: holds more than {MAX_VALUES:,} values: not a bundle scout opens"
        )


def _read_capped(path: Path) -> bytes:
    """The file's JSON bytes, gunzipped in chunks: never more than MAX_DOCUMENT_BYTES."""
    try:
        stream = open(path, "rb")  # noqa: SIM115 — closed below, after the gzip reader
    except FileNotFoundError:
        raise BundleError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BundleError(f"{path}: is a directory, not a bundle") from None
    except OSError as exc:
        raise BundleError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with stream:
        try:
            compressed = stream.read(2) == _GZIP_MAGIC
            stream.seek(0)
        except OSError as exc:
            raise BundleError(f"{path}: cannot read: {exc.strerror or exc}") from None
        reader = gzip.GzipFile(fileobj=stream, mode="rb") if compressed else stream
        # One buffer grown in place, not a list of chunks joined: a hundred 1 MiB chunks
        # freed after the join stay resident in the heap, a third copy at the peak.
        document = io.BytesIO()
        total = 0
        try:
            while chunk := reader.read(_READ_CHUNK):
                total += len(chunk)
                if total > MAX_DOCUMENT_BYTES:
                    what = "decompresses to" if compressed else "is"
                    raise BundleError(
                        f"{path}: {what} more than {MAX_DOCUMENT_BYTES >> 20} MiB "
                        "of JSON: not a bundle scout opens"
                    )
                document.write(chunk)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise BundleError(f"{path}: a damaged gzip file ({exc})") from None
        except OSError as exc:
            if compressed:
                raise BundleError(f"{path}: a damaged gzip file ({exc})") from None
            raise BundleError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return document.getvalue()  # the buffer itself, not a copy


def _check_sizes(path: Path, document: dict[str, Any]) -> None:
    """Every string, list and mapping within the caps (before any model is built)."""
    pending: list[tuple[Any, str, int]] = [(document, "", 0)]
    while pending:
        value, where, depth = pending.pop()
        if isinstance(value, str):
            if len(value) > MAX_STRING_CHARS:
                _refuse(
                    path,
                    where,
                    f"a string of {len(value):,} characters (at most {MAX_STRING_CHARS:,})",
                )
            if not _is_text(value):
                _refuse(path, where, "not Unicode text (a lone surrogate)")
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth >= MAX_DEPTH:
            _refuse(path, where, f"nested more than {MAX_DEPTH} deep")
        if len(value) > MAX_ITEMS:
            _refuse(path, where, f"{len(value):,} entries (at most {MAX_ITEMS:,})")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str) and (len(key) > MAX_STRING_CHARS or not _is_text(key)):
                _refuse(path, where, "a key too long, or not Unicode text")
            pending.append((item, f"{where}.{key}" if where else str(key), depth + 1))


def _is_text(value: str) -> bool:
    """JSON's `\\ud800` escapes make strings nothing can write out (nor print)."""
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _check_fields(path: Path, bundle: Bundle, run_at: str) -> None:
    """The fields scout acts on: names it files decisions under, fingerprints it matches
    and writes into reports, the excerpts it opens. `run_at`: where the run is in the file."""
    run = bundle.run
    repository = bundle_repository(bundle)
    if repository is not None and not (
        isinstance(repository, str) and REPOSITORY.fullmatch(repository)
    ):
        _refuse(
            path,
            "config.project.repo",
            f"{_shown(str(repository))} is not a repository (owner/name)",
        )
    if run.experiment and not _is_relative_path(run.experiment):
        _refuse(
            path,
            f"{run_at}experiment",
            f"{_shown(run.experiment)} is not a folder of the repository (a relative path)",
        )
    for index, finding in enumerate(run.findings):
        where = f"{run_at}findings.{index}"
        _check_fingerprint(path, f"{where}.fingerprint", finding.fingerprint)
        for number, alias in enumerate(finding.aliases):
            _check_fingerprint(path, f"{where}.aliases.{number}", alias)
        links = [
            ("board.url", finding.board.url if finding.board else None),
            ("evidence.compare_url", finding.evidence.compare_url),
            *((f"evidence.urls.{n}", url) for n, url in enumerate(finding.evidence.urls)),
        ]
        for field, url in links:  # `o` opens them in a browser: web links only
            if url is not None and not _WEB_LINK.fullmatch(url):
                _refuse(path, f"{where}.{field}", f"{_shown(url)} is not an http(s) link")
    for index, suppressed in enumerate(run.suppressed):
        _check_fingerprint(path, f"{run_at}suppressed.{index}", suppressed)
    for index, report in enumerate(run.prior_reports):
        for number, item in enumerate(report.items):
            where = f"{run_at}prior_reports.{index}.items.{number}.fingerprint"
            if item.fingerprint is not None:
                _check_fingerprint(path, where, item.fingerprint)
    for key, excerpt in bundle.logs.items():
        _check_fingerprint(path, f"logs.{_shown(key)}", key)
        if not _FILE_NAME.fullmatch(excerpt.name):
            _refuse(path, f"logs.{key}.name", f"{_shown(excerpt.name)} is not a plain file name")
        if min(excerpt.size, excerpt.start) < 0 or not (
            excerpt.root_offset is None or 0 <= excerpt.root_offset <= len(excerpt.text)
        ):
            _refuse(path, f"logs.{key}", "its offsets are outside the log")


def _check_fingerprint(path: Path, where: str, value: str) -> None:
    if not FINGERPRINT.fullmatch(value):
        _refuse(path, where, f"{_shown(value)} is not a fingerprint (kind-<12 hex digits>)")


def _is_relative_path(value: str) -> bool:
    return len(value) <= 400 and all(
        _PATH_PART.fullmatch(part) and part.strip(".") for part in value.split("/")
    )


def _shown(value: str) -> str:
    """A value as a one-line error quotes it: escaped (no control character reaches the
    terminal), and short."""
    text = ascii(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _refuse(path: Path, where: str, why: str) -> None:
    raise BundleError(f"{path}: {_where(where)}: {why}")


def _where(where: str) -> str:
    """A location in the document: its keys are the file's, so shown escaped."""
    if not where:
        return "the document"
    return where if where.isprintable() and len(where) <= 120 else _shown(where)


def _validated(path: Path, model: type[Any], document: dict[str, Any]) -> Any:
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise BundleError(f"{path}: {_where(where)}: {error['msg']}{more}") from None
