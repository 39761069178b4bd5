"""Does an override reach the method it overrides on the default path? Pure: the override
and the experiment's modules in, whether its `super()` call runs with every setting at its
default out, and if not, the branch it hides behind.

An override that calls `super().f(...)` only under `if self.mode == "x":` while `mode`
defaults to something else runs its own copy by default: what upstream changes in `f`
does not reach it. Scout says so only when it can tell from the code: the condition names
a setting whose default it finds (a field of the experiment's classes, an `__init__` or
method parameter with a literal default) and that default takes the other branch.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from scout_tui.analysis.python import pyast

Function = ast.FunctionDef | ast.AsyncFunctionDef
_UNKNOWN = object()
_AMBIGUOUS = object()


@dataclass(frozen=True)
class SuperPath:
    """How an override reaches the upstream method."""

    on_default_path: bool  # a call runs by default, or scout cannot tell otherwise
    only_if: str = ""  # the branch it is called on, as code: "self.mode == 'x'"
    setting: str = ""  # the setting whose default skips it: "mode"
    default: str = ""  # ... and that default, as code: "'y'"


def calls_upstream(method: Function, node: ast.AST) -> bool:
    """`super().name(...)` or `Base.name(self, ...)`: a call of the method overridden; or
    `self.inner.name(...)`: a wrapper handing the call to the object it wraps, where the
    upstream method runs."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method.name
    ):
        return False
    owner = node.func.value
    return (
        (isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super")
        or (isinstance(owner, ast.Name | ast.Attribute) and ast.unparse(owner)[:1].isupper())
        or (
            isinstance(owner, ast.Attribute)
            and isinstance(owner.value, ast.Name)
            and owner.value.id == "self"
        )
    )


def super_path(method: Function, defaults: dict[str, object]) -> SuperPath | None:
    """None: the override never calls the upstream method. `defaults`: the settings the
    experiment's code gives a literal default (`settings_defaults`)."""
    local = dict(defaults)
    local.update(_parameter_defaults(method))
    guarded: list[list[tuple[ast.expr, bool]]] = []
    _walk(method, method.body, [], guarded)
    if not guarded:
        return None
    skipped: SuperPath | None = None
    for guards in guarded:
        reason = _skipping(guards, local)
        if reason is None:
            return SuperPath(True)  # this call runs by default (or may: conservative)
        skipped = skipped or reason
    return skipped


def _walk(
    method: Function,
    block: list[ast.stmt],
    guards: list[tuple[ast.expr, bool]],
    found: list[list[tuple[ast.expr, bool]]],
) -> None:
    """Each upstream call in `block`, with the conditions (test, taken) that lead to it;
    an earlier `if` that returns or raises guards what follows it."""
    guards = list(guards)
    for statement in block:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue  # defined here, run elsewhere (or never)
        if isinstance(statement, ast.If):
            if _has_call(method, statement.test):
                found.append(guards)
            _walk(method, statement.body, [*guards, (statement.test, True)], found)
            _walk(method, statement.orelse, [*guards, (statement.test, False)], found)
            if _exits(statement.body):
                guards.append((statement.test, False))
            elif statement.orelse and _exits(statement.orelse):
                guards.append((statement.test, True))
            continue
        blocks = [
            getattr(statement, name)
            for name in ("body", "orelse", "finalbody")
            if isinstance(getattr(statement, name, None), list)
        ] + [h.body for h in getattr(statement, "handlers", [])]
        if blocks:
            heads = [
                getattr(statement, name)
                for name in ("iter", "test", "target")
                if isinstance(getattr(statement, name, None), ast.AST)
            ] + [item.context_expr for item in getattr(statement, "items", [])]
            if any(_has_call(method, head) for head in heads):
                found.append(guards)
            for inner in blocks:
                _walk(method, inner, guards, found)
        elif _has_call(method, statement):
            found.append(guards)


def _has_call(method: Function, node: ast.AST) -> bool:
    return any(calls_upstream(method, n) for n in pyast.walk(node))


def _exits(block: list[ast.stmt]) -> bool:
    return bool(block) and isinstance(block[-1], ast.Return | ast.Raise)


def _skipping(guards: list[tuple[ast.expr, bool]], defaults: dict[str, object]) -> SuperPath | None:
    """The first guard whose test, with the settings at their defaults, goes the other way;
    None when every guard holds or may hold."""
    for test, taken in guards:
        value = _truth(test, defaults)
        if value is _UNKNOWN or value == taken:
            continue
        setting = _setting(test, defaults)
        only_if = ast.unparse(test) if taken else f"not ({ast.unparse(test)})"
        return SuperPath(False, only_if, setting, repr(defaults[setting]) if setting else "")
    return None


def _name(node: ast.expr) -> str | None:
    """The setting an expression reads: `self.config.mode` → mode, `flag` → flag."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _setting(test: ast.expr, defaults: dict[str, object]) -> str:
    for node in pyast.walk(test):
        name = _name(node) if isinstance(node, ast.expr) else None
        if name in defaults:
            return name
    return ""


def _truth(test: ast.expr, defaults: dict[str, object]) -> object:
    """The test's truth with every setting at its default; `_UNKNOWN` when scout cannot
    tell."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, defaults)
        return _UNKNOWN if inner is _UNKNOWN else not inner
    if isinstance(test, ast.BoolOp):
        values = [_truth(v, defaults) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # True decides an `or`, False an `and`
        if decisive in values:
            return decisive
        return _UNKNOWN if _UNKNOWN in values else not decisive
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = _operand(test.left, defaults), _operand(test.comparators[0], defaults)
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        try:
            return _compare(test.ops[0], left, right)
        except TypeError:
            return _UNKNOWN
    name = _name(test)
    if name in defaults:
        return bool(defaults[name])
    return _UNKNOWN


def _compare(op: ast.cmpop, left: object, right: object) -> object:
    match op:
        case ast.Eq():
            return left == right
        case ast.NotEq():
            return left != right
        case ast.Is():
            return left is right if left is None or right is None else _UNKNOWN
        case ast.IsNot():
            return left is not right if left is None or right is None else _UNKNOWN
        case ast.In():
            return left in right  # type: ignore[operator]
        case ast.NotIn():
            return left not in right  # type: ignore[operator]
    return _UNKNOWN


def _operand(node: ast.expr, defaults: dict[str, object]) -> object:
    name = _name(node)
    if name in defaults:
        return defaults[name]
    return _literal(node)


def _literal(node: ast.expr | None) -> object:
    if node is None:
        return _UNKNOWN
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


def _parameter_defaults(function: Function) -> dict[str, object]:
    args = function.args
    positional = args.posonlyargs + args.args
    with_default = positional[len(positional) - len(args.defaults) :]
    pairs = list(zip(with_default, args.defaults, strict=True))
    pairs += [
        (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
    ]
    return {
        arg.arg: value for arg, default in pairs if (value := _literal(default)) is not _UNKNOWN
    }


@pyast.per_tree
def settings_defaults(modules: dict[str, ast.Module]) -> dict[str, object]:
    """The literal defaults the experiment's code gives its settings: a class's fields
    (`mode: str = "y"`, `field(default=…)`), `__init__` parameters. A name given two
    different defaults is left out (which one a condition reads is not known)."""
    found: dict[str, object] = {}

    def note(name: str, value: object) -> None:
        if value is _UNKNOWN:
            return
        known = found.get(name, value)
        found[name] = value if known == value and type(known) is type(value) else _AMBIGUOUS

    for tree in modules.values():
        for node in pyast.nodes(tree, ast.ClassDef):
            assert isinstance(node, ast.ClassDef)
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    note(statement.target.id, _field_default(statement.value))
                elif isinstance(statement, ast.FunctionDef) and statement.name == "__init__":
                    for name, value in _parameter_defaults(statement).items():
                        if name not in ("self", "cls"):
                            note(name, value)
    return {name: value for name, value in found.items() if value is not _AMBIGUOUS}


def _field_default(value: ast.expr | None) -> object:
    if isinstance(value, ast.Call) and ast.unparse(value.func).rsplit(".", 1)[-1] == "field":
        given = {k.arg: k.value for k in value.keywords if k.arg}
        return _literal(given.get("default"))
    return _literal(value)
