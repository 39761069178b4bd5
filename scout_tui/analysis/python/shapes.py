"""The shape of a definition, read with `ast`: a dataclass's fields, a signature, the arity
of the tuples a function returns; and how two shapes differ, as change objects."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from scout_tui.analysis.python.changes import (
    Added,
    Change,
    DefaultChanged,
    KindChanged,
    Removed,
    Reordered,
    TypeChanged,
    ValuesChanged,
    in_order,
)
from scout_tui.analysis.python.pyast import parse_expression


@dataclass(frozen=True)
class Field:
    name: str
    annotation: str
    default: str | None


def dataclass_fields(node: ast.ClassDef) -> dict[str, Field]:
    fields = {}
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            annotation = ast.unparse(statement.annotation)
            if annotation.startswith(("ClassVar", "typing.ClassVar")):
                continue
            default = ast.unparse(statement.value) if statement.value is not None else None
            fields[statement.target.id] = Field(statement.target.id, annotation, default)
    return fields


def compare_fields(old: dict[str, Field], new: dict[str, Field]) -> list[Change]:
    changes: list[Change] = [Added("field", name) for name in new if name not in old]
    changes += [Removed("field", name) for name in old if name not in new]
    for name in old.keys() & new.keys():
        a, b = old[name], new[name]
        if a.annotation != b.annotation:
            changes.append(
                _allowed_values_change(name, a.annotation, b.annotation)
                or TypeChanged("field", name, a.annotation, b.annotation)
            )
        if a.default != b.default:
            changes.append(DefaultChanged("field", name, a.default, b.default))
    return in_order(changes)


def literal_values(annotation: str) -> list[str] | None:
    """The allowed values of a `Literal[...]` annotation (`| None` allowed), in order; None
    for any other annotation."""
    values = _literal_values(annotation)
    return list(values) if values is not None else None


@functools.lru_cache(maxsize=4096)  # the same annotations come back on every config class
def _literal_values(annotation: str) -> tuple[str, ...] | None:
    node = parse_expression(annotation)
    if node is None:
        return None
    values: list[str] = []
    for part in _union_parts(node):
        if isinstance(part, ast.Constant) and part.value is None:
            continue
        if not (
            isinstance(part, ast.Subscript)
            and ast.unparse(part.value).rsplit(".", 1)[-1] == "Literal"
        ):
            return None
        inner = part.slice
        listed = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        values += [ast.unparse(e) for e in listed]
    return tuple(values) or None


def _union_parts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_parts(node.left) + _union_parts(node.right)
    return [node]


def _allowed_values_change(name: str, old: str, new: str) -> ValuesChanged | None:
    """The allowed values taken away and added, when both annotations are Literals."""
    before, after = literal_values(old), literal_values(new)
    if before is None or after is None:
        return None
    removed = tuple(v for v in before if v not in after)
    added = tuple(v for v in after if v not in before)
    return ValuesChanged(name, removed, added) if removed or added else None


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # positional-only | positional | *args | keyword-only | **kwargs
    default: str | None
    annotation: str | None


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Param]:
    args = node.args
    params: list[Param] = []
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)

    def text(expr: ast.expr | None) -> str | None:
        return ast.unparse(expr) if expr is not None else None

    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = "positional-only" if index < len(args.posonlyargs) else "positional"
        params.append(Param(arg.arg, kind, text(default), text(arg.annotation)))
    if args.vararg:
        params.append(Param(args.vararg.arg, "*args", None, text(args.vararg.annotation)))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(Param(arg.arg, "keyword-only", text(default), text(arg.annotation)))
    if args.kwarg:
        params.append(Param(args.kwarg.arg, "**kwargs", None, text(args.kwarg.annotation)))
    return params


def format_signature(name: str, params: list[Param]) -> str:
    parts: list[str] = []
    star_done = False
    for param in params:
        if param.kind == "keyword-only" and not star_done:
            parts.append("*")
            star_done = True
        prefix = {"*args": "*", "**kwargs": "**"}.get(param.kind, "")
        if param.kind == "*args":
            star_done = True
        piece = prefix + param.name
        if param.annotation:
            piece += f": {param.annotation}"
        if param.default is not None:
            piece += f" = {param.default}" if param.annotation else f"={param.default}"
        parts.append(piece)
    return f"{name}({', '.join(parts)})"


def compare_signatures(old: list[Param], new: list[Param]) -> list[Change]:
    before = {p.name: (i, p) for i, p in enumerate(old)}
    after = {p.name: (i, p) for i, p in enumerate(new)}
    changes: list[Change] = [
        Added("parameter", n, after[n][1].kind) for n in after if n not in before
    ]
    changes += [Removed("parameter", n) for n in before if n not in after]
    common_old = [p.name for p in old if p.name in after]
    common_new = [p.name for p in new if p.name in before]
    if common_old != common_new:
        changes.append(Reordered(tuple(common_new)))
    for name in before.keys() & after.keys():
        a, b = before[name][1], after[name][1]
        if a.kind != b.kind:
            changes.append(KindChanged(name, b.kind, a.kind))
        if a.default != b.default:
            changes.append(DefaultChanged("parameter", name, a.default, b.default))
        if a.annotation != b.annotation:
            changes.append(TypeChanged("parameter", name, a.annotation, b.annotation))
    return in_order(changes)


def return_arities(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """Lengths of the tuples this function returns (0 for a non-tuple return)."""
    arities: set[int] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Return) and child.value is not None:
            value = child.value
            arities.add(len(value.elts) if isinstance(value, ast.Tuple) else 0)
    return arities
