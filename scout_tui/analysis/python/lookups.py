"""Factories the experiment reaches by looking a string up in an upstream registry:
`configs["debugmodel"](...)`, where `configs` is imported from an upstream module that
binds it to a dict literal mapping strings to functions or classes. The experiment depends
on what the key resolves to as if it called it by name. Pure: the experiment's modules and
a way to parse a repository file in.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.dependencies import Definition, _absolute, module_file, resolve
from scout_tui.analysis.python.relevance import Uses, given

Parse = Callable[[str], ast.Module | None]
_HOPS = 4  # re-exports followed through `__init__` modules before giving up


@dataclass(frozen=True)
class Lookup:
    """`name[key]` in the experiment, `name` imported from upstream `module`."""

    module: str  # the dotted module it is imported from
    name: str  # its name there
    key: str
    local: str  # its name in the experiment: `configs["debugmodel"]` as written
    places: tuple[str, ...]  # "path:line" of each lookup

    @property
    def written(self) -> str:
        return f'{self.local}["{self.key}"]'


def _imported(tree: ast.Module, path: str, experiment: str) -> dict[str, tuple[str, str]]:
    """Local name → (module, name) of the `from … import` of upstream modules."""
    found = {}
    for node in pyast.nodes(tree, ast.ImportFrom):
        assert isinstance(node, ast.ImportFrom)
        module = _absolute(node, path)
        if not module or module.replace(".", "/").startswith(experiment.rstrip("/")):
            continue
        for alias in node.names:
            found[alias.asname or alias.name] = (module, alias.name)
    return found


def _key(node: ast.Subscript) -> str | None:
    key = node.slice
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


@pyast.per_tree
def lookups(experiment: str, modules: dict[str, ast.Module]) -> list[Lookup]:
    """Every `name["literal"]` of an imported upstream name in the experiment's modules,
    one per (name, key); whether `name` is a registry is `entry`'s to say."""
    found: dict[tuple[str, str, str], list[str]] = {}
    locals_: dict[tuple[str, str, str], str] = {}
    for path, tree in sorted(modules.items()):
        imported = _imported(tree, path, experiment)
        if not imported:
            continue
        for node in pyast.nodes(tree, ast.Subscript):
            assert isinstance(node, ast.Subscript)
            if not isinstance(node.value, ast.Name) or node.value.id not in imported:
                continue
            key = _key(node)
            if key is None or not isinstance(node.ctx, ast.Load):
                continue
            module, name = imported[node.value.id]
            found.setdefault((module, name, key), []).append(f"{path}:{node.lineno}")
            locals_.setdefault((module, name, key), node.value.id)
    return [
        Lookup(module, name, key, locals_[(module, name, key)], tuple(places))
        for (module, name, key), places in found.items()
    ]


def registry(module: str, name: str, parse: Parse) -> tuple[str, ast.Dict] | None:
    """Where `from module import name` binds a dict literal at module level, following
    re-exports; None when it is anything else (then scout cannot tell what a key holds)."""
    for _ in range(_HOPS):
        path = module_file(module, parse)
        tree = parse(path) if path else None
        if tree is None or path is None:
            return None
        for node in tree.body:
            value = (
                node.value
                if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                else node.value
                if isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == name
                else None
            )
            if value is not None:
                return (path, value) if isinstance(value, ast.Dict) else None
        for imported in pyast.nodes(tree, ast.ImportFrom):
            assert isinstance(imported, ast.ImportFrom)
            alias = next((a for a in imported.names if (a.asname or a.name) == name), None)
            if alias is not None:
                module, name = _absolute(imported, path), alias.name
                break
        else:
            return None
    return None


@dataclass(frozen=True)
class Entry:
    """What a registry's key holds: None when the registry lacks the key."""

    registry_path: str
    found: tuple[str, Definition] | None


def entry(lookup: Lookup, parse: Parse) -> Entry | None:
    """The function or class `lookup` resolves to; None when scout cannot tell (not a dict
    literal, a value that is no plain name: `partial(f, …)`, a lambda)."""
    hit = registry(lookup.module, lookup.name, parse)
    if hit is None:
        return None
    path, table = hit
    for key, value in zip(table.keys, table.values, strict=True):
        if not (isinstance(key, ast.Constant) and key.value == lookup.key):
            continue
        if not isinstance(value, ast.Name):
            return None
        tree = parse(path)
        local = pyast.find(tree, value.id)
        if isinstance(local, Definition):
            return Entry(path, (path, local))
        for imported in pyast.nodes(tree, ast.ImportFrom):
            assert isinstance(imported, ast.ImportFrom)
            alias = next((a for a in imported.names if (a.asname or a.name) == value.id), None)
            if alias is not None:
                defined = resolve(_absolute(imported, path), alias.name, parse)
                return Entry(path, defined) if defined is not None else None
        return None
    if any(key is None for key in table.keys):
        return None  # `{**other, …}`: the key may come from elsewhere
    return Entry(path, None)


def lookup_uses(modules: dict[str, ast.Module], lookup: Lookup) -> Uses:
    """The calls of `name["key"](…)` in the experiment, as `uses_of` counts a call by name:
    where, how many positional arguments, which keywords."""
    found = Uses()
    for path, tree in modules.items():
        for node in pyast.nodes(tree, ast.Call):
            assert isinstance(node, ast.Call)
            func = node.func
            if (
                isinstance(func, ast.Subscript)
                and isinstance(func.value, ast.Name)
                and func.value.id == lookup.local
                and _key(func) == lookup.key
            ):
                where = f"{path}:{node.lineno}"
                found.calls.append((where, len(node.args), given(node)))
                for keyword in node.keywords:
                    if keyword.arg:
                        found.names.setdefault(keyword.arg, []).append(where)
    return found
