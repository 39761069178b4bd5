"""One judgement for every surface, watched in scout.toml or discovered from the
experiment's imports: what of a surface's changes the experiment depends on today, and
which of them the commit that made them already adapted it to."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from scout_tui.analysis.python.attributes import inherited_reads, provided_with_bases
from scout_tui.analysis.python.changes import Change, Removed, named
from scout_tui.analysis.python.dependencies import OptionIndex, class_at, option_uses
from scout_tui.analysis.python.relevance import Dependence, Uses, depended_on, uses_of
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
    uses = uses_of(modules, outer, member, mention=parts[0])
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
    deps = depended_on(changes, uses, *positions(old))
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
