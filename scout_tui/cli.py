"""The `scout` command. Headless subcommands never import Textual (start-up time)."""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from scout_tui import __version__

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
GC_THRESHOLDS = (100_000, 50, 100)


class UsageError(Exception):
    """Bad usage or configuration: exit code 2."""


def _date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path("."),
        help="checkout to scan (default: the current directory)",
    )
    parser.add_argument(
        "--config", type=Path, help="scout.toml (default: the checkout's, then the shipped default)"
    )
    parser.add_argument("--cache-dir", type=Path, help="cache location (default: platform cache)")
    parser.add_argument(
        "--date",
        type=_date,
        dest="as_of",
        help="run as of this day, YYYY-MM-DD (default: today, UTC)",
    )
    parser.add_argument(
        "--prior", type=Path, metavar="DIR", help="prior reports as YYYY-MM-DD.md files in DIR"
    )
    parser.add_argument(
        "--offline", action="store_true", help="no network: collectors that need it are skipped"
    )
    parser.add_argument(
        "--only", action="append", metavar="COLLECTOR", help="run only this collector (repeatable)"
    )
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a collector is skipped or fails")  # fmt: skip


def _output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON (see schema/)")
    parser.add_argument("-o", "--output", type=Path, help="write to this file, not stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scout",
        description="Nightly scout: find what nobody has acted on yet, triage it, publish it.",
    )
    parser.add_argument("--version", action="version", version=f"scout-tui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    collect = sub.add_parser("collect", help="run the collectors and cache the run")
    _common(collect)
    _output(collect)

    report = sub.add_parser("report", help="render the report from the latest cached run")
    _common(report)
    _output(report)
    report.add_argument("--recollect", action="store_true", help="collect again first")

    publish = sub.add_parser("publish", help="post the report and file Backlog drafts")
    _common(publish)
    publish.add_argument("--dry-run", action="store_true", help="print the plan, send nothing")
    publish.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    cache = sub.add_parser("cache", help="show or clear the cache")
    cache.add_argument("action", choices=["info", "clear"])
    cache.add_argument("--cache-dir", type=Path, help="cache location (default: platform cache)")
    cache.add_argument("--json", action="store_true", help="print JSON")

    ci_log = sub.add_parser("ci-log", help="analyse a CI log you already have")
    ci_log.add_argument("file", help="the log (saved from `gh run view --log` or the job page); "
                        "- for stdin")  # fmt: skip
    ci_log.add_argument("--json", action="store_true", help="print JSON")
    ci_log.add_argument("--report", action="store_true",
                        help="print the report's CI Failures section for this log")  # fmt: skip
    ci_log.add_argument("--config", type=Path, help="scout.toml (experiment path, rules)")
    ci_log.add_argument("--passing-version", metavar="VERSION",
                        help="with --report: the last passing torch nightly, for the "
                        "regression range")  # fmt: skip
    ci_log.add_argument("--offline", action="store_true", help="no regression-range look-ups")
    ci_log.add_argument("--cache-dir", type=Path, help="cache location (default: platform cache)")
    ci_log.add_argument(
        "--repo", type=Path, default=Path("."), help="checkout (for its scout.toml)"
    )

    repro = sub.add_parser("repro", help="the command that reproduces a failing CI test")
    source = repro.add_mutually_exclusive_group(required=True)
    source.add_argument("log", nargs="?", help="a CI log to take the failing test from")
    source.add_argument("--command", dest="command_line", help="a `Command:` line from a CI log")
    repro.add_argument("--test", help="which failing test (default: the first)")
    repro.add_argument("--run", action="store_true", help="run it in --repo, streaming output")
    repro.add_argument("--repo", type=Path, default=Path("."), help="where to run it")

    commit = sub.add_parser("torch-commit", help="the PyTorch commit a nightly was built from")
    commit.add_argument("version", help="e.g. 2.13.0.dev20260819+cu130")
    commit.add_argument("--index-url", help="PEP 503 index (default: [torch] nightly_index)")
    commit.add_argument("--python-tag", help="e.g. cp312 (default: [torch] python_tag)")
    commit.add_argument("--config", type=Path, help="scout.toml")
    commit.add_argument("--repo", type=Path, default=Path("."), help="checkout (for scout.toml)")
    commit.add_argument("--cache-dir", type=Path, help="cache location (default: platform cache)")
    commit.add_argument("--json", action="store_true", help="print JSON")

    demo = sub.add_parser("demo", help="the whole loop on a generated sample repository")
    demo.add_argument("--dir", type=Path, help="build the sample here (default: a temp dir)")
    demo.add_argument("--date", type=_date, dest="as_of", help="the demo's today, YYYY-MM-DD")
    demo.add_argument("--json", action="store_true", help="print the run as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    # The collectors build millions of AST nodes that hold no reference cycles; with the
    # default thresholds the cycle collector re-scans them again and again (measured: a
    # quarter of a run on torchtitan, a third at 100x its size).
    gc.set_threshold(*GC_THRESHOLDS)
    from scout_tui.commands import dispatch

    try:
        return dispatch(args)
    except UsageError as exc:
        print(f"scout: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("scout: interrupted", file=sys.stderr)
        return 130


def write_output(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(output)


def dumps(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True, default=str)
