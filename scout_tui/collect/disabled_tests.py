"""The tests that do not run, as one finding: the experiment's disabled integration entries
and its unit tests skipped without a condition, grouped by switch with the reasons the code
gives, and how they moved since the baseline (the ones newly off are news of their own)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from scout_tui.analysis.python.experiment_tests import (
    Disabled,
    disabled_entries,
    override_definitions,
    runner_entries,
    skipped_tests,
)
from scout_tui.analysis.text.markdown import code
from scout_tui.analysis.text.mentions import mentions
from scout_tui.analysis.text.todos import Reference, Todo, classify
from scout_tui.collect.base import CollectorContext
from scout_tui.model import WORSENED, FileRef, Finding

REASON_CHARS = 200  # a code comment quoted as a reason: its gist, not its essay


def _gist(reason: str) -> str:
    if len(reason) <= REASON_CHARS:
        return reason
    cut = reason[:REASON_CHARS].rsplit(" ", 1)[0]
    if cut.count("`") % 2:  # never inside a code span
        cut = cut.rsplit("`", 1)[0]
    return cut.rstrip(" ,;:(") + " …"


def _finds(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda text: pattern.search(text) is not None


def _not_running(
    ctx: CollectorContext, commit: str | None, integration: str, unit_paths: list[str]
) -> tuple[list[Disabled], int, list[Disabled]]:
    """(disabled integration entries, all entries, unit tests skipped) in the work
    tree (commit None) or at a commit."""
    source = ctx.source

    def read(path: str) -> tuple[str, ast.Module | None]:
        if commit is None:
            return source.read(path) or "", source.parse(path)
        return source.read_at(commit, path) or "", source.parse_at(commit, path)

    entries: list[Disabled] = []
    total = 0
    if integration:
        text, tree = read(integration)
        entries = list(disabled_entries(integration, text, tree))  # shared: not to extend
        total = len(override_definitions(tree))
    skipped: list[Disabled] = []
    for path in unit_paths:
        text, tree = read(path)
        # Other runners' own test definitions (`PrecompileTestDefinition(…, disabled=True)`):
        # integration tests too.
        off, there = runner_entries(path, text, tree)
        entries += off
        total += there
        skipped += skipped_tests(path, tree, text)
    return entries, total, skipped


def _key(d: Disabled) -> str:
    return f"{d.path.rsplit('/', 1)[-1]}::{d.name}"


def _renamed(
    ctx: CollectorContext,
    now: list[Disabled],
    was: list[Disabled],
    newly: list[str],
    back: list[str],
) -> dict[str, str]:
    """Tests off now under a new name that were off before under an old one no file still
    names, for the same reason (or by the same switch): a rename, not a test switched off.
    New name → old name."""
    by_key = {_key(d): d for d in now} | {f"was:{_key(d)}": d for d in was}
    gone = {
        key
        for key in back
        if not mentions(ctx.source.read(by_key[f"was:{key}"].path) or "", key.split("::", 1)[1])
    }
    renamed: dict[str, str] = {}
    for key in newly:
        new = by_key[key]
        old = next(
            (
                other
                for other in sorted(gone - set(renamed.values()))
                if (was_off := by_key[f"was:{other}"]).path == new.path
                and (was_off.reason, was_off.switch) == (new.reason, new.switch)
            ),
            None,
        )
        if old is not None:
            renamed[key] = old
    return renamed


def disabled_findings(
    ctx: CollectorContext, collector: str, integration: str, unit_paths: list[str]
) -> Iterator[Finding]:
    """One finding for every test that does not run — disabled integration entries,
    unit tests skipped without a condition — with the reasons the code gives, and how
    the count moved since the baseline."""
    entries, total, skipped = _not_running(ctx, None, integration, unit_paths)
    if not entries and not skipped:
        return
    count = len(entries) + len(skipped)
    title = (
        f"{len(entries)} of {total} integration tests disabled, {len(skipped)} unit "
        f"test{'s' if len(skipped) != 1 else ''} skipped"
    )
    status_update = None
    newly: list[str] = []
    back: list[str] = []
    renamed: dict[str, str] = {}
    if ctx.baseline_commit:
        was, _, was_skipped = _not_running(ctx, ctx.baseline_commit, integration, unit_paths)
        before = len(was) + len(was_skipped)
        since = ctx.since.date()
        # Which ones changed, by name: a count alone hides this week's news.
        now_names = {f"{d.path.rsplit('/', 1)[-1]}::{d.name}" for d in [*entries, *skipped]}
        was_names = {f"{d.path.rsplit('/', 1)[-1]}::{d.name}" for d in [*was, *was_skipped]}
        # A test of a class that was skipped whole is not newly off when it alone stays
        # skipped after the class comes back.
        newly = sorted(n for n in now_names - was_names if n.rsplit(".", 1)[0] not in was_names)
        back = sorted(was_names - now_names)
        renamed = _renamed(ctx, [*entries, *skipped], [*was, *was_skipped], newly, back)
        newly = [n for n in newly if n not in renamed]
        back = [n for n in back if n not in renamed.values()]
        if count > before:
            title += f" (+{count - before} since {since})"
            status_update = f"{WORSENED}: {before} → {count} since {since}"
        elif count < before:
            title += f" ({count - before} since {since})"
            status_update = f"improving: {before} → {count} since {since}"
    lines: list[str] = []
    if ctx.baseline_commit and renamed:
        lines.append(
            f"Renamed while off since {ctx.since.date()}: "
            + ", ".join(f"{code(old)} → {code(new)}" for new, old in sorted(renamed.items()))
        )
    if ctx.baseline_commit and (newly or back):
        if newly:
            lines.append(
                f"Newly off since {ctx.since.date()}: "
                + ", ".join(code(n) for n in newly[:12])
                + (f" and {len(newly) - 12} more" if len(newly) > 12 else "")
            )
        if back:
            lines.append(
                f"Running again since {ctx.since.date()}: "
                + ", ".join(code(n) for n in back[:12])
                + (f" and {len(back) - 12} more" if len(back) > 12 else "")
            )
        lines.append("")
    if entries:
        files = ", ".join(
            code(p) for p in dict.fromkeys([integration, *(d.path for d in entries)]) if p
        )
        lines.append(f"Integration tests ({files}), {len(entries)} of {total} disabled:")
        lines += _groups(ctx, integration, entries)
    if skipped:
        lines.append(f"\nUnit tests skipped without a condition, {len(skipped)}:")
        lines += _groups(ctx, None, skipped)
    finding = ctx.finding(
        collector,
        "tests_disabled",
        (ctx.config.project.experiment,),
        title,
        "\n".join(lines).strip(),
        files=[FileRef(path=d.path, line=d.line) for d in [*entries, *skipped]][:50],
        items=sorted(f"{d.path.rsplit('/', 1)[-1]}::{d.name}" for d in [*entries, *skipped]),
    )
    yield (
        finding.model_copy(update={"status_update": status_update}) if status_update else finding
    )
    if newly:
        # Tests switched off inside the window are this week's news: something the
        # experiment could do stopped being checked. One Action Item, with why; awareness
        # when each one's reason names where its re-enable is tracked.
        off = [d for d in [*entries, *skipped] if f"{d.path.rsplit('/', 1)[-1]}::{d.name}" in newly]
        reasons = sorted({d.reason for d in off if d.reason})
        trackers = [_tracked_in(ctx, d.reason) for d in off]
        tracked = all(trackers)
        yield ctx.finding(
            collector,
            "tests_disabled_tracked" if tracked else "tests_newly_disabled",
            (ctx.config.project.experiment,),
            f"{len(newly)} test{'s' if len(newly) != 1 else ''} switched off since "
            f"{ctx.since.date()}: "
            + ", ".join(code(n.split("::", 1)[1]) for n in newly[:3])
            + (f" (+{len(newly) - 3} more)" if len(newly) > 3 else ""),
            "Newly disabled or skipped without a condition:\n\n"
            + "\n".join(f"- {code(n)}" for n in newly)
            + (
                "\n\nWhy, as the code says:\n\n" + "\n".join(f"- {r}" for r in reasons)
                if reasons
                else "\n\nThe code gives no reason."
            )
            + "\n\nWhat these tests covered is unchecked until they run again."
            + (
                "\n\nTheir re-enable is tracked in "
                + ", ".join(code(str(r)) for r in dict.fromkeys(r for t in trackers for r in t))
                + "."
                if tracked
                else ""
            ),
            suggested_fix=""
            if tracked
            else "Track the re-enable (an issue per reason), or fix what broke.",
            files=[FileRef(path=d.path, line=d.line) for d in off][:20],
            items=newly,
        )


def _tracked_in(ctx: CollectorContext, reason: str) -> list[Reference]:
    """The issues or PRs a reason says the test waits on (not the change that broke it)."""
    config = ctx.config.todos
    todo = classify(
        Todo(path="", line=0, marker="", text=reason), config.bare_ref_repo, config.named_refs
    )
    return todo.references


def _groups(ctx: CollectorContext, integration: str | None, disabled: list[Disabled]) -> list[str]:
    """A line per switch and reason: how many, since when, why, which."""
    groups: dict[tuple[str, str], list[Disabled]] = {}
    for item in disabled:
        where = item.switch if integration else item.path.rsplit("/", 1)[-1]
        groups.setdefault((where, item.reason), []).append(item)
    lines = []
    for (where, reason), items in sorted(groups.items(), key=lambda g: -len(g[1])):
        since = ""
        constant = re.fullmatch(r"[A-Za-z_]\w*", where)
        if integration and constant and where not in ("True", "False"):
            switched_on = re.compile(rf"^{where}\s*=\s*True\b", re.M)
            commit = ctx.source.since_when(integration, _finds(switched_on))
            since = f", since {commit.date.date()} ({code(commit.sha[:10])})" if commit else ""
        label = code(f"disabled={where}") if integration else code(where)
        why = f": {_gist(reason)}" if reason else " (no reason given in the code)"
        # One a line: the report cuts a long list, the JSON and the console keep it.
        lines.append(f"- {len(items)} by {label}{since}{why}")
        lines += [f"  - {code(i.name)}" for i in items]
    return lines
