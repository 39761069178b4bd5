"""What the experiment defines that nothing may use: top-level functions and classes (for
dead code), config fields (for options nothing reads), and what makes a name reachable
without being written down (a registering decorator or base, a module looked up by a
name built at run time). Pure functions over parsed modules; anything uncertain counts as
used."""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass

from scout_tui.analysis.python import pyast

# Decorators of the standard library that hand back the function or class without
# registering it anywhere; any other decorator may register what it decorates.
_PLAIN_DECORATORS = frozenset(
    {
        "dataclass",
        "dataclasses.dataclass",
        "cache",
        "functools.cache",
        "lru_cache",
        "functools.lru_cache",
        "total_ordering",
        "functools.total_ordering",
        "contextmanager",
        "contextlib.contextmanager",
    }
)

# Names a module reaches its own globals by at run time: then any of them may be used.
_DYNAMIC_GLOBALS = frozenset({"globals", "vars", "locals"})


@dataclass(frozen=True)
class Defined:
    """A top-level function or class; `bases` as written (a class's)."""

    name: str
    path: str
    line: int
    bases: tuple[str, ...] = ()
    is_class: bool = False


def _plain(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ast.unparse(target) in _PLAIN_DECORATORS


def _exempt(name: str) -> bool:
    """Dunders, entry points and tests are run by name from outside, never named."""
    return (
        (name.startswith("__") and name.endswith("__"))
        or name == "main"
        or (name.lower().startswith("test"))
    )


@pyast.per_tree
def top_level_definitions(path: str, tree: ast.Module | None) -> list[Defined]:
    """The module's top-level functions and classes that only a written name can reach: no
    registering decorator, no metaclass, not exempt. None at all from a module that reaches
    its globals dynamically (`globals()`, a module `__getattr__`)."""
    if tree is None:
        return []
    for node in pyast.nodes(tree, ast.Call):
        assert isinstance(node, ast.Call)
        if isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC_GLOBALS and not node.args:
            return []
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if node.name == "__getattr__":
            return []
        if _exempt(node.name) or not all(_plain(d) for d in node.decorator_list):
            continue
        if isinstance(node, ast.ClassDef):
            if any(k.arg == "metaclass" for k in node.keywords):
                continue
            bases = tuple(ast.unparse(b) for b in node.bases)
            found.append(Defined(node.name, path, node.lineno, bases, is_class=True))
        else:
            found.append(Defined(node.name, path, node.lineno))
    return found


def registers_subclasses(node: ast.ClassDef) -> bool:
    """Whether the class sees each subclass made (`__init_subclass__`, a metaclass): a
    subclass may then be registered by being defined."""
    return any(k.arg == "metaclass" for k in node.keywords) or any(
        isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == "__init_subclass__"
        for s in node.body
    )


def is_builtin_class(name: str) -> bool:
    """`object`, `Exception`, `dict`: builtin classes, none of which registers subclasses."""
    return isinstance(getattr(builtins, name, None), type)


@pyast.per_tree
def dynamic_module_suffixes(tree: ast.Module | None) -> frozenset[str]:
    """Modules a function imports by a name built at run time and reads by a name built at
    run time (`import_module(f"{pkg}.{name}.registry")` then `getattr(module, key)`): the
    fixed last part of each such module name ("registry"). Any module of that name may
    have any of its functions looked up by a string no grep finds."""
    if tree is None:
        return frozenset()
    found: set[str] = set()
    scopes = [tree, *pyast.nodes(tree, ast.FunctionDef, ast.AsyncFunctionDef)]
    for scope in scopes:
        calls = [n for n in pyast.walk(scope) if isinstance(n, ast.Call)]
        imports = [c for c in calls if ast.unparse(c.func).endswith("import_module")]
        looked_up = any(
            ast.unparse(c.func) == "getattr"
            and len(c.args) >= 2
            and not isinstance(c.args[1], ast.Constant)
            for c in calls
        )
        if not imports or not looked_up:
            continue
        for node in pyast.walk(scope):
            tail: ast.expr | None = None
            if isinstance(node, ast.JoinedStr) and node.values:
                tail = node.values[-1]
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                tail = node.right
            if (
                isinstance(tail, ast.Constant)
                and isinstance(tail.value, str)
                and re.fullmatch(r"(?:\.\w+)+", tail.value)
            ):
                found.add(tail.value.rsplit(".", 1)[-1])
    return frozenset(found)


@dataclass(frozen=True)
class Field:
    """A field of a config dataclass: `flag` is how the command line sets it."""

    name: str
    cls: str
    path: str
    line: int
    flag: str


def class_fields(node: ast.ClassDef) -> list[tuple[str, int]]:
    """The class's own annotated fields (not `ClassVar`s, not private), with their lines."""
    found = []
    for statement in node.body:
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and not statement.target.id.startswith("_")
            and "ClassVar" not in ast.unparse(statement.annotation)
        ):
            found.append((statement.target.id, statement.lineno))
    return found


def _prose(tree: ast.Module) -> set[int]:
    """The string constants that are statements (docstrings): words, not code."""
    return {
        id(n.value)
        for n in pyast.nodes(tree, ast.Expr)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    }


@pyast.per_tree
def read_names(tree: ast.Module | None, names: frozenset[str]) -> frozenset[str]:
    """Which of `names` the module may read as a field: an attribute read (`x.name`), a
    parameter of that name (what `**asdict(cfg)` passes on), or a string in code that
    holds it as a word (`getattr(cfg, "name")`, a key). Docstrings are not code."""
    if tree is None:
        return frozenset()
    found: set[str] = set()
    for node in pyast.nodes(tree, ast.Attribute):
        assert isinstance(node, ast.Attribute)
        if node.attr in names and not isinstance(node.ctx, ast.Store):
            found.add(node.attr)
    for node in pyast.nodes(tree, ast.arg):
        assert isinstance(node, ast.arg)
        if node.arg in names:
            found.add(node.arg)
    prose = _prose(tree)
    left = names - found
    for node in pyast.nodes(tree, ast.Constant):
        if not left:
            break
        assert isinstance(node, ast.Constant)
        if isinstance(node.value, str) and id(node) not in prose:
            words = set(re.findall(r"\w+", node.value))
            found |= words & left
            left = names - found
    return frozenset(found)


@pyast.per_tree
def passed_whole(tree: ast.Module | None, sections: frozenset[str]) -> frozenset[str]:
    """Which of `sections` (the attributes a config object is reached by: `compile` in
    `config.compile`) the module hands whole to a call — `f(config.compile)`,
    `f(**vars(cfg))` with `cfg = config.compile` — with where the callee comes from: the
    module it is imported from, joined to the section by a space (`compile torch._dynamo`).
    A callee not imported (a function of the module, a parameter such as `parallelize_fn`,
    an attribute) is code of the repository, whose reads count where they are: left out."""
    if tree is None:
        return frozenset()
    origins = pyast.import_map(tree) | {
        item.asname or item.module.split(".")[0]: item.module
        for item in pyast.imports(tree)
        if not item.name
    }
    found: set[str] = set()
    scopes = [tree, *pyast.nodes(tree, ast.FunctionDef, ast.AsyncFunctionDef)]
    for scope in scopes:
        aliases: dict[str, str] = {}
        for node in pyast.walk(scope):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr in sections
            ):
                aliases[node.targets[0].id] = node.value.attr
        for node in pyast.walk(scope):
            if not isinstance(node, ast.Call):
                continue
            root = ast.unparse(node.func).split(".", 1)[0]
            origin = origins.get(root) or (root if root in _BUILTIN_READERS else None)
            if origin is None or _named_attribute(node):
                continue
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(argument, ast.Starred):
                    argument = argument.value
                section = None
                if isinstance(argument, ast.Attribute) and argument.attr in sections:
                    section = argument.attr
                elif isinstance(argument, ast.Name) and argument.id in aliases:
                    section = aliases[argument.id]
                if section is not None:
                    found.add(f"{section} {origin}")
    return frozenset(found)


# Builtins that read an object's fields by name, with no import to say where they are from.
_BUILTIN_READERS = frozenset({"vars", "getattr", "setattr", "hasattr", "dir"})


def _named_attribute(call: ast.Call) -> bool:
    """`getattr(cfg, "x", …)`: reads `x` alone (a read `read_names` counts), not the whole."""
    return (
        isinstance(call.func, ast.Name)
        and call.func.id in ("getattr", "hasattr", "setattr")
        and len(call.args) >= 2
        and isinstance(call.args[1], ast.Constant)
        and isinstance(call.args[1].value, str)
    )
