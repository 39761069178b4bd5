"""The upstream delta collector: what changed upstream since the baseline, and whether the
experiment depends on it."""

from __future__ import annotations

import ast
from collections.abc import Generator, Iterator
from typing import NamedTuple

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.changes import (
    Change,
    TypeChanged,
    describe,
    item_key,
    item_words,
)
from scout_tui.analysis.python.dependencies import (
    OptionIndex,
    discover,
)
from scout_tui.analysis.python.relevance import Uses
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import (
    Collector,
    CollectorContext,
    Kind,
    Lifetime,
    Need,
    Note,
    Progress,
    Skipped,
    Unchecked,
)
from scout_tui.collect.upstream_delta.judge import Verdict, inherited, judge, uses_for
from scout_tui.collect.upstream_delta.new_api import NewApi
from scout_tui.collect.upstream_delta.overrides import override_drift
from scout_tui.collect.upstream_delta.reach import looked_up
from scout_tui.collect.upstream_delta.surfaces import (
    all_stable,
    commit_lines,
    compare_surface,
    dependency_name,
    mark_widened,
    misplaced,
    surface_diff,
    under,
)
from scout_tui.collect.upstream_delta.validation import rejected, rejections
from scout_tui.config.models import Surface
from scout_tui.model import ConfigWarning, Evidence, FileRef, Finding, Section, fingerprint
from scout_tui.source.records import CommitInfo


class Unaffected(NamedTuple):
    """A changed upstream symbol the experiment does not depend on: its line, and whether
    the commit that changed it adapted the experiment."""

    name: str
    line: str
    adapted: bool


class UpstreamDeltaCollector(Collector):
    name = "upstream_delta"
    title = "Upstream delta review"
    section = Section.ACTION_ITEMS
    shares, cost = "core", 7  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (
        Kind("upstream_commits", Lifetime.NEWS),
        Kind("surface_changed", Lifetime.NEWS, words=item_words),
        Kind("surface_changed_unused", Lifetime.NEWS, folded=True, words=item_words),
        Kind("surface_adapted", Lifetime.NEWS, folded=True, words=item_words),
        # gone since the baseline: news; once gone, scout.toml's warning says so
        Kind("surface_missing", Lifetime.NEWS),
        Kind("surface_stable"),
        Kind("dependencies_changed", Lifetime.NEWS),
        Kind("dependencies_unaffected", Lifetime.NEWS),
        Kind("override_drift", Lifetime.NEWS),
        Kind("override_bypassed", Lifetime.NEWS),
        Kind("new_public_api", Lifetime.NEWS),
        Kind("new_constructor", Lifetime.NEWS),
        Kind("new_model", Lifetime.NEWS),
    )

    def __init__(self) -> None:
        self._modules: dict[str, ast.Module] | None = None  # the experiment's, parsed once
        self._option_index: OptionIndex | None = None  # its calls and flags, indexed once
        # What each folded finding (adapted, or nothing the experiment uses) changed: its
        # words in the one FYI line come from these, never from the finding's text.
        self._folded: dict[str, tuple[str, list[Change]]] = {}
        self._ours: set[str] = set()  # commits of the window that changed the experiment
        self._prefixes: dict[str, str] | None = None  # discovered configs' option prefixes

    def collect(
        self, ctx: CollectorContext
    ) -> Iterator[Finding | Progress | ConfigWarning | Unchecked | Note]:
        base, head = ctx.baseline_commit, ctx.head_commit
        if head is None:
            raise Skipped("no commit on HEAD before the run date")
        if base is None:
            raise Skipped(
                ctx.history_gap
                or f"no commit before the baseline {ctx.since.date()} to compare with"
            )
        upstream = ctx.config.upstream
        commits = ctx.source.log(base, head, upstream.core_paths)
        # Surfaces are compared wherever they live: a file outside the core paths can change too.
        changed_files = ctx.source.changed_between(base, head)
        touched = {path for commit in commits for path in commit.files} | changed_files
        yield Progress(self.name, 0, len(upstream.surfaces), f"{len(commits)} commits")
        # Commits that also changed the experiment: someone already adapted it there.
        ours = {c.sha for c in ctx.source.log(base, head, [ctx.config.project.experiment])}
        self._ours = ours
        if commits:
            both = sum(1 for c in commits if c.sha in ours)
            yield ctx.finding(
                self.name,
                "upstream_commits",
                ("core",),
                f"{len(commits)} upstream commit{'s' if len(commits) != 1 else ''} on core "
                f"paths since {ctx.since.date()}"
                + (f", {both} of them also changing the experiment" if both else ""),
                "\n".join(
                    f"- {code(c.sha[:10])} {c.summary} ({c.author})"
                    + (" — also changed the experiment" if c.sha in ours else "")
                    for c in commits
                ),
                items=[c.sha for c in commits],
                evidence=Evidence(diff=ctx.source.diff_range(base, head, upstream.core_paths)),
            )
        stable: list[Finding] = []
        quiet: list[Finding] = []
        for done, surface in enumerate(upstream.surfaces, 1):
            surface_commits = (
                commits
                if surface.path in {p for c in commits for p in c.files}
                else ctx.source.log(base, head, [surface.path])
                if surface.path in touched
                else []
            )
            for found in self._surface(ctx, surface, base, head, touched, surface_commits):
                if isinstance(found, Finding) and found.kind == "surface_stable":
                    stable.append(found)
                elif isinstance(found, Finding) and self.folds(found.kind):
                    quiet.append(found)  # said in the one FYI line of changes that do not bite
                else:
                    yield found
            yield Progress(self.name, done, len(upstream.surfaces), surface.name)
        discovered = yield from self._discovered(ctx, base, head, changed_files, quiet)
        if stable or discovered:
            yield all_stable(ctx, stable, discovered)
        new_api = NewApi(self._experiment_modules(ctx), self._ours)
        yield from new_api.constructors(ctx, base, head, touched)
        yield from new_api.public_names(ctx, base, head, touched)
        yield from new_api.models(ctx, base, head)

    def _surface(
        self,
        ctx: CollectorContext,
        surface: Surface,
        base: str,
        head: str,
        touched: set[str],
        commits: list[CommitInfo],
    ) -> Iterator[Finding | ConfigWarning | Unchecked | Note]:
        key = (surface.target,)
        new = pyast.find(ctx.source.parse_at(head, surface.path), surface.qualname)
        old = (
            pyast.find(ctx.source.parse_at(base, surface.path), surface.qualname)
            if surface.path in touched
            else new
        )
        if ctx.source.unreadable(surface.path):
            yield Unchecked(key)  # neither changed, stable nor gone: the warning says why
            return
        if new is None and old is None:
            # Not in the window's doing: scout.toml points where the code no longer is.
            said, home = misplaced(ctx, surface, head)
            yield said
            if home is None:
                return
            surface, followed = home, surface  # followed, under its configured key
            new = pyast.find(ctx.source.parse_at(head, surface.path), surface.qualname)
            old = pyast.find(
                ctx.source.parse_at(base, surface.path), surface.qualname
            ) or pyast.find(ctx.source.parse_at(base, followed.path), followed.qualname)
            touched = touched | {surface.path}
            commits = ctx.source.log(base, head, [surface.path, followed.path])
        finding = self._compared(ctx, surface, key, base, head, new, old, commits)
        if finding is not None:
            yield finding

    def _discovered(
        self,
        ctx: CollectorContext,
        base: str,
        head: str,
        changed_files: set[str],
        quiet: list[Finding],
    ) -> Generator[Finding | Progress, None, tuple[int, int]]:
        """The dependency surface found in the experiment's code, compared baseline → HEAD:
        returns (how many dependencies, how many changed)."""
        experiment = ctx.config.project.experiment
        modules = self._experiment_modules(ctx)
        # The configured surfaces' changes that do not bite come first in the one line.
        unused = [self._folded_line(f) for f in quiet]
        if not any(p.endswith(".py") and not under(p, [experiment]) for p in changed_files):
            if unused:
                yield self._unused_line(ctx, unused, quiet)
            return 0, 0  # nothing upstream changed: nothing to discover against
        # A configured surface is compared above; an override of it is still checked for
        # drift here.
        configured = {s.target for s in ctx.config.upstream.surfaces}
        watched = {(s.target, s.check) for s in ctx.config.upstream.surfaces}
        everything = discover(experiment, modules, ctx.source.parse)
        dependencies = [
            d
            for d in everything
            if d.target not in configured
            or d.override
            or (d.check == "attributes" and (d.target, d.check) not in watched)
        ]
        candidates = [d for d in dependencies if d.path in changed_files]
        commits = (
            ctx.source.log(base, head, sorted({d.path for d in candidates})) if candidates else []
        )
        changed = 0
        for dependency in candidates:
            surface = Surface(
                name=dependency_name(dependency), target=dependency.target, check=dependency.check
            )
            new = pyast.find(ctx.source.parse_at(head, surface.path), surface.qualname)
            old_tree = ctx.source.parse_at(base, surface.path)
            old = pyast.find(old_tree, surface.qualname)
            if new is None or old is None:
                continue  # appeared in the window (or resolved through a moved module)
            drift = override_drift(ctx, surface, dependency, old, new, commits, base, head)
            if drift is not None:
                changed += 1
                yield drift
            if (dependency.target, dependency.check) in watched or (
                dependency.target in configured and dependency.check != "attributes"
            ):
                continue
            changes = mark_widened(ctx, surface, compare_surface(surface, old, new), head, old_tree)
            if not changes:
                continue
            uses = self._uses(ctx, surface, dependency.option_prefix)
            changes = inherited(ctx, surface, new, changes, uses)
            if not changes:
                continue
            changed += drift is None
            said = self._judged(ctx, surface, old, new, changes, uses, commits, dependency.via)
            if isinstance(said, Finding):
                yield said
            else:
                unused.append(said)
        for reached in looked_up(ctx, modules, base, head, changed_files):
            if isinstance(reached, Finding):
                yield reached
                continue
            surface, before, after = reached.surface, reached.old, reached.new
            changes = compare_surface(surface, before, after)
            if not changes:
                continue
            by = ctx.source.log(base, head, [surface.path])
            said = self._judged(ctx, surface, before, after, changes, reached.uses, by, reached.via)
            if isinstance(said, Finding):
                yield said
            else:
                unused.append(said)
        for rejection in rejections(ctx, everything, base, head, changed_files):
            yield rejected(ctx, rejection, base, head, self._changed)
        if unused:
            yield self._unused_line(ctx, unused, quiet)
        return len(dependencies), changed

    def _judged(
        self,
        ctx: CollectorContext,
        surface: Surface,
        old: ast.AST,
        new: ast.AST,
        changes: list[Change],
        uses: Uses,
        commits: list[CommitInfo],
        via: str,
    ) -> Finding | Unaffected:
        """A discovered dependency's changes: the Action Item when the experiment depends
        on one, else its line of the one line for the rest."""
        verdict = judge(ctx, surface, old, changes, uses, commits)
        if verdict.deps:
            return self._changed(
                ctx,
                surface,
                (surface.target,),
                changes,
                verdict,
                ctx.baseline_commit or "",
                ctx.head_commit or "",
                getattr(new, "lineno", None),
                f"The experiment depends on {code(surface.qualname)} ({via}); "
                "found from its code, not configured in scout.toml.\n\n",
            )
        notes = []
        adapted = False
        for change in changes:
            adapting = verdict.adapted_in(change)
            if adapting is not None:
                adapted = True
                notes.append(
                    f"{describe(change)} (adapted in the same commit, {code(adapting.sha[:10])})"
                )
            else:
                notes.append(describe(change))
        return Unaffected(surface.name, f"- {surface.name}: " + "; ".join(notes), adapted)

    def _folded_line(self, finding: Finding) -> Unaffected:
        """A folded finding's line of the one FYI line: its surface, what changed, and why
        it does not bite."""
        name, changes = self._folded[finding.fingerprint]
        if finding.kind == "surface_adapted":
            why = " (adapted in the same commit)"
        elif all(isinstance(c, TypeChanged) and c.widened for c in changes):
            why = ""
        else:
            why = " (not in what the experiment uses)"
        line = f"- {name}: " + "; ".join(describe(c) for c in changes) + why
        return Unaffected(name, line, finding.kind == "surface_adapted")

    def _unused_line(
        self, ctx: CollectorContext, unused: list[Unaffected], quiet: list[Finding]
    ) -> Finding:
        """One line for every change that does not bite: awareness when the experiment was
        adapted to one (SPEC: an adapted change is FYI), else an All Clear line."""
        kind = (
            "dependencies_changed" if any(u.adapted for u in unused) else "dependencies_unaffected"
        )
        other = (
            "dependencies_unaffected" if kind == "dependencies_changed" else "dependencies_changed"
        )
        finding = ctx.finding(
            self.name,
            kind,
            ("discovered",),
            f"{len(unused)} upstream symbol{'s' if len(unused) != 1 else ''} the "
            f"experiment uses changed since {ctx.since.date()}, none in a way it depends on",
            "\n".join(u.line for u in unused)
            + "\n\nThe surfaces scout.toml watches, and what was found from the experiment's "
            "imports, subclasses and the config options it sets. None of these changes "
            "touches a parameter, field or value it uses, or the commit that made it adapted "
            "the experiment.",
            items=[u.name for u in unused],
        )
        # Yesterday's one-line-per-surface markers ("changed", "adapted", "unused") match.
        return finding.model_copy(
            update={
                "aliases": sorted(
                    {
                        *finding.aliases,
                        fingerprint(other, "discovered"),
                        *(mark for f in quiet for mark in (f.fingerprint, *f.aliases)),
                    }
                )
            }
        )

    def _uses(self, ctx: CollectorContext, surface: Surface, option_prefix: str) -> Uses:
        """How the experiment uses a surface, watched or discovered alike."""
        modules = self._experiment_modules(ctx)
        if surface.check == "fields" and self._option_index is None:
            self._option_index = OptionIndex(modules)
        return uses_for(modules, surface, option_prefix, self._option_index)

    def _prefix(self, ctx: CollectorContext, surface: Surface) -> str:
        """The option prefix a watched config is reached by (`--compile.*`), as discovery
        finds it: a watched surface is judged by the same uses as a discovered one."""
        if surface.check != "fields":
            return ""
        if self._prefixes is None:
            found = discover(
                ctx.config.project.experiment, self._experiment_modules(ctx), ctx.source.parse
            )
            self._prefixes = {d.target: d.option_prefix for d in found if d.option_prefix}
        return self._prefixes.get(surface.target, "")

    def _changed(
        self,
        ctx: CollectorContext,
        surface: Surface,
        key: tuple[str, ...],
        changes: list[Change],
        verdict: Verdict,
        base: str,
        head: str,
        line: int | None,
        preface: str = "",
    ) -> Finding:
        """The Action Item of a surface change the experiment depends on, each change saying
        why (or that nothing uses it, or that the commit that made it adapted the
        experiment)."""
        because = {d.change: d.because for d in verdict.deps}
        by = verdict.by

        def said(change: Change) -> str:
            if change in because:
                return f" — the experiment depends on it: {because[change]}"
            adapting = verdict.adapted_in(change)
            if adapting is not None and any(d.change == change for d in verdict.adapted):
                return f" (adapted in the same commit, {code(adapting.sha[:10])})"
            return " (not used by the experiment)"

        return ctx.finding(
            self.name,
            "surface_changed",
            key,
            f"{surface.name} changed upstream: {describe(verdict.deps[0].change)}"
            + (f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""),
            preface
            + "\n".join(f"- {describe(change)}" + said(change) for change in changes)
            + ("\n\nChanged by:\n" + commit_lines(by) if by else ""),
            suggested_fix=f"Update the experiment's use of {code(surface.qualname)} to match.",
            files=[FileRef(path=surface.path, line=line)],
            items=[item_key(change) for change in changes],
            evidence=Evidence(diff=surface_diff(ctx, surface, base, head)),
        )

    def _experiment_modules(self, ctx: CollectorContext) -> dict[str, ast.Module]:
        """The experiment's modules, parsed once a run."""
        if self._modules is None:
            experiment = ctx.config.project.experiment
            self._modules = {
                p: tree
                for p in ctx.source.glob(experiment, "*.py")
                if (tree := ctx.source.parse(p)) is not None
            }
        return self._modules

    def _compared(
        self,
        ctx: CollectorContext,
        surface: Surface,
        key: tuple[str, ...],
        base: str,
        head: str,
        new: pyast.Definition | None,
        old: pyast.Definition | None,
        commits: list[CommitInfo],
    ) -> Finding | None:
        ref = [FileRef(path=surface.path)]
        if new is None:
            return ctx.finding(
                self.name,
                "surface_missing",
                key,
                f"{code(surface.qualname)} disappeared from {code(surface.path)}",
                f"The experiment depends on {surface.name}; it existed at the baseline and "
                "is gone at HEAD (moved, renamed or deleted).",
                files=ref,
                evidence=Evidence(diff=surface_diff(ctx, surface, base, head)),
            )
        old_path = surface.path
        if old is None:
            # Its file is new: a move inside the window (then compare with where it was), or
            # new code (nothing to compare yet: not "stable" either).
            homes = ctx.source.definitions(surface.qualname, base)
            old_path = homes[0] if len(homes) == 1 else old_path
            old = (
                pyast.find(ctx.source.parse_at(base, old_path), surface.qualname)
                if len(homes) == 1
                else None
            )
            if old is None:
                return None
        changes = mark_widened(
            ctx,
            surface,
            compare_surface(surface, old, new),
            head,
            ctx.source.parse_at(base, old_path),
        )
        if not changes:
            return ctx.finding(self.name, "surface_stable", key, surface.name, "stable")
        ref = [FileRef(path=surface.path, line=new.lineno)]
        uses = self._uses(ctx, surface, self._prefix(ctx, surface))
        changes = inherited(ctx, surface, new, changes, uses)
        if not changes:
            return ctx.finding(self.name, "surface_stable", key, surface.name, "stable")
        verdict = judge(ctx, surface, old, changes, uses, commits)
        by = verdict.by
        experiment = ctx.config.project.experiment
        adapting = sorted({c.sha: c for c in verdict.adapting.values()}.values(), key=by.index)
        # Adapted: nothing left that bites, and what bit (or every commit) was adapted to.
        if not verdict.deps and (verdict.adapted or (by and len(adapting) == len(by))):
            # The commit that changed it upstream changed the experiment's use too: adapted.
            finding = ctx.finding(
                self.name,
                "surface_adapted",
                key,
                f"{surface.name} changed upstream, the experiment adapted in the same "
                f"commit{'s' if len(by) > 1 else ''}: {describe(changes[0])}"
                + (f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""),
                "\n".join(f"- {describe(change)}" for change in changes)
                + "\n\nAdapted in the same commit (it also changed "
                + f"{code(experiment)}):\n"
                + commit_lines(adapting or by),
                files=ref,
                items=[item_key(change) for change in changes],
                evidence=Evidence(diff=surface_diff(ctx, surface, base, head)),
            )
            self._folded[finding.fingerprint] = (surface.name, changes)
            # Yesterday's "changed" marker for it still matches.
            return finding.model_copy(
                update={"aliases": sorted({*finding.aliases, fingerprint("surface_changed", *key)})}
            )
        if not verdict.deps:
            # True, but nothing the experiment uses: a line to know, not a task.
            finding = ctx.finding(
                self.name,
                "surface_changed_unused",
                key,
                f"{surface.name} changed upstream, not in what the experiment uses: "
                f"{describe(changes[0])}"
                + (f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""),
                "\n".join(f"- {describe(change)}" for change in changes)
                + "\n\nThe experiment does not call, override, patch or read what changed."
                + ("\n\nChanged by:\n" + commit_lines(by) if by else ""),
                files=ref,
                items=[item_key(change) for change in changes],
                evidence=Evidence(diff=surface_diff(ctx, surface, base, head)),
            )
            self._folded[finding.fingerprint] = (surface.name, changes)
            return finding.model_copy(
                update={"aliases": sorted({*finding.aliases, fingerprint("surface_changed", *key)})}
            )
        return self._changed(ctx, surface, key, changes, verdict, base, head, new.lineno)
