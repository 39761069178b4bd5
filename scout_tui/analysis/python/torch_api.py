"""Is an API present in the installed torch? Answered by reading its sources, never by
importing it (an import takes seconds and needs the real thing; tests use a tiny fake
package on disk)."""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from scout_tui.analysis.python import pyast

_DEFINITION = rb"^\s*(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*(?::[^=\n]*)?=(?!=)"
_DEFINITIONS = re.compile(_DEFINITION, re.MULTILINE)


class TorchIndex:
    def __init__(self, root: Path) -> None:
        self.root = root  # the `torch` package directory
        self._names: set[bytes] | None = None
        self._lock = threading.Lock()
        self._module_names: dict[Path, set[bytes]] = {}
        self._trees: dict[Path, ast.Module | None] = {}
        self._namespaces: dict[str, _Namespace | None] = {}

    def _names_in(self, path: Path) -> set[bytes]:
        if path not in self._module_names:
            try:
                data = path.read_bytes()
            except OSError:
                data = b""
            names = {a or b for a, b in _DEFINITIONS.findall(data)}
            # Re-exports: `from .x import name` / `import x as name`.
            for group in re.findall(rb"import\s+\(?([\w\s,]+?)\)?\s*$", data, re.MULTILINE):
                for piece in group.split(b","):
                    words = piece.split()
                    if words:
                        names.add(words[-1])
            self._module_names[path] = names
        return self._module_names[path]

    def _module_file(self, parts: list[str]) -> Path | None:
        base = self.root.joinpath(*parts)
        if (base / "__init__.py").is_file():
            return base / "__init__.py"
        if base.with_suffix(".py").is_file():
            return base.with_suffix(".py")
        return None

    def has_dotted(self, dotted: str) -> bool:
        """`torch.a.b.name`: a module, or a name defined or re-exported by its module."""
        parts = dotted.split(".")
        if parts[0] != "torch":
            return False
        parts = parts[1:]
        if not parts:
            return True
        for split in range(len(parts), -1, -1):
            module = self._module_file(parts[:split])
            if module is None:
                continue
            rest = parts[split:]
            if not rest:
                return True
            return rest[0].encode() in self._names_in(module)
        return False

    def has_name(self, name: str) -> bool:
        """A bare name defined anywhere in torch (one scan, then a set look-up)."""
        if "." in name:
            return (
                self.has_dotted(name)
                if name.startswith("torch.")
                else self.has_name(name.rsplit(".", 1)[1])
            )
        with self._lock:
            if self._names is None:
                names: set[bytes] = set()
                for path in self.root.rglob("*.py"):
                    names |= self._names_in(path)
                self._names = names
        return name.encode() in self._names

    def _tree(self, module: str) -> tuple[ast.Module, str] | None:
        """A torch module's tree and the package its relative imports start from."""
        parts = module.split(".")
        if parts[0] != "torch":
            return None
        path = self._module_file(parts[1:])
        if path is None:
            return None
        with self._lock:
            if path not in self._trees:
                try:
                    text = path.read_bytes().decode("utf-8", "replace")
                    self._trees[path] = pyast.parse(text, str(path))
                except (OSError, pyast.Unparsable):
                    self._trees[path] = None
            tree = self._trees[path]
        if tree is None:
            return None
        return tree, module if path.name == "__init__.py" else module.rsplit(".", 1)[0]

    def _bindings(self, module: str) -> _Namespace | None:
        """What the module's top level binds, as Python would run it (ifs and trys
        included): names it defines, names imported from where, and star imports."""
        if module in self._namespaces:
            return self._namespaces[module]
        found = self._tree(module)
        space = None if found is None else _namespace(*found)
        self._namespaces[module] = space
        return space

    def exports(self, module: str, seen: frozenset[str] = frozenset()) -> set[str]:
        """The module's public namespace as `from module import *` and its readers see it:
        its `__all__` when it has one, else its top-level names that do not start with
        `_`, those of its star imports included."""
        space = self._bindings(module)
        if space is None or module in seen:
            return set()
        if space.all is not None:
            return set(space.all)
        names = {n for n in [*space.defined, *space.imported] if not n.startswith("_")}
        for star in space.stars:
            names |= self.exports(star, seen | {module})
        return names

    def origin(self, module: str, name: str, depth: int = 0) -> tuple[str, str]:
        """Where the object `module.name` is defined, following re-exports (`from x import
        y [as name]`, `from x import *`): the same origin is the same object."""
        space = self._bindings(module)
        if space is None or depth > 12 or name in space.defined:
            return module, name
        if name in space.imported:
            source, original = space.imported[name]
            return self.origin(source, original, depth + 1)
        for star in space.stars:
            if name in self.exports(star):
                return self.origin(star, name, depth + 1)
        return module, name

    def reexports(self, public_module: str, name: str, private_module: str) -> bool:
        """Does `public_module` export `name` (its `__all__`, or a public top-level name),
        as the very object `private_module.name` is? A file that only imports it under a
        private alias (`from ._impl import name as _name`) does not."""
        if name not in self.exports(public_module):
            return False
        return self.origin(public_module, name) == self.origin(private_module, name)

    def shim_home(self, module: str) -> str | None:
        """The new home of a deprecated shim module — one whose body only re-exports
        another module's names and says it is deprecated or moved (a `warnings.warn`, or its
        docstring) — or None. The home is the public module it re-exports most from."""
        space = self._bindings(module)
        if space is None or not space.shim:
            return None
        homes = [
            m
            for m in space.sources
            if m.split(".")[0] == "torch" and not any(p.startswith("_") for p in m.split("."))
        ]
        if not homes:
            return None
        return max(homes, key=lambda m: (space.sources.count(m), -homes.index(m)))


@dataclass
class _Namespace:
    defined: set[str] = field(default_factory=set)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # name → (module, name)
    stars: list[str] = field(default_factory=list)
    all: list[str] | None = None
    sources: list[str] = field(default_factory=list)  # every module imported from, in order
    shim: bool = False


_DEPRECATED = re.compile(
    r"deprecat|has (?:been )?moved to|moved to|backward[- ]compat|for (?:BC|compatibility)",
    re.IGNORECASE,
)


def _absolute(node: ast.ImportFrom, package: str) -> str:
    source = node.module or ""
    if not node.level:
        return source
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, source] if source else base)


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements a module runs at import: the bodies of top-level ifs and trys too."""
    found: list[ast.stmt] = []
    for node in body:
        found.append(node)
        if isinstance(node, ast.If):
            found += _top_level(node.body) + _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            parts = [node.body, node.orelse, node.finalbody]
            parts += [handler.body for handler in node.handlers]
            found += [n for part in parts for n in _top_level(part)]
    return found


def _strings(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.List | ast.Tuple):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        return [v for v in values if isinstance(v, str)]
    return None


def _namespace(tree: ast.Module, package: str) -> _Namespace:
    space = _Namespace()
    plain = True  # nothing but imports, `__all__`, names of strings, warnings and redirects
    warned = False
    for node in _top_level(tree.body):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, package)
            space.sources.append(source)
            for alias in node.names:
                if alias.name == "*":
                    space.stars.append(source)
                else:
                    space.imported[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                space.defined.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            space.defined.add(node.name)
            plain = False
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            listed = _strings(node.value) if node.value is not None else None
            if "__all__" in names and listed is not None:
                before = (space.all or []) if isinstance(node, ast.AugAssign) else []
                space.all = before + listed
            space.defined.update(n for n in names if n != "__all__")
            redirect = any(
                isinstance(t, ast.Subscript) and ast.unparse(t.value) == "sys.modules"
                for t in targets
            )
            plain = plain and (listed is not None or redirect or names == ["__all__"])
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = ast.unparse(node.value.func)
            if call.endswith("warn") and _DEPRECATED.search(ast.unparse(node.value)):
                warned = True
            elif call.endswith("__all__.extend") and node.value.args:
                space.all = (space.all or []) + (_strings(node.value.args[0]) or [])
            else:
                plain = False
        elif isinstance(node, ast.For):  # a loop redirecting `sys.modules[…]`
            plain = plain and all(isinstance(n, ast.Assign) for n in node.body)
        elif not isinstance(node, ast.If | ast.Try | ast.Expr | ast.Delete | ast.Pass):
            plain = False
    doc = ast.get_docstring(tree) or ""
    space.shim = plain and bool(space.sources) and (warned or bool(_DEPRECATED.search(doc)))
    return space
