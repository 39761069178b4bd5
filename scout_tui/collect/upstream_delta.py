"""Upstream delta review (SPEC §2.1 item 1).

Commits since the baseline on the configured core paths, and for each fragile surface a
mechanical answer to "did it change?": the surface's AST at the baseline commit against
the one at HEAD. A surface whose file no commit touched is stable without a parse.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import re
from collections.abc import Generator, Iterator
from dataclasses import replace

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.changes import (
    Added,
    Change,
    Removed,
    Reshaped,
    ReturnsChanged,
    TypeChanged,
    describe,
    in_order,
    named,
)
from scout_tui.analysis.python.dependencies import (
    Dependency,
    OptionIndex,
    body_shape,
    discover,
    option_uses,
    widened,
)
from scout_tui.analysis.python.relevance import Dependence, Uses, depended_on, uses_of
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import (
    Collector,
    CollectorContext,
    Kind,
    Lifetime,
    Need,
    Progress,
    Skipped,
    Unchecked,
)
from scout_tui.config.profile import Surface
from scout_tui.model import ConfigWarning, Evidence, FileRef, Finding, Section, fingerprint
from scout_tui.source.tree import CommitInfo


def _under(path: str, prefixes: list[str]) -> bool:
    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def _surface_diff(ctx: CollectorContext, surface: Surface, base: str, head: str) -> str:
    def segment(commit: str) -> list[str]:
        text = ctx.source.read_at(commit, surface.path) or ""
        node = pyast.find(ctx.source.parse_at(commit, surface.path), surface.qualname)
        return (pyast.source_of(text, node) if node else "").splitlines(keepends=True)

    return "".join(
        difflib.unified_diff(
            segment(base),
            segment(head),
            f"a/{surface.path} ({base[:10]})",
            f"b/{surface.path} ({head[:10]})",
        )
    )


def compare_surface(surface: Surface, old: pyast.Definition, new: pyast.Definition) -> list[Change]:
    """The changes to one surface between two versions."""
    check = surface.check
    if check in ("fields", "properties", "methods") and not (
        isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef)
    ):
        return [Reshaped(surface.qualname, "no longer a class")]
    if check in ("signature", "returns") and isinstance(old, ast.ClassDef) != isinstance(
        new, ast.ClassDef
    ):
        return [Reshaped(surface.qualname, "class or function")]
    if isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef):
        return _compare_class(check, old, new)
    if isinstance(old, ast.ClassDef) or isinstance(new, ast.ClassDef):
        return []
    if check == "signature":
        return pyast.compare_signatures(pyast.signature(old), pyast.signature(new))
    before_arity, after_arity = pyast.return_arities(old), pyast.return_arities(new)
    if before_arity != after_arity:
        return [ReturnsChanged(_arity(after_arity), _arity(before_arity))]
    return []


def _compare_class(check: str, old: ast.ClassDef, new: ast.ClassDef) -> list[Change]:
    if check == "fields":
        return pyast.compare_fields(pyast.dataclass_fields(old), pyast.dataclass_fields(new))
    if check == "properties":
        before, after = pyast.properties(old), pyast.properties(new)
        return in_order(
            [Added("property", p) for p in after - before]
            + [Removed("property", p) for p in before - after]
        )
    if check == "methods":
        methods_before, methods_after = (
            set(pyast.public_methods(old)),
            set(pyast.public_methods(new)),
        )
        return in_order(
            [Added("method", m) for m in methods_after - methods_before]
            + [Removed("method", m) for m in methods_before - methods_after]
        )
    return []  # a signature or what it returns: a class has neither


_TOP_LEVEL = re.compile(r"^(?:async\s+def|def|class)\s+([A-Za-z]\w*)", re.MULTILINE)


_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Two-word terms every module has: they say nothing about what the experiment does.
_GENERIC_TERMS = {
    "state_dict",
    "to_local",
    "from_config",
    "get_default",
    "build_model",
    "init_weights",
    "to_dtensor",
    "from_local",
    "test_case",
    "set_up",
}


def _words(name: str) -> list[str]:
    """`AllGatherLinear` → all, gather, linear; `build_dist_muon` → build, dist, muon."""
    return [w.lower() for part in name.split("_") for w in _CAMEL.findall(part)]


def _top_level_names(text: str | None) -> set[str]:
    return set(_TOP_LEVEL.findall(text or ""))


Made = list[tuple[CommitInfo, list[Change]]]  # commits, each with the changes it made


def _changes_by_commit(ctx: CollectorContext, surface: Surface, commits: list[CommitInfo]) -> Made:
    """The commits that changed this surface, not merely its file, each with its changes."""
    found: Made = []
    for commit in commits:
        if surface.path not in commit.files:
            continue
        new = pyast.find(ctx.source.parse_at(commit.sha, surface.path), surface.qualname)
        old = pyast.find(ctx.source.parse_at(commit.sha + "^", surface.path), surface.qualname)
        if (old is None) != (new is None):
            appeared: list[Change] = [Reshaped(surface.qualname, "appeared or disappeared")]
            found.append((commit, appeared))
        elif old is not None and new is not None:
            changes = compare_surface(surface, old, new)
            if changes:
                found.append((commit, changes))
    return found


def _changed_by(
    ctx: CollectorContext, surface: Surface, commits: list[CommitInfo]
) -> list[CommitInfo]:
    return [commit for commit, _ in _changes_by_commit(ctx, surface, commits)]


def _changed_override(ctx: CollectorContext, commit: CommitInfo, path: str, qualname: str) -> bool:
    """Whether `commit` changed lines inside the experiment's method `qualname` in `path`."""
    if path not in commit.files and path not in ctx.source.changed_files(commit.sha, path):
        return False
    node = pyast.find(ctx.source.parse_at(commit.sha, path), qualname)
    if node is None:
        return False
    first, last = node.lineno, getattr(node, "end_lineno", None) or node.lineno
    return any(
        start <= last and end >= first for start, end in ctx.source.changed_lines(commit.sha, path)
    )


def _adapted_in(adapted: dict[str, CommitInfo], change: Change) -> CommitInfo | None:
    name = named(change)
    return adapted.get(name) if name else None


def _adapts(
    ctx: CollectorContext,
    commit: CommitInfo,
    surface: Surface,
    experiment: str,
    names: tuple[str, ...] = (),
) -> bool:
    """Whether `commit` also changed experiment lines that name the surface (the class, the
    function, or one of `names`: the changed fields or parameters), removed lines included:
    then the experiment was adapted with the change."""
    words = (surface.qualname.split(".")[0], *names)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")
    diff = ctx.source.diff_range(commit.sha + "^", commit.sha, [experiment])
    return any(
        line[:1] in "+-" and not line.startswith(("+++", "---")) and pattern.search(line)
        for line in diff.splitlines()
    )


def _constructions(ctx: CollectorContext, qualname: str) -> list[tuple[str, int]]:
    """Calls in the experiment that construct `qualname` directly: `ParallelDims(...)`."""
    short = qualname.rsplit(".", 1)[-1]
    found = []
    for path in ctx.source.glob(ctx.config.project.experiment, "*.py"):
        text = ctx.source.read(path) or ""
        if short + "(" not in text:
            continue  # cheap: most files never mention the class
        for node in pyast.nodes(ctx.source.parse(path), ast.Call):
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            if name in (qualname, short) or name.endswith("." + qualname):
                found.append((path, node.lineno))
    return sorted(found)


def _widened(
    ctx: CollectorContext, surface: Surface, changes: list[Change], head: str
) -> list[Change]:
    """A field's type changed to a base class of what it was: marked, for a value of the old
    type still fits (relevance then does not count it)."""
    tree = ctx.source.parse_at(head, surface.path)
    return [
        replace(change, widened=True)
        if isinstance(change, TypeChanged)
        and change.subject == "field"
        and widened(tree, change.before or "", change.after or "", ctx.source.parse)
        else change
        for change in changes
    ]


def _positions(old: ast.AST) -> tuple[dict[str, int], set[int]]:
    """Each parameter's position as a caller counts them (a method's `self` not counted),
    and the tuple sizes it returned: what `depended_on` weighs calls and unpacks against."""
    if isinstance(old, ast.ClassDef):  # a dataclass's fields, in the order it takes them
        return {name: n for n, name in enumerate(pyast.dataclass_fields(old))}, set()
    if not isinstance(old, ast.FunctionDef | ast.AsyncFunctionDef):
        return {}, set()
    params = pyast.signature(old)
    if params and params[0].name in ("self", "cls"):
        params = params[1:]  # a bound call does not pass it
    return {p.name: n for n, p in enumerate(params)}, pyast.return_arities(old)


def _dependency_name(dependency: Dependency) -> str:
    what = "fields" if dependency.check == "fields" else "signature"
    prefix = f" (options `--{dependency.option_prefix}.*`)" if dependency.option_prefix else ""
    return f"`{dependency.qualname}` {what}{prefix}"


def _arity(arities: set[int]) -> str:
    words = [f"a {n}-tuple" if n else "a non-tuple" for n in sorted(arities)]
    return " or ".join(words) or "nothing"


def _commit_lines(commits: list[CommitInfo]) -> str:
    return "\n".join(f"- {code(c.sha[:10])} {c.summary} ({c.author})" for c in commits)


class UpstreamDeltaCollector(Collector):
    name = "upstream_delta"
    title = "Upstream delta review"
    section = Section.ACTION_ITEMS
    shares, cost = "core", 7  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (
        Kind("upstream_commits", Lifetime.NEWS),
        Kind("surface_changed", Lifetime.NEWS),
        Kind("surface_changed_unused", Lifetime.NEWS, folded=True),
        Kind("surface_adapted", Lifetime.NEWS, folded=True),
        # gone since the baseline: news; once gone, scout.toml's warning says so
        Kind("surface_missing", Lifetime.NEWS),
        Kind("surface_stable"),
        Kind("dependencies_changed", Lifetime.NEWS),
        Kind("override_drift", Lifetime.NEWS),
        Kind("new_public_api", Lifetime.NEWS),
        Kind("new_constructor", Lifetime.NEWS),
        Kind("new_model", Lifetime.NEWS),
    )

    def __init__(self) -> None:
        self._modules: dict[str, ast.Module] | None = None  # the experiment's, parsed once
        self._terms: set[str] | None = None  # two-word terms of its identifiers
        self._option_index: OptionIndex | None = None  # its calls and flags, indexed once
        # What each folded finding (adapted, or nothing the experiment uses) changed: its
        # words in the one FYI line come from these, never from the finding's text.
        self._folded: dict[str, tuple[str, list[Change]]] = {}
        self._ours: set[str] = set()  # commits of the window that changed the experiment

    def collect(
        self, ctx: CollectorContext
    ) -> Iterator[Finding | Progress | ConfigWarning | Unchecked]:
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
            yield self._all_stable(ctx, stable, discovered)
        yield from self._new_constructors(ctx, base, head, touched)
        yield from self._new_api(ctx, base, head, touched)
        yield from self._new_models(ctx, base, head)

    def _surface(
        self,
        ctx: CollectorContext,
        surface: Surface,
        base: str,
        head: str,
        touched: set[str],
        commits: list[CommitInfo],
    ) -> Iterator[Finding | ConfigWarning | Unchecked]:
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
            warning, home = self._misplaced(ctx, surface, head)
            yield warning
            if home is None:
                return
            surface, followed = home, surface  # followed, under its configured key
            new = pyast.find(ctx.source.parse_at(head, surface.path), surface.qualname)
            old = pyast.find(
                ctx.source.parse_at(base, surface.path), surface.qualname
            ) or pyast.find(ctx.source.parse_at(base, followed.path), followed.qualname)
            touched = touched | {surface.path}
        finding = self._compared(ctx, surface, key, base, head, new, old, commits)
        if finding is not None:
            yield finding

    def _all_stable(
        self, ctx: CollectorContext, stable: list[Finding], discovered: tuple[int, int]
    ) -> Finding:
        """One All Clear line for every watched surface and discovered dependency that did
        not change: a list repeated every day is read by no one."""
        total, changed = discovered
        names = [f.title for f in stable]
        parts = [f"{len(names)} watched surface{'s' if len(names) != 1 else ''}"] if names else []
        if total:
            parts.append(
                f"{total - changed} of {total} upstream symbols the experiment "
                "imports, subclasses or configures"
            )
        body = ("Watched in scout.toml:\n" + "\n".join(f"- {n}" for n in names)) if names else ""
        finding = ctx.finding(
            self.name,
            "surface_stable",
            ("all",),
            f"Unchanged {ctx.since_words()}: " + " and ".join(parts),
            body,
            items=names,
        )
        # Yesterday's one-line-per-surface markers still match this line.
        return finding.model_copy(
            update={"aliases": sorted({*finding.aliases, *(f.fingerprint for f in stable)})}
        )

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
        if not any(p.endswith(".py") and not _under(p, [experiment]) for p in changed_files):
            if unused:
                yield self._unused_line(ctx, unused, quiet)
            return 0, 0  # nothing upstream changed: nothing to discover against
        # A configured surface is compared above; an override of it is still checked for
        # drift here.
        configured = {s.target for s in ctx.config.upstream.surfaces}
        dependencies = [
            d
            for d in discover(experiment, modules, ctx.source.parse)
            if d.target not in configured or d.override
        ]
        candidates = [d for d in dependencies if d.path in changed_files]
        commits = (
            ctx.source.log(base, head, sorted({d.path for d in candidates})) if candidates else []
        )
        changed = 0
        for dependency in candidates:
            surface = Surface(
                name=_dependency_name(dependency), target=dependency.target, check=dependency.check
            )
            new = pyast.find(ctx.source.parse_at(head, surface.path), surface.qualname)
            old = pyast.find(ctx.source.parse_at(base, surface.path), surface.qualname)
            if new is None or old is None:
                continue  # appeared in the window (or resolved through a moved module)
            drift = self._override_drift(ctx, surface, dependency, old, new, commits, base, head)
            if drift is not None:
                changed += 1
                yield drift
            if dependency.target in configured:
                continue
            changes = _widened(ctx, surface, compare_surface(surface, old, new), head)
            if not changes:
                continue
            changed += drift is None
            deps = depended_on(changes, self._dependency_uses(ctx, dependency), *_positions(old))
            # A change is adapted when a commit that made it also changed the experiment's
            # lines naming what it changed.
            by_commit = _changes_by_commit(ctx, surface, commits)
            adapted: dict[str, CommitInfo] = {}
            for commit, made in by_commit:
                names = tuple(sorted({name for c in made if (name := named(c))}))
                if names and _adapts(ctx, commit, surface, experiment, names):
                    adapted.update({name: commit for name in names})

            by = [commit for commit, _ in by_commit]
            if any(_adapted_in(adapted, d.change) is None for d in deps):
                yield self._changed(
                    ctx,
                    surface,
                    (surface.target,),
                    changes,
                    deps,
                    by,
                    base,
                    head,
                    getattr(new, "lineno", None),
                    f"The experiment depends on {code(surface.qualname)} ({dependency.via}); "
                    "found from its code, not configured in scout.toml.\n\n",
                )
                continue
            depended = {d.change for d in deps}
            notes = []
            for change in changes:
                adapting = _adapted_in(adapted, change)
                if adapting is not None:
                    notes.append(
                        f"{describe(change)} (adapted in the same commit, "
                        f"{code(adapting.sha[:10])})"
                    )
                elif change not in depended:
                    notes.append(describe(change))
            unused.append((surface.name, f"- {surface.name}: " + "; ".join(notes)))
        if unused:
            yield self._unused_line(ctx, unused, quiet)
        return len(dependencies), changed

    def _override_drift(
        self,
        ctx: CollectorContext,
        surface: Surface,
        dependency: Dependency,
        old: ast.AST,
        new: ast.AST,
        commits: list[CommitInfo],
        base: str,
        head: str,
    ) -> Finding | None:
        """An upstream method the experiment overrides without calling it changed its body:
        the experiment's copy does not get the change (a fix, a guard, a new step)."""
        if not dependency.override or dependency.calls_super:
            return None
        if (
            not isinstance(old, ast.FunctionDef | ast.AsyncFunctionDef)
            or not isinstance(new, ast.FunctionDef | ast.AsyncFunctionDef)
            or body_shape(old) == body_shape(new)
        ):
            return None
        experiment = ctx.config.project.experiment
        by: list[CommitInfo] = []
        for commit in commits:
            if surface.path not in commit.files:
                continue
            after = pyast.find(ctx.source.parse_at(commit.sha, surface.path), surface.qualname)
            before = pyast.find(
                ctx.source.parse_at(commit.sha + "^", surface.path), surface.qualname
            )
            if (
                isinstance(after, ast.FunctionDef | ast.AsyncFunctionDef)
                and isinstance(before, ast.FunctionDef | ast.AsyncFunctionDef)
                and body_shape(before) != body_shape(after)
            ):
                by.append(commit)
        # A commit that also changed the experiment's override carried the change over.
        override_path = dependency.override.rpartition(":")[0]
        missed = [
            c
            for c in by
            if not _changed_override(ctx, c, override_path, dependency.override_qualname)
        ]
        if by and not missed:
            return None
        path, _, line = dependency.override.rpartition(":")
        return ctx.finding(
            self.name,
            "override_drift",
            (surface.target,),
            f"{code(surface.qualname)} changed upstream; the experiment's override does not "
            "call it and may lack the change",
            f"The experiment overrides {code(surface.qualname)} at "
            f"{code(dependency.override.removeprefix(experiment + '/'))} without calling the "
            "upstream method, so what changed in its body since "
            f"{ctx.since.date()} does not reach the experiment:\n"
            + (_commit_lines(missed) if missed else "- (the commits are outside this window)")
            + "\n\nCompare the two and carry over what applies.",
            suggested_fix=f"Port the upstream change into the override at "
            f"{code(dependency.override.removeprefix(experiment + '/'))}, or call "
            "the upstream method.",
            files=[
                FileRef(path=path, line=int(line) if line.isdigit() else None),
                FileRef(path=surface.path, line=new.lineno),
            ],
            items=[c.sha for c in missed],
            evidence=Evidence(diff=_surface_diff(ctx, surface, base, head)),
        )

    def _folded_line(self, finding: Finding) -> tuple[str, str]:
        """A folded finding's line of the one FYI line: its surface, what changed, and why
        it does not bite."""
        name, changes = self._folded[finding.fingerprint]
        if finding.kind == "surface_adapted":
            why = " (adapted in the same commit)"
        elif all(isinstance(c, TypeChanged) and c.widened for c in changes):
            why = ""
        else:
            why = " (not in what the experiment uses)"
        return name, f"- {name}: " + "; ".join(describe(c) for c in changes) + why

    def _unused_line(
        self, ctx: CollectorContext, unused: list[tuple[str, str]], quiet: list[Finding]
    ) -> Finding:
        finding = ctx.finding(
            self.name,
            "dependencies_changed",
            ("discovered",),
            f"{len(unused)} upstream symbol{'s' if len(unused) != 1 else ''} the "
            f"experiment uses changed since {ctx.since.date()}, none in a way it depends on",
            "\n".join(line for _, line in unused)
            + "\n\nThe surfaces scout.toml watches, and what was found from the experiment's "
            "imports, subclasses and the config options it sets. None of these changes "
            "touches a parameter, field or value it uses, or the commit that made it adapted "
            "the experiment.",
            items=[name for name, _ in unused],
        )
        # Yesterday's one-line-per-surface markers ("changed", "adapted", "unused") match.
        return finding.model_copy(
            update={
                "aliases": sorted(
                    {
                        *finding.aliases,
                        *(mark for f in quiet for mark in (f.fingerprint, *f.aliases)),
                    }
                )
            }
        )

    def _dependency_uses(self, ctx: CollectorContext, dependency: Dependency) -> Uses:
        """How the experiment uses one discovered dependency: by its name where it imports
        it, and through the option prefix it reaches a config by."""
        modules = self._experiment_modules(ctx)
        parts = dependency.qualname.split(".")
        if dependency.check == "signature":
            outer, member = (parts[-2] if len(parts) > 1 else ""), parts[-1]
        else:
            outer, member = parts[-1], ""
        uses = uses_of(modules, outer, member, mention=parts[0])
        if dependency.check == "fields":
            if self._option_index is None:
                self._option_index = OptionIndex(modules)
            by_option = option_uses(
                modules, parts[-1], dependency.option_prefix, self._option_index
            )
            for name, places in by_option.names.items():
                uses.names.setdefault(name, []).extend(places)
            for name, values in by_option.values.items():
                uses.values.setdefault(name, set()).update(values)
            uses.reads |= by_option.reads
            uses.constructions += [
                c for c in by_option.constructions if c not in uses.constructions
            ]
        return uses

    def _changed(
        self,
        ctx: CollectorContext,
        surface: Surface,
        key: tuple[str, ...],
        changes: list[Change],
        deps: list[Dependence],
        by: list[CommitInfo],
        base: str,
        head: str,
        line: int | None,
        preface: str = "",
    ) -> Finding:
        """The Action Item of a surface change the experiment depends on, each change saying
        why (or that nothing uses it)."""
        because = {d.change: d.because for d in deps}
        return ctx.finding(
            self.name,
            "surface_changed",
            key,
            f"{surface.name} changed upstream: {describe(deps[0].change)}"
            + (f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""),
            preface
            + "\n".join(
                f"- {describe(change)}"
                + (
                    f" — the experiment depends on it: {because[change]}"
                    if change in because
                    else " (not used by the experiment)"
                )
                for change in changes
            )
            + ("\n\nChanged by:\n" + _commit_lines(by) if by else ""),
            suggested_fix=f"Update the experiment's use of {code(surface.qualname)} to match.",
            files=[FileRef(path=surface.path, line=line)],
            items=[describe(change) for change in changes],
            evidence=Evidence(diff=_surface_diff(ctx, surface, base, head)),
        )

    def _misplaced(
        self, ctx: CollectorContext, surface: Surface, head: str
    ) -> tuple[ConfigWarning, Surface | None]:
        """Why a configured surface is not where scout.toml says, and its new home when
        certain (then followed today)."""
        source = ctx.source
        where = f"`[upstream.surfaces]` {surface.target}"
        if source.read_at(head, surface.path) is None:
            fate = source.path_fate(surface.path, head)
            home = None
            if (
                fate.kind == "moved"
                and fate.moved_to
                and pyast.find(source.parse_at(head, fate.moved_to), surface.qualname) is not None
            ):
                home = surface.model_copy(update={"target": f"{fate.moved_to}::{surface.qualname}"})
            what = f"{surface.path} does not exist"
        else:
            fate = source.definition_fate(surface.path, surface.qualname, head)
            home = (
                surface.model_copy(update={"target": f"{fate.moved_to}::{surface.qualname}"})
                if fate.kind == "moved" and fate.moved_to
                else None
            )
            what = f"{surface.qualname} is not in {surface.path}"
        commit = fate.commit
        when = f"{commit.sha[:10]} ({commit.summary}, {commit.date.date()})" if commit else ""
        if home is not None:
            said = (
                f"{where}: {what}; it moved to {home.target} in {when}. Followed today; "
                f"point scout.toml at {home.target}."
            )
        elif fate.kind == "never":
            said = (
                f"{where}: {what}, and never was in that file's history: a typo, or a name "
                "from another branch? Fix or remove it in scout.toml."
            )
        elif fate.kind == "unknown":
            said = (
                f"{where}: {what} (this clone's history cannot tell since when). Point "
                "scout.toml at its new home, or remove it."
            )
        else:
            said = (
                f"{where}: {what}; removed in {when}, with no single new home. Point "
                "scout.toml at what replaced it, or remove it."
            )
        return ConfigWarning(
            collector=self.name,
            subject=where,
            message=said,
            moved_to=home.target if home else None,
            commit=commit.sha if commit else None,
        ), home

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

    def _dependence(
        self, ctx: CollectorContext, surface: Surface, old: ast.AST, changes: list[Change]
    ) -> list[Dependence]:
        """The changes the experiment's code depends on."""
        parts = surface.qualname.split(".")
        if surface.check in ("signature", "returns"):
            outer, member = (parts[-2] if len(parts) > 1 else ""), parts[-1]
        else:
            outer, member = parts[-1], ""
        uses = uses_of(self._experiment_modules(ctx), outer, member, mention=parts[0])
        return depended_on(changes, uses, *_positions(old))

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
                evidence=Evidence(diff=_surface_diff(ctx, surface, base, head)),
            )
        if old is None:
            # Its file is new: a move inside the window (then compare with where it was), or
            # new code (nothing to compare yet: not "stable" either).
            homes = ctx.source.definitions(surface.qualname, base)
            old = (
                pyast.find(ctx.source.parse_at(base, homes[0]), surface.qualname)
                if len(homes) == 1
                else None
            )
            if old is None:
                return None
        changes = _widened(ctx, surface, compare_surface(surface, old, new), head)
        if not changes:
            return ctx.finding(self.name, "surface_stable", key, surface.name, "stable")
        ref = [FileRef(path=surface.path, line=new.lineno)]
        by = _changed_by(ctx, surface, commits)
        experiment = ctx.config.project.experiment
        if by and all(_adapts(ctx, c, surface, experiment) for c in by):
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
                + _commit_lines(by),
                files=ref,
                items=[describe(change) for change in changes],
                evidence=Evidence(diff=_surface_diff(ctx, surface, base, head)),
            )
            self._folded[finding.fingerprint] = (surface.name, changes)
            # Yesterday's "changed" marker for it still matches.
            return finding.model_copy(
                update={"aliases": sorted({*finding.aliases, fingerprint("surface_changed", *key)})}
            )
        deps = self._dependence(ctx, surface, old, changes)
        if not deps:
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
                + ("\n\nChanged by:\n" + _commit_lines(by) if by else ""),
                files=ref,
                items=[describe(change) for change in changes],
                evidence=Evidence(diff=_surface_diff(ctx, surface, base, head)),
            )
            self._folded[finding.fingerprint] = (surface.name, changes)
            return finding.model_copy(
                update={"aliases": sorted({*finding.aliases, fingerprint("surface_changed", *key)})}
            )
        return self._changed(ctx, surface, key, changes, deps, by, base, head, new.lineno)

    def _new_constructors(
        self, ctx: CollectorContext, base: str, head: str, touched: set[str]
    ) -> Iterator[Finding]:
        """New classmethods/staticmethods on the surfaces' classes, with the places in the
        experiment that build such an object by hand and could use them."""
        classes = {}
        for surface in ctx.config.upstream.surfaces:
            qualname = surface.qualname
            if surface.check in ("signature", "returns"):
                qualname = qualname.rsplit(".", 1)[0] if "." in qualname else ""
            if qualname and surface.path in touched:
                classes[(surface.path, qualname)] = surface
        for (path, qualname), _surface in sorted(classes.items()):
            old = pyast.find(ctx.source.parse_at(base, path), qualname)
            new = pyast.find(ctx.source.parse_at(head, path), qualname)
            if not isinstance(old, ast.ClassDef) or not isinstance(new, ast.ClassDef):
                continue
            before = pyast.public_methods(old)
            added = [
                name
                for name, node in sorted(pyast.public_methods(new).items())
                if name not in before and pyast.is_constructor(node)
            ]
            if not added:
                continue
            uses = _constructions(ctx, qualname)
            names = ", ".join(code(f"{qualname}.{name}") for name in added)
            where = (
                "\n\nThe experiment builds it by hand at:\n"
                + "\n".join(f"- {code(f'{p}:{line}')}" for p, line in uses[:10])
                if uses
                else ""
            )
            yield ctx.finding(
                self.name,
                "new_constructor",
                (path, qualname, *added),
                f"New alternate constructor {names}",
                f"{names} appeared upstream since {ctx.since.date()}.{where}",
                files=[FileRef(path=path, line=new.lineno)]
                + [FileRef(path=p, line=line) for p, line in uses[:10]],
                items=added,
            )

    def _new_api(
        self, ctx: CollectorContext, base: str, head: str, touched: set[str]
    ) -> Iterator[Finding]:
        dirs = ctx.config.upstream.new_api_dirs
        unrelated: list[tuple[str, list[str], CommitInfo | None]] = []
        yield from self._new_api_modules(ctx, base, head, touched, dirs, unrelated)
        if unrelated:
            # Nothing in the experiment names them or imports their module, or the commit
            # that added them changed the experiment too: one line, not a finding each.
            count = sum(len(names) for _, names, _ in unrelated)
            yield ctx.finding(
                self.name,
                "new_public_api",
                ("unrelated",),
                f"{count} other new upstream API{'s' if count != 1 else ''} in "
                f"{len(unrelated)} module{'s' if len(unrelated) != 1 else ''}, not named by "
                "the experiment's code",
                "\n".join(
                    f"- {code(path)}: "
                    + ", ".join(code(n) for n in names)
                    + (
                        f" — added by {code(c.sha[:10])} ({c.summary}), which also changed"
                        " the experiment"
                        if c
                        else ""
                    )
                    for path, names, c in unrelated
                ),
                files=[FileRef(path=path) for path, _, _ in unrelated],
                items=[n for _, names, _ in unrelated for n in names],
            )

    def _shared_terms(self, ctx: CollectorContext, names: list[str]) -> list[str]:
        """Two-word terms of the new names (`AllGatherLinear` → `all_gather`,
        `gather_linear`) that the experiment's code also uses: a sign it hand-rolls
        something like it."""
        if self._terms is None:
            words: set[str] = set()
            for tree in self._experiment_modules(ctx).values():
                for name in pyast.identifiers(tree):
                    parts = _words(name)
                    words |= {f"{a}_{b}" for a, b in itertools.pairwise(parts)}
            self._terms = words - _GENERIC_TERMS
        found = []
        for name in names:
            parts = _words(name)
            found += [f"{a}_{b}" for a, b in itertools.pairwise(parts) if f"{a}_{b}" in self._terms]
        return sorted(set(found))

    def _new_api_modules(
        self,
        ctx: CollectorContext,
        base: str,
        head: str,
        touched: set[str],
        dirs: list[str],
        unrelated: list[tuple[str, list[str], CommitInfo | None]],
    ) -> Iterator[Finding]:
        for path in sorted(p for p in touched if p.endswith(".py") and _under(p, dirs)):
            # Most touched files define no new top-level name: a line scan says so without
            # parsing two versions; the AST decides only when the scan sees a difference.
            if _top_level_names(ctx.source.read_at(head, path)) <= _top_level_names(
                ctx.source.read_at(base, path)
            ):
                continue
            appeared = sorted(
                pyast.public_names(ctx.source.parse_at(head, path))
                - pyast.public_names(ctx.source.parse_at(base, path))
            )
            # A name some other file defined at the baseline moved here: not new; one the
            # experiment already imports is no opportunity for it.
            imported = {
                i.name
                for tree in self._experiment_modules(ctx).values()
                for i in pyast.imports(tree)
            }
            added = [
                name
                for name in appeared
                if name not in imported and not ctx.source.definitions(name, base)
            ]
            if not added:
                continue
            names = ", ".join(code(name) for name in added)
            importers = self._importers(ctx, path)
            where = ", ".join(code(i) for i in importers[:3])
            shared = self._shared_terms(ctx, added)
            # Added by a commit that also changed the experiment: it took it up already.
            adopted = [c for c in ctx.source.log(base, head, [path]) if c.sha in self._ours]
            if adopted or (not importers and not shared):
                unrelated.append((path, added, adopted[0] if adopted else None))
                continue
            why = (
                f" The experiment imports from this module ({where}): check what it now offers."
                if importers
                else f" The experiment's code speaks of {', '.join(code(t) for t in shared[:3])}:"
                " check whether it replaces something it hand-rolls."
            )
            yield ctx.finding(
                self.name,
                "new_public_api",
                (path, *added),
                f"New upstream API in {code(path)}: {names}",
                f"{names} appeared in {code(path)} since {ctx.since.date()}.{why}",
                files=[FileRef(path=path)],
                items=added,
                evidence=Evidence(diff=ctx.source.diff_range(base, head, [path])),
            )

    def _importers(self, ctx: CollectorContext, path: str) -> list[str]:
        """The experiment's modules that import from the module at `path`."""
        module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        found = []
        for name, tree in self._experiment_modules(ctx).items():
            line = next((i.line for i in pyast.imports(tree) if i.module == module), None)
            if line is not None:
                found.append(f"{name.rsplit('/', 1)[-1]}:{line}")
        return found

    def _new_models(self, ctx: CollectorContext, base: str, head: str) -> Iterator[Finding]:
        models = ctx.config.upstream.models_dir.rstrip("/")
        if not models:
            return
        added = sorted(
            set(ctx.source.subdirs_at(head, models)) - set(ctx.source.subdirs_at(base, models))
        )
        for name in added:
            path = f"{models}/{name}"
            yield ctx.finding(
                self.name,
                "new_model",
                (path,),
                f"New upstream model {code(path)}",
                f"{code(path)} was added since {ctx.since.date()}; the experiment could add a "
                "config for it.",
                files=[FileRef(path=path)],
            )
