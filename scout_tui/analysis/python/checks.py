"""Validation in upstream code, read statically: each `raise` (and `assert`) with the
conditions that lead to it, and whether a command line's options make it fire. Pure.

A condition is evaluated only when it needs nothing but option values the command sets
and literals: `opt == "x"`, `opt in ("a", "b")`, `a % b != 0`, `and`/`or`/`not` of those.
Anything else (a call, `isinstance`, an option the command leaves to a config file) makes
the check undecided, and an undecided check never counts as firing.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scout_tui.analysis.python import pyast

Function = ast.FunctionDef | ast.AsyncFunctionDef
UNKNOWN: Any = object()
_OPAQUE = ast.Constant(value=UNKNOWN)  # a guard scout cannot read: a loop, a `try`

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], object]] = {
    ast.Mod: operator.mod,
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
}


@dataclass(frozen=True)
class Check:
    """One `raise` or `assert`: it fires when every guard has its truth `taken`."""

    where: str  # the function's qualname: "ParallelismConfig.__post_init__"
    line: int
    guards: tuple[tuple[ast.expr, bool], ...]
    options: tuple[tuple[str, str], ...]  # how names read in it map to options: root → prefix
    reads: frozenset[str] = frozenset()  # the options its guards read

    @property
    def condition(self) -> str:
        return " and ".join(
            ast.unparse(test) if taken else f"not ({ast.unparse(test)})"
            for test, taken in self.guards
        )


@pyast.per_tree
def checks(tree: ast.Module | None, prefixes: dict[str, str], known: frozenset[str]) -> list[Check]:
    """The checks of every function in a module. `prefixes`: the classes (qualnames) that
    are configs, with the option prefix their fields are set by (`""` for a root config:
    `self.a.b` is `--a.b`); `known`: the option prefixes of the whole configuration (a
    chain `….parallelism.x` anywhere reads `--parallelism.x`)."""
    found: list[Check] = []

    def visit(body: list[ast.stmt], scope: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{scope}{node.name}.")
            elif isinstance(node, Function):
                qualname = f"{scope}{node.name}"
                owner = scope.rstrip(".")
                args = node.args.posonlyargs + node.args.args
                roots = (
                    ((args[0].arg, prefixes[owner]),) if owner in prefixes and args else ()
                ) + tuple((name, name) for name in sorted(known))
                _walk(node.body, [], qualname, roots, found)

    if tree is not None:
        visit(tree.body, "")
    return found


def _walk(
    block: list[ast.stmt],
    guards: list[tuple[ast.expr, bool]],
    where: str,
    roots: tuple[tuple[str, str], ...],
    found: list[Check],
) -> None:
    guards = list(guards)
    for statement in block:
        if isinstance(statement, ast.Raise):
            found.append(_check(where, statement.lineno, guards, roots))
            return
        if isinstance(statement, ast.Assert):
            found.append(_check(where, statement.lineno, [*guards, (statement.test, False)], roots))
        elif isinstance(statement, ast.If):
            _walk(statement.body, [*guards, (statement.test, True)], where, roots, found)
            _walk(statement.orelse, [*guards, (statement.test, False)], where, roots, found)
            if _exits(statement.body):
                guards.append((statement.test, False))
            elif statement.orelse and _exits(statement.orelse):
                guards.append((statement.test, True))
        elif isinstance(statement, ast.Return):
            return
        elif not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(statement, name, None)
                if isinstance(inner, list):
                    _walk(inner, [*guards, (_OPAQUE, True)], where, roots, found)
            for handler in getattr(statement, "handlers", []):
                _walk(handler.body, [*guards, (_OPAQUE, True)], where, roots, found)


def _check(
    where: str, line: int, guards: list[tuple[ast.expr, bool]], roots: tuple[tuple[str, str], ...]
) -> Check:
    reads = {
        option
        for test, _ in guards
        for node in pyast.walk(test)
        if isinstance(node, ast.Attribute) and (option := _option(node, roots))
    }
    return Check(where, line, tuple(guards), roots, frozenset(reads))


def _exits(block: list[ast.stmt]) -> bool:
    return bool(block) and isinstance(block[-1], ast.Return | ast.Raise)


def command_options(strings: list[str]) -> dict[str, object]:
    """The dotted options a command line sets (`--a.b 2`, `--a.b=x`, a bare `--a.b` is
    True, `--a.no-b` False), values read as Python literals where they are ones."""
    words = [w for s in strings for w in s.split()]
    found: dict[str, object] = {}
    for index, word in enumerate(words):
        if not word.startswith("--") or "." not in word:
            continue
        name, equals, value = word[2:].partition("=")
        following = words[index + 1] if index + 1 < len(words) else "--"
        if not equals and not following.startswith("--"):
            value = following
        head, _, last = name.rpartition(".")
        if not equals and following.startswith("--"):
            negated = last.startswith(("no-", "no_"))
            last = last[3:] if negated else last
            found[f"{head}.{last}".replace("-", "_")] = not negated
            continue
        found[name.replace("-", "_")] = _literal(value)
    return found


def _literal(text: str) -> object:
    lowered = {"true": True, "false": False, "none": None}
    if text.lower() in lowered:
        return lowered[text.lower()]
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, int | float | str) else text


def fires(check: Check, options: dict[str, object]) -> bool:
    """Whether the check raises for a command setting `options`: every guard decided and
    taken, and one of them about an option (an unconditional `raise` validates nothing)."""
    if check.reads.isdisjoint(options):
        return False
    for test, taken in check.guards:
        value = _truth(test, check.options, options)
        if value is UNKNOWN or bool(value) != taken:
            return False
    return True


def _option(node: ast.expr, roots: tuple[tuple[str, str], ...]) -> str | None:
    """The option an attribute chain reads: `self.x` in a config with prefix `p` → `p.x`;
    `anything.parallelism.x` → `parallelism.x`."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not parts:
        return None
    parts.insert(0, node.id)
    for root, prefix in roots:
        if parts[0] == root and root != prefix:
            return ".".join([prefix, *parts[1:]] if prefix else parts[1:])
    for index, part in enumerate(parts[:-1]):
        if any(part == prefix for root, prefix in roots if root == prefix):
            return ".".join(parts[index:])
    return None


def _value(node: ast.expr, roots: tuple[tuple[str, str], ...], options: dict[str, object]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Attribute):
        option = _option(node, roots)
        return options.get(option, UNKNOWN) if option else UNKNOWN
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = [_value(e, roots, options) for e in node.elts]
        return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _value(node.left, roots, options), _value(node.right, roots, options)
        numbers = all(isinstance(v, int) and not isinstance(v, bool) for v in (left, right))
        if not numbers:
            return UNKNOWN
        try:
            return _ARITHMETIC[type(node.op)](left, right)
        except ArithmeticError:
            return UNKNOWN
    return _truth(node, roots, options)


def _truth(node: ast.expr, roots: tuple[tuple[str, str], ...], options: dict[str, object]) -> Any:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _value(node.operand, roots, options)
        return UNKNOWN if inner is UNKNOWN else not inner
    if isinstance(node, ast.BoolOp):
        values = [_value(v, roots, options) for v in node.values]
        decisive = isinstance(node.op, ast.Or)  # a true value decides an `or`
        if any(v is not UNKNOWN and bool(v) == decisive for v in values):
            return decisive
        return UNKNOWN if any(v is UNKNOWN for v in values) else not decisive
    if isinstance(node, ast.Compare):
        left = _value(node.left, roots, options)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _value(right_node, roots, options)
            compare = _COMPARE.get(type(op))
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            if isinstance(op, ast.Is | ast.IsNot) and (left is None or right is None):
                result: object = (left is right) == isinstance(op, ast.Is)
            elif compare is None:
                return UNKNOWN
            elif isinstance(op, ast.In | ast.NotIn) and not isinstance(right, tuple):
                return UNKNOWN  # `x in some_string`: not the membership meant
            else:
                try:
                    result = compare(left, right)
                except TypeError:
                    return UNKNOWN
            if not result:
                return False
            left = right
        return True
    if isinstance(node, ast.Attribute | ast.Constant):
        value = _value(node, roots, options)
        return UNKNOWN if value is UNKNOWN else value
    return UNKNOWN
