"""Blame many files in one pass over history.

`git blame` walks the whole history once per file, so blaming every file with a TODO costs
files × commits. Replaying `git log --reverse -p --unified=0` forwards costs one walk: each
hunk replaces a range of line origins with the commit that wrote the new lines. Without
merges this is exactly what `git blame` (no -M/-C) says; a file whose replayed length does
not match its content is left to `git blame` by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from scout_tui.errors import scrub

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
RECORD = b"\x1e"
FIELD = b"\x1f"


@dataclass(frozen=True)
class Origin:
    commit: str
    author: str
    time: int


class Stopped(Exception):
    """`should_stop` said so: the replay ends where it is."""


def replay(
    lines: Iterable[bytes], should_stop: Callable[[], bool] = lambda: False
) -> dict[str, list[Origin]]:
    """Line origins per path, from `git log --reverse --format=%x1e%H%x1f%an%x1f%at -p
    --unified=0 -M` output, given line by line. `should_stop` is asked at each commit; when
    it answers True the replay raises `Stopped`."""
    files: dict[str, list[Origin]] = {}
    origin: Origin | None = None
    old_path: str | None = None
    path: str | None = None
    hunks: list[tuple[int, int, int]] = []

    def flush() -> None:
        nonlocal hunks
        if path is not None and origin is not None and hunks:
            current = files.setdefault(path, [])
            # Bottom-up, so earlier hunks' old line numbers stay valid.
            for old_start, old_count, new_count in sorted(hunks, reverse=True):
                at = old_start if old_count == 0 else old_start - 1
                current[at : at + old_count] = [origin] * new_count
        hunks = []

    def name(raw: bytes) -> str | None:
        target = raw[4:].rstrip(b"\n")
        if target == b"/dev/null":
            return None
        return (target[2:] if target[:2] in (b"a/", b"b/") else target).decode("utf-8", "replace")

    for raw in lines:
        first = raw[:1]
        if (first == b"+" or first == b"-") and raw[1:3] not in (b"++", b"--"):
            continue  # a changed line's content: most of the stream, and of no interest
        if raw.startswith(RECORD):
            if should_stop():
                raise Stopped
            flush()
            path = old_path = None
            sha, author, stamp = raw[1:].rstrip(b"\n").split(FIELD, 2)
            origin = Origin(sha.decode(), scrub(author.decode("utf-8", "replace")), int(stamp or 0))
        elif raw.startswith(b"diff --git "):
            flush()
            path = old_path = None
        elif raw.startswith(b"rename from "):
            old_path = raw[12:].rstrip(b"\n").decode("utf-8", "replace")
        elif raw.startswith(b"rename to ") and old_path in files:
            files[raw[10:].rstrip(b"\n").decode("utf-8", "replace")] = files.pop(old_path)
        elif raw.startswith(b"--- "):
            old_path = name(raw)
        elif raw.startswith(b"+++ "):
            path = name(raw)
            if path is None:  # deleted
                files.pop(old_path or "", None)
            elif old_path is not None and old_path != path and old_path in files:
                files[path] = files.pop(old_path)  # renamed: its lines keep their origins
            else:
                files.setdefault(path, [])
        elif raw.startswith(b"@@") and path is not None:
            match = _HUNK.match(raw)
            if match:
                hunks.append(
                    (int(match.group(1)), int(match.group(2) or 1), int(match.group(4) or 1))
                )
    flush()
    return files


def plain_origins(files: dict[str, list[Origin]]) -> dict[str, Any]:
    """`files` as JSON data: each distinct origin once, each line its index among them."""
    index: dict[Origin, int] = {}
    lines = {
        path: [index.setdefault(origin, len(index)) for origin in origins]
        for path, origins in files.items()
    }
    return {"origins": [[o.commit, o.author, o.time] for o in index], "files": lines}


def origins_of(data: Any) -> dict[str, list[Origin]] | None:
    """`plain_origins`' data read back; None when it is not that shape."""
    try:
        table = [Origin(str(c), str(a), int(t)) for c, a, t in data["origins"]]
        return {str(path): [table[n] for n in lines] for path, lines in data["files"].items()}
    except (KeyError, TypeError, ValueError, IndexError):
        return None
