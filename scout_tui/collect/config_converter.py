"""How the experiment's config converter treats the base config: the fields it drops,
rebuilds or overrides without saying why (drift), and the values it forces that a registered
config's base sets otherwise (a conflict when a check on its path rejects the forced value)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from git import GitCommandError

from scout_tui.analysis.python import pyast, shapes
from scout_tui.analysis.python.config_functions import Parse
from scout_tui.analysis.python.experiment_tests import comment_above, override_definitions
from scout_tui.analysis.python.freshness import (
    Forced,
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
    conv_tree = ctx.source.parse(conv_path) if conv_name else None
    forced = _forced(conv_tree, conv_name) if conv_tree is not None else []
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
        if tree is None:
            continue
        for conflict in _conflicts(tree, path, conv_name, tuple(forced), ctx.source.parse):
            function, base_name, base_path, force, value, line, words = conflict
            flag = f"{force.field}.{force.name}"
            check = _rejecting_check(ctx, force.name, value, force.value, set(words))
            places = (
                f"{code(function.name)} ({code(f'{path}:{function.line}')}) "
                f"converts {code(base_name)}, which sets {code(flag)} to "
                f"{code(value)} ({code(f'{base_path}:{line}')}); {code(conv_name)} "
                f"forces it to {code(force.value)} "
                f"({code(f'{conv_path}:{force.line}')})."
            )
            files = [
                FileRef(path=path, line=function.line),
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


@pyast.per_tree
def _forced(converter_tree: ast.Module, name: str) -> list[Forced]:
    """What the converter `name` forces; none when the module defines no such function."""
    converter = pyast.find(converter_tree, name)
    return forced_values(converter) if isinstance(converter, ast.FunctionDef) else []


@dataclass(frozen=True)
class Converted:
    """A registered config function that converts another's config."""

    name: str
    line: int


@pyast.per_tree_read
def _conflicts(
    tree: ast.Module, path: str, converter: str, forced: tuple[Forced, ...], parse: Parse
) -> list[tuple[Converted, str, str, Forced, str, int, frozenset[str]]]:
    """Each forced value a registered config's base sets otherwise, and its own body does
    not set back: (the registered function, its base's name and file, the forced value,
    the base's value and line, the words both functions hold)."""
    found = []
    for function, base_name in converter_uses(tree, converter):
        base = _function(parse, path, tree, base_name)
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
            words = frozenset(
                re.findall(r"\w+", ast.unparse(base_function) + ast.unparse(function))
            )
            converted = Converted(function.name, function.lineno)
            found.append((converted, base_name, base_path, force, value, line, words))
    return found


def _function(
    parse: Parse, path: str, tree: ast.Module | None, name: str
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
        found = pyast.find(parse(candidate), attribute)
        if isinstance(found, ast.FunctionDef):
            return candidate, found
    return None


@pyast.per_tree
def _converted_fields(
    converter_tree: ast.Module, converter: str, base_tree: ast.Module, base: str
) -> dict[str, str] | None:
    """How the converter treats each field of the base config ("copied", "dropped",
    "rebuilt", "overridden"); None when either is not where scout.toml says."""
    function = pyast.find(converter_tree, converter)
    config = pyast.find(base_tree, base)
    if not isinstance(function, ast.FunctionDef) or not isinstance(config, ast.ClassDef):
        return None
    return converter_drift(function, list(shapes.dataclass_fields(config)))


@pyast.per_tree
def _drift(
    converter_tree: ast.Module, converter: str, base_tree: ast.Module, base: str, text: str
) -> tuple[int, dict[str, str], frozenset[str]] | None:
    """(the converter's line, the fields it does not copy and how, those it explains);
    None when either is not where scout.toml says. `text`: the converter's module."""
    status = _converted_fields(converter_tree, converter, base_tree, base)
    function = pyast.find(converter_tree, converter)
    if status is None or not isinstance(function, ast.FunctionDef):
        return None
    changed = {name: how for name, how in status.items() if how != "copied"}
    # An override the converter explains (a comment above it, its docstring) is a
    # choice, not drift: one FYI line. Unexplained drops and rebuilds are the finding.
    lines = text.splitlines()
    docstring = ast.get_docstring(function) or ""
    explained = frozenset(n for n in changed if _explained(lines, function, n, docstring))
    return function.lineno, changed, explained


def config_drift(ctx: CollectorContext, collector: str) -> Finding | None:
    freshness = ctx.config.freshness
    if not freshness.config_converter or not freshness.base_config:
        return None
    conv_path, _, conv_name = freshness.config_converter.partition("::")
    base_path, _, base_name = freshness.base_config.partition("::")
    conv_tree, base_tree = ctx.source.parse(conv_path), ctx.source.parse(base_path)
    if conv_tree is None or base_tree is None:
        return None
    drift = _drift(conv_tree, conv_name, base_tree, base_name, ctx.source.read(conv_path) or "")
    if drift is None:
        return None
    converter_line, changed, explained = drift
    if not changed:
        return None
    order = {"dropped": 0, "rebuilt": 1, "overridden": 2}
    ranked = sorted(changed.items(), key=lambda kv: (kv[0] in explained, order[kv[1]], kv[0]))
    words = {"dropped": "drops", "rebuilt": "replaces wholesale", "overridden": "overrides"}
    unexplained = [(n, how) for n, how in ranked if n not in explained]
    # What the converter began to override inside the window is the news of the list.
    before: dict[str, str] = {}
    old_tree = ctx.source.parse_at(ctx.baseline_commit, conv_path) if ctx.baseline_commit else None
    if old_tree is not None:
        before = _converted_fields(old_tree, conv_name, base_tree, base_name) or {}
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
            files=[FileRef(path=conv_path, line=converter_line)],
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
        files=[FileRef(path=conv_path, line=converter_line)],
        items=[f"{name}: {how}" for name, how in ranked],
    )
