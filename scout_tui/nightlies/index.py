"""The nightlies an index holds: torch's project page on a simple repository (PEP 691's
JSON, else PEP 503's HTML), its wheels that install on this interpreter, by version.

A nightly is named by its version (`2.13.0.dev20260612`) or its day (`2026-06-12`); the
day is the version's dev number, the date the nightly was built."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from datetime import date
from functools import cache, total_ordering
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit, urlunsplit

from packaging.tags import Tag, sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from scout_tui.nightlies.wheels import TIMEOUT, NightlyError, _Links

if TYPE_CHECKING:
    import requests

PROJECT = "torch"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
PAGE_LIMIT = 64 * 1024 * 1024  # torch's nightly page is ~10 MB of links
PAGE_DEADLINE = 120  # seconds for the whole page
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@total_ordering
@dataclass(frozen=True)
class Nightly:
    """Ordered by the day it was built (a new release line's first nightly has the higher
    version and comes after the old line's last), then by version."""

    version: Version

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Nightly):
            return NotImplemented
        return (self.day or date.min, self.version) < (other.day or date.min, other.version)

    @property
    def name(self) -> str:
        """The version as pip pins it: without the build's local label (`+cu128`), which
        the index the nightly comes from already chooses."""
        return self.version.public

    @property
    def day(self) -> date | None:
        dev = self.version.dev
        try:
            return date(dev // 10000, dev // 100 % 100, dev % 100) if dev else None
        except ValueError:
            return None

    def __str__(self) -> str:
        return self.name


def nightly(text: str) -> Nightly | date:
    """`2.13.0.dev20260612` as a nightly, `2026-06-12` as its day (ValueError: neither)."""
    if _DAY.match(text):
        return date.fromisoformat(text)
    try:
        version = Version(text)
    except InvalidVersion:
        raise ValueError(
            f"{text!r} is neither a nightly version (2.13.0.dev20260612) nor a day (2026-06-12)"
        ) from None
    if version.dev is None:
        raise ValueError(f"{text} is not a nightly: a nightly's version ends in .devYYYYMMDD")
    return Nightly(Version(version.public))


@cache
def _here() -> frozenset[Tag]:
    return frozenset(sys_tags())


def installable(filenames: list[str], tags: frozenset[Tag] | None = None) -> list[Nightly]:
    """The nightlies among `filenames` with a wheel for this interpreter, oldest first."""
    tags = _here() if tags is None else tags
    found: set[Nightly] = set()
    for filename in filenames:
        try:
            name, version, _, wheel_tags = parse_wheel_filename(filename)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if name == PROJECT and version.dev is not None and wheel_tags & tags:
            found.add(Nightly(Version(version.public)))
    return sorted(found)


def filenames(page: bytes, content_type: str) -> list[str]:
    """The files a project page lists (PEP 691 JSON or PEP 503 HTML)."""
    if content_type.split(";", 1)[0].strip() == SIMPLE_JSON:
        try:
            files = json.loads(page)["files"]
            if not isinstance(files, list):
                raise TypeError("files is not a list")
            return [str(f["filename"]) for f in files if isinstance(f, dict) and "filename" in f]
        except (ValueError, KeyError, TypeError):
            raise NightlyError("the index's JSON page is not PEP 691's") from None
    links = _Links()
    links.feed(page.decode("utf-8", "replace"))
    return [unquote(href.split("#", 1)[0].rsplit("/", 1)[-1]) for href in links.links]


def shown(url: str) -> str:
    """A URL as said to the user: without the credentials it may carry."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=parts.hostname or ""))  # port dropped too: rare


def list_nightlies(index_url: str, session: requests.Session | None = None) -> list[Nightly]:
    """The nightlies on `index_url` that install here, oldest first (NightlyError). The
    page is read within PAGE_DEADLINE in all (a server sending a byte now and then would
    otherwise hold the box's lock for ever)."""
    import requests

    session = session or requests.Session()
    page_url = index_url.rstrip("/") + f"/{PROJECT}/"
    accept = f"{SIMPLE_JSON}, text/html;q=0.1"
    deadline = time.monotonic() + PAGE_DEADLINE
    chunks: list[bytes] = []
    size = 0
    try:
        with session.get(page_url, headers={"Accept": accept}, timeout=TIMEOUT, stream=True) as r:
            if r.status_code != 200:
                raise NightlyError(f"{shown(page_url)}: HTTP {r.status_code}")
            for chunk in r.iter_content(64 * 1024):
                chunks.append(chunk)
                size += len(chunk)
                if size > PAGE_LIMIT:
                    raise NightlyError(
                        f"{shown(page_url)}: the page is over {PAGE_LIMIT // 2**20} MiB"
                    )
                if time.monotonic() > deadline:
                    raise NightlyError(f"{shown(page_url)}: no whole page in {PAGE_DEADLINE} s")
            content_type = r.headers.get("Content-Type", "")
    except requests.RequestException as exc:
        raise NightlyError(f"cannot reach {shown(page_url)}: {type(exc).__name__}") from None
    return installable(filenames(b"".join(chunks), content_type))


def resolve(wanted: Nightly | date, nightlies: list[Nightly], index_url: str) -> Nightly:
    """The nightly a version or a day names among those listed (NightlyError)."""
    if isinstance(wanted, Nightly):
        if wanted in nightlies:
            return wanted
        raise NightlyError(
            f"torch {wanted} is not on {shown(index_url)} for this Python and platform"
        )
    of_day = [n for n in nightlies if n.day == wanted]
    if not of_day:
        raise NightlyError(f"no torch nightly of {wanted} on {shown(index_url)} for this Python")
    return of_day[-1]  # two versions the same day (a release branch cut): the newer line


class RangeError(NightlyError):
    """The two ends given make no range (the user's input, not the index's)."""


def between(good: Nightly, bad: Nightly, nightlies: list[Nightly]) -> tuple[Nightly, ...]:
    """The nightlies after `good` up to and including `bad`, oldest first."""
    if not good < bad:
        raise RangeError(f"the good nightly {good} is not older than the bad one {bad}")
    return tuple(n for n in nightlies if good < n <= bad)
