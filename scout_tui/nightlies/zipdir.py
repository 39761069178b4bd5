"""The parts of the ZIP format needed to pull one member out of a remote archive: the
end-of-central-directory record (ZIP64 too), central directory entries one at a time, and
the local file header. Pure: bytes in, records out (APPNOTE.TXT 4.3)."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

EOCD_SIGNATURE = b"PK\x05\x06"
ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
ZIP64_EOCD_SIGNATURE = b"PK\x06\x06"
CENTRAL_SIGNATURE = b"PK\x01\x02"
LOCAL_SIGNATURE = b"PK\x03\x04"
EOCD_SIZE = 22
CENTRAL_FIXED = 46
LOCAL_FIXED = 30
MAX_COMMENT = 65535


class ZipFormatError(ValueError):
    pass


@dataclass(frozen=True)
class Directory:
    offset: int
    size: int
    entries: int


@dataclass(frozen=True)
class Entry:
    name: str
    method: int
    compressed_size: int
    size: int
    local_offset: int
    record_size: int  # bytes this entry takes in the central directory


def find_eocd(tail: bytes, tail_offset: int) -> tuple[Directory | None, int | None]:
    """The directory from the EOCD in `tail` (the archive's last bytes, starting at
    `tail_offset`). For ZIP64 archives returns (None, offset of the ZIP64 EOCD record)."""
    position = tail.rfind(EOCD_SIGNATURE)
    if position < 0 or len(tail) - position < EOCD_SIZE:
        raise ZipFormatError("no end-of-central-directory record: not a zip, or truncated")
    (_, _, _, _, entries, size, offset, _) = struct.unpack(
        "<4sHHHHIIH", tail[position : position + EOCD_SIZE]
    )
    if offset != 0xFFFFFFFF and size != 0xFFFFFFFF and entries != 0xFFFF:
        return Directory(offset, size, entries), None
    locator = position - 20
    if locator < 0 or tail[locator : locator + 4] != ZIP64_LOCATOR_SIGNATURE:
        raise ZipFormatError("ZIP64 archive without a ZIP64 locator")
    (_, _, zip64_offset, _) = struct.unpack("<4sIQI", tail[locator : locator + 20])
    return None, zip64_offset


def parse_zip64_eocd(record: bytes) -> Directory:
    if record[:4] != ZIP64_EOCD_SIGNATURE or len(record) < 56:
        raise ZipFormatError("bad ZIP64 end-of-central-directory record")
    (_, _, _, _, _, _, _, entries, size, offset) = struct.unpack("<4sQHHIIQQQQ", record[:56])
    return Directory(offset, size, entries)


def parse_entry(buffer: bytes, position: int) -> Entry | None:
    """The central directory entry at `position`, or None when `buffer` ends inside it."""
    if len(buffer) - position < CENTRAL_FIXED:
        return None
    if buffer[position : position + 4] != CENTRAL_SIGNATURE:
        raise ZipFormatError(f"bad central directory entry at +{position}")
    fields = struct.unpack("<4sHHHHHHIIIHHHHHII", buffer[position : position + CENTRAL_FIXED])
    method, compressed, size = fields[4], fields[8], fields[9]
    name_length, extra_length, comment_length = fields[10], fields[11], fields[12]
    local_offset = fields[16]
    record_size = CENTRAL_FIXED + name_length + extra_length + comment_length
    if len(buffer) - position < record_size:
        return None
    start = position + CENTRAL_FIXED
    name = buffer[start : start + name_length].decode("utf-8", "replace")
    extra = buffer[start + name_length : start + name_length + extra_length]
    if 0xFFFFFFFF in (compressed, size, local_offset):
        size, compressed, local_offset = _zip64_extra(extra, size, compressed, local_offset)
    return Entry(name, method, compressed, size, local_offset, record_size)


def _zip64_extra(extra: bytes, size: int, compressed: int, offset: int) -> tuple[int, int, int]:
    position = 0
    while position + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[position : position + 4])
        body = extra[position + 4 : position + 4 + length]
        if tag == 1:
            values = list(struct.unpack(f"<{len(body) // 8}Q", body[: len(body) // 8 * 8]))
            if size == 0xFFFFFFFF and values:
                size = values.pop(0)
            if compressed == 0xFFFFFFFF and values:
                compressed = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
            break
        position += 4 + length
    return size, compressed, offset


def local_data_offset(header: bytes, entry: Entry) -> int:
    """Where the member's data starts, from its local header (which has its own extra)."""
    if header[:4] != LOCAL_SIGNATURE or len(header) < LOCAL_FIXED:
        raise ZipFormatError(f"bad local header for {entry.name}")
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return entry.local_offset + LOCAL_FIXED + name_length + extra_length


def decompress(entry: Entry, data: bytes) -> bytes:
    if entry.method == 0:
        return data[: entry.size]
    if entry.method == 8:
        return zlib.decompress(data, -15)
    raise ZipFormatError(f"{entry.name}: compression method {entry.method} not supported")
