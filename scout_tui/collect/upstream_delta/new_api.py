"""New upstream API the experiment could use."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator, Set

from scout_tui.analysis.python import pyast
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import CollectorContext, Note
from scout_tui.collect.upstream_delta.surfaces import (
    GENERIC_TERMS,
    NAME,
    constructions,
    name_words,
    top_level_names,
    under,
)
from scout_tui.model import Evidence, FileRef, Finding
from scout_tui.source.records import CommitInfo


class NewApi:
    """New upstream API the experiment could use: alternate constructors of the surfaces'
    classes, new public names in modules it imports, new models."""

    name = NAME

    def __init__(self, modules: dict[str, ast.Module], ours: set[str]) -> None:
        self._modules = modules  # the experiment's, parsed
        self._ours = ours  # commits of the window that changed the experiment
        self._terms: set[str] | None = None  # two-word terms of its identifiers

    def _experiment_modules(self, ctx: CollectorContext) -> dict[str, ast.Module]:
        return self._modules

    def constructors(
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
                if name not in before and pyast.is_constructor(node, qualname.rsplit(".", 1)[-1])
            ]
            if not added:
                continue
            uses = constructions(ctx, qualname)
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

    def public_names(
        self, ctx: CollectorContext, base: str, head: str, touched: set[str]
    ) -> Iterator[Finding | Note]:
        dirs = ctx.config.upstream.new_api_dirs
        unrelated: list[tuple[str, list[str], CommitInfo | None]] = []
        yield from self._new_api_modules(ctx, base, head, touched, dirs, unrelated)
        # Nothing in the experiment imports their module or hand-rolls what they do, or the
        # commit that added them changed the experiment too: no opportunity, a line in the
        # run's record (the upstream commits' FYI already names the commits).
        for path, names, commit in unrelated:
            taken = (
                f", added by {commit.sha[:10]}, which also changed the experiment" if commit else ""
            )
            yield Note(
                f"New upstream API not for the experiment in {path}: {', '.join(names)}{taken}."
            )

    def _shared_terms(self, ctx: CollectorContext, names: list[str]) -> list[str]:
        """Two-word terms of the new names (`AllGatherLinear` → `all_gather`,
        `gather_linear`) that the names of the experiment's own functions and classes also
        use: a sign it hand-rolls something like it."""
        if self._terms is None:
            # What it hand-rolls is what it defines: its functions and classes (not its
            # tests), never a local variable or a call to someone else's function.
            words: set[str] = set()
            for tree in self._experiment_modules(ctx).values():
                for node in pyast.nodes(tree, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                    name = getattr(node, "name", "")
                    if name.startswith(("test", "Test")):
                        continue
                    parts = name_words(name)
                    words |= {f"{a}_{b}" for a, b in itertools.pairwise(parts)}
            self._terms = words - GENERIC_TERMS
        found = []
        for name in names:
            parts = name_words(name)
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
        for path in sorted(p for p in touched if p.endswith(".py") and under(p, dirs)):
            # Most touched files define no new top-level name: a line scan says so without
            # parsing two versions; the AST decides only when the scan sees a difference.
            if top_level_names(ctx.source.read_at(head, path)) <= top_level_names(
                ctx.source.read_at(base, path)
            ):
                continue
            new_tree, old_tree = ctx.source.parse_at(head, path), ctx.source.parse_at(base, path)
            appeared = _not_renamed(
                new_tree,
                old_tree,
                sorted(pyast.public_names(new_tree) - pyast.public_names(old_tree)),
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
            # Importing from a module makes none of its new names an opportunity; a name of
            # the experiment's own code that speaks of the same thing does.
            if adopted or not shared:
                unrelated.append((path, added, adopted[0] if adopted else None))
                continue
            why = (
                " The experiment's own functions or classes speak of "
                f"{', '.join(code(t) for t in shared[:3])}: check whether it replaces something"
                " it hand-rolls."
                + (f" It imports from this module already ({where})." if importers else "")
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

    def models(self, ctx: CollectorContext, base: str, head: str) -> Iterator[Finding]:
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


def _not_renamed(new: ast.Module | None, old: ast.Module | None, appeared: list[str]) -> list[str]:
    """The names that appeared, less renames: new classes or functions that take the place
    of as many public ones of the same kind the module no longer defines (`TrainContext` →
    `SpmdContext`) are an old API under new names, not new ones."""

    def kinds(tree: ast.Module | None, names: Set[str]) -> dict[str, str]:
        return {
            node.name: "class" if isinstance(node, ast.ClassDef) else "function"
            for node in (tree.body if tree is not None else [])
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name in names
        }

    gone = list(kinds(old, pyast.public_names(old) - pyast.public_names(new)).values())
    defined = kinds(new, set(appeared))
    came = list(defined.values())
    # As many gone as came, kind by kind: renames. More came than went: new ones among them,
    # and which is which is a guess scout does not make.
    renamed = {kind for kind in set(came) if came.count(kind) <= gone.count(kind)}
    return [name for name in appeared if defined.get(name) not in renamed]
