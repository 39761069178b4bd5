"""The `scout` command.

Nothing heavy is imported before Ctrl-C is handled: a Ctrl-C at any moment, during imports
included, prints `scout: interrupted` and exits 130 without a traceback. Headless
subcommands never import Textual.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Sequence

EXIT_INTERRUPTED = 130  # scout_tui.errors says the same; not imported here, on purpose


def interrupted() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not print a traceback
    with contextlib.suppress(OSError):
        print("scout: interrupted", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    try:
        from scout_tui.cli.dispatch import run

        return run(argv)
    except KeyboardInterrupt:
        return interrupted()


def entry() -> int:
    """The console script: `main`, then no Ctrl-C during interpreter shutdown."""
    code = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return code
