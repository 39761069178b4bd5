"""Instance attributes an experiment inherits without setting: its subclass of an upstream
class reads `self.x` in its methods, and only the upstream class sets `self.x`. Upstream
renaming or dropping that assignment breaks the experiment at the read. Pure: parsed
modules in, attribute names out.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from scout_tui.analysis.python import pyast

Function = ast.FunctionDef | ast.AsyncFunctionDef
ClassAt = Callable[[ast.Module | None, str], tuple[ast.Module | None, ast.ClassDef] | None]
_BASE_HOPS = 4  # upstream base classes followed for what they provide


def _self_name(function: Function) -> str | None:
    args = function.args.posonlyargs + function.args.args
    return args[0].arg if args else None


def provided(node: ast.ClassDef) -> set[str]:
    """What a class gives its instances: `self.x = …` (annotated, augmented, `setattr`)
    in any of its methods, class-level names, methods and properties."""
    found: set[str] = set()
    for statement in node.body:
        if isinstance(statement, Function):
            found.add(statement.name)
            me = _self_name(statement)
            if me is None:
                continue
            for child in pyast.walk(statement):
                if (
                    isinstance(child, ast.Attribute)
                    and isinstance(child.ctx, ast.Store)
                    and isinstance(child.value, ast.Name)
                    and child.value.id == me
                ):
                    found.add(child.attr)
                elif _setattr_name(child) is not None:
                    found.add(_setattr_name(child) or "")
        elif isinstance(statement, ast.ClassDef):
            found.add(statement.name)
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            found |= {n.id for t in targets for n in pyast.walk(t) if isinstance(n, ast.Name)}
    return found


def _setattr_name(node: ast.AST) -> str | None:
    """`setattr(obj, "x", …)`: "x"."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "setattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def provided_with_bases(tree: ast.Module | None, node: ast.ClassDef, class_at: ClassAt) -> set[str]:
    """`provided` of a class and of the base classes scout can locate (`class_at`: a name
    written in a module → the class it stands for, with its module)."""
    found = set(provided(node))
    todo = [(tree, base) for base in node.bases]
    seen = {id(node)}
    while todo and len(seen) <= _BASE_HOPS:
        module, base = todo.pop()
        hit = class_at(module, ast.unparse(base))
        if hit is None or id(hit[1]) in seen:
            continue
        seen.add(id(hit[1]))
        found |= provided(hit[1])
        todo += [(hit[0], b) for b in hit[1].bases]
    return found


@pyast.per_tree
def inherited_reads(modules: dict[str, ast.Module], class_name: str) -> dict[str, list[str]]:
    """`self.x` the experiment's subclasses of `class_name` (directly or through its own
    classes) read and that nothing of the experiment sets: not the class or its own bases,
    nor any `obj.x = …` or `setattr(obj, "x", …)` anywhere in its code. Each with where
    ("path:line")."""
    local: dict[str, list[ast.ClassDef]] = {}
    stored: set[str] = set()
    for tree in modules.values():
        for node in pyast.nodes(tree, ast.ClassDef, ast.Attribute, ast.Call):
            if isinstance(node, ast.ClassDef):
                local.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
                stored.add(node.attr)
            elif (name := _setattr_name(node)) is not None:
                stored.add(name)

    def lineage(node: ast.ClassDef) -> tuple[list[ast.ClassDef], bool]:
        """The experiment's classes `node` derives from (itself first), and whether one of
        them subclasses `class_name`."""
        found: list[ast.ClassDef] = []
        derives, todo = False, [node]
        while todo and len(found) < 20:
            current = todo.pop()
            if any(current is f for f in found):
                continue
            found.append(current)
            for base in current.bases:
                name = ast.unparse(base).rsplit(".", 1)[-1]
                derives = derives or name == class_name
                if name != class_name:
                    todo += local.get(name, [])
        return found, derives

    reads: dict[str, list[str]] = {}
    for path, tree in sorted(modules.items()):
        for node in pyast.nodes(tree, ast.ClassDef):
            assert isinstance(node, ast.ClassDef)
            if node.name == class_name:
                continue
            classes, derives = lineage(node)
            if not derives:
                continue
            own = stored.union(*(provided(c) for c in classes))
            for method in node.body:
                if not isinstance(method, Function) or (me := _self_name(method)) is None:
                    continue
                for child in pyast.walk(method):
                    if (
                        isinstance(child, ast.Attribute)
                        and isinstance(child.ctx, ast.Load)
                        and isinstance(child.value, ast.Name)
                        and child.value.id == me
                        and child.attr not in own
                        and not child.attr.startswith("__")
                    ):
                        reads.setdefault(child.attr, []).append(f"{path}:{child.lineno}")
    return reads
