"""The command line: every command's options, and the options that say which checkout,
day, configuration, stores and GitHub a command works on (taken before or after it)."""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

from scout_tui import __version__
from scout_tui.errors import EXIT_USAGE
from scout_tui.model import SECTIONS

# where `triage edit --section` may put a finding
PLACEABLE = tuple(section.value for section, traits in SECTIONS.items() if traits.placeable)


class _Parser(argparse.ArgumentParser):
    """Bad usage in one line, naming the command's --help (argparse prints its whole usage
    block, and the top-level one for a subcommand's unknown option)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"scout: error: {message} (see `{self.prog} --help`)\n")

    def _get_option_tuples(self, option_string: str) -> list[tuple[Any, ...]]:
        """Abbreviations expand to the options shown, never to a hidden one."""
        return [
            match
            for match in super()._get_option_tuples(option_string)
            if match[0].help is not argparse.SUPPRESS
        ]


class _ScoutParser(_Parser):
    """`scout` itself: parsing ends with the merge of the global options."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, unknown = super().parse_known_args(args, namespace)
        merge_globals(self, parsed)
        return parsed, unknown


MAX_DAYS = 36_500  # a century: more is a typo, and past `date`'s range


def _days(value: str) -> int:
    try:
        days = int(value)
    except ValueError:
        days = 0
    if not 1 <= days <= MAX_DAYS:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of days (1 to {MAX_DAYS:,})")
    return days


def _fail_on(value: str) -> tuple[str, str]:
    which, _, priority = value.lower().partition(":")
    if which not in ("new", "any") or priority not in ("p0", "p1", "p2"):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not WHICH:PRIORITY (new:P0, new:P1, any:P0, …)"
        )
    return which, priority.upper()


def _date(value: str) -> date:
    try:  # YYYY-MM-DD only (fromisoformat also takes 20261206 and week dates)
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


def _priority(value: str) -> str:
    """P0, P1, P2 (any case, as the filter takes them) or none."""
    return "none" if value.lower() == "none" else value.upper()


# The options that say which checkout, day, configuration, stores and GitHub a command
# works on. Each is taken before the command (`scout --offline publish`) and after it
# (`scout publish --offline`), as in git or gh; argparse kwargs, `default` applied after
# the merge.
GLOBAL_OPTIONS: dict[str, dict[str, Any]] = {
    "--repo": dict(
        dest="repo",
        type=Path,
        metavar="PATH",
        default=Path("."),
        help="checkout to scan; any folder inside it (default: here)",
    ),
    "--config": dict(
        dest="config",
        type=Path,
        metavar="FILE",
        help="scout.toml (default: the checkout's, then the shipped default)",
    ),
    "--date": dict(
        dest="as_of",
        type=_date,
        metavar="YYYY-MM-DD",
        help="run as of this day, from the experiment's first commit to today "
        "(default: today, UTC)",
    ),
    "--prior": dict(
        dest="prior", type=Path, metavar="DIR", help="prior reports as YYYY-MM-DD.md files in DIR"
    ),
    "--offline": dict(
        dest="offline",
        action="store_true",
        default=False,
        help="no network: collectors that need it are skipped",
    ),
    "--cache-dir": dict(
        dest="cache_dir",
        type=Path,
        metavar="DIR",
        help="cache location (default: the platform cache dir)",
    ),
    "--state-dir": dict(
        dest="state_dir",
        type=Path,
        metavar="DIR",
        help="where triage decisions and the publish journal live "
        "(default: $SCOUT_STATE_DIR, then the platform data dir)",
    ),
    "--api-url": dict(
        dest="api_url",
        metavar="URL",
        help="GitHub's API (default: $SCOUT_GITHUB_API_URL, then api_url in your "
        "config file, then [project] api_url of a trusted scout.toml; GitHub "
        "Enterprise: https://HOST/api/v3)",
    ),
}
_EVERY_GLOBAL: dict[str, dict[str, Any]] = {flag: {} for flag in GLOBAL_OPTIONS}

# Command → the global options it takes, each with the argparse kwargs that differ there
# (its help, its default). None is bare `scout` (the console); a triage action takes
# what `triage` takes.
COMMAND_GLOBALS: dict[str | None, dict[str, dict[str, Any]]] = {
    None: _EVERY_GLOBAL,
    "collect": _EVERY_GLOBAL,
    "report": _EVERY_GLOBAL,
    "publish": _EVERY_GLOBAL,
    "triage": _EVERY_GLOBAL,
    "open": {
        "--repo": dict(
            default=None,
            action="append",
            help="your checkout of the bundle's repository: its "
            "scout.toml says where to publish, and repros run there (several: "
            "each file takes the one whose scout.toml names its repository and experiment)",
        ),
        "--config": dict(
            action="append",
            help="your scout.toml: where publishing goes (default: --repo's, "
            "then the checkout around here, then the shipped default; several: as --repo)",
        ),
        "--cache-dir": {},
        "--state-dir": {},
        "--offline": dict(help="review only: no GitHub"),
        "--api-url": dict(
            help="GitHub's API to publish to (default: as for any command; never the bundle's)"
        ),
    },
    "cache": {"--cache-dir": {}},
    "stats": {"--state-dir": {}},
    "replay": {
        "--repo": {},
        "--config": {},
        "--prior": dict(
            help="reports from before --from (YYYY-MM-DD.md), copied into --out: "
            "the first day's priors (default: none, the first day has no baseline)"
        ),
        "--offline": dict(help="no network (GitHub's CI runs, PRs and blockers skipped)"),
        "--state-dir": dict(
            help="apply the triage decisions kept there (default: none; "
            "replay never writes decisions)"
        ),
        "--api-url": {},
    },
    "ci-log": {
        "--repo": dict(help="checkout (for its scout.toml)"),
        "--config": dict(help="scout.toml (experiment path, rules)"),
        "--offline": dict(help="no regression-range look-ups"),
        "--cache-dir": {},
    },
    "repro": {
        "--repo": dict(help="where to run it (default: here)"),
        "--cache-dir": dict(help="where --nightly's environments are kept"),
        "--state-dir": dict(help="where the lock of the box's GPUs is (one run at a time)"),
    },
    "bisect": {
        "--offline": dict(help="no GitHub (the commits between the two nightlies not counted)"),
        "--api-url": {},
        "--repo": dict(help="the checkout the repro runs in (default: here)"),
        "--cache-dir": dict(help="where the environments, logs and results are kept"),
        "--state-dir": dict(help="where the lock of the box's GPUs is (one run at a time)"),
    },
    "torch-commit": {
        "--repo": dict(help="checkout (for its scout.toml)"),
        "--config": dict(help="scout.toml"),
        "--cache-dir": {},
    },
    "demo": {"--date": dict(help="the demo's today (default: today, UTC)")},
    "serve-github": {},
}
EXCLUSIVE_GLOBALS = {"open": ("--repo", "--config")}  # at most one of them, either side


def _given_at(dest: str, depth: int) -> str:
    """Where the value typed at this depth (0 before the command, 1 after it, 2 after a
    triage action) is kept until the merge: apart, so a later parser's defaults cannot
    overwrite it."""
    return f"{dest}@{depth}"


def _global_kwargs(command: str | None, flag: str) -> dict[str, Any]:
    return {**GLOBAL_OPTIONS[flag], **COMMAND_GLOBALS[command][flag]}


def _add_globals(parser: argparse.ArgumentParser, command: str | None, depth: int) -> None:
    """Every global option: those the command takes as documented, the others hidden, so
    the merge refuses them by name (left unknown, `repro --command C --config FILE` would
    take FILE for the log)."""
    exclusive = EXCLUSIVE_GLOBALS.get(command or "", ())
    group = parser.add_mutually_exclusive_group() if exclusive else None
    for flag in GLOBAL_OPTIONS:
        taken = flag in COMMAND_GLOBALS[command]
        kwargs = (
            _global_kwargs(command, flag)
            if taken
            else {**GLOBAL_OPTIONS[flag], "help": argparse.SUPPRESS}
        )
        kwargs.update(dest=_given_at(kwargs["dest"], depth), default=argparse.SUPPRESS)
        if "action" not in kwargs:  # each value kept: one given twice on one side is seen
            kwargs["action"] = _EachValue
        (group if group is not None and flag in exclusive else parser).add_argument(flag, **kwargs)


class _EachValue(argparse.Action):
    """A single-valued option that keeps every value typed (`merge_globals` takes one, and
    refuses two that differ, on one side of the command as across both)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, [*getattr(namespace, self.dest, []), values])


def command_parser(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
) -> argparse.ArgumentParser:
    """The parser of the command (and triage action) in `args`: its errors name its --help."""
    for name in (getattr(args, "command", None), getattr(args, "action", None)):
        subparsers = parser._subparsers
        if name is None or subparsers is None:
            break
        choices = subparsers._group_actions[0].choices
        if not isinstance(choices, dict) or name not in choices:
            break
        parser = choices[name]
    return parser


def merge_globals(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Each global option's value, from whichever side of the command it was typed on, or
    its default; exit 2 naming it when both sides disagree or the command does not take it."""
    command = getattr(args, "command", None)
    where = command_parser(parser, args)
    taken = COMMAND_GLOBALS.get(command, {})
    for flag, kwargs in GLOBAL_OPTIONS.items():
        dest = kwargs["dest"]
        given = [
            vars(args).pop(_given_at(dest, depth))
            for depth in range(3)
            if hasattr(args, _given_at(dest, depth))
        ]
        if flag not in taken:
            if given:
                where.error(f"{flag} does not apply to `{where.prog}`")
            continue
        action = _global_kwargs(command, flag).get("action")
        if action == "append":  # before and after: all
            values = [v for value in given for v in (value if isinstance(value, list) else [value])]
            setattr(args, dest, list(dict.fromkeys(values)) or None)
            continue
        if action is None:  # each side's values, as _EachValue kept them
            given = [value for values in given for value in values]
        if any(value != given[0] for value in given):
            where.error(
                f"{flag} given twice with different values: {' and '.join(map(str, given))}"
            )
        setattr(args, dest, given[0] if given else _global_kwargs(command, flag).get("default"))
    chosen = [
        flag
        for flag in EXCLUSIVE_GLOBALS.get(command or "", ())
        if getattr(args, GLOBAL_OPTIONS[flag]["dest"]) is not None
    ]
    if len(chosen) > 1:
        where.error(f"argument {chosen[1]}: not allowed with argument {chosen[0]}")


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--only", action="append", metavar="COLLECTOR", help="run only this collector (repeatable)"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a collector is skipped or fails (not when you asked "
        "for it with --offline)",
    )


def _output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON (see schema/)")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="write to FILE instead of stdout (- is stdout)",
    )


def _triage_parser(sub: argparse._SubParsersAction) -> None:
    triage = sub.add_parser(
        "triage",
        help="the console's decisions, headless: list, accept, drop, merge, undo…",
        description="Decide on the findings of the day's run (collected first when there is "
        "none). FP is a fingerprint, or a unique prefix of it or of its hex part.",
    )
    _add_globals(triage, "triage", depth=1)
    actions = triage.add_subparsers(dest="action", metavar="ACTION", required=True)

    def action(name: str, help_text: str, fps: bool = True) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, help=help_text, description=help_text)
        _add_globals(parser, "triage", depth=2)
        if fps:
            parser.add_argument("fingerprints", nargs="+", metavar="FP")
        return parser

    listing = action("list", "the findings with their decisions", fps=False)
    listing.add_argument(
        "filter",
        nargs="*",
        metavar="WORD",
        help="only the findings the console's / filter would show: words over title, body "
        "and files, and the tokens p0 p1 p2 new carried dropped unreviewed (all must hold)",
    )
    listing.add_argument(
        "--section", choices=[s.value for s in SECTIONS], help="only this section's findings"
    )
    listing.add_argument("--json", action="store_true", help="print JSON")
    action("accept", "accept findings as they stand")
    drop = action("drop", "drop findings; they are not proposed again")
    drop.add_argument("--reason", required=True, help="why (remembered)")
    action("demote", "P0 → P1 → P2 → FYI; Opportunities and Docs → FYI")
    action("promote", "FYI → Action Items P2 → P1 → P0; Opportunities and Docs → P2")
    merge = action("merge", "merge findings into one (one board item)")
    merge.add_argument("--into", required=True, metavar="FP", help="the finding they join")
    edit = action("edit", "change a finding's title, priority, section or body", fps=False)
    edit.add_argument("fingerprint", metavar="FP")
    edit.add_argument("--title")
    edit.add_argument("--priority", type=_priority, choices=["P0", "P1", "P2", "none"])
    edit.add_argument("--section", choices=PLACEABLE)
    edit.add_argument(
        "--body-file", type=Path, metavar="FILE", help="the new body, as Markdown (- for stdin)"
    )
    action("undo", "undo the last decision (it survives restarts)", fps=False)
    action("redo", "redo what undo undid", fps=False)


EXAMPLES = [
    ("scout", "the console on today's run of here"),
    ("scout collect --offline", "collect offline; cached for the console"),
    ("scout --offline report > today.md", "the day's report as Markdown"),
    ("scout publish --dry-run", "what a publish would do, writing nothing"),
    ("scout publish --yes", "post the report, file the Backlog drafts"),
    ("scout triage list --json", "findings and decisions, for scripts"),
    ("scout collect --bundle run.json.gz", "a run to review elsewhere (scout open)"),
    ("scout open ~/nightly/", "several experiments' bundles, one tree"),
    ("scout replay --from 2026-08-01 --to 2026-08-07 --offline", "a past week's reports"),
    ("scout help publish", "as scout publish --help"),
    ("scout completion bash", "shell completion (bash, zsh or fish)"),
]
ENVIRONMENT = [
    ("GH_TOKEN, GITHUB_TOKEN", "the token for github.com (else `gh auth token`)"),
    ("GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN", "the token for any other API host"),
    ("SCOUT_GITHUB_API_URL", "GitHub's API (as --api-url)"),
    ("SCOUT_STATE_DIR", "where decisions and the publish journal live"),
    ("SCOUT_PROCESSES", "collector processes (1: everything in one)"),
    ("SCOUT_VERBOSE", "a line per finding as collectors find them"),
    ("SCOUT_DEBUG", "a traceback instead of the one-line error"),
    ("SCOUT_TODAY", "the day taken for today (YYYY-MM-DD, UTC)"),
    ("VISUAL, EDITOR", "the editor of `E` in the console"),
    ("NO_COLOR", "no colour in the console"),
]
EXIT_CODES = [
    ("0", "done"),
    ("1", "failed (a collector with --strict, a dry run GitHub refuses, nothing to undo)"),
    ("2", "bad usage or configuration (and publish offline, with no token or no --yes)"),
    ("130", "interrupted (Ctrl-C; the work done is kept)"),
]
HELP_WIDTH = 80


def _rows(title: str, rows: list[tuple[str, str]], column: int) -> str:
    """`rows` under `title`, their second column at `column` and wrapped to HELP_WIDTH; a
    first column too wide for it has its second on the next line."""
    out = [f"{title}:"]
    for left, right in rows:
        text = textwrap.wrap(right, HELP_WIDTH - column)
        if len(left) + 3 > column:
            out.append(f"  {left}")
        else:
            out.append(f"  {left:<{column - 2}}{text.pop(0)}")
        out += [" " * column + line for line in text]
    return "\n".join(out)


EPILOG = "\n\n".join(
    [
        _rows("examples", EXAMPLES, 38),
        _rows("environment", ENVIRONMENT, 30),
        _rows("exit codes", EXIT_CODES, 8),
    ]
)


def build_parser() -> argparse.ArgumentParser:
    parser = _ScoutParser(
        prog="scout",
        description=textwrap.fill(
            "Nightly scout: find what nobody has acted on yet, triage it, publish it. "
            "Without a command, the triage console opens on the day's run of the checkout.",
            HELP_WIDTH,
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"scout-tui {__version__}")
    _add_globals(parser, None, depth=0)  # before any command; bare `scout`: the console
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    collect = sub.add_parser("collect", help="run the collectors and cache the run")
    _add_globals(collect, "collect", depth=1)
    _run_options(collect)
    _output(collect)
    collect.add_argument(
        "--fail-on",
        type=_fail_on,
        action="append",
        default=[],
        metavar="WHICH:PRIORITY",
        help="exit 1 when the run has such a finding, not dropped in triage: new:P0 (a new "
        "P0), new:P1 (a new P0 or P1), any:P0 (new or carried); repeatable. For cron: "
        "alert before anyone opens the console",
    )
    collect.add_argument(
        "--events",
        action="store_true",
        help="stream the run's events as JSON lines on stdout (for a console "
        "running the collection in a child process; SIGTERM cancels)",
    )
    collect.add_argument(
        "--bundle",
        type=Path,
        metavar="FILE",
        help="also write the run as a self-contained bundle to review "
        "elsewhere with `scout open FILE` (gzip-compressed when FILE ends in "
        ".gz)",
    )

    open_ = sub.add_parser(
        "open",
        help="review bundles (collect --bundle) or runs (collect "
        "--json) in the console; their reports when not in a terminal",
    )
    open_.add_argument(
        "file",
        type=Path,
        nargs="+",
        help="bundle or run files, or folders of them (*.json, *.json.gz): several are "
        "the top-level nodes of one overview, each publishing to its own target",
    )
    _add_globals(open_, "open", depth=1)

    report = sub.add_parser("report", help="render the report from the day's cached run")
    _add_globals(report, "report", depth=1)
    _run_options(report)
    _output(report)
    report.add_argument("--recollect", action="store_true", help="collect again first")
    report.add_argument(
        "--as-posted",
        action="store_true",
        help="what publishing would post: cut to GitHub's comment limit "
        "(without it: the full text)",
    )
    report.add_argument(
        "--poorer",
        action="store_true",
        help="the day's poorer run kept apart (it looked at less than the "
        "day's run, e.g. --offline after an online run), not the day's run",
    )

    replay = sub.add_parser(
        "replay",
        help="the daily reports scout would have written over past days",
        description="Run scout once per day from --from to --to, each day on that day's last "
        "commit (read from git; the work tree is untouched), each day's report read back as "
        "the next day's prior. Writes DIR/YYYY-MM-DD.md and .json and DIR/summary.json, and "
        "prints one line per day. An interrupted replay resumes after its last complete day. "
        "Exit codes: 0 done, 1 a day failed, 2 bad usage, 130 interrupted.",
    )
    _add_globals(replay, "replay", depth=1)
    replay.add_argument(
        "--from",
        dest="first",
        type=_date,
        required=True,
        metavar="YYYY-MM-DD",
        help="the first day",
    )
    replay.add_argument(
        "--to",
        dest="last",
        type=_date,
        metavar="YYYY-MM-DD",
        help="the last day (default: today, UTC)",
    )
    replay.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where the reports go: a new or empty folder, or an earlier "
        "replay's to resume it (default: ./scout-replay-FROM-TO)",
    )
    replay.add_argument(
        "--json", action="store_true", help="print the summary as JSON instead of a table"
    )

    publish = sub.add_parser("publish", help="post the report and file Backlog drafts")
    _add_globals(publish, "publish", depth=1)
    publish.add_argument(
        "--dry-run",
        action="store_true",
        help="print the exact plan, bodies included; change nothing (exit 1 when GitHub "
        "would refuse it: a wrong or expired token, a missing scope)",
    )
    publish.add_argument(
        "--json",
        action="store_true",
        help="with --dry-run: the plan as JSON (schema/plan.schema.json)",
    )
    publish.add_argument(
        "--yes",
        action="store_true",
        help="do not ask (cron: every finding not dropped counts as accepted)",
    )
    publish.add_argument("--recollect", action="store_true", help="collect again first")

    _triage_parser(sub)

    stats = sub.add_parser(
        "stats",
        help="reviewers' decisions per kind of finding: accepted, demoted, dropped and why",
        description="What reviewers decided on each kind of finding over the last days "
        "(accepted, demoted, promoted, dropped with their reasons, merged, edited), read "
        "from the state store: every checkout and experiment it keeps. A decision undone "
        "does not count; each finding counts once per column.",
    )
    _add_globals(stats, "stats", depth=1)
    stats.add_argument(
        "--days", type=_days, default=30, metavar="N", help="the last N days (default: 30)"
    )
    _output(stats)

    cache = sub.add_parser("cache", help="show or clear the cache (never your decisions)")
    cache.add_argument("action", choices=["info", "clear"])
    _add_globals(cache, "cache", depth=1)
    cache.add_argument("--json", action="store_true", help="print JSON")

    ci_log = sub.add_parser("ci-log", help="analyse a CI log you already have")
    ci_log.add_argument(
        "file",
        help="the log (saved from `gh run view --log` or the job page, "
        "gzip or GitHub's .zip log archive); - for stdin",
    )
    ci_log.add_argument("--json", action="store_true", help="print JSON")
    ci_log.add_argument(
        "--report", action="store_true", help="print the report's CI Failures section for this log"
    )
    ci_log.add_argument(
        "--passing-version",
        metavar="VERSION",
        help="with --report: the last passing torch nightly, for the regression range",
    )
    _add_globals(ci_log, "ci-log", depth=1)

    repro = sub.add_parser("repro", help="the command that reproduces a failing CI test")
    source = repro.add_mutually_exclusive_group(required=True)
    source.add_argument("log", nargs="?", help="a CI log to take the failing test from")
    source.add_argument(
        "--command",
        dest="command_line",
        help="a command to make a repro of: `./run_train.sh …` (with NGPU=n), `torchrun … "
        "script.py …`, or `pytest path.py::test`, as a CI log's `Command:` line gives it",
    )
    repro.add_argument("--test", help="which failing test (default: the first)")
    repro.add_argument("--run", action="store_true", help="run it in --repo, streaming output")
    repro.add_argument(
        "--nightly",
        metavar="V",
        help="with --run: in that torch nightly's environment (2.13.0.dev20260612 or "
        "2026-06-12; built under the cache dir, or the one `scout bisect` kept)",
    )
    repro.add_argument("--index-url", help="with --nightly: the nightly index (as bisect's)")
    repro.add_argument(
        "--json", action="store_true", help="print it as JSON: command, cwd, ngpu, test"
    )
    _add_globals(repro, "repro", depth=1)

    bisect = sub.add_parser(
        "bisect",
        help="the first torch nightly that fails the repro, on this box",
        description="Binary search over the torch nightlies after --good up to --bad: each "
        "tried nightly installed in an environment of its own under the cache dir, the repro "
        "run there; ends with the first bad nightly, the last good one and their PyTorch "
        "commits. Results are kept: the same command run again resumes. Exit 0: found; 1: "
        "could not decide (does not reproduce here, or only untestable nightlies left); "
        "2: bad usage; 130: interrupted.",
    )
    bisect.add_argument(
        "--good",
        metavar="V",
        help="the last nightly CI passed with: 2.13.0.dev20260612 or 2026-06-12 (default: the "
        "day's CI failure's last passing nightly)",
    )
    bisect.add_argument(
        "--bad", metavar="V", help="a nightly that fails (default: the CI failure's nightly)"
    )
    bisect.add_argument(
        "--command",
        dest="command_line",
        help="the repro, in one of the shapes `scout repro` takes (./run_train.sh with NGPU=n, "
        "torchrun … script.py, pytest path.py::test); default: the CI failure's",
    )
    bisect.add_argument("--test", help="which failing test of the CI failure (default: the first)")
    bisect.add_argument(
        "--index-url",
        help="the nightly index (default: nightly_index in your config file, then scout's "
        "default); never a checkout's: the index decides what code runs",
    )
    bisect.add_argument(
        "--timeout",
        type=float,
        default=1800.0,
        metavar="S",
        help="seconds a run may take before it counts as untestable (1800)",
    )
    bisect.add_argument(
        "--runs",
        type=int,
        metavar="K",
        help="run each nightly K times; any failure fails it (default 1; 3 when CI saw the "
        "failure intermittent)",
    )
    bisect.add_argument(
        "--verify-good",
        action="store_true",
        help="run --good too instead of trusting CI that it passes",
    )
    bisect.add_argument(
        "--keep-envs",
        type=int,
        default=2,
        metavar="N",
        help="environments kept under the cache dir (2; each can be GBs)",
    )
    bisect.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_globals(bisect, "bisect", depth=1)

    commit = sub.add_parser("torch-commit", help="the PyTorch commit a nightly was built from")
    commit.add_argument("version", help="e.g. 2.13.0.dev20260819+cu130")
    commit.add_argument("--index-url", help="PEP 503 index (default: [torch] nightly_index)")
    commit.add_argument("--python-tag", help="e.g. cp312 (default: [torch] python_tag)")
    _add_globals(commit, "torch-commit", depth=1)
    commit.add_argument("--json", action="store_true", help="print JSON")

    serve = sub.add_parser(
        "serve-github",
        help="a local GitHub-compatible server (REST + Projects v2 GraphQL)",
        description="Serve a GitHub stand-in on 127.0.0.1 for tests and demos; the first line "
        "on stdout is `listening on http://127.0.0.1:PORT`.",
    )
    _add_globals(serve, "serve-github", depth=1)
    serve.add_argument("--port", type=int, default=0, help="port (default: 0, a free one)")
    serve.add_argument(
        "--state",
        type=Path,
        metavar="FILE",
        help="keep the world in this JSON file (loaded if it exists, saved after "
        "each change); default: the demo's sample world, in memory",
    )
    serve.add_argument(
        "--token",
        action="append",
        metavar="TOKEN",
        help="a token it accepts (repeatable; default: demo-token)",
    )
    serve.add_argument(
        "--fault",
        action="append",
        metavar="N:KIND",
        default=[],
        help="fail the Nth request, or TEXT:KIND every request whose "
        "`METHOD /path` (and GraphQL field) contains TEXT; KIND: 500, 502, "
        "ratelimit[=S], secondary, primary[=S], 429[=S], graphql-ratelimit[=S], "
        "graphql-timeout, timeout, drop, hang, repeat-cursor, null-node; "
        "optionally -after (applied, then failed) and *K (the first K "
        "only)",
    )
    serve.add_argument(
        "--automation-status",
        metavar="STATUS",
        help="a board automation: each new item gets this Status (e.g. Ready)",
    )
    serve.add_argument(
        "--automation-delay",
        type=float,
        default=0.0,
        metavar="S",
        help="seconds after the add that the automation moves an item (default: 0, on the add)",
    )
    serve.add_argument(
        "--lag",
        type=float,
        default=0.0,
        metavar="S",
        help="new board items are missing from reads for S seconds, as GitHub's "
        "eventual consistency can make them (default: 0)",
    )

    help_ = sub.add_parser(
        "help",
        help="a command's help: `scout help publish` is `scout publish --help`",
        description="A command's help: `scout help CMD [ACTION]` is `scout CMD [ACTION] "
        "--help`; `scout help` alone is `scout --help`.",
    )
    help_.add_argument("topic", nargs="*", metavar="CMD", help="a command (and its action)")
    completion = sub.add_parser(
        "completion",
        help="shell completion for bash, zsh or fish",
        description="Print the shell code that completes scout's commands and options "
        '(argcomplete). bash: `eval "$(scout completion bash)"` in ~/.bashrc; zsh: the '
        "same in ~/.zshrc; fish: `scout completion fish | source` in "
        "~/.config/fish/config.fish.",
    )
    completion.add_argument("shell", choices=("bash", "zsh", "fish"))
    demo = sub.add_parser(
        "demo",
        help="the whole loop on a generated sample repository",
        description="Build a small sample repository with a history, serve a local "
        "GitHub-compatible API for it (CI runs, issues, a Projects board), collect, and open "
        "the console on the result: every key works, publishing included, and nothing "
        "leaves this machine.",
    )
    demo.add_argument("--dir", type=Path, help="build the sample here (default: a temp dir)")
    _add_globals(demo, "demo", depth=1)
    demo.add_argument("--json", action="store_true", help="print the run as JSON")
    return parser
