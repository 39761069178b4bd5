"""What a configuration function sets, read statically: an integration entry that names
functions (`configs=[recipes.llama3_tp2]`, `config_fn=…`) instead of flags sets its
parallelism inside them (`cfg.parallelism.tensor_parallel_degree = 2`,
`ParallelismConfig(tensor_parallel_degree=2)`). The function is found in the same module or
a module of the repository it imports (re-exports followed); the configuration it starts
from (`config = base()`, `return base()`) is read first. Pure apart from `parse`, which
gives a repository file's AST (None when there is none)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.experiment_tests import (
    Override,
    override_definitions,
    parallelism_combo,
)

Parse = Callable[[str], ast.Module | None]
_FIELD = re.compile(r"\.parallelism\.([A-Za-z_]\w*)$")
_DEPTH = 12


def _package(path: str, level: int) -> list[str]:
    """The dotted parts of the package `from {'.' * level} import` starts from."""
    parts = path.removesuffix(".py").split("/")
    return parts[: len(parts) - level]


@pyast.per_tree
def _bindings(path: str, tree: ast.Module) -> dict[str, str]:
    """Local name → dotted origin, from the module's imports (relative ones too); a
    function's own imports count where no top-level one binds the name. Kept per tree: the
    result is shared, never changed."""
    found: dict[str, str] = {}
    nested = pyast.nodes(tree, ast.Import, ast.ImportFrom)
    for node in [*tree.body, *nested]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".", 1)[0]
                found.setdefault(alias.asname or head, alias.name if alias.asname else head)
        elif isinstance(node, ast.ImportFrom):
            base = _package(path, node.level) if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                found.setdefault(alias.asname or alias.name, f"{module}.{alias.name}".strip("."))
    return found


def _module_file(parse: Parse, dotted: str) -> tuple[str, ast.Module] | None:
    stem = dotted.replace(".", "/")
    for path in (f"{stem}.py", f"{stem}/__init__.py"):
        tree = parse(path)
        if tree is not None:
            return path, tree
    return None


def resolve(
    parse: Parse, path: str, tree: ast.Module, dotted: str, depth: int = 0
) -> tuple[str, ast.Module, ast.FunctionDef] | None:
    """The function `dotted` names from module `path`: (its file, tree, def), or None."""
    if depth > _DEPTH or not re.fullmatch(r"[A-Za-z_][\w.]*", dotted):
        return None
    head, _, rest = dotted.partition(".")
    if not rest:
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == head:
                return path, tree, node
    origin = _bindings(path, tree).get(head)
    if origin is None:
        return None
    full = f"{origin}.{rest}" if rest else origin
    parts = full.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        found = _module_file(parse, ".".join(parts[:cut]))
        if found is None:
            continue
        if cut != len(parts) - 1:
            return None  # `pkg.module.Class.method`: not a configuration function
        other, other_tree = found
        if (other, parts[-1]) == (path, dotted):
            return None
        return resolve(parse, other, other_tree, parts[-1], depth + 1)
    return None


def _value(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    return "?"  # computed: set, to a value scout cannot read


def _returned(function: ast.FunctionDef) -> tuple[set[str], list[ast.expr]]:
    """The names the function returns, and calls it returns directly."""
    names, calls = set(), []
    for node in pyast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            if isinstance(node.value, ast.Name):
                names.add(node.value.id)
            elif isinstance(node.value, ast.Call):
                calls.append(node.value.func)
    return names, calls


def parallelism_set(
    parse: Parse, path: str, tree: ast.Module, dotted: str, depth: int = 0
) -> dict[str, str] | None:
    """`parallelism` field → value the function `dotted` leaves set (its base's first);
    None when the function, or the configuration it starts from, cannot be read."""
    found = resolve(parse, path, tree, dotted)
    if found is None or depth > _DEPTH:
        return None
    home, home_tree, function = found
    names, bases = _returned(function)
    for node in function.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and any(isinstance(t, ast.Name) and t.id in names for t in node.targets)
        ):
            bases.insert(0, node.value.func)
    # A helper handed the configuration (`_use_spmd(config)`) may set fields too; one scout
    # cannot read (another package's) is left out rather than blinding the whole entry.
    helpers = [
        node.func
        for node in pyast.walk(function)
        if isinstance(node, ast.Call)
        and any(isinstance(a, ast.Name) and a.id in names for a in node.args)
    ]
    fields: dict[str, str] = {}
    for base in bases:
        text = ast.unparse(base)
        if not re.fullmatch(r"[A-Za-z_][\w.]*", text) or text[0].isupper():
            continue  # `Trainer.Config(...)`: a constructor, read below for its keywords
        inherited = parallelism_set(parse, home, home_tree, text, depth + 1)
        if inherited is None:
            return None  # started from a configuration scout cannot read
        fields.update(inherited)
    for helper in helpers:
        text = ast.unparse(helper)
        if re.fullmatch(r"[A-Za-z_][\w.]*", text) and text not in (ast.unparse(b) for b in bases):
            fields.update(parallelism_set(parse, home, home_tree, text, depth + 1) or {})
    for item in pyast.walk(function):
        if isinstance(item, ast.Assign | ast.AnnAssign):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            for target in targets:
                match = _FIELD.search(ast.unparse(target))
                if match and item.value is not None:
                    fields[match.group(1)] = _value(item.value)
        elif isinstance(item, ast.Call):
            nested = [k.value for k in item.keywords if k.arg == "parallelism"]
            if "arallelism" in ast.unparse(item.func).rsplit(".", 1)[-1]:
                nested.append(item)
            for call in nested:
                if isinstance(call, ast.Call):
                    fields.update({k.arg: _value(k.value) for k in call.keywords if k.arg})
    return fields


def as_flags(fields: dict[str, str]) -> list[str]:
    """The fields as the command-line flags that would set them."""
    return [f"--parallelism.{name} {value}" for name, value in sorted(fields.items())]


def entry_combos(
    parse: Parse, path: str, tree: ast.Module, override: Override, pattern: str
) -> tuple[list[frozenset[str]], list[str]]:
    """The parallelism combinations an entry runs (one per configuration function it names,
    else one for its flags), and the functions scout could not read."""
    if not override.config_functions:
        return [parallelism_combo(override.strings, pattern)], []
    combos, blind = [], []
    for function in override.config_functions:
        fields = parallelism_set(parse, path, tree, function)
        if fields is None:
            blind.append(function)
        else:
            combos.append(parallelism_combo([*override.strings, *as_flags(fields)], pattern))
    return combos, blind


@pyast.per_tree_read
def module_combos(
    path: str, tree: ast.Module, pattern: str, parse: Parse
) -> list[tuple[str, int, bool, list[frozenset[str]], list[str]]]:
    """`entry_combos` of each integration entry of the module: (its name, line, whether it
    is switched off, the combinations it runs, the functions scout could not read)."""
    found = []
    for override in override_definitions(tree):
        combos, unread = entry_combos(parse, path, tree, override, pattern)
        found.append((override.name, override.line, override.disabled, combos, unread))
    return found
