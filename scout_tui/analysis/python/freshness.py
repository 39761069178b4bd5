"""Code freshness: monkey-patches, private torch APIs, duplicated logic, config drift.
Pure functions over parsed modules."""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

from scout_tui.analysis.python import pyast, shapes


@dataclass(frozen=True)
class Patch:
    path: str
    line: int
    target: str  # dotted origin of the patched class, e.g. torchtitan.models.x.FlexAttention
    method: str
    function: str | None  # the replacement's name, when defined in the same module
    wraps_original: bool  # `C.m = wrap(C.m)`: follows whatever signature upstream has
    signature: tuple[shapes.Param, ...] = ()  # the replacement's

    @property
    def label(self) -> str:
        return f"{self.target.rsplit('.', 1)[-1]}.{self.method}"


@pyast.per_tree
def monkey_patches(path: str, tree: ast.Module | None) -> list[Patch]:
    """`Class.method = fn` and `setattr(Class, "method", fn)` on imported classes."""
    if tree is None:
        return []
    imports = pyast.import_map(tree)
    functions = {
        node.name: node
        for node in pyast.nodes(tree, ast.FunctionDef)
        if isinstance(node, ast.FunctionDef)
    }
    found = []
    statements = [n for n in pyast.nodes(tree, ast.Assign, ast.Expr) if isinstance(n, ast.stmt)]
    for node in sorted(statements, key=lambda n: n.lineno):
        target = value = None
        method = ""
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            attribute = node.targets[0]
            if isinstance(attribute, ast.Attribute) and isinstance(attribute.value, ast.Name):
                target, method, value = attribute.value.id, attribute.attr, node.value
        elif (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "setattr"
            and len(node.value.args) == 3
        ):
            owner, name, value = node.value.args
            if isinstance(owner, ast.Name) and isinstance(name, ast.Constant):
                target, method = owner.id, str(name.value)
        if target is None or target not in imports or value is None:
            continue
        replacement = functions.get(value.id) if isinstance(value, ast.Name) else None
        wraps = f"{target}.{method}" in ast.unparse(value)
        fn_name = replacement.name if replacement is not None else None
        params = tuple(shapes.signature(replacement)) if replacement is not None else ()
        found.append(Patch(path, node.lineno, imports[target], method, fn_name, wraps, params))
    return found


@pyast.per_tree
def upstream_signature(tree: ast.Module, qualname: str) -> tuple[shapes.Param, ...] | None:
    """The signature of the function (or method) `qualname`; None when the module defines
    none by that name (or it is a class)."""
    node = pyast.find(tree, qualname)
    if node is None or isinstance(node, ast.ClassDef):
        return None
    return tuple(shapes.signature(node))


def signature_mismatch(patch: list[shapes.Param], upstream: list[shapes.Param]) -> list[str]:
    """What a replacement function lacks to be called the way upstream's method is."""
    if any(p.kind in ("*args", "**kwargs") for p in patch):
        accepts_any = {p.kind for p in patch}
        if {"*args", "**kwargs"} <= accepts_any:
            return []
    problems = []
    names = [p.name for p in patch]
    for param in upstream:
        if param.kind in ("*args", "**kwargs"):
            continue
        if param.name not in names and not any(p.kind == "**kwargs" for p in patch):
            problems.append(f"upstream has `{param.name}` ({param.kind}); the patch does not")
    upstream_names = [p.name for p in upstream]
    for param in patch:
        if param.kind in ("*args", "**kwargs") or param.name in upstream_names:
            continue
        if param.default is None:
            problems.append(f"the patch requires `{param.name}`, which upstream never passes")
    positional_up = [p.name for p in upstream if p.kind in ("positional", "positional-only")]
    positional_patch = [p.name for p in patch if p.kind in ("positional", "positional-only")]
    shared = [n for n in positional_up if n in positional_patch]
    if shared != [n for n in positional_patch if n in shared]:
        problems.append("positional parameters are in a different order")
    return problems


@dataclass(frozen=True)
class PrivateUse:
    path: str
    line: int
    module: str
    name: str

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.name}" if self.name else self.module


def private_imports(path: str, tree: ast.Module | None, configured: list[str]) -> list[PrivateUse]:
    """Imports from torch of `_`-prefixed names or through `_`-prefixed modules, and of the
    configured private names from anywhere."""
    found = []
    for item in pyast.imports(tree):
        module, name = item.module, item.name
        if not (module == "torch" or module.startswith("torch.")):
            continue
        private_module = any(part.startswith("_") for part in module.split("."))
        if private_module or name.startswith("_") or name in configured:
            found.append(PrivateUse(path, item.line, module, name))
    return found


@pyast.per_tree
def torch_attributes(tree: ast.Module | None) -> frozenset[str]:
    """The dotted `torch.…` chains a module reaches by attribute access through a name an
    import binds (`import torch`, `import torch._x.y` bind `torch`; `import torch as t`,
    `import torch._x as x` bind their alias): `torch._functorch.config.x = …` uses
    `torch._functorch.config` as surely as an import of it does."""
    bound: dict[str, str] = {}
    for item in pyast.imports(tree):
        if item.name or not (item.module == "torch" or item.module.startswith("torch.")):
            continue
        if item.asname:
            bound[item.asname] = item.module
        else:
            bound["torch"] = "torch"
    if not bound:
        return frozenset()
    inner = {
        id(node.value)
        for node in pyast.nodes(tree, ast.Attribute)
        if isinstance(node, ast.Attribute)
    }
    found = set()
    for node in pyast.nodes(tree, ast.Attribute):
        if id(node) in inner or not isinstance(node, ast.Attribute):
            continue  # part of a longer chain: the longest says it
        parts = []
        current: ast.expr = node
        while isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        if isinstance(current, ast.Name) and current.id in bound:
            found.add(".".join([bound[current.id], *reversed(parts)]))
    return frozenset(found)


def still_reached(dotted: str, chains: set[str]) -> bool:
    """Whether attribute access still reaches `dotted` (the name itself, or inside it)."""
    return dotted in chains or any(chain.startswith(dotted + ".") for chain in chains)


def public_candidates(use: PrivateUse) -> list[str]:
    """Public dotted names where the same object could live: the module path with its
    private parts dropped, name kept (`torch.distributed.tensor._api.DTensor` →
    `torch.distributed.tensor.DTensor`)."""
    if not use.name or use.name.startswith("_"):
        return []
    parts = use.module.split(".")
    public: list[str] = []
    for part in parts:
        if part.startswith("_"):
            break
        public.append(part)
    candidates = []
    while len(public) >= 1:
        candidate = ".".join([*public, use.name])
        if candidate != use.dotted:
            candidates.append(candidate)
        public = public[:-1]
    return candidates


def _shape(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The function body as node types and constants, names erased: renames do not hide a copy."""
    tokens = []
    for child in pyast.walk(node):
        if child is node:
            continue
        tokens.append(type(child).__name__)
        if isinstance(child, ast.Constant):
            tokens.append(repr(child.value)[:20])
        elif isinstance(child, ast.Attribute):
            tokens.append(child.attr)
    return tokens


@dataclass(frozen=True)
class SimilarPair:
    left: str
    left_line: int
    right: str
    right_line: int
    ratio: float


@pyast.per_tree
def similar_functions(
    left: ast.Module | None, right: ast.Module | None, threshold: float, min_nodes: int = 30
) -> list[SimilarPair]:
    def functions(
        tree: ast.Module | None,
    ) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[str]]]:
        if tree is None:
            return []
        found = []
        for node in pyast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                shape = _shape(node)
                if len(shape) >= min_nodes:
                    found.append((node, shape))
        return found

    pairs = []
    rights = functions(right)
    for a, shape_a in functions(left):
        matcher = difflib.SequenceMatcher(None, shape_a, autojunk=False)
        for b, shape_b in rights:
            matcher.set_seq2(shape_b)
            if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                continue
            ratio = matcher.ratio()
            if ratio >= threshold:
                pairs.append(SimilarPair(a.name, a.lineno, b.name, b.lineno, round(ratio, 2)))
    return sorted(pairs, key=lambda p: -p.ratio)


def _field_read(value: ast.expr, base: str) -> str | None:
    """The field a simple expression reads: `base.x`, `d["x"]`, `d.get("x")`."""
    if isinstance(value, ast.Attribute) and ast.unparse(value.value) == base:
        return value.attr
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
        return str(value.slice.value)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "get"
        and value.args
        and isinstance(value.args[0], ast.Constant)
    ):
        return str(value.args[0].value)
    return None


def _popped_key(node: ast.AST) -> object:
    """The key of `d.pop("x")` or `del d["x"]`, if the node is one."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "pop"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        return node.args[0].value
    if isinstance(node, ast.Delete):
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
                return target.slice.value
    return None


def converter_drift(converter: ast.FunctionDef, base_fields: list[str]) -> dict[str, str]:
    """How a config converter treats each base field: copied, dropped, overridden, or
    rebuilt wholesale (a new object that ignores the user's value)."""
    params = [a.arg for a in converter.args.args]
    base = params[0] if params else ""
    status = {name: "dropped" for name in base_fields}
    generic = any(
        isinstance(node, ast.Call)
        and ast.unparse(node.func).endswith("fields")
        and any(ast.unparse(arg) == base for arg in node.args)
        for node in pyast.walk(converter)
    )
    if generic:  # {f.name: getattr(base, f.name) for f in fields(base)}
        status = dict.fromkeys(base_fields, "copied")

    # Locals that hold a field's value: `ac = d.get("activation_checkpoint")`, `x = base.x`.
    aliases: dict[str, str] = {}
    for node in pyast.walk(converter):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if not isinstance(target, ast.Name):
                continue
            field = _field_read(value, base)
            if field in status:
                aliases[target.id] = field

    def judge(name: str, value: ast.expr) -> str:
        text = ast.unparse(value)
        if text in (f"{base}.{name}", f"getattr({base}, {name!r})"):
            return "copied"
        reads_it = f"{base}.{name}" in text or (generic and f"[{name!r}]" in text)
        reads_alias = any(
            isinstance(n, ast.Name) and aliases.get(n.id) == name for n in pyast.walk(value)
        )
        if reads_it or reads_alias:
            return "overridden"
        if isinstance(value, ast.Call):
            return "rebuilt"
        return "overridden"

    for node in pyast.walk(converter):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in status:
                    status[keyword.arg] = judge(keyword.arg, keyword.value)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.slice, ast.Constant)
                    and target.slice.value in status
                ):
                    status[target.slice.value] = judge(target.slice.value, node.value)
        popped = _popped_key(node)
        if popped in status:
            status[popped] = "dropped"
        if isinstance(node, ast.Assign):  # profiler.trace_post_processor = ...
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and aliases.get(target.value.id) in status
                    and status[aliases[target.value.id]] == "copied"
                ):
                    status[aliases[target.value.id]] = "overridden"
    return status


@dataclass(frozen=True)
class Forced:
    """A sub-field a config converter sets to a fixed value, whatever the base config said:
    `replace(base.parallelism, spmd_backend="partial_dtensor")`."""

    field: str  # the base config's field: "parallelism"
    name: str  # the sub-field forced: "spmd_backend"
    value: str  # as written: "'partial_dtensor'"
    line: int


def forced_values(converter: ast.FunctionDef) -> list[Forced]:
    """The constants a converter forces into fields it otherwise keeps."""
    found = []
    for node in pyast.walk(converter):
        if not (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).rsplit(".", 1)[-1] == "replace"
            and node.args
        ):
            continue
        source = node.args[0]
        if not isinstance(source, ast.Attribute):
            continue
        for keyword in node.keywords:
            if keyword.arg and isinstance(keyword.value, ast.Constant):
                found.append(
                    Forced(
                        source.attr, keyword.arg, ast.unparse(keyword.value), keyword.value.lineno
                    )
                )
    return found


def constants_set(function: ast.FunctionDef, name: str) -> list[tuple[str, int]]:
    """Where a function sets `name` to a constant: `name=…` in a call, `x.name = …`."""
    found = []
    for node in pyast.walk(function):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == name and isinstance(keyword.value, ast.Constant):
                    found.append((ast.unparse(keyword.value), keyword.value.lineno))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == name:
                    found.append((ast.unparse(node.value), node.lineno))
    return found


def converter_uses(tree: ast.Module | None, converter: str) -> list[tuple[ast.FunctionDef, str]]:
    """Functions that build their config by converting another function's:
    `to_graph_trainer_config(llama3_debugmodel(), …)` → (that function, "llama3_debugmodel")."""
    found = []
    for function in tree.body if tree is not None else []:
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in pyast.walk(function):
            if (
                isinstance(node, ast.Call)
                and ast.unparse(node.func).rsplit(".", 1)[-1] == converter
                and node.args
                and isinstance(node.args[0], ast.Call)
            ):
                found.append((function, ast.unparse(node.args[0].func)))
                break
    return found
