"""The experiment's dependency surface, discovered from its code: the upstream classes and
functions it imports, subclasses and calls, the config dataclasses it builds or reaches
through a root config's fields (where its `Literal` options live), and the methods its
subclasses override. Pure: the experiment's modules and a way to parse a repository file
in, the dependencies out.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from scout_tui.analysis.python import pyast, shapes
from scout_tui.analysis.python.attributes import inherited_reads
from scout_tui.analysis.python.relevance import Uses, given, nested_elsewhere
from scout_tui.analysis.python.super_path import SuperPath, settings_defaults, super_path
from scout_tui.config.models import SurfaceCheck

Parse = Callable[[str], ast.Module | None]

_HOPS = 4  # re-exports followed through `__init__` modules before giving up
_WRAPPERS = ("Optional", "Annotated")


@dataclass(frozen=True)
class Dependency:
    path: str  # the repository file that defines it
    qualname: str  # "CompileConfig", "Trainer.Config", "Trainer.post_dataloading_process"
    check: SurfaceCheck  # what to compare: "fields" or "signature"
    via: str  # how the experiment depends on it, with where
    option_prefix: str = ""  # "parallelism" for options reached as `--parallelism.x`
    override: str = ""  # "path:line" of the experiment's override of this method
    override_qualname: str = ""  # ... and its name there: "FaultTolerantTrainer.train_step"
    calls_super: bool = False  # ... and whether that override calls the upstream one by default
    # ... and when it calls it only on a branch the defaults do not take, which
    skipped_super: SuperPath | None = None

    @property
    def target(self) -> str:
        return f"{self.path}::{self.qualname}"


def module_file(module: str, parse: Parse) -> str | None:
    """The repository file of a dotted module: `a/b.py` or `a/b/__init__.py`."""
    base = module.replace(".", "/")
    for candidate in (f"{base}.py", f"{base}/__init__.py"):
        if parse(candidate) is not None:
            return candidate
    return None


def _absolute(node: ast.ImportFrom, path: str) -> str:
    """The absolute module of a (possibly relative) `from … import`."""
    if not node.level:
        return node.module or ""
    package = path.rsplit("/", 1)[0].split("/")
    if path.endswith("/__init__.py"):
        package = path.removesuffix("/__init__.py").split("/")
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


Definition = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def resolve(module: str, name: str, parse: Parse) -> tuple[str, Definition] | None:
    """Where `from module import name` is defined, following re-exports."""
    for _ in range(_HOPS):
        path = module_file(module, parse)
        tree = parse(path) if path else None
        if tree is None or path is None:
            return None
        for node in tree.body:
            if (
                isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name == name
            ):
                return path, node
        for imported in pyast.nodes(tree, ast.ImportFrom):
            assert isinstance(imported, ast.ImportFrom)
            alias = next((a for a in imported.names if (a.asname or a.name) == name), None)
            if alias is not None:
                module, name = _absolute(imported, path), alias.name
                break
        else:
            return None
    return None


def _fields_of(node: ast.ClassDef) -> bool:
    """A dataclass with fields: a config (a plain class's annotated attributes are not)."""
    return any("dataclass" in ast.unparse(d) for d in node.decorator_list) and bool(
        shapes.dataclass_fields(node)
    )


def _class_names(annotation: ast.expr | None) -> list[str]:
    """The plain class names in a field's annotation: `X`, `X | None`, `Optional[X]`,
    `Annotated[X, …]` (its first argument)."""
    if annotation is None:
        return []
    if isinstance(annotation, ast.Name):
        return [annotation.id]
    if isinstance(annotation, ast.Attribute) and isinstance(annotation.value, ast.Name):
        return [f"{annotation.value.id}.{annotation.attr}"]  # `CheckpointManager.Config`
    if isinstance(annotation, ast.BinOp):
        return _class_names(annotation.left) + _class_names(annotation.right)
    wrapper = ast.unparse(annotation.value) if isinstance(annotation, ast.Subscript) else ""
    if isinstance(annotation, ast.Subscript) and wrapper.rsplit(".", 1)[-1] in _WRAPPERS:
        inner = annotation.slice
        return _class_names(inner.elts[0] if isinstance(inner, ast.Tuple) else inner)
    return []


@pyast.per_tree_read
def discover(experiment: str, modules: dict[str, ast.Module], parse: Parse) -> list[Dependency]:
    """The upstream symbols the experiment's modules depend on, one entry per
    (definition, check), in a stable order."""
    found: dict[tuple[str, str, str], Dependency] = {}

    def add(dependency: Dependency) -> None:
        key = (dependency.path, dependency.qualname, dependency.check)
        if dependency.path.startswith(experiment.rstrip("/") + "/"):
            return
        known = found.get(key)
        if known is None:
            found[key] = dependency
        elif dependency.option_prefix and not known.option_prefix:
            # Imported and also reached through a root config: its options are both.
            via = f"{known.via}; {dependency.via}"
            found[key] = Dependency(
                known.path, known.qualname, known.check, via, dependency.option_prefix
            )

    imported: dict[tuple[str, str], tuple[str, ast.AST, str]] = {}  # (file, local) → def
    for path, tree in sorted(modules.items()):
        for node in pyast.nodes(tree, ast.ImportFrom):
            assert isinstance(node, ast.ImportFrom)
            module = _absolute(node, path)
            if not module or module.replace(".", "/").startswith(experiment.rstrip("/")):
                continue
            for alias in node.names:
                hit = resolve(module, alias.name, parse)
                if hit is None:
                    continue
                where = f"{path.rsplit('/', 1)[-1]}:{node.lineno}"
                imported[(path, alias.asname or alias.name)] = (hit[0], hit[1], where)
                definition = hit[1]
                if isinstance(definition, ast.ClassDef):
                    if _fields_of(definition):
                        add(Dependency(hit[0], definition.name, "fields", f"imported at {where}"))
                else:
                    add(Dependency(hit[0], definition.name, "signature", f"imported at {where}"))
    settings = settings_defaults(modules)
    for path, tree in sorted(modules.items()):
        short = path.rsplit("/", 1)[-1]
        for node in pyast.nodes(tree, ast.Attribute):
            # `Trainer.Config`: a class nested in an imported one.
            assert isinstance(node, ast.Attribute)
            if not isinstance(node.value, ast.Name):
                continue
            known = imported.get((path, node.value.id))
            if known is None or not isinstance(known[1], ast.ClassDef):
                continue
            nested = pyast.find(parse(known[0]), f"{known[1].name}.{node.attr}")
            if isinstance(nested, ast.ClassDef) and _fields_of(nested):
                add(
                    Dependency(
                        known[0],
                        f"{known[1].name}.{node.attr}",
                        "fields",
                        f"used at {short}:{node.lineno}",
                    )
                )
        for node in pyast.nodes(tree, ast.ClassDef):
            assert isinstance(node, ast.ClassDef)
            for base in node.bases:
                local, _, attr = ast.unparse(base).partition(".")
                known = imported.get((path, local))
                if known is None or not isinstance(known[1], ast.ClassDef):
                    continue
                qualname = f"{known[1].name}.{attr}" if attr else known[1].name
                upstream = pyast.find(parse(known[0]), qualname)
                if not isinstance(upstream, ast.ClassDef):
                    continue
                # `self.x` its methods read and only the upstream class sets: its
                # attributes are a surface (a dataclass's fields are watched as fields).
                reads = {} if attr or _fields_of(upstream) else inherited_reads(modules, qualname)
                if reads:
                    first = sorted(reads)[0]
                    add(
                        Dependency(
                            known[0],
                            qualname,
                            "attributes",
                            f"subclassed at {short}:{node.lineno}, reading `self.{first}`"
                            + (f" (+{len(reads) - 1} more)" if len(reads) > 1 else ""),
                        )
                    )
                overridden = pyast.public_methods(upstream)
                for child in node.body:
                    if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        child.name in overridden
                        or (
                            child.name.startswith("_")
                            and (child.name == "__init__" or not child.name.startswith("__"))
                            and any(
                                isinstance(c, ast.FunctionDef | ast.AsyncFunctionDef)
                                and c.name == child.name
                                for c in upstream.body
                            )
                        )
                    ):
                        reach = super_path(child, settings)
                        add(
                            Dependency(
                                known[0],
                                f"{qualname}.{child.name}",
                                "signature",
                                f"overridden at {short}:{child.lineno}",
                                override=f"{path}:{child.lineno}",
                                override_qualname=f"{node.name}.{child.name}",
                                calls_super=reach is not None and reach.on_default_path,
                                skipped_super=reach
                                if reach is not None and not reach.on_default_path
                                else None,
                            )
                        )
    _reached_configs(list(found.values()), parse, add)
    return sorted(found.values(), key=lambda d: (d.path, d.qualname, d.check))


def body_shape(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """A function's body as code, its docstring and comments left out: equal when only
    words or formatting changed."""
    body = list(node.body)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return "\n".join(ast.unparse(statement) for statement in body)


def widened(tree: ast.Module | None, old: str, new: str, parse: Parse) -> bool:
    """Whether annotation `new` names a base class of annotation `old` (both as written in
    the module `tree`): a value of the old type still fits, so a field's type change breaks
    no one who sets it."""
    target = class_at(tree, new, parse)
    seen: set[int] = set()
    todo = [(tree, old)]
    while todo and len(seen) < 20:
        module, text = todo.pop()
        hit = class_at(module, text, parse)
        if hit is None or id(hit[1]) in seen:
            continue
        seen.add(id(hit[1]))
        for base in hit[1].bases:
            if ast.unparse(base) == new and module is tree:
                return True
            found = class_at(hit[0], ast.unparse(base), parse)
            if found is not None and target is not None and found[1] is target[1]:
                return True
            todo.append((hit[0], ast.unparse(base)))
    return False


def class_at(
    tree: ast.Module | None, text: str, parse: Parse
) -> tuple[ast.Module | None, ast.ClassDef] | None:
    """The class a name (`X`, `X.Config`) written in module `tree` stands for, with the
    module that defines it."""
    outer, _, nested = text.partition(".")
    node = pyast.find(tree, text)
    if isinstance(node, ast.ClassDef):
        return tree, node
    names = {
        (a.asname or a.name): (n, a.name)
        for n in pyast.nodes(tree, ast.ImportFrom)
        if isinstance(n, ast.ImportFrom)
        for a in n.names
    }
    if outer not in names:
        return None
    statement, short = names[outer]
    module = statement.module or ""  # relative imports: not followed
    hit = resolve(module, short, parse) if module and not statement.level else None
    if hit is None:
        return None
    defining = parse(hit[0])
    node = pyast.find(defining, f"{hit[1].name}.{nested}" if nested else hit[1].name)
    return (defining, node) if isinstance(node, ast.ClassDef) else None


def _reached_configs(
    roots: list[Dependency], parse: Parse, add: Callable[[Dependency], None]
) -> None:
    """The config dataclasses a root config holds as fields (`compile: CompileConfig`): the
    experiment sets their options as `--compile.mode` or `config.compile.mode` without
    ever naming the class."""
    for root in roots:
        if root.check != "fields":
            continue
        tree = parse(root.path)
        node = pyast.find(tree, root.qualname)
        if not isinstance(node, ast.ClassDef):
            continue
        names = {
            (a.asname or a.name): f"{_absolute(n, root.path)}.{a.name}"
            for n in pyast.nodes(tree, ast.ImportFrom)
            if isinstance(n, ast.ImportFrom)
            for a in n.names
        }
        for statement in node.body:
            if not isinstance(statement, ast.AnnAssign) or not isinstance(
                statement.target, ast.Name
            ):
                continue
            for name in _class_names(statement.annotation):
                outer, _, nested = name.partition(".")
                if outer in names:
                    module, _, short = names[outer].rpartition(".")
                    hit = resolve(module, short, parse) if module else None
                else:
                    local = pyast.find(tree, outer)
                    hit = (root.path, local) if local is not None else None
                if hit is None:
                    continue
                qualname = f"{hit[1].name}.{nested}" if nested else hit[1].name
                node_of = pyast.find(parse(hit[0]), qualname) if nested else hit[1]
                if not isinstance(node_of, ast.ClassDef) or not _fields_of(node_of):
                    continue
                field_name = statement.target.id
                add(
                    Dependency(
                        hit[0],
                        qualname,
                        "fields",
                        f"field `{field_name}` of `{root.qualname}`",
                        option_prefix=field_name,
                    )
                )


class OptionIndex:
    """The experiment's calls, attribute chains and flag strings, indexed once a run:
    `option_uses` asks it about one config class at a time."""

    def __init__(self, modules: dict[str, ast.Module]) -> None:
        self.calls: dict[str, list[tuple[str, ast.Call]]] = {}  # callee's last name → calls
        self.replaces: list[tuple[str, ast.Call, str]] = []  # `replace(x.prefix, …)`
        self.keyword_calls: dict[str, list[tuple[str, ast.Call]]] = {}  # `prefix=Cls(…)`
        self.chains: dict[str, list[tuple[str, ast.Attribute]]] = {}  # `….prefix.option`
        self.flags: list[tuple[str, str]] = []  # strings holding `--…`, with where
        for path, tree in modules.items():
            short = path.rsplit("/", 1)[-1]
            for node in pyast.nodes(tree, ast.Call, ast.Attribute, ast.Constant):
                if isinstance(node, ast.Call):
                    func = node.func
                    callee = (
                        func.attr
                        if isinstance(func, ast.Attribute)
                        else func.id
                        if isinstance(func, ast.Name)
                        else ""
                    )
                    self.calls.setdefault(callee, []).append((short, node))
                    if callee == "replace" and node.args:
                        self.replaces.append((short, node, ast.unparse(node.args[0])))
                    for keyword in node.keywords:
                        if keyword.arg and isinstance(keyword.value, ast.Call):
                            self.keyword_calls.setdefault(keyword.arg, []).append(
                                (short, keyword.value)
                            )
                elif isinstance(node, ast.Attribute):
                    base = node.value
                    name = (
                        base.attr
                        if isinstance(base, ast.Attribute)
                        else base.id
                        if isinstance(base, ast.Name)
                        else None
                    )
                    if name is not None:
                        self.chains.setdefault(name, []).append((short, node))
                elif (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and "--" in node.value
                ):
                    self.flags.append((f"{short}:{node.lineno}", node.value))


def option_uses(
    modules: dict[str, ast.Module],
    class_name: str,
    prefix: str,
    index: OptionIndex | None = None,
    enclosing: str = "",
) -> Uses:
    """Where the experiment sets or reads the options of a config dataclass: keywords of
    `ClassName(...)` (of `enclosing.ClassName(...)` for a nested class), of the value of
    `prefix=`, of `replace(x.prefix, ...)`; attribute chains `….prefix.option`; command-line
    flags `--prefix.option` in its strings. With the literal values it sets them to."""
    index = index or OptionIndex(modules)
    found = Uses()

    def note(name: str, where: str, value: ast.expr | str | None = None) -> None:
        found.names.setdefault(name, []).append(where)
        if isinstance(value, str):
            value = ast.Constant(value)
        if isinstance(value, ast.Constant):
            found.values.setdefault(name, set()).add(ast.unparse(value))

    def keywords(short: str, call: ast.Call) -> None:
        for keyword in call.keywords:
            if keyword.arg:
                note(
                    keyword.arg, f"{short}:{getattr(keyword, 'lineno', call.lineno)}", keyword.value
                )

    for short, call in index.calls.get(class_name, []):
        if enclosing and nested_elsewhere(call, enclosing, modules):
            continue
        found.constructions.append((f"{short}:{call.lineno}", len(call.args), given(call)))
        keywords(short, call)
    if not prefix:
        return found
    for short, call, first in index.replaces:
        if first == prefix or first.endswith("." + prefix):
            keywords(short, call)
    for short, call in index.keyword_calls.get(prefix, []):
        keywords(short, call)
    for short, node in index.chains.get(prefix, []):
        note(node.attr, f"{short}:{node.lineno}")
        if isinstance(node.ctx, ast.Load):
            found.reads.add(node.attr)
    for where, text in index.flags:
        if f"--{prefix}." not in text:
            continue
        for flag in text.split(f"--{prefix}.")[1:]:
            # `--prefix.name value`, `--prefix.name=value`, or the value in the next string
            # of an argument list (not seen: the option still counts)
            words = flag.replace("=", " ", 1).split()
            name = words[0].replace("-", "_") if words else ""
            if name.isidentifier():
                note(name, where, words[1] if len(words) > 1 else None)
    return found
