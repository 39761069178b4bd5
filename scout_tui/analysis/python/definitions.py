"""What the experiment defines that tests could exercise: graph passes and the registry keys
that select them, and whether a default run takes them (config option defaults, the `if`s
around a pass's use). Pure functions over parsed modules."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from scout_tui.analysis.python import pyast


@dataclass(frozen=True)
class PassDef:
    name: str
    path: str
    line: int
    keys: tuple[str, ...] = ()  # registry keys that select it from the command line


def _registry_keys(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    keys = []
    for decorator in node.decorator_list:
        if not isinstance(decorator, ast.Call):
            continue
        name = ast.unparse(decorator.func).rsplit(".", 1)[-1]
        if name.startswith("register") and decorator.args:
            first = decorator.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                keys.append(first.value)
    return keys


@pyast.per_tree
def pass_definitions(path: str, tree: ast.Module | None) -> list[PassDef]:
    """`*_pass` functions, functions registered with a `register*("key")` decorator, and
    the entries of `AVAILABLE_*_PASSES` dicts."""
    if tree is None:
        return []
    found: dict[str, PassDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            keys = _registry_keys(node)
            if node.name.endswith("_pass") or keys:
                found[node.name] = PassDef(node.name, path, node.lineno, tuple(keys))
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, ast.AnnAssign) else [])
        )
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        value = getattr(node, "value", None)
        if not any(re.match(r"^AVAILABLE_\w*PASSES$", n) for n in names):
            continue
        if not isinstance(value, ast.Dict):
            continue
        for key, target in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            function = ast.unparse(target).rsplit(".", 1)[-1]
            existing = found.get(function)
            line = existing.line if existing else node.lineno
            selected_by = (*(existing.keys if existing else ()), key.value)
            found[function] = PassDef(function, path, line, selected_by)
    return sorted(found.values(), key=lambda p: p.line)


@pyast.per_tree
def option_defaults(modules: dict[str, ast.Module]) -> dict[str, str]:
    """Config option → its default literal (`ast.unparse` form), from the dataclass fields
    these modules define; an option two classes default differently is left out."""
    found: dict[str, set[str]] = {}
    for tree in modules.values():
        for node in pyast.nodes(tree, ast.ClassDef):
            assert isinstance(node, ast.ClassDef)
            for statement in node.body:
                if not isinstance(statement, ast.AnnAssign) or not isinstance(
                    statement.target, ast.Name
                ):
                    continue
                value = _literal_default(statement.value)
                if value is not None:
                    found.setdefault(statement.target.id, set()).add(value)
    return {name: next(iter(values)) for name, values in found.items() if len(values) == 1}


def _literal_default(value: ast.expr | None) -> str | None:
    """A field's default as a literal: `"x"`, `3`; an empty list or tuple (`[]`, `()`,
    `field(default_factory=list)`) as `[]`."""
    if isinstance(value, ast.Constant):
        return ast.unparse(value)
    if isinstance(value, ast.List | ast.Tuple) and not value.elts:
        return "[]"
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("field"):
        for keyword in value.keywords:
            if keyword.arg == "default":
                return _literal_default(keyword.value)
            if keyword.arg == "default_factory" and ast.unparse(keyword.value) in ("list", "tuple"):
                return "[]"
    return None


@pyast.per_tree
def _option_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Local names a function binds to config options: `names = getattr(cfg, "passes", [])`
    or `mode = cfg.compile.mode` → the option's name."""
    found = {}
    for node in pyast.walk(function):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        value = node.value
        if isinstance(value, ast.Attribute):
            found[node.targets[0].id] = value.attr
        elif (
            isinstance(value, ast.Call)
            and ast.unparse(value.func) == "getattr"
            and len(value.args) >= 2
            and isinstance(value.args[1], ast.Constant)
        ):
            found[node.targets[0].id] = str(value.args[1].value)
    return found


@pyast.per_tree
def selected_by_default(
    modules: dict[str, ast.Module], name: str, defaults: dict[str, str]
) -> tuple[str, str, str] | None:
    """Where code picks the pass `name` on a branch every default takes: each `if` around it
    compares an option to a literal, and the option's default takes that branch
    (`if mode == "full": … elif mode == "regional": <here>` with `mode` defaulting to
    "regional"). Returns (option, value, "path:line") of the deciding test: every run that
    leaves the option alone runs the pass — or ("", function, "path:line") when a function
    uses it whatever the options (then it runs whenever that function does). A choice an
    option's default decides comes first, whichever module holds it."""
    found = default_choices(modules, name, defaults)
    return next((choice for choice in found if choice[0]), found[0] if found else None)


@pyast.per_tree
def default_choices(
    modules: dict[str, ast.Module], name: str, defaults: dict[str, str]
) -> list[tuple[str, str, str]]:
    """`selected_by_default`'s answer in each module that has one, in module order."""
    choices = []
    for path, tree in modules.items():
        if name not in pyast.identifiers(tree):
            continue
        found = _on_default_branch(tree.body, name, defaults, None)
        if found is not None:
            choices.append((found[0], found[1], f"{path}:{found[2]}"))
    return choices


def _default_truth(
    test: ast.expr, defaults: dict[str, str], aliases: dict[str, str] | None = None
) -> tuple[bool, str, str, int] | None:
    """Whether an `x.option == "v"` (or `!=`) test holds at the option's default; or a
    `"v" not in x.option` (`in`) test where the option defaults to an empty list."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None

    def option_of(node: ast.expr) -> str:
        text = ast.unparse(node)
        return (aliases or {}).get(text, text.rsplit(".", 1)[-1])

    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq | ast.NotEq) and isinstance(right, ast.Constant):
        option = option_of(test.left)
        value = ast.unparse(right)
        if option not in defaults:
            return None
        holds = (defaults[option] == value) == isinstance(op, ast.Eq)
        return holds, option, defaults[option], test.lineno
    if isinstance(op, ast.In | ast.NotIn) and isinstance(test.left, ast.Constant):
        option = option_of(right)
        if defaults.get(option) != "[]":
            return None
        return isinstance(op, ast.NotIn), option, "[]", test.lineno
    return None


_DATA_PREDICATES = frozenset({"hasattr", "isinstance", "callable"})


def _on_the_data(test: ast.expr) -> bool:
    """A test of the values at hand, not of an option: `hasattr(gm, "x")`,
    `isinstance(x, T)`, `callable(f)`, `x is None`, and their negations."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _on_the_data(test.operand)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name):
        return test.func.id in _DATA_PREDICATES
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is | ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


def _on_default_branch(
    statements: list[ast.stmt],
    name: str,
    defaults: dict[str, str],
    decided: tuple[str, str, int] | None,
    function: str | None = None,
    aliases: dict[str, str] | None = None,
) -> tuple[str, str, int] | None:
    """Where `name` is used on a path every default run of its function takes: the deciding
    test (option, value, line), or ("", function, line) when nothing decides — the function
    uses it whenever it runs."""
    for statement in statements:
        if isinstance(statement, ast.If):
            truth = _default_truth(statement.test, defaults, aliases)
            if truth is None and _on_the_data(statement.test):
                # What the data decides (`hasattr(gm, …)`), not an option: both branches
                # run in default runs, as the data comes.
                for branch in (statement.body, statement.orelse):
                    found = _on_default_branch(branch, name, defaults, decided, function, aliases)
                    if found is not None:
                        return found
                continue
            if truth is None:
                continue  # a condition scout cannot settle: not "by default"
            holds, option, value, line = truth
            branch = statement.body if holds else statement.orelse
            found = _on_default_branch(
                branch,
                name,
                defaults,
                (option, value, line) if holds else decided,
                function,
                aliases,
            )
            if found is not None:
                return found
            continue
        if isinstance(statement, ast.For | ast.AsyncFor | ast.While | ast.ClassDef):
            continue  # a loop may run zero times; a class body is not a run
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            found = _on_default_branch(
                statement.body, name, defaults, None, statement.name, _option_names(statement)
            )
            if found is not None:
                return found
            continue
        nested = pyast.child_statements(statement)
        if nested:
            found = _on_default_branch(nested, name, defaults, decided, function, aliases)
            if found is not None:
                return found
            continue
        if (decided is not None or function is not None) and any(
            (isinstance(n, ast.Name) and n.id == name)
            or (isinstance(n, ast.Attribute) and n.attr == name)
            for n in pyast.walk(statement)
        ):
            return decided or ("", function or "", statement.lineno)
    return None


@pyast.per_tree
@pyast.per_tree
def off_the_default_path(
    modules: dict[str, ast.Module], name: str, defaults: dict[str, str]
) -> bool:
    """Whether every use of `name` (outside its own `def`) sits on a branch a default run of
    its function does not take (`if mode == "aot": name(...)` with `mode` defaulting to
    "jit"): what only a mode reaches does not run by default. False when nothing uses it,
    or when a use sits where scout cannot settle the branch."""
    off: list[bool] = []

    def uses(node: ast.AST) -> bool:
        return any(
            (isinstance(n, ast.Name) and n.id == name)
            or (isinstance(n, ast.Attribute) and n.attr == name)
            for n in pyast.walk(node)
        )

    def walk(statements: list[ast.stmt], skipped: bool, aliases: dict[str, str] | None) -> None:
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                if statement.name != name:
                    walk(statement.body, False, _option_names(statement))
                continue
            if isinstance(statement, ast.If):
                if uses(statement.test):
                    off.append(skipped)
                truth = _default_truth(statement.test, defaults, aliases)
                taken = None if truth is None else truth[0]
                walk(statement.body, skipped or taken is False, aliases)
                walk(statement.orelse, skipped or taken is True, aliases)
                continue
            nested = pyast.child_statements(statement)
            if nested:
                walk(nested, skipped, aliases)
            elif uses(statement):
                off.append(skipped)

    for tree in modules.values():
        walk(tree.body, False, None)
    return bool(off) and all(off)


@dataclass(frozen=True)
class _Gate:
    """An `if x == "v"` around a use: the comparison, the option names its function binds
    to locals, and whether it is in the use's own function."""

    test: ast.Compare
    aliases: dict[str, str]
    same_function: bool


def _gates(modules: dict[str, ast.Module], name: str) -> list[tuple[_Gate, ...]]:
    """For each use of `name`, the `if`s with a comparison around it, outermost first."""
    found: list[tuple[_Gate, ...]] = []

    def walk(statements: list[ast.stmt], gates: tuple[_Gate, ...], aliases: dict[str, str]) -> None:
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                outer = tuple(replace(g, same_function=False) for g in gates)
                walk(statement.body, outer, _option_names(statement))
                continue
            if isinstance(statement, ast.If) and isinstance(statement.test, ast.Compare):
                walk(statement.body, (*gates, _Gate(statement.test, aliases, True)), aliases)
                walk(statement.orelse, gates, aliases)
                continue
            nested = pyast.child_statements(statement)
            if nested:
                walk(nested, gates, aliases)
            elif any(
                (isinstance(n, ast.Name) and n.id == name)
                or (isinstance(n, ast.Attribute) and n.attr == name)
                for n in pyast.walk(statement)
            ):
                found.append(gates)

    for tree in modules.values():
        if name in pyast.identifiers(tree):
            walk(tree.body, (), {})
    return found


def _strings(test: ast.Compare) -> list[str]:
    return [
        c.value
        for c in test.comparators
        if isinstance(c, ast.Constant) and isinstance(c.value, str)
    ]


@pyast.per_tree
def branch_options(modules: dict[str, ast.Module], name: str) -> set[tuple[str, str]]:
    """The (option, value) pairs of the `if`s around each use of `name` in its function that
    compare an option to a string (`if cfg.compile.mode == "full":`, or a local bound to the
    option, `mode = cfg.compile.mode`): a run that sets the option to that value reaches it.
    The option is its last name (`mode`), as a command line's `--compile.mode` ends."""
    found: set[tuple[str, str]] = set()
    for gates in _gates(modules, name):
        for gate in gates:
            test = gate.test
            if not gate.same_function or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
                continue
            if isinstance(test.left, ast.Attribute):
                option: str | None = test.left.attr
            elif isinstance(test.left, ast.Name):
                option = gate.aliases.get(test.left.id)
            else:
                option = None
            if option:
                found.update((option, value) for value in _strings(test))
    return found


@pyast.per_tree
def branch_values(modules: dict[str, ast.Module], name: str) -> set[str]:
    """The string literals the `if`s around each use of `name` compare against
    (`if jit_pass_name == "auto_bucketing":`): the words a test selects the pass by."""
    return {
        value for gates in _gates(modules, name) for gate in gates for value in _strings(gate.test)
    }
