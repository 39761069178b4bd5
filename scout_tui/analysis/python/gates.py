"""Options read only behind a switch: a field whose every read waits on another field
being true (`if not cfg.enabled: return`, then `cfg.folder`) is consulted by nobody who
leaves that switch off, whatever its default says."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from scout_tui.analysis.python import pyast

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def off_switches(node: ast.ClassDef) -> frozenset[str]:
    """The class's fields that are `bool` and default to False."""
    return frozenset(
        child.target.id
        for child in node.body
        if isinstance(child, ast.AnnAssign)
        and isinstance(child.target, ast.Name)
        and ast.unparse(child.annotation) == "bool"
        and isinstance(child.value, ast.Constant)
        and child.value.value is False
    )


def gates(tree: ast.Module, field: str, switches: frozenset[str]) -> set[str] | None:
    """The switches (of `switches`) that every read of `.field` in `tree` sits behind; an
    empty set when some read sits behind none, None when `tree` never reads it."""
    found: list[frozenset[str]] = []
    _walk(tree.body, frozenset(), field, switches, found)
    if not found:
        return None
    return set(frozenset.intersection(*found))


def _walk(
    body: Iterable[ast.stmt],
    active: frozenset[str],
    field: str,
    switches: frozenset[str],
    found: list[frozenset[str]],
) -> None:
    for statement in body:
        if isinstance(statement, ast.If):
            _reads(statement.test, active, field, found)
            on = _switched_on(statement.test, switches)
            _walk(statement.body, active | on, field, switches, found)
            _walk(statement.orelse, active, field, switches, found)
            off = _switched_on(_negated(statement.test), switches)
            if off and statement.body and isinstance(statement.body[-1], _EXITS):
                active = active | off  # `if not cfg.x: return`: the rest runs only when on
            continue
        nested = [
            value
            for name in ("body", "orelse", "finalbody", "handlers")
            for value in _statements(getattr(statement, name, None))
        ]
        for child in ast.iter_child_nodes(statement):
            if not isinstance(child, ast.stmt | ast.excepthandler):
                _reads(child, active, field, found)
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            _walk(statement.body, frozenset(), field, switches, found)  # runs on its own
        else:
            _walk(nested, active, field, switches, found)


def _statements(value: object) -> list[ast.stmt]:
    if not isinstance(value, list):
        return []
    out: list[ast.stmt] = []
    for item in value:
        if isinstance(item, ast.ExceptHandler):
            out.extend(item.body)
        elif isinstance(item, ast.stmt):
            out.append(item)
    return out


def _reads(node: ast.AST, active: frozenset[str], field: str, found: list[frozenset[str]]) -> None:
    for child in pyast.walk(node):
        if isinstance(child, ast.Attribute) and child.attr == field:
            found.append(active)


def _switched_on(test: ast.expr | None, switches: frozenset[str]) -> frozenset[str]:
    """The switches that must be true for `test` to hold: `x.s`, `x.s and ...`."""
    if test is None:
        return frozenset()
    if isinstance(test, ast.Attribute) and test.attr in switches:
        return frozenset({test.attr})
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return frozenset().union(*(_switched_on(value, switches) for value in test.values))
    return frozenset()


def _negated(test: ast.expr) -> ast.expr | None:
    """What must hold when `test` is false, where scout can say: `not x.s` → `x.s`, and
    `not a or not b` → `a and b`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        held = [_negated(value) for value in test.values]
        if all(h is not None for h in held):
            return ast.BoolOp(op=ast.And(), values=[h for h in held if h is not None])
    return None
