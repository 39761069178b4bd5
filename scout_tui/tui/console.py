"""Open the console: the session is made before the app starts (a bad checkout or config is
one line and exit 2, as for every command); the day's cached run is read by the app, after
its first frame."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from pathlib import Path

from scout_tui.errors import EXIT_OK
from scout_tui.repro.process import stop_all
from scout_tui.session import Session, SessionOptions


def run_console(
    options: SessionOptions,
    demo: bool = False,
    bundles: Sequence[tuple[Path, SessionOptions]] = (),
) -> int:
    """The console on the checkout's day (`options`), or on `bundles`, each reviewed with
    the reviewer's options chosen for it: several are shown as an overview first."""
    warnings: list[str] = []
    sessions = [Session.of_bundle(path, chosen, warn=warnings.append) for path, chosen in bundles]
    session = sessions[0] if sessions else Session(options, warn=warnings.append)
    from scout_tui.tui.app import ScoutApp  # Textual loads only for the console

    app = ScoutApp(session, demo=demo, load_cached=True, more=sessions[1:])
    gc.disable()  # until the run is on screen, then frozen: see settle_memory
    try:
        code = app.run()
    finally:
        gc.enable()
        stop_all()  # a repro still running (a hangup ends the app without unmounting)
    for line in warnings:
        print(f"scout: warning: {line}", file=sys.stderr)
    return code if isinstance(code, int) else EXIT_OK


def settle_memory() -> None:
    """`run_console` turns the cyclic garbage collector off while the run loads; once the
    tree is up (the triage screen calls this), everything alive then is frozen out of its
    passes — a full pass over a 5,000-finding run costs 130–250 ms, a keypress's worth of
    stutter several times a minute — and the collector runs again for what comes after."""
    gc.freeze()
    gc.enable()
