"""The `scout` program: the headless commands (`cli`) and the console (`tui`) meet here, so
that neither imports the other. Textual is imported only when the console opens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scout_tui import cli  # tiny: the Ctrl-C handler is set before anything heavy imports

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from scout_tui.session import SessionOptions


def console(
    options: SessionOptions,
    demo: bool = False,
    bundles: Sequence[tuple[Path, SessionOptions]] = (),
) -> int:
    from scout_tui.tui.console import run_console

    return run_console(options, demo=demo, bundles=bundles)


def entry() -> int:
    return cli.entry(console=console)
