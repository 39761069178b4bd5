"""Code freshness and technical debt (SPEC §2.1 item 4).

Monkey-patches against the current upstream signature, private torch APIs (and whether
the installed torch now has a public name for them), duplicated logic between configured
file pairs, and how the config converter treats each base-config field.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from git import GitCommandError

from scout_tui.analysis.python import pyast, shapes
from scout_tui.analysis.python.definitions import comment_above, override_definitions
from scout_tui.analysis.python.freshness import (
    Patch,
    constants_set,
    converter_drift,
    converter_uses,
    forced_values,
    monkey_patches,
    private_imports,
    public_candidates,
    signature_mismatch,
    similar_functions,
)
from scout_tui.analysis.python.torch_api import TorchIndex
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import Collector, CollectorContext, Kind, Need, Progress, Unchecked
from scout_tui.model import Evidence, FileRef, Finding, Section, fingerprint


def _module_path(ctx: CollectorContext, dotted_module: str) -> str | None:
    base = dotted_module.replace(".", "/")
    for candidate in (f"{base}.py", f"{base}/__init__.py"):
        if ctx.source.exists(candidate):
            return candidate
    return None


def _explained(lines: list[str], converter: ast.FunctionDef, name: str, docstring: str) -> bool:
    """Whether the converter says why it treats `name` so: its docstring names the field,
    or a comment sits above a line of the converter that names it."""
    if re.search(rf"\b{re.escape(name)}\b", docstring):
        return True
    pattern = re.compile(rf"[\"']{re.escape(name)}[\"']|\b{re.escape(name)}\s*=")
    for number in range(converter.lineno, (converter.end_lineno or converter.lineno) + 1):
        if (
            number <= len(lines)
            and pattern.search(lines[number - 1])
            and comment_above(lines, number)
        ):
            return True
    return False


class FreshnessCollector(Collector):
    name = "freshness"
    title = "Code freshness and technical debt"
    section = Section.ACTION_ITEMS
    shares, cost = "experiment", 5  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (
        Kind("stale_monkey_patch"),
        Kind("monkey_patch_stable"),
        Kind("private_api"),
        Kind("private_api_public_alt"),
        Kind("duplicated_logic"),
        Kind("config_drift"),
        Kind("config_overrides"),
        Kind("config_conflict"),
        Kind("config_mismatch"),
    )

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress | Unchecked]:
        config = ctx.config
        tests_dir = config.experiment_path(config.ci.tests_dir) + "/"
        files = [
            p
            for p in ctx.source.glob(config.project.experiment, "*.py")
            if not p.startswith(tests_dir)
        ]
        yield Progress(self.name, 1, 4, "monkey-patches")
        stable: list[Finding] = []
        for path in files:
            for patch in monkey_patches(path, ctx.source.parse(path)):
                finding = self._patch(ctx, patch)
                if isinstance(finding, Unchecked):
                    yield finding
                elif finding is not None and finding.kind == "monkey_patch_stable":
                    stable.append(finding)
                elif finding is not None:
                    yield finding
        if stable:  # an inventory: one All Clear line, not one per patch every day
            titles = list(dict.fromkeys(f.title.removesuffix(" patch") for f in stable))
            yield ctx.finding(
                self.name,
                "monkey_patch_stable",
                (config.project.experiment,),
                f"{len(titles)} monkey-patch{'es' if len(titles) != 1 else ''} of upstream "
                "still fit",
                "Each wraps the original or matches the upstream signature: "
                + ", ".join(code(t) for t in titles)
                + ".",
                files=[file for f in stable for file in f.files][:50],
                items=sorted(titles),
            )
        yield Progress(self.name, 2, 4, "private APIs")
        yield from self._private(ctx, files)
        yield Progress(self.name, 3, 4, "duplicated logic")
        for left, right in config.freshness.duplicate_pairs:
            finding = self._duplicates(ctx, left, right)
            if finding is not None:
                yield finding
        yield Progress(self.name, 4, 4, "config drift")
        yield from self._conflicts(ctx)
        finding = self._drift(ctx)
        if finding is not None:
            yield finding

    def _upstream_path(self, ctx: CollectorContext, patch: Patch) -> str | None:
        module = patch.target.rsplit(".", 1)[0]
        path = _module_path(ctx, module)
        if path is not None:
            return path
        for configured in ctx.config.freshness.monkey_patches:
            where, _, qualname = configured.partition("::")
            if qualname == patch.label:
                return where
        return None

    def _patch(self, ctx: CollectorContext, patch: Patch) -> Finding | Unchecked | None:
        upstream_path = self._upstream_path(ctx, patch)
        if upstream_path is None:
            return None  # patching something outside this repository (torch, say)
        key = (patch.label,)
        files = [FileRef(path=patch.path, line=patch.line), FileRef(path=upstream_path)]
        upstream = pyast.find(ctx.source.parse(upstream_path), patch.label)
        if ctx.source.unreadable(upstream_path):
            return Unchecked(key)  # not known to be stale or fit: the warning names the file
        if upstream is None or isinstance(upstream, ast.ClassDef):
            return ctx.finding(
                self.name,
                "stale_monkey_patch",
                key,
                f"Monkey-patch of {code(patch.label)} targets a method that no longer exists",
                f"{code(patch.path)} patches {code(patch.label)}, which {code(upstream_path)} "
                "no longer defines: the patch silently adds a method nobody calls.",
                files=files,
                items=["target missing"],
            )
        if patch.wraps_original:
            return ctx.finding(
                self.name,
                "monkey_patch_stable",
                key,
                f"{patch.label} patch",
                "wraps the original, signature-independent",
            )
        if patch.function is None:
            return None
        current = shapes.signature(upstream)
        problems = signature_mismatch(shapes.signature(patch.function), current)
        if not problems:
            return ctx.finding(
                self.name, "monkey_patch_stable", key, f"{patch.label} patch", "signature-stable"
            )
        diff = (
            f"upstream: {shapes.format_signature(patch.label, current)}\n"
            "patch:    "
            + shapes.format_signature(patch.function.name, shapes.signature(patch.function))
        )
        return ctx.finding(
            self.name,
            "stale_monkey_patch",
            key,
            f"Monkey-patch of {code(patch.label)} is stale: {problems[0]}",
            "\n".join(f"- {problem}" for problem in problems),
            suggested_fix=f"Update {code(patch.function.name)} in {code(patch.path)} to the "
            "current upstream signature.",
            files=files,
            items=problems,
            evidence=Evidence(diff=diff),
        )

    def _private(self, ctx: CollectorContext, files: list[str]) -> Iterator[Finding | Unchecked]:
        configured = ctx.config.freshness.private_apis
        uses: dict[str, list] = {}
        for path in files:
            for use in private_imports(path, ctx.source.parse(path), configured):
                uses.setdefault(use.dotted, []).append(use)
        if not uses:
            return
        experiment = ctx.config.project.experiment
        torch = TorchIndex(ctx.torch_root) if ctx.torch_root else None
        alternatives: dict[str, str] = {}
        if torch is not None:
            for dotted, found in uses.items():
                use = found[0]
                for candidate in public_candidates(use):
                    module = candidate.rsplit(".", 1)[0]
                    if torch.reexports(module, use.name, use.module):
                        alternatives[dotted] = candidate
                        break
        note = ""
        if torch is None:
            note = f"\n\nPublic alternatives not checked: skipped — {ctx.torch_reason}."
            # Only torch could say whether a public name exists now: neither found nor gone.
            yield Unchecked((experiment,), ("private_api_public_alt",))
        # A fixed list repeated every day is noise: what changed since the baseline is news.
        before = self._private_at_baseline(ctx, configured)
        count = f"{len(uses)} private torch API{'s' if len(uses) != 1 else ''} in use"
        if before is None:
            title, shown = count, sorted(uses)
            head = "Private names can change in any nightly (no baseline to compare with):"
        else:
            added = sorted(set(uses) - before)
            gone = sorted(before - set(uses))
            since = ctx.since.date()
            title = (
                f"{count}: {len(added)} new {ctx.since_words()}"
                if added
                else f"{count}, none new {ctx.since_words()}"
            )
            shown = added
            head = (
                (f"New since the baseline ({since}); private names can change in any nightly:")
                if added
                else (
                    f"No private torch API newly used "
                    f"{ctx.since_words()}; the {len(uses)} in use are "
                    "unchanged."
                )
            )
            if gone:
                note = "\n\nNo longer used: " + ", ".join(code(d) for d in gone) + "." + note
            others = len(uses) - len(added)
            if others and added:
                note += (
                    f"\n\n{others} other{'s' if others != 1 else ''}, in use since before "
                    f"{since}, unchanged."
                )
        rows = "\n".join(
            f"- {code(dotted)} in "
            + ", ".join(code(f"{u.path.rsplit('/', 1)[-1]}:{u.line}") for u in uses[dotted][:3])
            + (f" and {len(uses[dotted]) - 3} more" if len(uses[dotted]) > 3 else "")
            for dotted in shown
        )
        yield ctx.finding(
            self.name,
            "private_api",
            (experiment,),
            title,
            head + ("\n\n" + rows if rows else "") + note,
            files=[FileRef(path=u.path, line=u.line) for d in shown for u in uses[d]][:50],
            items=sorted(uses),
        )
        if alternatives:
            rows = "\n".join(f"- {code(a)} → {code(b)}" for a, b in sorted(alternatives.items()))
            yield ctx.finding(
                self.name,
                "private_api_public_alt",
                (experiment,),
                f"{len(alternatives)} private torch import{'s' if len(alternatives) != 1 else ''}"
                " now " + ("have" if len(alternatives) != 1 else "has") + " a public name",
                f"The installed torch exports these publicly:\n\n{rows}",
                suggested_fix="Import from the public location.",
                files=[FileRef(path=u.path, line=u.line) for a in alternatives for u in uses[a]],
                items=sorted(alternatives),
            )

    @staticmethod
    def _private_at_baseline(ctx: CollectorContext, configured: list[str]) -> set[str] | None:
        base = ctx.baseline_commit
        if base is None:
            return None
        config = ctx.config
        tests_dir = config.experiment_path(config.ci.tests_dir) + "/"
        found: set[str] = set()
        for path in ctx.source.python_files_at(base, config.project.experiment):
            if not path.startswith(tests_dir):
                found.update(
                    use.dotted
                    for use in private_imports(path, ctx.source.parse_at(base, path), configured)
                )
        return found

    def _duplicates(self, ctx: CollectorContext, left: str, right: str) -> Finding | None:
        pairs = similar_functions(
            ctx.source.parse(left),
            ctx.source.parse(right),
            ctx.config.thresholds.duplicate_similarity,
        )
        if not pairs:
            return None
        rows = "\n".join(
            f"- {code(p.left)} ({left.rsplit('/', 1)[-1]}:{p.left_line}) ~ {code(p.right)} "
            f"({right.rsplit('/', 1)[-1]}:{p.right_line}), {p.ratio:.0%} alike"
            for p in pairs
        )
        return ctx.finding(
            self.name,
            "duplicated_logic",
            (left, right),
            f"{code(left.rsplit('/', 1)[-1])} duplicates logic of {code(right)}",
            f"Functions with the same shape (names aside):\n\n{rows}",
            suggested_fix=f"Reuse {code(right)} where the logic really is the same.",
            files=[FileRef(path=left), FileRef(path=right)],
            items=[f"{p.left}~{p.right}" for p in pairs],
        )

    def _conflicts(self, ctx: CollectorContext) -> Iterator[Finding]:
        """A value the converter forces that a registered config sets otherwise, in itself
        or in the base config it converts: that combination is broken by construction."""
        freshness = ctx.config.freshness
        conv_path, _, conv_name = freshness.config_converter.partition("::")
        converter = pyast.find(ctx.source.parse(conv_path), conv_name) if conv_name else None
        if not isinstance(converter, ast.FunctionDef):
            return
        forced = forced_values(converter)
        if not forced:
            return
        names = set(ctx.config.coverage.config_registries)
        registries = [
            p
            for p in ctx.source.glob(ctx.config.project.experiment, "*.py")
            if p.rsplit("/", 1)[-1] in names
        ]
        for path in registries:
            tree = ctx.source.parse(path)
            for function, base_name in converter_uses(tree, conv_name):
                base = self._function(ctx, path, tree, base_name)
                if base is None:
                    continue
                base_path, base_function = base
                for force in forced:
                    others = [
                        (v, line)
                        for v, line in constants_set(base_function, force.name)
                        if v != force.value
                    ]
                    if not others or constants_set(function, force.name):
                        continue  # agrees, or the registered config sets it back itself
                    value, line = others[0]
                    flag = f"{force.field}.{force.name}"
                    words = set(
                        re.findall(r"\w+", ast.unparse(base_function) + ast.unparse(function))
                    )
                    check = self._rejecting_check(ctx, force.name, value, force.value, words)
                    places = (
                        f"{code(function.name)} ({code(f'{path}:{function.lineno}')}) "
                        f"converts {code(base_name)}, which sets {code(flag)} to "
                        f"{code(value)} ({code(f'{base_path}:{line}')}); {code(conv_name)} "
                        f"forces it to {code(force.value)} "
                        f"({code(f'{conv_path}:{force.line}')})."
                    )
                    files = [
                        FileRef(path=path, line=function.lineno),
                        FileRef(path=base_path, line=line),
                        FileRef(path=conv_path, line=force.line),
                    ]
                    try:  # since when the converter forces it: the commit that broke it
                        # The forcing line as written (`spmd_backend="partial_dtensor",`):
                        # the last commit that changed how often it appears added it.
                        written = (ctx.source.read(conv_path) or "").splitlines()
                        needle = (
                            written[force.line - 1].strip().rstrip(",")
                            if 0 < force.line <= len(written)
                            else ""
                        )
                        since = (
                            ctx.source.pickaxe(needle, conv_path, ctx.head_commit or "HEAD")
                            if needle
                            else None
                        )
                    except GitCommandError:
                        since = None
                    if since is not None:
                        places += (
                            f" The converter forces it since {code(since.sha[:10])} "
                            f"({since.summary})."
                        )
                    if check is not None:  # something on its path rejects the forced value
                        yield ctx.finding(
                            self.name,
                            "config_conflict",
                            (path, function.name, flag),
                            f"{code(function.name)} cannot run as configured: "
                            f"{code(conv_name)} forces {code(flag)} = {code(force.value)}, its "
                            f"base sets {code(value)}",
                            places + f" {code(check)} rejects anything but {code(value)}: the "
                            "combination is broken by construction.",
                            suggested_fix=f"Set {code(flag)} back in {code(function.name)} "
                            "after the conversion, or stop forcing it in the converter.",
                            files=files,
                            items=[f"{flag}: {value} → {force.value}"],
                        )
                    elif not self._runs_in_ci(ctx, function.name):
                        # It runs in CI as it is: it works, the override is the choice.
                        yield ctx.finding(
                            self.name,
                            "config_mismatch",
                            (path, function.name, flag),
                            f"{code(function.name)} runs with {code(flag)} = "
                            f"{code(force.value)}, not the {code(value)} its base sets",
                            places + " No check on its path rejects that value and no enabled "
                            "integration test runs it: confirm the override is meant for it.",
                            files=files,
                            items=[f"{flag}: {value} → {force.value}"],
                        )

    def _runs_in_ci(self, ctx: CollectorContext, name: str) -> bool:
        """Whether an enabled integration entry of the experiment selects the config."""
        coverage = ctx.config.coverage
        if not coverage.experiment_integration_tests:
            return False
        path = ctx.config.experiment_path(coverage.experiment_integration_tests)
        return any(
            name in text
            for entry in override_definitions(ctx.source.parse(path))
            if not entry.disabled
            for text in entry.strings
        )

    def _rejecting_check(
        self, ctx: CollectorContext, option: str, needed: str, forced: str, words: set[str]
    ) -> str | None:
        """An `if` that raises, with a message naming `option`, comparing against the value
        the config needs (`!=`) or the forced one (`==`), in a module the config names
        (`tp_gemm_backend="dist_gemm"` names dist_gemm.py): "path:line", or None."""
        for path in ctx.source.grep_files(option):
            if path.rsplit("/", 1)[-1].removesuffix(".py") not in words:
                continue
            for node in pyast.nodes(ctx.source.parse(path), ast.If):
                assert isinstance(node, ast.If)
                test = node.test
                if not (
                    isinstance(test, ast.Compare)
                    and len(test.ops) == 1
                    and isinstance(test.comparators[0], ast.Constant)
                ):
                    continue
                against = ast.unparse(test.comparators[0])
                rejects = (isinstance(test.ops[0], ast.NotEq) and against == needed) or (
                    isinstance(test.ops[0], ast.Eq) and against == forced
                )
                raises = [r for s in node.body for r in ast.walk(s) if isinstance(r, ast.Raise)]
                if rejects and any(option in ast.unparse(r) for r in raises):
                    return f"{path}:{node.lineno}"
        return None

    @staticmethod
    def _function(
        ctx: CollectorContext, path: str, tree: ast.Module | None, name: str
    ) -> tuple[str, ast.FunctionDef] | None:
        """A function named in `path`: defined there, or imported from the repository."""
        local = pyast.find(tree, name)
        if isinstance(local, ast.FunctionDef):
            return path, local
        origin = pyast.import_map(tree).get(name.split(".")[0]) if tree is not None else None
        if origin is None:
            return None
        module, _, attribute = origin.rpartition(".")
        for candidate in (
            module.replace(".", "/") + ".py",
            module.replace(".", "/") + "/__init__.py",
        ):
            found = pyast.find(ctx.source.parse(candidate), attribute)
            if isinstance(found, ast.FunctionDef):
                return candidate, found
        return None

    def _drift(self, ctx: CollectorContext) -> Finding | None:
        freshness = ctx.config.freshness
        if not freshness.config_converter or not freshness.base_config:
            return None
        conv_path, _, conv_name = freshness.config_converter.partition("::")
        base_path, _, base_name = freshness.base_config.partition("::")
        converter = pyast.find(ctx.source.parse(conv_path), conv_name)
        base = pyast.find(ctx.source.parse(base_path), base_name)
        if not isinstance(converter, ast.FunctionDef) or not isinstance(base, ast.ClassDef):
            return None
        fields = list(shapes.dataclass_fields(base))
        status = converter_drift(converter, fields)
        changed = {name: how for name, how in status.items() if how != "copied"}
        if not changed:
            return None
        # An override the converter explains (a comment above it, its docstring) is a
        # choice, not drift: one FYI line. Unexplained drops and rebuilds are the finding.
        lines = (ctx.source.read(conv_path) or "").splitlines()
        docstring = ast.get_docstring(converter) or ""
        explained = {name for name in changed if _explained(lines, converter, name, docstring)}
        order = {"dropped": 0, "rebuilt": 1, "overridden": 2}
        ranked = sorted(changed.items(), key=lambda kv: (kv[0] in explained, order[kv[1]], kv[0]))
        words = {"dropped": "drops", "rebuilt": "replaces wholesale", "overridden": "overrides"}
        unexplained = [(n, how) for n, how in ranked if n not in explained]
        # What the converter began to override inside the window is the news of the list.
        before: dict[str, str] = {}
        if ctx.baseline_commit:
            old = pyast.find(ctx.source.parse_at(ctx.baseline_commit, conv_path), conv_name)
            if isinstance(old, ast.FunctionDef):
                before = converter_drift(old, fields)
        fresh = (
            [name for name, how in ranked if before.get(name, "copied") != how]
            if ctx.baseline_commit
            else []
        )
        rows = "\n".join(
            f"- {code(name)}: {how}"
            + (" (explained in the converter)" if name in explained else "")
            + (f" — new since {ctx.since.date()}" if name in fresh else "")
            for name, how in ranked
        )
        if not unexplained:
            count = f"{len(ranked)} field{'s' if len(ranked) != 1 else ''}"
            news = (
                f": {', '.join(code(n) for n in fresh)} new since {ctx.since.date()}"
                if fresh and ctx.baseline_commit
                else ""
            )
            return ctx.finding(
                self.name,
                "config_overrides",
                (freshness.config_converter,),
                f"{code(conv_name)} overrides {count} of the base config, each explained "
                f"in the converter{news}",
                f"How {code(conv_name)} treats the fields of {code(base_name)}:\n\n{rows}",
                files=[FileRef(path=conv_path, line=converter.lineno)],
                items=[f"{name}: {how}" for name, how in ranked],
                aliases=[fingerprint("config_drift", freshness.config_converter)],
            )
        head = ", ".join(f"{words[how]} {code(name)}" for name, how in unexplained[:2])
        return ctx.finding(
            self.name,
            "config_drift",
            (freshness.config_converter,),
            f"{code(conv_name)} {head}"
            + (f" (+{len(unexplained) - 2} more)" if len(unexplained) > 2 else ""),
            f"How {code(conv_name)} treats the fields of {code(base_name)}:\n\n{rows}\n\n"
            "A dropped or wholesale-replaced field ignores what the user configured; none of "
            "these says why.",
            files=[FileRef(path=conv_path, line=converter.lineno)],
            items=[f"{name}: {how}" for name, how in ranked],
        )
