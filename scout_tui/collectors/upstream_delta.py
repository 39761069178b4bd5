"""Upstream delta review (SPEC §2.1 item 1).

Commits since the baseline on the configured core paths, and for each fragile surface a
mechanical answer to "did it change?": the surface's AST at the baseline commit against
the one at HEAD. A surface whose file no commit touched is stable without a parse.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator

from scout_tui.analysis import pyast
from scout_tui.analysis.relevance import Dependence, depended_on, uses_of
from scout_tui.collectors.base import CollectorContext, Need, Progress, Skipped, register
from scout_tui.config import Surface
from scout_tui.markdown import code
from scout_tui.model import ConfigWarning, Evidence, FileRef, Finding, Section, fingerprint
from scout_tui.source import CommitInfo


def _under(path: str, prefixes: list[str]) -> bool:
    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def _surface_diff(ctx: CollectorContext, surface: Surface, base: str, head: str) -> str:
    def segment(commit: str) -> list[str]:
        text = ctx.source.read_at(commit, surface.path) or ""
        node = pyast.find(ctx.source.parse_at(commit, surface.path), surface.qualname)
        return (pyast.source_of(text, node) if node else "").splitlines(keepends=True)

    return "".join(
        difflib.unified_diff(
            segment(base), segment(head),
            f"a/{surface.path} ({base[:10]})", f"b/{surface.path} ({head[:10]})",
        )
    )  # fmt: skip


def compare_surface(surface: Surface, old: pyast.Definition, new: pyast.Definition) -> list[str]:
    """The changes to one surface between two versions, as short sentences."""
    check = surface.check
    if check in ("fields", "properties", "methods") and not (
        isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef)
    ):
        return [f"`{surface.qualname}` is no longer a class"]
    if check in ("signature", "returns") and isinstance(old, ast.ClassDef) != isinstance(
        new, ast.ClassDef
    ):
        return [f"`{surface.qualname}` changed between class and function"]
    if check == "fields":
        return pyast.compare_fields(pyast.dataclass_fields(old), pyast.dataclass_fields(new))
    if check == "properties":
        before, after = pyast.properties(old), pyast.properties(new)
        return sorted(
            [f"property `{p}` added" for p in after - before]
            + [f"property `{p}` removed" for p in before - after]
        )
    if check == "methods":
        before, after = set(pyast.public_methods(old)), set(pyast.public_methods(new))
        return sorted(
            [f"method `{m}` added" for m in after - before]
            + [f"method `{m}` removed" for m in before - after]
        )
    if isinstance(old, ast.ClassDef) or isinstance(new, ast.ClassDef):
        return []
    if check == "signature":
        return pyast.compare_signatures(pyast.signature(old), pyast.signature(new))
    before_arity, after_arity = pyast.return_arities(old), pyast.return_arities(new)
    if before_arity != after_arity:
        return [f"returns {_arity(after_arity)} (was {_arity(before_arity)})"]
    return []


_TOP_LEVEL = re.compile(r"^(?:async\s+def|def|class)\s+([A-Za-z]\w*)", re.MULTILINE)


def _top_level_names(text: str | None) -> set[str]:
    return set(_TOP_LEVEL.findall(text or ""))


def _changed_by(
    ctx: CollectorContext, surface: Surface, commits: list[CommitInfo]
) -> list[CommitInfo]:
    """The commits that changed this surface, not merely its file."""
    found = []
    for commit in commits:
        if surface.path not in commit.files:
            continue
        new = pyast.find(ctx.source.parse_at(commit.sha, surface.path), surface.qualname)
        old = pyast.find(ctx.source.parse_at(commit.sha + "^", surface.path), surface.qualname)
        if (old is None) != (new is None) or (
            old is not None and new is not None and compare_surface(surface, old, new)
        ):
            found.append(commit)
    return found


def _adapts(ctx: CollectorContext, commit: CommitInfo, surface: Surface, experiment: str) -> bool:
    """Whether `commit` also changed experiment code that names the surface (the class, or
    the function): then the experiment was adapted with the change."""
    outer = surface.qualname.split(".")[0]
    pattern = re.compile(rf"\b{re.escape(outer)}\b")
    for path in ctx.source.changed_files(commit.sha, experiment):
        text = ctx.source.read_at(commit.sha, path)
        if text is not None and pattern.search(text):
            return True
    return False


def _constructions(ctx: CollectorContext, qualname: str) -> list[tuple[str, int]]:
    """Calls in the experiment that construct `qualname` directly: `ParallelDims(...)`."""
    short = qualname.rsplit(".", 1)[-1]
    found = []
    for path in ctx.source.glob(ctx.config.project.experiment, "*.py"):
        text = ctx.source.read(path) or ""
        if short + "(" not in text:
            continue  # cheap: most files never mention the class
        for node in pyast.nodes(ctx.source.parse(path), ast.Call):
            name = ast.unparse(node.func)
            if name in (qualname, short) or name.endswith("." + qualname):
                found.append((path, node.lineno))
    return sorted(found)


def _arity(arities: set[int]) -> str:
    words = [f"a {n}-tuple" if n else "a non-tuple" for n in sorted(arities)]
    return " or ".join(words) or "nothing"


def _commit_lines(commits: list[CommitInfo]) -> str:
    return "\n".join(f"- {code(c.sha[:10])} {c.summary} ({c.author})" for c in commits)


@register
class UpstreamDeltaCollector:
    name = "upstream_delta"
    title = "Upstream delta review"
    section = Section.ACTION_ITEMS
    shares, cost = "core", 7  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (
        "upstream_commits", "surface_changed", "surface_changed_unused", "surface_adapted",
        "surface_missing",
        "surface_stable",
        "new_public_api", "new_constructor", "new_model",
    )  # fmt: skip

    def __init__(self) -> None:
        self._modules: dict[str, ast.Module] | None = None  # the experiment's, parsed once

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress]:
        base, head = ctx.baseline_commit, ctx.head_commit
        if head is None:
            raise Skipped("no commit on HEAD before the run date")
        if base is None:
            raise Skipped(f"no commit before the baseline {ctx.since.date()} to compare with")
        upstream = ctx.config.upstream
        commits = ctx.source.log(base, head, upstream.core_paths)
        touched = {path for commit in commits for path in commit.files}
        yield Progress(self.name, 0, len(upstream.surfaces), f"{len(commits)} commits")
        if commits:
            yield ctx.finding(
                self.name, "upstream_commits", ("core",),
                f"{len(commits)} upstream commit{'s' if len(commits) != 1 else ''} on core "
                f"paths since {ctx.since.date()}",
                _commit_lines(commits),
                items=[c.sha for c in commits],
                evidence=Evidence(diff=ctx.source.diff_range(base, head, upstream.core_paths)),
            )  # fmt: skip
        for done, surface in enumerate(upstream.surfaces, 1):
            yield from self._surface(ctx, surface, base, head, touched, commits)
            yield Progress(self.name, done, len(upstream.surfaces), surface.name)
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
    ) -> Iterator[Finding | ConfigWarning]:
        key = (surface.target,)
        new = pyast.find(ctx.source.parse_at(head, surface.path), surface.qualname)
        old = (
            pyast.find(ctx.source.parse_at(base, surface.path), surface.qualname)
            if surface.path in touched
            else new
        )
        if new is None and old is None:
            # Not in the window's doing: scout.toml points where the code no longer is.
            warning, home = self._misplaced(ctx, surface, head)
            yield warning
            if home is None:
                return
            surface, followed = home, surface  # followed, under its configured key
            new = pyast.find(ctx.source.parse_at(head, surface.path), surface.qualname)
            old = pyast.find(ctx.source.parse_at(base, surface.path), surface.qualname) or \
                pyast.find(ctx.source.parse_at(base, followed.path), followed.qualname)  # fmt: skip
            touched = touched | {surface.path}
        finding = self._compared(ctx, surface, key, base, head, new, old, commits)
        if finding is not None:
            yield finding

    def _misplaced(self, ctx: CollectorContext, surface: Surface,
                   head: str) -> tuple[ConfigWarning, Surface | None]:  # fmt: skip
        """Why a configured surface is not where scout.toml says, and its new home when
        certain (then followed today)."""
        source = ctx.source
        where = f"`[upstream.surfaces]` {surface.target}"
        if source.read_at(head, surface.path) is None:
            fate = source.path_fate(surface.path, head)
            home = None
            if fate.kind == "moved" and fate.moved_to and pyast.find(
                source.parse_at(head, fate.moved_to), surface.qualname
            ) is not None:
                home = surface.model_copy(update={"target": f"{fate.moved_to}::{surface.qualname}"})
            what = f"{surface.path} does not exist"
        else:
            fate = source.definition_fate(surface.path, surface.qualname, head)
            home = surface.model_copy(update={"target": f"{fate.moved_to}::{surface.qualname}"}) \
                if fate.kind == "moved" and fate.moved_to else None  # fmt: skip
            what = f"{surface.qualname} is not in {surface.path}"
        commit = fate.commit
        when = (f"{commit.sha[:10]} ({commit.summary}, {commit.date.date()})"
                if commit else "")  # fmt: skip
        if home is not None:
            said = (f"{where}: {what}; it moved to {home.target} in {when}. Followed today; "
                    f"point scout.toml at {home.target}.")  # fmt: skip
        elif fate.kind == "never":
            said = (f"{where}: {what}, and never was in that file's history: a typo, or a name "
                    "from another branch? Fix or remove it in scout.toml.")  # fmt: skip
        elif fate.kind == "unknown":
            said = (f"{where}: {what} (this clone's history cannot tell since when). Point "
                    "scout.toml at its new home, or remove it.")  # fmt: skip
        else:
            said = (f"{where}: {what}; removed in {when}, with no single new home. Point "
                    "scout.toml at what replaced it, or remove it.")  # fmt: skip
        return ConfigWarning(collector=self.name, subject=where, message=said,
                             moved_to=home.target if home else None,
                             commit=commit.sha if commit else None), home  # fmt: skip

    def _experiment_modules(self, ctx: CollectorContext) -> dict[str, ast.Module]:
        """The experiment's modules, parsed once a run."""
        if self._modules is None:
            experiment = ctx.config.project.experiment
            self._modules = {p: tree for p in ctx.source.glob(experiment, "*.py")
                             if (tree := ctx.source.parse(p)) is not None}  # fmt: skip
        return self._modules

    def _dependence(self, ctx: CollectorContext, surface: Surface, old: ast.AST,
                    changes: list[str]) -> list[Dependence]:  # fmt: skip
        """The changes the experiment's code depends on."""
        parts = surface.qualname.split(".")
        if surface.check in ("signature", "returns"):
            outer, member = (parts[-2] if len(parts) > 1 else ""), parts[-1]
        else:
            outer, member = parts[-1], ""
        uses = uses_of(self._experiment_modules(ctx), outer, member, mention=parts[0])
        positions: dict[str, int] = {}
        arity: set[int] = set()
        if isinstance(old, ast.FunctionDef | ast.AsyncFunctionDef):
            params = pyast.signature(old)
            if len(parts) > 1 and params and params[0].name in ("self", "cls"):
                params = params[1:]  # a bound call does not pass it
            positions = {p.name: n for n, p in enumerate(params)}
            arity = pyast.return_arities(old)
        return depended_on(changes, uses, positions, arity)

    def _compared(self, ctx: CollectorContext, surface: Surface, key: tuple[str, ...],
                  base: str, head: str, new: ast.AST | None, old: ast.AST | None,
                  commits: list[CommitInfo]) -> Finding | None:  # fmt: skip
        ref = [FileRef(path=surface.path)]
        if new is None:
            return ctx.finding(
                self.name, "surface_missing", key,
                f"{code(surface.qualname)} disappeared from {code(surface.path)}",
                f"The experiment depends on {surface.name}; it existed at the baseline and "
                "is gone at HEAD (moved, renamed or deleted).",
                files=ref,
                evidence=Evidence(diff=_surface_diff(ctx, surface, base, head)),
            )  # fmt: skip
        if old is None:
            old = new  # appeared inside the window: nothing to compare yet
        changes = compare_surface(surface, old, new)
        if not changes:
            return ctx.finding(self.name, "surface_stable", key, surface.name, "stable")
        ref = [FileRef(path=surface.path, line=new.lineno)]
        by = _changed_by(ctx, surface, commits)
        experiment = ctx.config.project.experiment
        if by and all(_adapts(ctx, c, surface, experiment) for c in by):
            # The commit that changed it upstream changed the experiment's use too: adapted.
            finding = ctx.finding(
                self.name, "surface_adapted", key,
                f"{surface.name} changed upstream, the experiment adapted in the same "
                f"commit{'s' if len(by) > 1 else ''}: {changes[0]}"
                + (f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""),
                "\n".join(f"- {change}" for change in changes)
                + "\n\nAdapted in the same commit (it also changed "
                + f"{code(experiment)}):\n" + _commit_lines(by),
                files=ref, items=changes,
                evidence=Evidence(diff=_surface_diff(ctx, surface, base, head)),
            )  # fmt: skip
            # Yesterday's "changed" marker for it still matches.
            return finding.model_copy(update={"aliases": sorted({
                *finding.aliases, fingerprint("surface_changed", *key)})})  # fmt: skip
        deps = self._dependence(ctx, surface, old, changes)
        if not deps:
            # True, but nothing the experiment uses: a line to know, not a task.
            finding = ctx.finding(
                self.name, "surface_changed_unused", key,
                f"{surface.name} changed upstream, not in what the experiment uses: "
                f"{changes[0]}" + (f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""),
                "\n".join(f"- {change}" for change in changes)
                + "\n\nThe experiment does not call, override, patch or read what changed."
                + ("\n\nChanged by:\n" + _commit_lines(by) if by else ""),
                files=ref, items=changes,
                evidence=Evidence(diff=_surface_diff(ctx, surface, base, head)),
            )  # fmt: skip
            return finding.model_copy(update={"aliases": sorted({
                *finding.aliases, fingerprint("surface_changed", *key)})})  # fmt: skip
        because = {d.change: d.because for d in deps}
        return ctx.finding(
            self.name, "surface_changed", key,
            f"{surface.name} changed upstream: {deps[0].change}"
            + (f" (+{len(changes) - 1} more)" if len(changes) > 1 else ""),
            "\n".join(f"- {change}" + (f" — the experiment depends on it: {because[change]}"
                                       if change in because else " (not used by the experiment)")
                      for change in changes)
            + ("\n\nChanged by:\n" + _commit_lines(by) if by else ""),
            suggested_fix=f"Update the experiment's use of {code(surface.qualname)} to match.",
            files=ref, items=changes,
            evidence=Evidence(diff=_surface_diff(ctx, surface, base, head)),
        )  # fmt: skip

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
                name for name, node in sorted(pyast.public_methods(new).items())
                if name not in before and pyast.is_constructor(node)
            ]  # fmt: skip
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
                self.name, "new_constructor", (path, qualname, *added),
                f"New alternate constructor {names}",
                f"{names} appeared upstream since {ctx.since.date()}.{where}",
                files=[FileRef(path=path, line=new.lineno)]
                + [FileRef(path=p, line=line) for p, line in uses[:10]],
                items=added,
            )  # fmt: skip

    def _new_api(
        self, ctx: CollectorContext, base: str, head: str, touched: set[str]
    ) -> Iterator[Finding]:
        dirs = ctx.config.upstream.new_api_dirs
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
            # A name some other file defined at the baseline moved here: not new.
            added = [name for name in appeared if not ctx.source.definitions(name, base)]
            if not added:
                continue
            names = ", ".join(code(name) for name in added)
            importers = self._importers(ctx, path)
            where = ", ".join(code(i) for i in importers[:3])
            why = (f" The experiment imports from this module ({where}): check what it now "
                   "offers." if importers else
                   " Check whether it replaces something the experiment hand-rolls.")  # fmt: skip
            yield ctx.finding(
                self.name, "new_public_api", (path, *added),
                f"New upstream API in {code(path)}: {names}",
                f"{names} appeared in {code(path)} since {ctx.since.date()}.{why}",
                files=[FileRef(path=path)], items=added,
                evidence=Evidence(diff=ctx.source.diff_range(base, head, [path])),
            )  # fmt: skip

    def _importers(self, ctx: CollectorContext, path: str) -> list[str]:
        """The experiment's modules that import from the module at `path`."""
        module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        found = []
        for name, tree in self._experiment_modules(ctx).items():
            for node in ast.walk(tree):
                if (isinstance(node, ast.ImportFrom) and node.module == module) or (
                    isinstance(node, ast.Import) and any(a.name == module for a in node.names)
                ):
                    found.append(f"{name.rsplit('/', 1)[-1]}:{node.lineno}")
                    break
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
                self.name, "new_model", (path,),
                f"New upstream model {code(path)}",
                f"{code(path)} was added since {ctx.since.date()}; the experiment could add a "
                "config for it.",
                files=[FileRef(path=path)],
            )  # fmt: skip
