"""What the experiment defines that tests could exercise: graph passes, registered model
configs, integration-test parallelism combinations. Pure functions over parsed modules."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_FLAG = re.compile(r"(--parallelism\.[A-Za-z_][\w]*)(?:[=\s]+(\S+))?")


@dataclass(frozen=True)
class PassDef:
    name: str
    path: str
    line: int
    keys: tuple[str, ...] = ()  # registry keys that select it from the command line


@dataclass
class Override:
    """One integration test entry (an `OverrideDefinitions(...)` call)."""

    name: str
    strings: list[str] = field(default_factory=list)
    disabled: bool = False


def _constants(tree: ast.Module) -> dict[str, object]:
    """Module-level `NAME = <literal>` assignments, for `disabled=_JIT_DISABLED`."""
    values: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                try:
                    values[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return values


def _registry_keys(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    keys = []
    for decorator in node.decorator_list:
        if not isinstance(decorator, ast.Call):
            continue
        name = ast.unparse(decorator.func).rsplit(".", 1)[-1]
        if name.startswith("register") and decorator.args:
            first = decorator.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                keys.append(first.value)
    return keys


def pass_definitions(path: str, tree: ast.Module | None) -> list[PassDef]:
    """`*_pass` functions, functions registered with a `register*("key")` decorator, and
    the entries of `AVAILABLE_*_PASSES` dicts."""
    if tree is None:
        return []
    found: dict[str, PassDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            keys = _registry_keys(node)
            if node.name.endswith("_pass") or keys:
                found[node.name] = PassDef(node.name, path, node.lineno, tuple(keys))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else []
        )  # fmt: skip
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        value = getattr(node, "value", None)
        if not any(re.match(r"^AVAILABLE_\w*PASSES$", n) for n in names):
            continue
        if not isinstance(value, ast.Dict):
            continue
        for key, target in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            function = ast.unparse(target).rsplit(".", 1)[-1]
            existing = found.get(function)
            line = existing.line if existing else node.lineno
            keys = (*(existing.keys if existing else ()), key.value)
            found[function] = PassDef(function, path, line, keys)
    return sorted(found.values(), key=lambda p: p.line)


def override_definitions(tree: ast.Module | None) -> list[Override]:
    """Integration test entries, with their flag strings and whether they are disabled."""
    if tree is None:
        return []
    constants = _constants(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if not ast.unparse(node.func).endswith("OverrideDefinitions"):
            continue
        strings = [
            child.value
            for argument in [*node.args, *(k.value for k in node.keywords)]
            for child in ast.walk(argument)
            if isinstance(child, ast.Constant) and isinstance(child.value, str)
        ]
        disabled = False
        name = ""
        for keyword in node.keywords:
            if keyword.arg == "disabled":
                value = keyword.value
                if isinstance(value, ast.Constant):
                    disabled = bool(value.value)
                elif isinstance(value, ast.Name):
                    disabled = bool(constants.get(value.id, False))
            elif keyword.arg == "test_name" and isinstance(keyword.value, ast.Constant):
                name = str(keyword.value.value)
        if not name and len(node.args) >= 3 and isinstance(node.args[2], ast.Constant):
            name = str(node.args[2].value)
        found.append(Override(name, strings, disabled))
    return found


def parallelism_combo(strings: list[str], pattern: str = r"_degree$") -> frozenset[str]:
    """The parallelism dimensions an entry turns on: `--parallelism.*` options matching
    `pattern` (the degrees, by default), where a degree of 1 turns nothing on."""
    flags = set()
    for text in strings:
        for match in _FLAG.finditer(text):
            flag, value = match.group(1), match.group(2)
            if not re.search(pattern, flag):
                continue
            if value is not None and value.strip("'\"") in ("1", "false", "False"):
                continue
            flags.add(flag)
    return frozenset(flags)


class Words:
    """The identifiers of a text, for many "is this name mentioned?" questions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = set(re.findall(r"\w+", text))

    def __contains__(self, name: str) -> bool:
        if re.fullmatch(r"\w+", name):
            return name in self.words
        return mentions(self.text, name)


def mentions(text: str, name: str) -> bool:
    """`name` in `text` as a whole word (str.find, not a regex: this runs over big texts)."""
    start = 0
    while (index := text.find(name, start)) >= 0:
        end = index + len(name)
        before = text[index - 1] if index else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = index + 1
    return False
