"""One judgement for every surface, watched in scout.toml or discovered from the
experiment's imports: what of a surface's changes the experiment depends on today, and
which of them the commit that made them already adapted it to."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.attributes import inherited_reads, provided_with_bases
from scout_tui.analysis.python.changes import Change, DefaultChanged, Removed, named
from scout_tui.analysis.python.dependencies import OptionIndex, class_at, option_uses
from scout_tui.analysis.python.gates import gates, off_switches
from scout_tui.analysis.python.relevance import (
    SPLAT,
    Dependence,
    Uses,
    depended_on,
    uses_of,
)
from scout_tui.collect.base import CollectorContext
from scout_tui.collect.upstream_delta.surfaces import adapts, changes_by_commit, positions
from scout_tui.config.models import Surface
from scout_tui.source.records import CommitInfo


@dataclass
class Verdict:
    deps: list[Dependence]  # what the experiment depends on today, not adapted to
    adapted: list[Dependence]  # ... adapted to in the commit that made the change
    by: list[CommitInfo]  # the commits that changed the surface
    adapting: dict[str, CommitInfo] = field(default_factory=dict)  # `adapted_key` → commit

    def adapted_in(self, change: Change) -> CommitInfo | None:
        return self.adapting.get(adapted_key(change))


def adapted_key(change: Change) -> str:
    """What a change is matched by across commits: its name (a field's default changed
    twice is one change of the window), or its kind for a change of the whole."""
    return named(change) or type(change).__name__


def uses_for(
    modules: dict[str, ast.Module],
    surface: Surface,
    option_prefix: str,
    index: OptionIndex | None,
) -> Uses:
    """How the experiment uses one surface: by its name where it names it, and for a
    config, through the option prefix it reaches it by (`--prefix.x`, `cfg.prefix.x`)."""
    parts = surface.qualname.split(".")
    if surface.check == "attributes":
        # What its subclasses read of the instance and never set themselves.
        return Uses(names=dict(inherited_reads(modules, parts[-1])))
    if surface.check in ("signature", "returns"):
        outer, member = (parts[-2] if len(parts) > 1 else ""), parts[-1]
    else:
        outer, member = parts[-1], ""
    uses = uses_of(modules, outer, member, mention=parts[0], typed_reads=surface.check == "fields")
    if surface.check == "fields":
        enclosing = parts[-2] if len(parts) > 1 else ""
        by_option = option_uses(modules, parts[-1], option_prefix, index, enclosing)
        for name, places in by_option.names.items():
            uses.names.setdefault(name, []).extend(places)
        for name, values in by_option.values.items():
            uses.values.setdefault(name, set()).update(values)
        uses.reads |= by_option.reads
        uses.constructions += [c for c in by_option.constructions if c not in uses.constructions]
    return uses


def inherited(
    ctx: CollectorContext, surface: Surface, new: ast.AST, changes: list[Change], uses: Uses
) -> list[Change]:
    """Of an attributes surface's changes, those that can break the experiment: an
    attribute its subclasses read that the class no longer sets, nor any base class scout
    can locate (moved up a level, it is still there). Others of any surface pass."""
    if surface.check != "attributes" or not isinstance(new, ast.ClassDef):
        return changes
    gone = [c for c in changes if isinstance(c, Removed) and c.name in uses.names]
    if not gone:
        return []
    tree = ctx.source.parse(surface.path)
    still = provided_with_bases(tree, new, lambda m, t: class_at(m, t, ctx.source.parse))
    return [c for c in gone if c.name not in still]


def judge(
    ctx: CollectorContext,
    surface: Surface,
    old: ast.AST,
    changes: list[Change],
    uses: Uses,
    commits: list[CommitInfo],
) -> Verdict:
    """The changes the experiment depends on, less those the commit that made them adapted
    it to. A commit adapts its changes when it also changed experiment lines naming the
    surface or what changed; yet what today's tree still uses of a removal (or a tuple it
    still unpacks at the old size) is broken today, whatever that commit did: a use
    re-added later in the window is not adapted."""
    deps = [
        dep
        for dep in depended_on(changes, uses, *positions(old))
        if not _behind_switch(ctx, surface, dep.change, uses)
    ]
    made = changes_by_commit(ctx, surface, commits)
    experiment = ctx.config.project.experiment
    adapting: dict[str, CommitInfo] = {}
    for commit, its in made:
        names = tuple(sorted({name for c in its if (name := named(c))}))
        if adapts(ctx, commit, surface, experiment, names):
            for change in its:
                adapting.setdefault(adapted_key(change), commit)
    verdict = Verdict([], [], [commit for commit, _ in made], adapting)
    for dep in deps:
        excused = verdict.adapted_in(dep.change) is not None and not dep.broken
        (verdict.adapted if excused else verdict.deps).append(dep)
    return verdict


def _a_test(path: str) -> bool:
    parts = path.split("/")
    return any(part in ("test", "tests") for part in parts[:-1]) or parts[-1].startswith("test_")


def _behind_switch(ctx: CollectorContext, surface: Surface, change: Change, uses: Uses) -> bool:
    """A field default's change that no construction of the experiment's can see: every
    read of the field in the tree waits behind a switch of the same config that is off by
    default, and each construction leaving the field out leaves that switch off too."""
    if not isinstance(change, DefaultChanged) or surface.check != "fields":
        return False
    node = pyast.find(ctx.source.parse(surface.path), surface.qualname)
    switches = off_switches(node) if isinstance(node, ast.ClassDef) else frozenset()
    if not switches:
        return False
    behind: set[str] | None = None
    experiment = ctx.config.project.experiment.rstrip("/") + "/"
    for path in ctx.source.grep_files(change.name):
        if not path.startswith(experiment) and _a_test(path):
            continue  # another part's tests read it to check it, not to run with it
        tree = ctx.source.parse(path)
        if tree is None:
            return False  # a file scout cannot read may read it unguarded
        held = gates(tree, change.name, switches)
        if held is not None:
            behind = held if behind is None else behind & held
    if not behind:
        return False
    omitting = [kw for _, _, kw in uses.constructions if change.name not in kw]
    return all(
        SPLAT not in kw
        and not any(s in kw and uses.values.get(s, {"True"}) != {"False"} for s in behind)
        for kw in omitting
    )
