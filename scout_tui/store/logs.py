"""A run's CI logs on this machine: the logs its collection kept, or a bundle's excerpts,
written once each into a folder only this user can enter (removed with it)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scout_tui.errors import ScoutError
from scout_tui.model import Finding

if TYPE_CHECKING:
    from scout_tui.store.bundle import Bundle


@dataclass(frozen=True)
class LogRef:
    path: Path
    root_offset: int | None  # where the root cause's traceback starts, in that file


class RunLogs:
    """The logs of a collected run (`bundle` None) or of a bundle's."""

    def __init__(self, bundle: Bundle | None) -> None:
        self.bundle = bundle
        self._written: dict[str, LogRef] = {}  # a bundle's log excerpts, written here
        self._folder: Path | None = None

    def has_log(self, finding: Finding | None) -> bool:
        """Whether `l` has a log to open for the finding, without touching the disk (asked
        on every cursor move); `log_file` finds it, when it is opened."""
        if finding is None:
            return False
        if self.bundle is not None:
            return finding.fingerprint in self.bundle.logs
        return bool(finding.evidence.log_path)

    def log_file(self, finding: Finding | None) -> LogRef | None:
        """The finding's CI log here: as kept by the collection, or a bundle's excerpt."""
        if finding is None:
            return None
        evidence = finding.evidence
        if self.bundle is None:
            if evidence.log_path and Path(evidence.log_path).is_file():
                return LogRef(Path(evidence.log_path), evidence.log_offset)
            return None
        excerpt = self.bundle.logs.get(finding.fingerprint)
        if excerpt is None:
            return None
        if finding.fingerprint not in self._written:
            # A file of scout's naming in a folder of the session's own: nothing the bundle
            # says becomes part of a path.
            path = self._private_folder() / f"{len(self._written) + 1}.log"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as stream:
                stream.write(excerpt.text.encode())
            root = (
                len(excerpt.text[: excerpt.root_offset].encode())
                if excerpt.root_offset is not None
                else None
            )
            self._written[finding.fingerprint] = LogRef(path, root)
        return self._written[finding.fingerprint]

    def _private_folder(self) -> Path:
        """A folder only this user can enter, made once per session, removed with it."""
        if self._folder is None:
            folder = Path(tempfile.mkdtemp(prefix="scout-bundle-logs-"))
            info = folder.lstat()
            if (
                not stat.S_ISDIR(info.st_mode)
                or info.st_uid != os.getuid()
                or stat.S_IMODE(info.st_mode) != 0o700
            ):
                raise ScoutError(f"{folder}: not a private folder of this user")
            weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
            self._folder = folder
        return self._folder
