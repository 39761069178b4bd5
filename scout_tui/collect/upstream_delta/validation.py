"""New upstream validation that the experiment's own test commands would now fail: a
`raise` or `assert` added in a config class (or code beside it, where a config manager
lives) whose condition the options of an enabled integration test make true, where no
check at the baseline rejected that command."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scout_tui.analysis.python.changes import CheckAdded
from scout_tui.analysis.python.checks import Check, checks, command_options, fires
from scout_tui.analysis.python.dependencies import Dependency
from scout_tui.analysis.python.experiment_tests import override_definitions
from scout_tui.analysis.python.relevance import Dependence
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import CollectorContext
from scout_tui.collect.upstream_delta.judge import Verdict
from scout_tui.collect.upstream_delta.surfaces import under
from scout_tui.config.models import Surface
from scout_tui.model import Finding
from scout_tui.source.records import CommitInfo

Changed = Callable[..., Finding]  # the collector's Action Item of a surface change


@dataclass(frozen=True)
class Rejection:
    path: str
    check: Check
    tests: tuple[str, ...]  # "`name` (`--a.b 2`, `--c.d`)" of each test it rejects
    by: tuple[CommitInfo, ...]  # the commits of the window that brought the check


def _directory(path: str) -> str:
    return path.rpartition("/")[0]


def rejections(
    ctx: CollectorContext,
    dependencies: list[Dependency],
    base: str,
    head: str,
    changed_files: set[str],
) -> Iterator[Rejection]:
    """The checks added since the baseline that reject an enabled test command of the
    experiment which no baseline check rejected."""
    name = ctx.config.coverage.experiment_integration_tests
    tests = override_definitions(ctx.source.parse(ctx.config.experiment_path(name))) if name else []
    commands = [
        (test.name or f"line {test.line}", command_options(run), run)
        for test in tests
        if not test.disabled
        for run in test.commands
    ]
    commands = [c for c in commands if c[1]]
    configs = [d for d in dependencies if d.check == "fields"]
    if not commands or not configs:
        return
    prefixes = {d.qualname: d.option_prefix for d in configs}
    known = frozenset(d.option_prefix for d in configs if d.option_prefix)
    # Where the configs reached through a root's fields live, a config manager may too:
    # any function there counts; elsewhere only a config class's own methods do.
    homes = {_directory(d.path) for d in configs if d.option_prefix}
    defined = {d.path for d in configs}
    experiment = ctx.config.project.experiment
    files = sorted(
        p
        for p in changed_files
        if p.endswith(".py")
        and (_directory(p) in homes or p in defined)
        and not under(p, [experiment])
    )
    for path in files:
        anywhere = _directory(path) in homes
        now = _validating(ctx.source.parse(path), prefixes, known, anywhere)
        if not now:
            continue
        then = _validating(ctx.source.parse_at(base, path), prefixes, known, anywhere)
        rejected: dict[Check, list[str]] = {}
        for test, options, run in commands:
            if any(fires(check, options) for check in then):
                continue  # failing before the window: not this window's news
            hit = next((check for check in now if fires(check, options)), None)
            if hit is not None:
                flags = ", ".join(code(s) for s in run if s.startswith("--") and "." in s)
                rejected.setdefault(hit, []).append(f"{code(test)} ({flags})")
        for check, names in rejected.items():
            yield Rejection(
                path, check, tuple(names), tuple(_brought(ctx, path, check, base, head))
            )


def _validating(
    tree: ast.Module | None, prefixes: dict[str, str], known: frozenset[str], anywhere: bool
) -> list[Check]:
    """A module's checks: all of them (`anywhere`), or those of its config classes."""
    return [
        c
        for c in checks(tree, prefixes, known)
        if anywhere or c.where.rpartition(".")[0] in prefixes
    ]


def _brought(
    ctx: CollectorContext, path: str, check: Check, base: str, head: str
) -> list[CommitInfo]:
    """The commits of the window after which the check's condition is there and before
    which it was not."""
    condition = check.condition
    found = []
    for commit in ctx.source.log(base, head, [path]):

        def has(at: str) -> bool:
            tree = ctx.source.parse_at(at, path)
            return any(c.condition == condition for c in checks(tree, {}, frozenset()))

        if has(commit.sha) and not has(commit.sha + "^"):
            found.append(commit)
    return found


def rejected(
    ctx: CollectorContext, rejection: Rejection, base: str, head: str, changed: Changed
) -> Finding:
    """A check added upstream that an enabled test of the experiment now fails."""
    check = rejection.check
    change = CheckAdded(check.where, check.condition)
    tests = rejection.tests
    because = f"it rejects the integration test {tests[0]}" + (
        f" (+{len(tests) - 1} more)" if len(tests) > 1 else ""
    )
    surface = Surface(
        name=f"{code(check.where)} checks",
        target=f"{rejection.path}::{check.where}",
        check="signature",
    )
    verdict = Verdict([Dependence(change, because, broken=True)], [], list(rejection.by))
    finding = changed(
        ctx,
        surface,
        (surface.target, "check", check.condition),
        [change],
        verdict,
        base,
        head,
        check.line,
        "The experiment's integration tests set options this new upstream check "
        "rejects (read from the tests' flags; options they leave to a config file are "
        "not guessed):\n" + "\n".join(f"- {test}" for test in tests) + "\n\n",
    )
    return finding.model_copy(
        update={
            "suggested_fix": "Run the test with options the check accepts, or disable it "
            "saying why; if the combination should work, raise it upstream with the "
            "commit that added the check."
        }
    )
