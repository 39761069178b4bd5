"""Where a finding leads: the repro command to copy (derived again for a bundle, never
its stored string), its links (board item, evidence, compare view), and whether `o` may
start a browser on this machine."""

from __future__ import annotations

import os
from collections.abc import Mapping

from scout_tui.analysis.ci.repro import ReproError
from scout_tui.model import Finding
from scout_tui.session import Session


def repro_to_copy(session: Session, finding: Finding) -> str | None:
    """What `c` copies: the finding's repro; for a bundle, what `r` would run."""
    if session.bundle is None:
        return finding.evidence.repro
    try:
        return session.derived_repro(finding).display()
    except ReproError:
        return None


def links_of(finding: Finding) -> list[str]:
    """Its board item, then the evidence's links, then the compare view."""
    evidence = finding.evidence
    return (
        ([finding.board.url] if finding.board and finding.board.url else [])
        + evidence.urls
        + ([evidence.compare_url] if evidence.compare_url else [])
    )


TEXT_BROWSERS = {"lynx", "w3m", "links", "elinks", "www-browser"}


def graphical_browser(env: Mapping[str, str], platform: str) -> bool:
    """Whether `o` may start a browser: a display (X, Wayland, a Mac or Windows desktop)
    and not a text browser, which would draw over the console."""
    if env.get("BROWSER", "").split(os.pathsep)[0].rsplit("/", 1)[-1] in TEXT_BROWSERS:
        return False
    if platform in ("darwin", "win32"):
        return not env.get("SSH_CONNECTION")
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))
