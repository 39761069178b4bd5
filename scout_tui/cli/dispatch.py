"""Arguments in (`parser.py`), a command run, an exit code out. What each command does is
in the modules beside this one; what they share (the session, the run, the report) is
`scout_tui.session`."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from scout_tui.cli.parser import build_parser, command_parser
from scout_tui.errors import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    ScoutError,
    UsageError,
    scrub,
    sigint_received,
)

# The collectors build millions of AST nodes that hold no reference cycles; with the
# default thresholds the cycle collector re-scans them again and again (measured: a
# quarter of a run on torchtitan, a third at 100x its size).
GC_THRESHOLDS = (100_000, 50, 100)

COMMANDS = {  # command → "module:function", imported only when run
    "collect": "scout_tui.cli.run:cmd_collect",
    "open": "scout_tui.cli.run:cmd_open",
    "report": "scout_tui.cli.run:cmd_report",
    "replay": "scout_tui.cli.replay:cmd_replay",
    "publish": "scout_tui.cli.run:cmd_publish",
    "cache": "scout_tui.cli.run:cmd_cache",
    "demo": "scout_tui.cli.run:cmd_demo",
    "serve-github": "scout_tui.cli.serve:cmd_serve_github",
    "triage": "scout_tui.cli.triage:cmd_triage",
    "stats": "scout_tui.cli.triage:cmd_stats",
    "ci-log": "scout_tui.cli.ci:cmd_ci_log",
    "repro": "scout_tui.cli.ci:cmd_repro",
    "bisect": "scout_tui.cli.bisect:cmd_bisect",
    "torch-commit": "scout_tui.cli.ci:cmd_torch_commit",
    "help": "scout_tui.cli.dispatch:cmd_help",
    "completion": "scout_tui.cli.dispatch:cmd_completion",
}


def _silence_stdout() -> None:
    """The reader went away (`scout report | head`): say nothing more, on exit included."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def run(argv: Sequence[str] | None = None, console: Callable[..., int] | None = None) -> int:
    parser = build_parser()
    if "_ARGCOMPLETE" in os.environ:  # the shell asks for completions (`scout completion`)
        import argcomplete

        argcomplete.autocomplete(parser)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the command's own parser, so the hint names its --help
        command_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command is None:
        if console is None:
            parser.print_help()
            return EXIT_OK
        return _console(args, console)
    args.console = console
    gc.set_threshold(*GC_THRESHOLDS)
    gc.enable()  # off while `main` imported the parser's models
    module, _, function = COMMANDS[args.command].partition(":")
    try:
        return getattr(importlib.import_module(module), function)(args)
    except Exception:
        if sigint_received():  # the error is a Ctrl-C that a library turned into another
            raise KeyboardInterrupt from None
        return _failed()


def _console(args: argparse.Namespace, console: Callable[..., int]) -> int:
    """Bare `scout`: the console on the day's run of the checkout."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "scout: error: the console needs a terminal (the headless commands are listed "
            "by `scout --help`)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    # No cycle collection while the console imports and loads what lives as long as it does
    # (80 ms of 450 at import); the console turns it back on once its run is on screen.
    gc.disable()
    try:
        from scout_tui.cli.common import session_options

        return console(session_options(args, processes=1))
    except Exception:
        return _failed()
    finally:
        gc.enable()


def _failed() -> int:
    """The exception being handled, said in one line, as its exit code."""
    try:
        raise
    except UsageError as exc:
        _debug_traceback()
        print(f"scout: error: {scrub(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except ScoutError as exc:
        _debug_traceback()
        print(f"scout: error: {scrub(str(exc))}", file=sys.stderr)
        return EXIT_FAILURE
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_FAILURE
    except Exception as exc:  # the last line of defence: one line, no traceback
        _debug_traceback()
        print(f"scout: error: {scrub(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)
        return EXIT_FAILURE


def _debug_traceback() -> None:
    """With SCOUT_DEBUG set, the traceback of the error being handled, before its line:
    every error's, bad usage too, and scrubbed like the line (a token in a message)."""
    if os.environ.get("SCOUT_DEBUG"):
        import traceback

        print(scrub(traceback.format_exc()), file=sys.stderr, end="")


def cmd_help(args: argparse.Namespace) -> int:
    """`scout help CMD [ACTION]`: that parser's --help (argparse exits 0 after it)."""
    parser = build_parser()
    try:
        parser.parse_args([*args.topic, "--help"])
    except SystemExit as done:
        return int(done.code or 0)
    return EXIT_OK


def cmd_completion(args: argparse.Namespace) -> int:
    import argcomplete

    sys.stdout.write(argcomplete.shellcode(["scout"], shell=args.shell))
    return EXIT_OK
