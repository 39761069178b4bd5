"""A bundle: a day's collection made somewhere (cron, a CI job, the GPU box), to be reviewed
anywhere else — offline, with nothing but the file.

One JSON document (gzip-compressed when its name ends in `.gz`, recognised by its bytes
when read): `bundle_version`, the run (findings with their evidence, collector states,
baseline, prior reports), the configuration it was collected with, an excerpt of each CI
log around its failure, and the warnings the collection gave. `scout open` also takes the
plain `collect --json` output (a run, following schema/run.schema.json).
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import zlib
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scout_tui.errors import UsageError, scrub_data
from scout_tui.model import Finding, RunResult

BUNDLE_VERSION = 1
EXCERPT_BEFORE = 64 * 1024  # bytes of the log kept before the root cause (its context)
EXCERPT_AFTER = 192 * 1024  # and from it on (the traceback, the rest of the test's output)
_GZIP_MAGIC = b"\x1f\x8b"


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
    root_in = len(raw[: evidence.log_offset - start].decode("utf-8", "replace")) \
        if evidence.log_offset is not None else None  # fmt: skip
    return LogExcerpt(name=Path(evidence.log_path).name, size=size, start=start,
                      root_offset=root_in, text=raw.decode("utf-8", "replace"))  # fmt: skip


def make_bundle(run: RunResult, config: dict[str, Any], warnings: list[str],
                version: str, now: datetime) -> Bundle:  # fmt: skip
    logs = {}
    for finding in run.findings:
        excerpt = log_excerpt(finding)
        if excerpt is not None:
            logs[finding.fingerprint] = excerpt
    return Bundle(scout_version=version, created_at=now, config=config, run=run, logs=logs,
                  warnings=warnings)  # fmt: skip


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


def read_bundle(path: Path) -> Bundle:
    """A bundle, or a plain `collect --json` run wrapped as one (with no configuration)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BundleError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BundleError(f"{path}: is a directory, not a bundle") from None
    except OSError as exc:
        raise BundleError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if raw.startswith(_GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise BundleError(f"{path}: a damaged gzip file ({exc})") from None
    try:
        document = scrub_data(json.loads(raw))  # no token, no control characters
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(f"{path}: not a scout bundle or run (not JSON: {exc})") from None
    if not isinstance(document, dict):
        raise BundleError(f"{path}: not a scout bundle or run (a JSON {type(document).__name__})")
    if "bundle_version" in document:
        found = document["bundle_version"]
        if not isinstance(found, int) or found < 1:
            raise BundleError(f"{path}: bundle_version {found!r} is not a version")
        if found > BUNDLE_VERSION:
            raise BundleError(f"{path}: bundle_version {found} is newer than this scout reads "
                              f"({BUNDLE_VERSION}): upgrade scout-tui")  # fmt: skip
        return _validated(path, Bundle, document)
    if "findings" in document and "schema_version" in document:
        run = _validated(path, RunResult, document)
        return Bundle(scout_version="", created_at=run.collected_at or datetime.now().astimezone(),
                      run=run)  # fmt: skip
    raise BundleError(f"{path}: not a scout bundle or run (no bundle_version, no findings)")


def _validated(path: Path, model: type[Any], document: dict[str, Any]) -> Any:
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "the document"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise BundleError(f"{path}: {where}: {error['msg']}{more}") from None
