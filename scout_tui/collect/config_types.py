"""The experiment's config dataclasses, found by following annotations through imports from
the root configs scout.toml names and the experiment's classes that extend them: the
`--section.option` flags they define and the values a `Literal` field allows, for checking
what docs say against them."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.unused import class_fields, registers_subclasses
from scout_tui.collect.base import CollectorContext


@dataclass(frozen=True)
class ConfigClass:
    """What scout reads of a config class, as plain data (kept per blob: a rescan follows
    the classes without parsing their modules)."""

    name: str
    bases: tuple[str, ...]  # as written
    annotated: tuple[tuple[str, str], ...]  # every `name: annotation` (a string's text)
    own_fields: tuple[tuple[str, int], ...]  # `unused.class_fields`: public, not ClassVar
    registers_subclasses: bool


@pyast.per_tree
def config_class(tree: ast.Module, qualname: str) -> ConfigClass | None:
    """The class `qualname` names in the module; None when it names no class there."""
    node = pyast.find(tree, qualname)
    if not isinstance(node, ast.ClassDef):
        return None
    annotated = []
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            annotation = statement.annotation
            text = (
                annotation.value
                if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)
                else ast.unparse(annotation)
            )
            annotated.append((statement.target.id, text))
    return ConfigClass(
        node.name,
        tuple(ast.unparse(base) for base in node.bases),
        tuple(annotated),
        tuple(class_fields(node)),
        registers_subclasses(node),
    )


ClassRef = tuple[str, ConfigClass]


class ConfigTypes:
    """Config dataclasses found by following annotations through imports, not by parsing
    the whole repository."""

    def __init__(self, ctx: CollectorContext) -> None:
        self.ctx = ctx
        self._resolved: dict[tuple[str, str], ClassRef | None] = {}
        self._fields: dict[int, dict[str, tuple[ast.expr, str]]] = {}

    def resolve(self, path: str, qualname: str, depth: int = 0) -> ClassRef | None:
        key = (path, qualname)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(path, qualname, depth)
        return self._resolved[key]

    def _resolve(self, path: str, qualname: str, depth: int) -> ClassRef | None:
        tree = self.ctx.source.parse(path)
        found = config_class(tree, qualname) if tree is not None else None
        if found is not None:
            return path, found
        head, _, rest = qualname.partition(".")
        origin = pyast.import_map(tree).get(head)
        if origin is None or depth > 6:
            return None
        module, name = origin.rsplit(".", 1)
        base = module.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if self.ctx.source.exists(candidate):
                return self.resolve(candidate, ".".join(p for p in (name, rest) if p), depth + 1)
        return None

    def fields(self, ref: ClassRef, depth: int = 0) -> dict[str, tuple[ast.expr, str]]:
        """Annotated fields of a class and its bases: name → (annotation, defining path)."""
        if id(ref[1]) not in self._fields:
            self._fields[id(ref[1])] = self._fields_of(ref, depth)
        return self._fields[id(ref[1])]

    def _fields_of(self, ref: ClassRef, depth: int) -> dict[str, tuple[ast.expr, str]]:
        path, node = ref
        found: dict[str, tuple[ast.expr, str]] = {}
        if depth < 6:
            for base in node.bases:
                parent = self.resolve(path, base, 0)
                if parent is not None:
                    found.update(self.fields(parent, depth + 1))
        for name, text in node.annotated:
            annotation = pyast.parse_expression(text)
            if annotation is not None:
                found[name] = (annotation, path)
        return found

    @staticmethod
    def _type_names(annotation: ast.expr) -> list[str]:
        names = []
        for node in pyast.walk(annotation):
            if isinstance(node, ast.Attribute | ast.Name):
                text = ast.unparse(node)
                if text[:1].isupper() and text not in ("Literal", "Optional", "Union"):
                    names.append(text)
        return names

    @staticmethod
    def literal_values(annotation: ast.expr) -> list[str] | None:
        for node in pyast.walk(annotation):
            if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Literal"):
                elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                return [str(e.value) for e in elements if isinstance(e, ast.Constant)]
        return None

    def all_flags(self, roots: list[ClassRef], depth: int = 3) -> dict[str, str]:
        """Every `a.b` flag the roots define (to `depth` levels), with the file of the
        class that defines its last part."""
        found: dict[str, str] = {}
        layer: list[tuple[str, ClassRef]] = [("", ref) for ref in roots]
        for _ in range(depth):
            following = []
            for prefix, ref in layer:
                for name, (annotation, path) in self.fields(ref).items():
                    flag = f"{prefix}{name}"
                    found.setdefault(flag, path)
                    for type_name in self._type_names(annotation):
                        nested = self.resolve(path, type_name)
                        if nested is not None:
                            following.append((flag + ".", nested))
            layer = following
        return found

    def option(self, roots: list[ClassRef], flag: str) -> tuple[bool, list[str] | None]:
        """Does `--a.b.c` name a field? With the allowed values when it is a Literal."""
        current = roots
        parts = flag.split(".")
        for index, part in enumerate(parts):
            annotations = [
                (fields[part][0], fields[part][1])
                for ref in current
                for fields in [self.fields(ref)]
                if part in fields
            ]
            if not annotations:
                return False, None
            if index == len(parts) - 1:
                for annotation, _ in annotations:
                    values = self.literal_values(annotation)
                    if values is not None:
                        return True, values
                return True, None
            current = [
                resolved
                for annotation, path in annotations
                for name in self._type_names(annotation)
                for resolved in [self.resolve(path, name)]
                if resolved is not None
            ]
        return False, None


def extending_configs(ctx: CollectorContext, roots: list[str]) -> list[str]:
    """The experiment's config classes that extend a root config (`class Config(Trainer.Config)`
    in its trainer): their fields are flags too, with no scout.toml entry needed."""
    names = {target.split("::", 1)[1] for target in roots}
    found = []
    for path in ctx.source.glob(ctx.config.project.experiment, "*.py"):
        text = ctx.source.read(path) or ""
        if not any(name.rsplit(".", 1)[-1] in text for name in names):
            continue  # cheap: most modules never name a root config
        tree = ctx.source.parse(path)
        for qualname, bases in class_bases(tree) if tree is not None else []:
            if any(base in names for base in bases):
                found.append(f"{path}::{qualname}")
    return sorted(found)


@pyast.per_tree
def class_bases(tree: ast.Module) -> list[tuple[str, list[str]]]:
    """(qualname, bases as written) of the module's classes, those nested in classes too."""
    found = []
    stack: list[tuple[str, ast.AST]] = [("", tree)]
    while stack:
        prefix, node = stack.pop()
        for child in getattr(node, "body", []):
            if isinstance(child, ast.ClassDef):
                qualname = f"{prefix}{child.name}"
                found.append((qualname, [ast.unparse(base) for base in child.bases]))
                stack.append((qualname + ".", child))
    return found
