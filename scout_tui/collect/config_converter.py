"""How the experiment's config converter treats the base config: the fields it drops,
rebuilds or overrides without saying why (drift), and the values it forces that a registered
config's base sets otherwise (a conflict when a check on its path rejects the forced value)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from git import GitCommandError

from scout_tui.analysis.python import pyast, shapes
from scout_tui.analysis.python.experiment_tests import comment_above, override_definitions
from scout_tui.analysis.python.freshness import (
    constants_set,
    converter_drift,
    converter_uses,
    forced_values,
)
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import CollectorContext
from scout_tui.model import FileRef, Finding, fingerprint


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


def config_conflicts(ctx: CollectorContext, collector: str) -> Iterator[Finding]:
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
            base = _function(ctx, path, tree, base_name)
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
                words = set(re.findall(r"\w+", ast.unparse(base_function) + ast.unparse(function)))
                check = _rejecting_check(ctx, force.name, value, force.value, words)
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
                        f" The converter forces it since {code(since.sha[:10])} ({since.summary})."
                    )
                if check is not None:  # something on its path rejects the forced value
                    yield ctx.finding(
                        collector,
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
                elif not _runs_in_ci(ctx, function.name):
                    # It runs in CI as it is: it works, the override is the choice.
                    yield ctx.finding(
                        collector,
                        "config_mismatch",
                        (path, function.name, flag),
                        f"{code(function.name)} runs with {code(flag)} = "
                        f"{code(force.value)}, not the {code(value)} its base sets",
                        places + " No check on its path rejects that value and no enabled "
                        "integration test runs it: confirm the override is meant for it.",
                        files=files,
                        items=[f"{flag}: {value} → {force.value}"],
                    )


def _runs_in_ci(ctx: CollectorContext, name: str) -> bool:
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
    ctx: CollectorContext, option: str, needed: str, forced: str, words: set[str]
) -> str | None:
    """An `if` that raises, with a message naming `option`, comparing against the value
    the config needs (`!=`) or the forced one (`==`), in a module the config names
    (`tp_gemm_backend="dist_gemm"` names dist_gemm.py): "path:line", or None."""
    for path in ctx.source.grep_files(option):
        if path.rsplit("/", 1)[-1].removesuffix(".py") not in words:
            continue
        tree = ctx.source.parse(path)
        for line, equal, against, raises in _raising_checks(tree) if tree is not None else []:
            rejects = against == (forced if equal else needed)
            if rejects and any(option in raised for raised in raises):
                return f"{path}:{line}"
    return None


@pyast.per_tree
def _raising_checks(tree: ast.Module) -> list[tuple[int, bool, str, list[str]]]:
    """Each `if x == C:` / `if x != C:` against a constant whose body raises: (line, whether
    it compares with `==`, C as written, each `raise` statement as written)."""
    found = []
    for node in pyast.nodes(tree, ast.If):
        assert isinstance(node, ast.If)
        test = node.test
        if not (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq | ast.NotEq)
            and isinstance(test.comparators[0], ast.Constant)
        ):
            continue
        raises = [r for s in node.body for r in pyast.walk(s) if isinstance(r, ast.Raise)]
        if raises:
            equal = isinstance(test.ops[0], ast.Eq)
            against = ast.unparse(test.comparators[0])
            found.append((node.lineno, equal, against, [ast.unparse(r) for r in raises]))
    return found


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


def config_drift(ctx: CollectorContext, collector: str) -> Finding | None:
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
            collector,
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
        collector,
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
