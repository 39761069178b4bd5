"""Which PyTorch commit is a nightly? Read `torch/version.py` out of the wheel on the
nightly index with HTTP Range requests: the end-of-central-directory record, the central
directory from its start until the member turns up (in torch wheels it is near the front
of a 1 MiB+, ~13,000-entry directory), then that member's bytes. Never the multi-GB wheel,
unless the server ignores ranges; then the wheel is streamed to a temporary file, and the
result says so.
"""

from __future__ import annotations

import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin

from scout_tui.nightlies import zipdir

if TYPE_CHECKING:  # requests is imported when a wheel is read (50 ms the console never pays)
    import requests

MEMBER = "torch/version.py"
TAIL = 4096  # EOCD (22 bytes) plus room for a ZIP64 locator and record
DIRECTORY_CHUNK = 64 * 1024
TIMEOUT = 30
_GIT_VERSION = re.compile(r"""^git_version\s*=\s*['"]([0-9a-f]{7,40}|Unknown)['"]""", re.M)


class NightlyError(Exception):
    """A lookup that cannot be answered; the message is for the user."""


@dataclass
class Transfer:
    """What a lookup cost: bytes of response bodies and requests made."""

    bytes: int = 0
    requests: int = 0
    ranged: bool = True
    notes: list[str] = field(default_factory=list)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.links.append(href)


def wheel_url(index_html: str, base_url: str, version: str, python_tag: str, platform: str) -> str:
    """The wheel for `version` and `python_tag` on a manylinux x86_64 `platform` (PEP 503)."""
    parser = _Links()
    parser.feed(index_html)
    wanted = version.lower()
    candidates = []
    for href in parser.links:
        name = unquote(href.split("#", 1)[0].rsplit("/", 1)[-1])
        if not name.endswith(".whl"):
            continue
        parts = name[:-4].split("-")
        if len(parts) < 5:
            continue
        file_version = parts[1].lower()
        if file_version != wanted and file_version.split("+", 1)[0] != wanted:
            continue
        if parts[-3] != python_tag or platform not in parts[-1] or "x86_64" not in parts[-1]:
            continue
        candidates.append(urljoin(base_url, href.split("#", 1)[0]))
    if not candidates:
        raise NightlyError(
            f"no torch {version} wheel for {python_tag} {platform} x86_64 on {base_url}"
        )
    return sorted(candidates)[0]


class RangeReader:
    def __init__(self, session: requests.Session, url: str, transfer: Transfer) -> None:
        self.session, self.url, self.transfer = session, url, transfer
        self.size: int | None = None

    def _get(self, header: str) -> requests.Response:
        import requests

        self.transfer.requests += 1
        try:
            response = self.session.get(
                self.url, headers={"Range": header}, stream=True, timeout=TIMEOUT
            )
        except requests.RequestException as exc:
            raise NightlyError(f"cannot reach {self.url}: {type(exc).__name__}") from None
        if response.status_code not in (200, 206):
            response.close()
            raise NightlyError(f"{self.url}: HTTP {response.status_code}")
        return response

    def tail(self, length: int) -> tuple[int, bytes] | requests.Response:
        """The last bytes and their offset, or the whole-body response when ranges are
        ignored (the caller then falls back)."""
        response = self._get(f"bytes=-{length}")
        if response.status_code == 200:
            return response
        content_range = response.headers.get("Content-Range", "")
        match = re.match(r"bytes (\d+)-(\d+)/(\d+)", content_range)
        if not match:
            response.close()
            raise NightlyError(f"{self.url}: 206 without a usable Content-Range")
        self.size = int(match.group(3))
        body = response.content
        self.transfer.bytes += len(body)
        return int(match.group(1)), body

    def read(self, start: int, length: int) -> bytes:
        end = start + length - 1
        if self.size is not None:
            end = min(end, self.size - 1)
        response = self._get(f"bytes={start}-{end}")
        if response.status_code != 206:
            response.close()
            raise NightlyError(f"{self.url}: the server stopped honouring Range requests")
        body = response.content
        self.transfer.bytes += len(body)
        return body


def read_member(
    session: requests.Session, url: str, member: str = MEMBER
) -> tuple[bytes, Transfer]:
    transfer = Transfer()
    reader = RangeReader(session, url, transfer)
    got = reader.tail(TAIL)
    if not isinstance(got, tuple):  # the whole wheel came back
        return _from_full_download(got, member, transfer), transfer
    tail_offset, tail = got
    try:
        directory, zip64_at = zipdir.find_eocd(tail, tail_offset)
    except zipdir.ZipFormatError:
        tail_offset = max(0, (reader.size or 0) - zipdir.EOCD_SIZE - zipdir.MAX_COMMENT - 20)
        tail = reader.read(tail_offset, zipdir.EOCD_SIZE + zipdir.MAX_COMMENT + 20)
        directory, zip64_at = zipdir.find_eocd(tail, tail_offset)
    if directory is None:
        assert zip64_at is not None
        if zip64_at >= tail_offset:
            record = tail[zip64_at - tail_offset :]
        else:
            record = reader.read(zip64_at, 56)
        directory = zipdir.parse_zip64_eocd(record)
    entry = _find_entry(reader, directory, member)
    header = reader.read(entry.local_offset, zipdir.LOCAL_FIXED + len(member.encode()) + 256)
    data_offset = zipdir.local_data_offset(header, entry)
    already = header[data_offset - entry.local_offset :]
    if len(already) >= entry.compressed_size:
        data = already[: entry.compressed_size]
    else:
        data = already + reader.read(
            entry.local_offset + len(header), entry.compressed_size - len(already)
        )
    return zipdir.decompress(entry, data), transfer


def _find_entry(reader: RangeReader, directory: zipdir.Directory, member: str) -> zipdir.Entry:
    """Walk the central directory from its start, a chunk at a time, up to the member."""
    buffer = b""
    buffer_offset = directory.offset
    position = 0
    end = directory.offset + directory.size
    while True:
        entry = zipdir.parse_entry(buffer, position)
        if entry is None:
            fetched_to = buffer_offset + len(buffer)
            if fetched_to >= end:
                raise NightlyError(f"{member} is not in the wheel")
            buffer = buffer[position:] + reader.read(
                fetched_to, min(DIRECTORY_CHUNK, end - fetched_to)
            )
            buffer_offset += position
            position = 0
            continue
        if entry.name == member:
            return entry
        position += entry.record_size


def _from_full_download(response: requests.Response, member: str, transfer: Transfer) -> bytes:
    transfer.ranged = False
    transfer.notes.append("the server ignored Range requests: downloaded the whole wheel")
    with tempfile.TemporaryFile() as spool:
        for block in response.iter_content(1024 * 1024):
            spool.write(block)
            transfer.bytes += len(block)
        response.close()
        spool.seek(0)
        try:
            with zipfile.ZipFile(spool) as archive:
                return archive.read(member)
        except KeyError:
            raise NightlyError(f"{member} is not in the wheel") from None
        except zipfile.BadZipFile as exc:
            raise NightlyError(f"not a wheel: {exc}") from None


def git_version(version_py: bytes) -> str:
    match = _GIT_VERSION.search(version_py.decode("utf-8", "replace"))
    if not match or match.group(1) == "Unknown":
        raise NightlyError("torch/version.py has no git_version")
    return match.group(1)


@dataclass(frozen=True)
class CommitLookup:
    version: str
    commit: str
    wheel: str
    transfer: Transfer


def torch_commit(
    version: str,
    index_url: str,
    python_tag: str,
    platform: str,
    session: requests.Session | None = None,
) -> CommitLookup:
    import requests

    session = session or requests.Session()
    index = index_url.rstrip("/") + "/torch/"
    try:
        response = session.get(index, timeout=TIMEOUT)
    except requests.RequestException as exc:
        raise NightlyError(f"cannot reach {index}: {type(exc).__name__}") from None
    if response.status_code != 200:
        raise NightlyError(f"{index}: HTTP {response.status_code}")
    url = wheel_url(response.text, index, version, python_tag, platform)
    data, transfer = read_member(session, url)
    transfer.bytes += len(response.content)
    transfer.requests += 1
    return CommitLookup(version, git_version(data), url, transfer)
