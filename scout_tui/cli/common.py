"""What the subcommands share: messages on stderr, the session from the arguments, the
progress lines, --strict."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scout_tui.config.models import Config, ConfigError
from scout_tui.config.profile import find_config, load_config
from scout_tui.errors import EXIT_FAILURE, EXIT_OK, scrub
from scout_tui.model import RunResult
from scout_tui.session import Session, SessionOptions

if TYPE_CHECKING:
    from scout_tui.collect.events import Event


def warn(message: str) -> None:
    print(f"scout: warning: {scrub(message)}", file=sys.stderr)


def cli_processes() -> int:
    """Collectors parse Python under the GIL: one process per core, two at most (measured:
    the collectors split two ways). SCOUT_PROCESSES=1 keeps everything in one process."""
    configured = os.environ.get("SCOUT_PROCESSES", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return min(2, os.cpu_count() or 1)


def open_session(args: argparse.Namespace) -> Session:
    return Session(session_options(args), warn=warn)


def session_options(args: argparse.Namespace, processes: int | None = None) -> SessionOptions:
    return SessionOptions(
        repo=args.repo,
        config=args.config,
        cache_dir=args.cache_dir,
        state_dir=args.state_dir,
        as_of=args.as_of,
        prior_dir=args.prior,
        offline=args.offline,
        only=getattr(args, "only", None),
        processes=processes or cli_processes(),
        api_url=getattr(args, "api_url", None),
        # The commands of one shell are one session; each console is its own.
        origin=(
            f"scout {args.command}"
            if getattr(args, "command", None) not in (None, "open", "demo")
            else f"the console (pid {os.getpid()})"
        ),
    )


def config_near(repo: Path, config: Path | None) -> Config:
    """For commands that need no checkout: --config, else the scout.toml of the checkout
    around `repo` if there is one, else the shipped default."""
    from scout_tui.errors import UsageError

    path = config
    if path is None:
        top = _toplevel(repo)
        path = find_config(top) if top else None
    try:
        return load_config(path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _toplevel(path: Path) -> Path | None:
    for candidate in [path.resolve(), *path.resolve().parents]:
        if (candidate / ".git").exists():
            return candidate
    return None


def progress(event: Event) -> None:
    """A line on stderr per finished collector; with SCOUT_VERBOSE, one per finding."""
    from scout_tui.collect.events import CollectorFinished, ConfigWarned, FindingFound, RunWarning

    if isinstance(event, CollectorFinished):
        state = event.state
        detail = {
            "done": f"done, {state.findings} finding{'s' if state.findings != 1 else ''}",
            "skipped": f"skipped — {state.reason}",
            "failed": f"failed — {state.reason}",
            "cancelled": "cancelled",
        }.get(state.state, state.state)
        seconds = f" ({state.seconds:.2f} s)" if state.seconds is not None else ""
        print(f"  {state.title}: {scrub(detail)}{seconds}", file=sys.stderr)
        for note in state.notes:  # what it did that scout.toml does not say; nothing wrong
            print(f"    note: {scrub(note)}", file=sys.stderr)
    elif isinstance(event, RunWarning):
        warn(event.message)
    elif isinstance(event, ConfigWarned):
        print(f"scout: scout.toml: {scrub(event.warning.message)}", file=sys.stderr)
    elif isinstance(event, FindingFound) and os.environ.get("SCOUT_VERBOSE"):
        print(f"    + {scrub(event.finding.title)}", file=sys.stderr)


def strict_exit(args: argparse.Namespace, result: RunResult) -> int:
    """--strict: each skipped or failed collector named with why; one the user asked to
    skip (--offline) does not count."""
    if not getattr(args, "strict", False):
        return EXIT_OK
    problems = [
        state
        for state in result.collectors
        if state.state in ("skipped", "failed") and not state.by_request
    ]
    for state in problems:
        print(
            f"scout: strict: {state.title} ({state.name}) {state.state} — {state.reason}",
            file=sys.stderr,
        )
    return EXIT_FAILURE if problems else EXIT_OK
