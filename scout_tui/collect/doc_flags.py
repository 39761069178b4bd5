"""A doc's `--section.option` flag that no config field defines, and what became of it:
moved to another section, renamed, removed (by which commit), or a typo. Data here; the
words are made by `problem` and `fix` when the docs finding is written."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

from git import GitCommandError

from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import CollectorContext
from scout_tui.source.records import CommitInfo


@dataclass(frozen=True)
class UnknownFlag:
    """A doc's flag no config field defines, and what became of it, as data: `moved` (the
    same field in another section), `renamed` (its field removed and `became` added in one
    commit), `removed` (its field removed, nothing in its place), `typo` (never a field; a
    flag spelled nearly the same exists) or `unknown`."""

    flag: str
    fate: Literal["moved", "renamed", "removed", "typo", "unknown"]
    became: str | None = None
    commit: CommitInfo | None = None

    def problem(self) -> str:
        said = f"flag {code('--' + self.flag)} is not a config field"
        when = _when(self.commit)
        if self.fate == "moved":
            commit = self.commit
            since = f", since {code(commit.sha[:10])} ({commit.summary})" if commit else ""
            return f"{said}; it is {code('--' + str(self.became))} now{since}"
        if self.fate == "renamed":
            return f"{said}; did you mean {code('--' + str(self.became))}? (renamed in {when})"
        if self.fate == "removed":
            return f"{said}: it was removed in {when}, with nothing in its place"
        if self.fate == "typo":
            return f"{said}; did you mean {code('--' + str(self.became))}?"
        return said

    def fix(self) -> str | None:
        if self.became is not None:
            return f"use {code('--' + self.became)} for {code('--' + self.flag)}"
        if self.fate == "removed":
            return f"drop {code('--' + self.flag)} (removed upstream)"
        return None


def _when(commit: CommitInfo | None) -> str:
    if commit is None:
        return ""
    return f"{code(commit.sha[:10])} ({commit.date:%Y-%m-%d}, {commit.summary})"


_FIELD_LINE = r"^{sign}\s+(\w+)\s*:[^\n]*$"


def unknown_flag(ctx: CollectorContext, flag: str, flags: dict[str, str]) -> UnknownFlag:
    """What became of a flag no config field defines: the history of the files of its
    section's classes says whether its field was removed, renamed or moved; a flag that
    was never a field is a typo when one of its section is spelled nearly the same."""
    leaf = flag.rsplit(".", 1)[-1]
    section = flag.rpartition(".")[0]
    siblings = [f for f in flags if f.rpartition(".")[0] == section]
    close = difflib.get_close_matches(flag, siblings, n=1, cutoff=0.9)
    homes = [f for f in flags if f.rsplit(".", 1)[-1] == leaf and f != flag]
    head = ctx.head_commit or "HEAD"
    if len(homes) == 1:
        try:
            moved = ctx.source.pickaxe(f"{leaf}:", flags[homes[0]], head, moves=True)
        except GitCommandError:  # an unreadable history only loses the commit, not the finding
            moved = None
        return UnknownFlag(flag, "moved", homes[0], moved)
    for path in sorted({flags[f] for f in siblings}):
        try:
            gone = ctx.source.pickaxe(f"{leaf}:", path, head)
        except GitCommandError:
            continue
        if gone is None:
            continue
        diff = ctx.source.diff_range(gone.sha + "^", gone.sha, [path])
        removed = set(re.findall(_FIELD_LINE.format(sign="-"), diff, re.MULTILINE))
        added = set(re.findall(_FIELD_LINE.format(sign="\\+"), diff, re.MULTILINE))
        removed, added = removed - added, added - removed  # moved lines are neither
        if leaf not in removed:
            continue  # the commit added it, or only named it in a comment
        prefix = f"{section}." if section else ""
        # One field out and one in, or out and a near spelling in: the same field renamed.
        now = [f"{prefix}{name}" for name in sorted(added) if f"{prefix}{name}" in flags]
        if close and close[0] in now:
            return UnknownFlag(flag, "renamed", close[0], gone)
        if len(removed) == 1 and len(now) == 1:
            return UnknownFlag(flag, "renamed", now[0], gone)
        return UnknownFlag(flag, "removed", None, gone)
    return UnknownFlag(flag, "typo", close[0]) if close else UnknownFlag(flag, "unknown")
