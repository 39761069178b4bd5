"""Is an API present in the installed torch? Answered by reading its sources, never by
importing it (an import takes seconds and needs the real thing; tests use a tiny fake
package on disk)."""

from __future__ import annotations

import ast
import re
import threading
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

    def reexports(self, public_module: str, name: str, private_module: str) -> bool:
        """Does `public_module` import `name` from `private_module` (absolutely or
        relatively)? Then the public name is the same object, not a namesake."""
        parts = public_module.split(".")
        if parts[0] != "torch":
            return False
        path = self._module_file(parts[1:])
        if path is None:
            return False
        try:
            tree = pyast.parse(path.read_bytes().decode("utf-8", "replace"), str(path))
        except (OSError, pyast.Unparsable):
            return False
        package = public_module if path.name == "__init__.py" else public_module.rsplit(".", 1)[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = node.module or ""
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                source = ".".join([*base, source] if source else base)
            if source == private_module and any(alias.name == name for alias in node.names):
                return True
        return False
