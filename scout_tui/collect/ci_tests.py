"""Tests missing from CI (SPEC §2.1 item 3, "tests missing from CI").

Every `test_*.py` under the experiment's tests, down to the class, against what the
workflows' shell actually selects (file and `::Class` selectors, `-k`, `--deselect`). A
test CI ran at the baseline and no longer runs is the loudest finding; a commented-out
invocation says "disabled", with the commit that did it. Runners pytest does not collect and
tests gated on hardware only runners without it select: `collect/ci_reach.py`.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from scout_tui.analysis.ci.idle_steps import selected_and_skipped, suite_of
from scout_tui.analysis.ci.workflows import (
    Invocation,
    PytestFile,
    Selection,
    WorkflowError,
    invocations,
    read_test_file,
)
from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.experiment_tests import suite_entries
from scout_tui.analysis.text.markdown import code, fence
from scout_tui.collect.base import Collector, CollectorContext, Kind, Lifetime, Need, Progress
from scout_tui.collect.ci_reach import hardware_idle, runners_not_in_ci
from scout_tui.model import ConfigWarning, Evidence, FileRef, Finding, Section, fingerprint
from scout_tui.source.records import CommitInfo

WORKFLOWS_DIR = ".github/workflows"
MODULE_LEVEL = "module-level tests"


@dataclass
class _Gap:
    file: PytestFile
    groups: list[str]  # class names, or MODULE_LEVEL
    disabled_by: list[Invocation]
    ran_at_baseline: bool


def _groups(file: PytestFile) -> dict[str, list]:
    groups: dict[str, list] = {}
    for item in file.items:
        groups.setdefault(item.cls or MODULE_LEVEL, []).append(item)
    return groups


def _reimports(ctx: CollectorContext, paths: list[str]) -> dict[tuple[str, str], list[str]]:
    """(defining test file, class) → the test files that import that class at module level:
    pytest collects it there as well (`from .test_x import TestX  # noqa: F401`)."""
    by_stem: dict[str, list[str]] = {}
    for path in paths:
        by_stem.setdefault(path.rsplit("/", 1)[-1].removesuffix(".py"), []).append(path)
    found: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        tree = ctx.source.parse(path)
        for module, names in _imported_as_is(tree) if tree is not None else []:
            homes = by_stem.get(module.rsplit(".", 1)[-1], [])
            if len(homes) != 1 or homes[0] == path:
                continue
            for name in names:
                found.setdefault((homes[0], name), []).append(path)
    return found


@pyast.per_tree
def _imported_as_is(tree: ast.Module) -> list[tuple[str, list[str]]]:
    """The module-level `from M import N` (not renamed): (M, the names N)."""
    return [
        (node.module, [a.name for a in node.names if a.asname is None or a.asname == a.name])
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module
    ]


def _commented_in(text: str, workflow: str, line: str) -> bool:
    try:
        return any(inv.commented and inv.line == line for inv in invocations(workflow, text))
    except WorkflowError:
        return False


def _active(found: list[Invocation]) -> Selection:
    return Selection([invocation for invocation in found if not invocation.commented])


class _Workflows:
    """Invocations of every workflow file, at the work tree or at a commit."""

    def __init__(self, ctx: CollectorContext) -> None:
        self.ctx = ctx
        self.unreadable: dict[str, str] = {}

    def _files(self, commit: str | None) -> list[str]:
        if commit is None:
            return self.ctx.source.glob(WORKFLOWS_DIR, "*.y*ml")
        return [
            f"{WORKFLOWS_DIR}/{name}"
            for name in self.ctx.source.files_at(commit, WORKFLOWS_DIR)
            if name.endswith((".yml", ".yaml"))
        ]

    def at(self, commit: str | None) -> list[Invocation]:
        found: list[Invocation] = []
        for path in self._files(commit):
            read = (
                self.ctx.source.read
                if commit is None
                else (lambda p, c=commit: self.ctx.source.read_at(c, p))
            )
            text = read(path)
            if text is None:
                continue
            try:
                found += invocations(path, text)
            except WorkflowError as exc:
                if commit is None:
                    self.unreadable[path] = str(exc)
        return found


# What a hand-written item that says a test does not run in CI reads like. Every test class
# and test file is checked for CI coverage, so such an item can be Resolved like scout's own.
_CI_WORDS = re.compile(
    r"\b(?:no longer runs?|never runs?|not (?:run|in) ci|dropped from ci|"
    r"disabled in ci|missing from ci|(?:re-?enable|add|restore)\b.*\bin ci)\b",
    re.I,
)
_TEST_NAME = re.compile(r"`?\b(Test[A-Z]\w+|test_\w+\.py)\b`?")


def said_not_in_ci(title: str) -> bool:
    return bool(_CI_WORDS.search(title) and _TEST_NAME.search(title))


class CiTestsCollector(Collector):
    name = "ci_tests"
    title = "Tests missing from CI"
    section = Section.ACTION_ITEMS
    shares, cost = "tests", 5  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (
        Kind("test_dropped_from_ci", Lifetime.NEWS),
        Kind("test_not_in_ci", said_by=said_not_in_ci),
        Kind("test_classes_not_in_ci", said_by=said_not_in_ci),
        Kind("test_disabled_in_ci"),
        Kind("workflow_unreadable"),
        Kind("ci_step_runs_nothing"),
        Kind("ci_steps_idle"),
        Kind("test_files_not_in_ci"),
        Kind("test_runner_not_in_ci"),
        Kind("test_hardware_idle"),
    )

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress | ConfigWarning]:
        workflows = _Workflows(ctx)
        now = workflows.at(None)
        active = [inv for inv in now if not inv.commented]
        commented = [inv for inv in now if inv.commented]
        at_baseline = (
            [inv for inv in workflows.at(ctx.baseline_commit) if not inv.commented]
            if (ctx.baseline_commit)
            else []
        )
        for path, reason in workflows.unreadable.items():
            yield ctx.finding(
                self.name,
                "workflow_unreadable",
                (path,),
                f"Workflow {code(path)} could not be read",
                f"{reason}; its tests count as absent.",
                files=[FileRef(path=path)],
            )
        tests_dir = ctx.config.experiment_path(ctx.config.ci.tests_dir)
        paths = ctx.source.glob(tests_dir, "test_*.py")
        never_run: list[_Gap] = []
        selection, disabled, before = (
            Selection(active),
            Selection(commented),
            Selection(at_baseline),
        )
        imported_into = _reimports(ctx, paths)
        for done, path in enumerate(paths, 1):
            file = read_test_file(path, ctx.source.parse(path))
            gaps = self._gap(file, selection, disabled, before, imported_into) or []
            dropped = [gap for gap in gaps if gap.ran_at_baseline]
            if len(dropped) > 1:
                # Classes of one file dropped from several steps: one problem, one finding
                # (yesterday's one-per-step markers kept as aliases).
                merged = _Gap(
                    file,
                    [g for gap in dropped for g in gap.groups],
                    [i for gap in dropped for i in gap.disabled_by],
                    True,
                )
                finding = self._finding(ctx, merged)
                yield finding.model_copy(
                    update={
                        "aliases": sorted(
                            {
                                *finding.aliases,
                                *(
                                    fingerprint("test_dropped_from_ci", path, *gap.groups)
                                    for gap in dropped
                                ),
                            }
                        )
                    }
                )
                gaps = [gap for gap in gaps if not gap.ran_at_baseline]
            for gap in gaps:
                whole = len(gap.groups) == len(_groups(gap.file))
                if whole and not gap.ran_at_baseline and not gap.disabled_by:
                    never_run.append(gap)  # reported together below: one problem, one list
                else:
                    yield self._finding(ctx, gap)
            yield Progress(self.name, done, len(paths), path)
        if never_run:
            # A test file added inside the window that no step runs is today's task; the
            # ones that never ran since before it are a standing line.
            base = ctx.baseline_commit
            new = [
                g
                for g in never_run
                if base is None or ctx.source.read_at(base, g.file.path) is None
            ]
            old = [g for g in never_run if g not in new]
            if new:
                yield self._never_run(ctx, tests_dir, new, "test_not_in_ci")
            if old:
                yield self._never_run(ctx, tests_dir, old, "test_files_not_in_ci")
        yield from self._idle(ctx, selection, before, paths)
        texts = {
            path: text
            for path in ctx.source.glob(WORKFLOWS_DIR, "*.y*ml")
            if (text := ctx.source.read(path)) is not None
        }
        yield from runners_not_in_ci(ctx, self.name, texts)
        yield from hardware_idle(ctx, self.name, texts, paths)

    def _idle_steps(
        self, ctx: CollectorContext, commit: str | None, selection: Selection, paths: list[str]
    ) -> dict[tuple[str, str], str]:
        """The steps that run zero tests (at HEAD, or at `commit`): every pytest item they
        select skipped without a condition, or every entry of the suite they run disabled.
        (workflow, line) → what it selects, in words."""

        def parse(path: str) -> ast.Module | None:
            return ctx.source.parse(path) if commit is None else ctx.source.parse_at(commit, path)

        counts: dict[Invocation, list[int]] = {}
        pytest = tuple(i for i in selection.invocations if i.kind == "pytest")
        for path in paths:
            for invocation, chosen, skipped in selected_and_skipped(path, parse(path), pytest):
                count = counts.setdefault(invocation, [0, 0])
                count[0] += chosen
                count[1] += skipped
        idle = {
            (inv.workflow, inv.line): f"selects {chosen} test(s), each skipped without a condition"
            for inv, (chosen, skipped) in counts.items()
            if chosen and skipped == chosen
        }
        experiment = ctx.config.project.experiment.rstrip("/") + "/"
        for invocation in selection.invocations:
            suite = suite_of(invocation)
            if suite is None or not invocation.selectors[0].startswith(experiment):
                continue  # another experiment's suite is not this one's business
            entries = suite_entries(parse(invocation.selectors[0]), suite)
            if entries and all(entry.disabled for entry in entries):
                names = ", ".join(code(e.name or f"line {e.line}") for e in entries[:6])
                idle[(invocation.workflow, invocation.line)] = (
                    f"runs suite {code(suite)}, whose {len(entries)} "
                    f"entr{'ies are' if len(entries) != 1 else 'y is'} all disabled ({names})"
                )
        return idle

    def _idle(
        self, ctx: CollectorContext, selection: Selection, before: Selection, paths: list[str]
    ) -> Iterator[Finding]:
        """Steps that are green having run nothing: the ones that ran tests at the baseline
        are news (P1); the ones idle since before it are one standing line (P2)."""
        now = self._idle_steps(ctx, None, selection, paths)
        if not now:
            return
        was = (
            self._idle_steps(ctx, ctx.baseline_commit, before, paths) if ctx.baseline_commit else {}
        )
        since = ctx.since.date()
        # A command that is the same as at the baseline went idle because the tests it
        # selects were switched off since: the switched-off tests' news, not its own.
        unchanged = {(i.workflow, i.line) for i in before.invocations}
        groups = [
            (
                "ci_step_runs_nothing",
                [k for k in now if k not in was and k not in unchanged],
                lambda n: (
                    f"{'A CI command runs' if n == 1 else f'{n} CI commands run'} zero tests "
                    f"since {since}: what {'it selects is' if n == 1 else 'they select is'} all "
                    "skipped or disabled"
                ),
            ),
            (
                "ci_steps_idle",
                [k for k in now if k in was],
                lambda n: (
                    f"{'A CI command has' if n == 1 else f'{n} CI commands have'} long run "
                    f"zero tests: what {'it selects is' if n == 1 else 'they select is'}"
                    " all skipped or disabled"
                ),
            ),
        ]
        for kind, steps, title in groups:
            if not steps:
                continue
            lines = "\n".join(
                f"- {code(line)} in {code(workflow)} {now[(workflow, line)]}"
                for workflow, line in sorted(steps)
            )
            finding = ctx.finding(
                self.name,
                kind,
                (ctx.config.experiment_path(ctx.config.ci.tests_dir),),
                title(len(steps)),
                f"{lines}\n\nEach passes having run nothing"
                + (f", as it did before {since}." if kind == "ci_steps_idle" else "."),
                suggested_fix="Re-enable what they select once it can run, and make sure that is "
                "tracked; keeping the steps keeps the re-enable one line.",
                files=[FileRef(path=workflow) for workflow in sorted({w for w, _ in steps})],
                items=[line for _, line in sorted(steps)],
            )
            # Yesterday's one-finding-per-step markers still match.
            yield finding.model_copy(
                update={
                    "aliases": sorted(
                        {
                            *finding.aliases,
                            *(fingerprint("ci_step_runs_nothing", w, line) for w, line in steps),
                        }
                    )
                }
            )

    def _gap(
        self,
        file: PytestFile,
        active: Selection,
        commented: Selection,
        at_baseline: Selection,
        imported_into: dict[tuple[str, str], list[str]] | None = None,
    ) -> list[_Gap] | None:
        missing: dict[tuple[bool, tuple], list[str]] = {}
        disabled: dict[tuple[bool, tuple], list[Invocation]] = {}
        for group, items in _groups(file).items():
            # A class another test module imports is collected there too, under its path.
            homes = (imported_into or {}).get((file.path, group), [])
            if active.runs(items) or any(
                active.runs([replace(item, path=home) for item in items]) for home in homes
            ):
                continue
            ran_before = at_baseline.runs(items)
            by = tuple(commented.selecting(items))
            key = (ran_before, tuple(inv.line for inv in by))
            missing.setdefault(key, []).append(group)
            disabled[key] = list(by)
        if not missing:
            return None
        return [_Gap(file, groups, disabled[key], key[0]) for key, groups in missing.items()]

    def _never_run(
        self, ctx: CollectorContext, tests_dir: str, gaps: list[_Gap], kind: str
    ) -> Finding:
        names = [gap.file.path.rsplit("/", 1)[-1] for gap in gaps]
        workflow = (ctx.config.ci.workflows or [WORKFLOWS_DIR + "/<workflow>.yaml"])[0]
        lines = "\n".join(f"pytest {gap.file.path} -v" for gap in gaps)
        listing = "\n".join(
            f"- {code(name)}: " + ", ".join(code(g) for g in gap.groups)
            for name, gap in zip(names, gaps, strict=True)
        )
        count = f"{len(gaps)} test file{'s' if len(gaps) != 1 else ''}"
        since = ctx.since.date()
        title = (
            f"{count} added since {since} never run in CI"
            if kind == "test_not_in_ci" and ctx.baseline_commit
            else f"{count} never run in CI"
        )
        # A standing gap's title carries no date: the window's start moves every day, and
        # the title is the board card's.
        standing = (
            f"\n\nNone of them was run in CI before {since} either: a standing gap."
            if kind == "test_files_not_in_ci"
            else ""
        )
        finding = ctx.finding(
            self.name,
            kind,
            (tests_dir,),
            title,
            f"No workflow invocation selects these files:\n\n{listing}{standing}",
            suggested_fix=f"Add to {code(workflow)}:\n\n{fence(lines, 'bash')}",
            files=[FileRef(path=gap.file.path) for gap in gaps],
            items=names,
        )
        if kind == "test_not_in_ci":
            return finding
        # Yesterday's marker, from when both were one finding, still matches the standing one.
        return finding.model_copy(
            update={"aliases": sorted({*finding.aliases, fingerprint("test_not_in_ci", tests_dir)})}
        )

    def _finding(self, ctx: CollectorContext, gap: _Gap) -> Finding:
        path = gap.file.path
        name = path.rsplit("/", 1)[-1]
        whole = len(gap.groups) == len(_groups(gap.file))
        what = code(name) if whole else ", ".join(code(g) for g in gap.groups) + f" in {code(name)}"
        suggestion = self._suggestion(ctx, path, gap.groups, whole)
        files = [FileRef(path=path)]
        if gap.ran_at_baseline:
            culprit = self._dropped_by(ctx, gap)
            by = f" by {code(culprit.sha[:10])} ({culprit.summary})" if culprit else ""
            workflows = list(dict.fromkeys(i.workflow for i in gap.disabled_by))
            how = (
                f"; the line{'s are' if len(gap.disabled_by) > 1 else ' is'} commented out in "
                + ", ".join(code(w) for w in workflows)
                if workflows
                else ""
            )
            return ctx.finding(
                self.name,
                "test_dropped_from_ci",
                (path, *gap.groups),
                f"{what} no longer runs in CI",
                f"CI ran it at the baseline ({ctx.since.date()}); it was dropped{by}{how}.",
                suggested_fix=suggestion,
                files=files,
                items=gap.groups,
            )
        # The problem the day it happened was news ("no longer runs"): once the baseline
        # moves past it, the same problem under its standing name carries that item on.
        dropped = [fingerprint("test_dropped_from_ci", path, *gap.groups)]
        if gap.disabled_by:
            invocation = gap.disabled_by[0]
            culprit = ctx.source.since_when(
                invocation.workflow,
                functools.partial(
                    _commented_in, workflow=invocation.workflow, line=invocation.line
                ),
            )
            by = f", since {code(culprit.sha[:10])} ({culprit.summary})" if culprit else ""
            return ctx.finding(
                self.name,
                "test_disabled_in_ci",
                (path, *gap.groups),
                f"{what} is disabled in CI",
                f"Commented out in {code(invocation.workflow)}{by}:\n\n"
                f"{code('# ' + invocation.line)}",
                suggested_fix=suggestion,
                files=files,
                items=gap.groups,
                evidence=Evidence(context=invocation.line),
                aliases=dropped,
            )
        # Classes a selection leaves out of a file CI runs: often by choice, a lesser task
        # than a file nothing runs.
        kind = "test_not_in_ci" if whole else "test_classes_not_in_ci"
        return ctx.finding(
            self.name,
            kind,
            (path, *gap.groups),
            f"{what} never runs in CI",
            "No workflow invocation selects "
            + ("this file." if whole else "these classes (file selectors, `-k`, `--deselect`)."),
            suggested_fix=suggestion,
            files=files,
            items=gap.groups,
            aliases=[
                *dropped,
                *([] if whole else [fingerprint("test_not_in_ci", path, *gap.groups)]),
            ],
        )

    @staticmethod
    def _suggestion(ctx: CollectorContext, path: str, groups: list[str], whole: bool) -> str:
        workflow = (ctx.config.ci.workflows or [WORKFLOWS_DIR + "/<workflow>.yaml"])[0]
        if whole or groups == [MODULE_LEVEL]:
            line = f"pytest {path} -v"
        else:
            line = " ".join(f"{path}::{group}" for group in groups if group != MODULE_LEVEL)
            line = f"pytest {line} -v"
        return f"Add to {code(workflow)}: {code(line)}"

    @staticmethod
    def _dropped_by(ctx: CollectorContext, gap: _Gap) -> CommitInfo | None:
        """The workflow commit in the window after which the file stopped running."""
        items = [item for item in gap.file.items if (item.cls or MODULE_LEVEL) in gap.groups]
        workflows = _Workflows(ctx)
        commits = ctx.source.log(ctx.baseline_commit, ctx.head_commit, [WORKFLOWS_DIR])
        for commit in reversed(commits):  # oldest first
            before = _active(workflows.at(commit.sha + "^"))
            if before.runs(items) and not _active(workflows.at(commit.sha)).runs(items):
                return commit
        return None
