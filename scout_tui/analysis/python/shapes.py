"""The shape of a definition, read with `ast`: a dataclass's fields, a signature, the arity
of the tuples a function returns; and how two shapes differ, as change objects."""

from __future__ import annotations

import ast
import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scout_tui.analysis.python import pyast
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
        if a.default != b.default and not same_value(a.default, b.default):
            changes.append(DefaultChanged("field", name, a.default, b.default))
    return in_order(changes)


_UNKNOWN = object()
_FACTORIES = {"list": list, "dict": dict, "set": set, "tuple": tuple, "str": str, "int": int}
_FOLDED: dict[type[ast.operator], Callable[[Any, Any], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}


def same_value(before: str | None, after: str | None) -> bool:
    """Whether two default expressions evaluate to the same value, read statically:
    `1_000` and `1000`, `2 ** 10` and `1024`, `field(default=3)` and `3`,
    `field(default_factory=list)` and `field(default_factory=lambda: [])`. A spelling
    change of a default is no change of what a caller gets."""
    if before is None or after is None:
        return False
    a, b = _value(parse_expression(before)), _value(parse_expression(after))
    if a is _UNKNOWN or b is _UNKNOWN:
        return False
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
    return (type(a) is type(b) or numbers) and bool(a == b)


def _value(node: ast.expr | None) -> object:
    """A default expression's value when it needs nothing but itself; `_UNKNOWN` else."""
    if node is None:
        return _UNKNOWN
    if isinstance(node, ast.Call) and ast.unparse(node.func).rsplit(".", 1)[-1] == "field":
        given = {k.arg: k.value for k in node.keywords if k.arg}
        if node.args or set(given) - {"default", "default_factory"} or len(given) != 1:
            return _UNKNOWN  # init=False, metadata, …: more than a default
        if "default" in given:
            return _value(given["default"])
        factory = given["default_factory"]
        if isinstance(factory, ast.Lambda) and not factory.args.args:
            return _value(factory.body)
        maker = _FACTORIES.get(ast.unparse(factory))
        return maker() if maker else _UNKNOWN
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) <= 1:
        maker = _FACTORIES.get(ast.unparse(node.func))  # `list()`, `tuple([1, 2])`
        inner = _value(node.args[0]) if node.args else None
        if maker is None or inner is _UNKNOWN:
            return _UNKNOWN
        try:
            return maker(inner) if node.args else maker()
        except (TypeError, ValueError):
            return _UNKNOWN
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLDED:
        left, right = _value(node.left), _value(node.right)
        if not all(isinstance(v, int | float) for v in (left, right)):
            return _UNKNOWN
        if isinstance(node.op, ast.Pow) and abs(right) > 64:  # type: ignore[arg-type]
            return _UNKNOWN  # `10 ** 10 ** 10`: hostile input is normal input
        try:
            return _FOLDED[type(node.op)](left, right)
        except (ArithmeticError, ValueError):
            return _UNKNOWN
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


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


_BUILTIN_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "float": (int, float),  # an int fits a float annotation
    "complex": (int, float, complex),
    "str": (str,),
    "bytes": (bytes,),
    "bool": (bool,),
    "list": (list,),
    "dict": (dict,),
    "tuple": (tuple,),
    "set": (set,),
}
_TYPING = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set"}


def admits(annotation: str | None, value: str) -> bool | None:
    """Whether a field annotated `annotation` takes the literal `value` (as written: `4`,
    `'full'`, `None`); None when scout cannot tell (a class of the project, a TypeVar)."""
    node = parse_expression(annotation) if annotation else None
    try:
        literal = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if node is None:
        return None
    verdicts = [_admits_part(part, literal) for part in _union_members(node)]
    if any(v is True for v in verdicts):
        return True
    return False if verdicts and all(v is False for v in verdicts) else None


def _union_members(node: ast.expr) -> list[ast.expr]:
    """`A | B`, `Optional[A]`, `Union[A, B]`: the members."""
    parts = []
    for part in _union_parts(node):
        wrapper = (
            ast.unparse(part.value).rsplit(".", 1)[-1] if isinstance(part, ast.Subscript) else ""
        )
        if isinstance(part, ast.Subscript) and wrapper in ("Optional", "Union"):
            inner = part.slice
            listed = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            parts += [m for e in listed for m in _union_members(e)]
            if wrapper == "Optional":
                parts.append(ast.Constant(None))
        else:
            parts.append(part)
    return parts


def _admits_part(part: ast.expr, literal: object) -> bool | None:
    if isinstance(part, ast.Constant) and part.value is None:
        return literal is None
    name = ast.unparse(part.value if isinstance(part, ast.Subscript) else part)
    name = name.rsplit(".", 1)[-1]
    if name == "Literal" and isinstance(part, ast.Subscript):
        listed = part.slice.elts if isinstance(part.slice, ast.Tuple) else [part.slice]
        try:
            return any(
                type(v) is type(literal) and v == literal
                for v in (ast.literal_eval(e) for e in listed)
            )
        except (ValueError, TypeError, SyntaxError):
            return None
    if name in ("Any", "object"):
        return True
    kinds = _BUILTIN_TYPES.get(_TYPING.get(name, name))
    if kinds is None:
        return None
    if isinstance(literal, bool) and bool not in kinds and int in kinds and name != "int":
        return False  # True is an int, and an int fits a float, but no one means True as 1.0
    return isinstance(literal, kinds)


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
    bound = 1 if new and new[0].name in ("self", "cls") else 0
    changes: list[Change] = [
        Added(
            "parameter",
            n,
            param.kind,
            required=param.default is None and param.kind not in ("*args", "**kwargs"),
            position=index - bound if param.kind in ("positional-only", "positional") else None,
        )
        for n, (index, param) in after.items()
        if n not in before
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
        if a.default != b.default and not same_value(a.default, b.default):
            changes.append(DefaultChanged("parameter", name, a.default, b.default))
        if a.annotation != b.annotation:
            changes.append(TypeChanged("parameter", name, a.annotation, b.annotation))
    return in_order(changes)


def return_arities(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """Lengths of the tuples this function returns (0 for a non-tuple return)."""
    arities: set[int] = set()
    for child in pyast.walk(node):
        if isinstance(child, ast.Return) and child.value is not None:
            value = child.value
            arities.add(len(value.elts) if isinstance(value, ast.Tuple) else 0)
    return arities


def qualified(annotation: str, tree: ast.Module | None) -> str:
    """An annotation with each imported name written as where it comes from (`dist` of
    `import torch.distributed as dist` as `torch.distributed`, `ProcessGroup` of `from
    torch.distributed import ProcessGroup` as `torch.distributed.ProcessGroup`), so two
    spellings of one class compare equal."""
    node = parse_expression(annotation)
    if node is None or tree is None:
        return annotation
    origins = pyast.import_map(tree)
    # `import a.b as c`: c is a.b (a plain `import a.b` binds `a`, already where it is from)
    origins |= {i.asname: i.module for i in pyast.imports(tree) if not i.name and i.asname}

    class Qualify(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.AST:
            origin = origins.get(name.id)
            found = parse_expression(origin) if origin else None
            return found if found is not None else name

    return ast.unparse(Qualify().visit(node))
