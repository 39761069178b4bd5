"""Open the console: the session and the day's cached run are read before the app starts
(a bad checkout or config is one line and exit 2, as for every command)."""

from __future__ import annotations

import sys

from scout_tui.errors import EXIT_OK
from scout_tui.session import Session, SessionOptions


def run_console(options: SessionOptions, demo: bool = False) -> int:
    warnings: list[str] = []
    session = Session(options, warn=warnings.append)
    run = session.cached_run()
    from scout_tui.tui.app import ScoutApp  # Textual loads only for the console

    app = ScoutApp(session, run, demo=demo)
    code = app.run()
    for line in warnings:
        print(f"scout: warning: {line}", file=sys.stderr)
    return code if isinstance(code, int) else EXIT_OK
