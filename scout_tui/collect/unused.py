"""Unused code and options: cleanups (SPEC §2.1 item 4, technical debt).

Top-level functions and classes of the experiment that nothing in the repository names —
no code, string, config, doc, script or test — and fields of the experiment's config
dataclasses (`--section.option` flags) that nothing reads. Each kind is one finding with
the list. Anything that may reach a name without writing it (a registering decorator or
base class, a module looked up by a name built at run time, a config object handed whole
to code outside the repository) counts as a use: a false "dead" costs more than a miss.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fnmatch import fnmatch

from git import GitCommandError

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.definitions import pass_definitions
from scout_tui.analysis.python.unused import (
    Defined,
    Field,
    dynamic_module_suffixes,
    is_builtin_class,
    passed_whole,
    read_names,
    top_level_definitions,
)
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import Collector, CollectorContext, Kind, Need, Progress
from scout_tui.collect.config_types import ClassRef, ConfigTypes, extending_configs
from scout_tui.model import FileRef, Finding, Section

_MAX_BASES = 8  # inheritance followed this deep; past it, a base is uncertain


def _words(names: set[str]) -> re.Pattern[str]:
    return re.compile(
        r"\b(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")\b"
    )


class UnusedCollector(Collector):
    name = "unused"
    title = "Unused code and options"
    section = Section.OPPORTUNITIES
    shares, cost = "experiment", 4  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (Kind("code_dead"), Kind("flag_unused"))

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress]:
        yield Progress(self.name, 1, 2, "dead code")
        yield from self._dead_code(ctx)
        yield Progress(self.name, 2, 2, "unused options")
        yield from self._unused_flags(ctx)

    # --- code nothing names -------------------------------------------------------------

    def _modules(self, ctx: CollectorContext) -> list[str]:
        """The experiment's code: not its tests, not test files."""
        config = ctx.config
        tests_dir = config.experiment_path(config.ci.tests_dir) + "/"
        return [
            p
            for p in ctx.source.glob(config.project.experiment, "*.py")
            if not p.startswith(tests_dir)
            and not fnmatch(p.rsplit("/", 1)[-1], "test_*.py")
            and p.rsplit("/", 1)[-1] != "conftest.py"
        ]

    def _dynamic(self, ctx: CollectorContext) -> set[str]:
        """Module names whose functions the repository looks up by a name built at run time
        (and the config registries scout.toml names, looked up the same way)."""
        found = {name.removesuffix(".py") for name in ctx.config.coverage.config_registries}
        for path in ctx.source.grep_files("import_module"):
            found |= dynamic_module_suffixes(ctx.source.parse(path))
        return found

    def _dead_code(self, ctx: CollectorContext) -> Iterator[Finding]:
        config = ctx.config
        pass_patterns = config.coverage.pass_files
        dynamic = self._dynamic(ctx)
        candidates: list[Defined] = []
        for path in self._modules(ctx):
            stem = path.rsplit("/", 1)[-1].removesuffix(".py")
            if stem in dynamic:
                continue
            tree = ctx.source.parse(path)
            # Passes are the coverage collector's (`pass_dead`): said once, there.
            passes = (
                {d.name for d in pass_definitions(path, tree)}
                if any(fnmatch(path.rsplit("/", 1)[-1], p) for p in pass_patterns)
                else set()
            )
            candidates += [
                d
                for d in top_level_definitions(path, tree)
                if d.name not in passes and (not d.is_class or self._plain_bases(ctx, path, d))
            ]
        if not candidates:
            return
        names = {d.name for d in candidates}
        defined_on: dict[tuple[str, int], set[str]] = {}
        for d in candidates:
            defined_on.setdefault((d.path, d.line), set()).add(d.name)
        named: set[str] = set()
        pattern = _words(names)
        for hit in ctx.source.grep_words(sorted(names)):
            # The definition's own line names it; another name on it still counts.
            own = defined_on.get((hit.path, hit.line), set())
            named |= set(pattern.findall(hit.text)) - own
        dead = sorted(
            (d for d in candidates if d.name not in named), key=lambda d: (d.path, d.line)
        )
        if not dead:
            return
        experiment = config.project.experiment.rstrip("/") + "/"
        where = lambda d: d.path.removeprefix(experiment)  # noqa: E731
        yield ctx.finding(
            self.name,
            "code_dead",
            (config.project.experiment,),
            f"{len(dead)} function{'s' if len(dead) != 1 else ''} or class"
            f"{'es' if len(dead) != 1 else ''} nothing in the repository names",
            "No code, string, config, doc, script or test of the repository names "
            f"{'these' if len(dead) != 1 else 'it'}, and nothing registers "
            f"{'them' if len(dead) != 1 else 'it'} (decorator, base class, `__all__`):\n\n"
            + "\n".join(f"- {code(d.name)} ({code(f'{where(d)}:{d.line}')})" for d in dead),
            suggested_fix="Delete what is no longer wanted; wire in what was meant to run.",
            files=[FileRef(path=d.path, line=d.line) for d in dead],
            items=[f"{where(d)}: {d.name}" for d in dead],
        )

    def _plain_bases(self, ctx: CollectorContext, path: str, defined: Defined) -> bool:
        """Whether no class the definition inherits from may register its subclasses: every
        base is a builtin class or a repository class that does not (nor its bases). A base
        scout cannot read (another package's) is uncertain: not plain."""
        pending = [(path, base, 0) for base in defined.bases]
        while pending:
            where, base, depth = pending.pop()
            tree = ctx.source.parse(where)
            defined_here = tree is not None and pyast.definition_of(tree, base) is not None
            if is_builtin_class(base) and not defined_here and base not in pyast.import_map(tree):
                continue
            ref = ConfigTypes(ctx).resolve(where, base)
            if ref is None or depth >= _MAX_BASES:
                return False
            home, node = ref
            if node.registers_subclasses:
                return False
            pending += [(home, b, depth + 1) for b in node.bases]
        return True

    # --- options nothing reads ----------------------------------------------------------

    def _config_fields(
        self, ctx: CollectorContext
    ) -> tuple[list[Field], dict[tuple[str, int], set[str]]]:
        """The fields of the experiment's config classes the root configs reach, and for each
        field (by path and line) the attribute names its class is reached by (`compile` for
        `--compile.x`)."""
        config = ctx.config
        types = ConfigTypes(ctx)
        targets = list(config.docs.root_configs)
        targets += [t for t in extending_configs(ctx, targets) if t not in targets]
        layer: list[tuple[str, ClassRef]] = [
            ("", ref)
            for target in targets
            for path, _, qualname in [target.partition("::")]
            for ref in [types.resolve(path, qualname)]
            if ref is not None
        ]
        experiment = config.project.experiment.rstrip("/") + "/"
        tests_dir = config.experiment_path(config.ci.tests_dir) + "/"
        fields: dict[tuple[str, int], Field] = {}
        sections: dict[tuple[str, int], set[str]] = {}
        seen: set[tuple[str, int]] = set()
        for _ in range(4):
            following = []
            for prefix, ref in layer:
                for path, node in self._lineage(types, ref):
                    if not path.startswith(experiment) or path.startswith(tests_dir):
                        continue
                    for name, line in node.own_fields:
                        fields.setdefault(
                            (path, line), Field(name, node.name, path, line, prefix + name)
                        )
                        if prefix:
                            section = prefix.rstrip(".").rsplit(".", 1)[-1]
                            sections.setdefault((path, line), set()).add(section)
                if (prefix, id(ref[1])) in seen:
                    continue
                seen.add((prefix, id(ref[1])))
                for name, (annotation, path) in types.fields(ref).items():
                    for type_name in types._type_names(annotation):
                        nested = types.resolve(path, type_name)
                        if nested is not None:
                            following.append((f"{prefix}{name}.", nested))
            layer = following
        return sorted(fields.values(), key=lambda f: (f.path, f.line)), sections

    @staticmethod
    def _lineage(types: ConfigTypes, ref: ClassRef) -> list[ClassRef]:
        """The class and the classes it inherits from that the repository defines."""
        found: list[ClassRef] = []
        pending = [ref]
        while pending and len(found) < _MAX_BASES:
            path, node = pending.pop()
            found.append((path, node))
            pending += [
                parent
                for base in node.bases
                for parent in [types.resolve(path, base)]
                if parent is not None
            ]
        return found

    def _unused_flags(self, ctx: CollectorContext) -> Iterator[Finding]:
        fields, sections = self._config_fields(ctx)
        if not fields:
            return
        names = {f.name for f in fields}
        files: dict[str, set[str]] = {}
        read: set[str] = set()
        pattern = _words(names)
        for hit in ctx.source.grep_words(sorted(names), ("*.py",)):
            for name in pattern.findall(hit.text):
                files.setdefault(hit.path, set()).add(name)
        for path, here in sorted(files.items()):
            left = frozenset(here - read)
            if not left:
                continue
            tree = ctx.source.parse(path)
            if tree is None:  # unparsable: what reads like a read counts (scout cannot tell)
                text = ctx.source.read(path) or ""
                read |= {n for n in left if re.search(rf"\.{n}\b|[\"']{n}[\"']", text)}
            else:  # code only: a docstring or comment that names `cfg.x` reads nothing
                read |= read_names(tree, left)
        unread = [f for f in fields if f.name not in read]
        if not unread:
            return
        # A config object handed whole to code outside the repository: what reads it is
        # unknown, so none of its fields is unused.
        reached = {s for f in unread for s in sections.get((f.path, f.line), set())}
        head = ctx.head_commit or "HEAD"
        escaped: set[str] = set()
        for path in {h.path for h in ctx.source.grep_words(sorted(reached), ("*.py",))}:
            for passed in passed_whole(ctx.source.parse(path), frozenset(reached)):
                section, _, origin = passed.partition(" ")
                if not _in_repository(ctx, origin):
                    escaped.add(section)
        unread = [f for f in unread if not sections.get((f.path, f.line), set()) & escaped]
        if not unread:
            return
        experiment = ctx.config.project.experiment.rstrip("/") + "/"
        rows = []
        for f in unread:
            try:
                added = ctx.source.pickaxe(f"{f.name}:", f.path, head)
            except GitCommandError:  # an unreadable history only loses the commit
                added = None
            since = f", added in {code(added.sha[:10])} ({added.summary})" if added else ""
            where = f"{f.path.removeprefix(experiment)}:{f.line}"
            rows.append(
                f"- {code('--' + f.flag)} ({code(f.cls + '.' + f.name)}, {code(where)}){since}"
            )
        yield ctx.finding(
            self.name,
            "flag_unused",
            (ctx.config.project.experiment,),
            f"{len(unread)} config option{'s' if len(unread) != 1 else ''} nothing reads",
            "The experiment defines these options, and no code of the repository reads "
            f"{'them' if len(unread) != 1 else 'it'} (no attribute read, no string naming "
            f"{'them' if len(unread) != 1 else 'it'}, no parameter of that name):\n\n"
            + "\n".join(rows),
            suggested_fix="Remove the option, or read it where it was meant to take effect.",
            files=[FileRef(path=f.path, line=f.line) for f in unread],
            items=["--" + f.flag for f in unread],
        )


def _in_repository(ctx: CollectorContext, origin: str) -> bool:
    """Whether a dotted origin (`pkg.sub.name`, `torch._dynamo`) is the repository's own:
    it, or a module it is in, is `pkg/sub.py` or a package of the repository."""
    parts = origin.split(".")
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end])
        if any(ctx.source.exists(p) for p in (f"{path}.py", f"{path}/__init__.py")):
            return True
    return False
