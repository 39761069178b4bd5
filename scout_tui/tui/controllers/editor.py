"""A finding edited in $EDITOR: written to a temp file, the editor run with the terminal
(the console suspended), read back. What the reviewer typed is never lost: a file that
does not parse is kept, and its path said."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from textual.app import SuspendNotSupported
from textual.notifications import SeverityLevel

from scout_tui.model import Finding
from scout_tui.tui.edit_document import BadDocument, Edited, finding_document, parse_document


@dataclass(frozen=True)
class EditorOutcome:
    edited: Edited | None = None  # what to record
    said: str = ""
    severity: SeverityLevel = "information"
    timeout: float = 3


def edit_in_editor(
    finding: Finding, suspend: Callable[[], AbstractContextManager[None]]
) -> EditorOutcome:
    """`suspend`: gives the editor the terminal while it runs (the app's `suspend`)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    handle, name = tempfile.mkstemp(prefix="scout-finding-", suffix=".md")
    path = Path(name)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(finding_document(finding))
    try:
        code = _run_editor([*shlex.split(editor), str(path)], suspend)
    except (OSError, ValueError) as exc:
        path.unlink(missing_ok=True)
        return EditorOutcome(None, f"cannot start the editor {editor!r}: {exc}", "error", 8)
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        edited = parse_document(text)
    except BadDocument as exc:  # the text is kept: nothing typed is lost
        return EditorOutcome(
            None, f"not recorded — {exc}; your text is kept in {path}", "error", 12
        )
    path.unlink(missing_ok=True)
    if code != 0:
        return EditorOutcome(
            None, f"the editor exited with status {code}: nothing recorded", "warning", 6
        )
    if edited is None:
        return EditorOutcome(None, "the file was emptied: edit cancelled")
    if (edited.title, edited.priority, edited.body) == (
        finding.title,
        finding.priority,
        finding.body.strip(),
    ):
        return EditorOutcome(None, "nothing changed", timeout=2)
    return EditorOutcome(edited)


def _run_editor(command: list[str], suspend: Callable[[], AbstractContextManager[None]]) -> int:
    if shutil.which(command[0]) is None:  # checked first: a failed start inside suspend
        raise OSError(f"{command[0]}: not found")  # would leave the terminal suspended
    try:
        with suspend():  # the editor gets the terminal; the console comes back after
            try:
                return subprocess.call(command)
            except OSError as exc:  # raised inside, the console would not resume
                error = exc
        raise error
    except SuspendNotSupported:  # headless (tests): an editor that needs no terminal
        return subprocess.call(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
