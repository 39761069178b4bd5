"""Which tests does CI run? Read from the workflow files' shell, down to the test class.

Pure: YAML text and test-file ASTs in, invocations and selections out. `-k` expressions are
evaluated with pytest's own expression parser, on the names pytest itself matches against
(directories, file name, class, function, markers).
"""

from __future__ import annotations

import ast
import functools
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from scout_tui.analysis.python import pyast

_SHELL_KEYS = {"run", "script"}
# libyaml's safe loader when PyYAML was built with it: ten times faster on big workflows.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SEPARATORS = {"&&", "||", ";", "|", "&"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# pytest options that take a separate value (`-k expr`, `--deselect id`, ...).
_VALUE_OPTIONS = {
    "-k",
    "-m",
    "-p",
    "-c",
    "-o",
    "-n",
    "-W",
    "-r",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "--rootdir",
    "--junitxml",
    "--junit-xml",
    "--maxfail",
    "--durations",
    "--timeout",
    "--basetemp",
    "--confcutdir",
    "--log-level",
    "--log-cli-level",
    "--tb",
    "--color",
    "--import-mode",
    "--reruns",
    "--dist",
    "--capture",
    "--override-ini",
    "--cov-report",
    "--cov-config",
    "--timeout-method",
    "--count",
    "--junit-prefix",
}


class WorkflowError(ValueError):
    pass


@dataclass(frozen=True)
class Invocation:
    workflow: str
    line: str  # the logical shell line, as written (continuations joined)
    commented: bool
    kind: Literal["pytest", "module"]
    selectors: tuple[str, ...] = ()
    keyword: str | None = None
    deselect: tuple[str, ...] = ()


@dataclass(frozen=True)
class PytestItem:
    path: str
    cls: str | None
    function: str
    markers: frozenset[str] = frozenset()


@dataclass
class PytestFile:
    path: str
    items: list[PytestItem] = field(default_factory=list)

    @property
    def classes(self) -> list[str]:
        return list(dict.fromkeys(item.cls for item in self.items if item.cls))


# -- workflow files -----------------------------------------------------------------------
def shell_blocks(yaml_text: str) -> list[str]:
    """Every `run:` and `with: script:` string in a workflow."""
    try:
        document = yaml.load(yaml_text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise WorkflowError(f"not valid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise WorkflowError("nested too deeply to read") from None
    blocks: list[str] = []
    seen: set[int] = set()  # YAML aliases share nodes: nine levels of ten is 10^9 walks

    def walk(node: Any) -> None:
        if isinstance(node, dict | list):
            if id(node) in seen:
                return
            seen.add(id(node))
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _SHELL_KEYS and isinstance(value, str):
                    blocks.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    try:
        walk(document)
    except RecursionError:
        raise WorkflowError("nested too deeply to read") from None
    return blocks


def logical_lines(block: str) -> Iterator[tuple[str, bool]]:
    """(line, commented) with backslash continuations joined, blank lines and `set` noise out.

    A commented-out command (`# pytest ...`) is returned with commented=True so a disabled
    test can be told from one that was never there.
    """
    pending: list[str] = []
    pending_commented = False
    for raw in block.splitlines():
        stripped = raw.strip()
        commented = stripped.startswith("#")
        text = stripped.lstrip("#").strip() if commented else stripped
        if not pending:
            pending_commented = commented
        if text.endswith("\\"):
            pending.append(text[:-1].strip())
            continue
        pending.append(text)
        line = " ".join(part for part in pending if part)
        pending = []
        if line and not re.match(r"^set\s+[-+]", line):
            yield line, pending_commented
    if pending:
        yield " ".join(pending), pending_commented


def _commands(line: str) -> list[list[str]]:
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = ""
        tokens = list(lexer)
    except ValueError:
        tokens = line.split()
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or set(token) <= set(";&|"):
            commands.append([])
        else:
            commands[-1].append(token)
    return [command for command in commands if command]


def _pytest_args(command: list[str]) -> list[str] | None:
    for index, token in enumerate(command):
        if token == "pytest" or token.endswith("/pytest") or token == "py.test":
            return command[index + 1 :]
        if token == "-m" and index + 1 < len(command) and command[index + 1] == "pytest":
            return command[index + 2 :]
    return None


def _module(command: list[str]) -> str | None:
    for index, token in enumerate(command[:-1]):
        if token == "-m" and re.match(r"^python[\d.]*$|/python[\d.]*$", command[max(0, index - 1)]):
            return command[index + 1]
    return None


def parse_invocation(workflow: str, line: str, commented: bool) -> list[Invocation]:
    if "pytest" not in line and "-m" not in line:
        return []  # most shell lines run neither: no need to split them
    found = []
    for command in _commands(line):
        while command and _ASSIGNMENT.match(command[0]):
            command = command[1:]  # NGPU=8 pytest ...
        args = _pytest_args(command)
        if args is not None:
            selectors, deselect, keyword = [], [], None
            index = 0
            while index < len(args):
                token = args[index]
                if token in _VALUE_OPTIONS and index + 1 < len(args):
                    if token == "-k":
                        keyword = args[index + 1]
                    elif token == "--deselect":
                        deselect.append(args[index + 1].removeprefix("./"))
                    index += 2
                    continue
                if token.startswith("-k") and len(token) > 2 and not token.startswith("--"):
                    keyword = token[2:]
                elif token.startswith("--deselect="):
                    deselect.append(token.split("=", 1)[1].removeprefix("./"))
                elif not token.startswith("-") and "$" not in token:
                    selectors.append(token.removeprefix("./"))
                index += 1
            found.append(
                Invocation(
                    workflow, line, commented, "pytest", tuple(selectors), keyword, tuple(deselect)
                )
            )
            continue
        module = _module(command)
        if module and module not in ("pip", "pytest", "torch.distributed.run"):
            path = module.replace(".", "/") + ".py"
            found.append(Invocation(workflow, line, commented, "module", (path,)))
    return found


@functools.lru_cache(maxsize=512)
def invocations(workflow: str, yaml_text: str) -> list[Invocation]:
    """Memoized: the same workflow text at the baseline and at HEAD is read once."""
    found: list[Invocation] = []
    for block in shell_blocks(yaml_text):
        for line, commented in logical_lines(block):
            found.extend(parse_invocation(workflow, line, commented))
    return found


# -- test files -----------------------------------------------------------------------------
def _markers(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        text = ast.unparse(target)
        if ".mark." in text:
            names.add(text.rsplit(".", 1)[-1])
    return names


def _own_test_flag(node: ast.ClassDef) -> bool | None:
    """`__test__ = True/False` in the class body, if it says."""
    for child in node.body:
        if (
            isinstance(child, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__test__" for t in child.targets)
            and isinstance(child.value, ast.Constant)
        ):
            return bool(child.value.value)
    return None


class _Classes:
    """The module's classes as pytest sees them: `__test__` and test methods inherited from
    the module's own bases, unittest.TestCase subclasses collected whatever their name."""

    def __init__(self, tree: ast.Module) -> None:
        self.nodes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        # Test bases from a testing library (torch's `FSDPTest`, `MultiProcessTestCase`):
        # TestCase subclasses whose own module is not read.
        self.testing_bases = {
            name
            for name, origin in pyast.import_map(tree).items()
            if (".testing." in origin or origin.startswith("unittest."))
            and name.endswith(("Test", "TestCase", "TestBase"))
        }

    def _bases(self, node: ast.ClassDef) -> list[ast.ClassDef]:
        names = [ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases]
        return [
            self.nodes[name]
            for name in names
            if name in self.nodes and self.nodes[name] is not node
        ]

    def test_flag(self, node: ast.ClassDef, depth: int = 0) -> bool:
        own = _own_test_flag(node)
        if own is not None or depth > 10:
            return own is not False
        return all(self.test_flag(base, depth + 1) for base in self._bases(node))

    def unittest(self, node: ast.ClassDef, depth: int = 0) -> bool:
        names = {ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases}
        if any(
            name.endswith(("TestCase", "TestBase")) or name in self.testing_bases for name in names
        ):
            return True
        return depth < 10 and any(self.unittest(b, depth + 1) for b in self._bases(node))

    def collected(self, node: ast.ClassDef) -> bool:
        if not self.test_flag(node):
            return False
        if self.unittest(node):
            return True
        has_init = any(
            isinstance(child, ast.FunctionDef) and child.name == "__init__" for child in node.body
        )
        return node.name.startswith("Test") and not has_init

    def methods(
        self, node: ast.ClassDef, depth: int = 0
    ) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        """Test methods by name, the class's own over its bases' (as attribute lookup)."""
        found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        if depth < 10:
            for base in reversed(self._bases(node)):
                found.update(self.methods(base, depth + 1))
        for child in node.body:
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if child.name.startswith("test"):
                    found[child.name] = child
                else:
                    found.pop(child.name, None)  # overridden by a non-test: gone
            elif isinstance(child, ast.Assign):  # `test_x = None` hides the inherited test
                for target in child.targets:
                    if isinstance(target, ast.Name):
                        found.pop(target.id, None)
        return found


@pyast.per_tree
def read_test_file(path: str, tree: ast.Module | None) -> PytestFile:
    """The tests pytest would collect from a file, read from its AST: module functions,
    and the methods of each collected class, inherited ones included. A base class pytest
    does not collect (`__test__ = False`, no `Test` prefix) gives no test of its own."""
    result = PytestFile(path)
    if tree is None:
        return result
    classes = _Classes(tree)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            result.items.append(PytestItem(path, None, node.name, frozenset(_markers(node))))
        elif isinstance(node, ast.ClassDef) and classes.collected(node):
            class_markers = _markers(node)
            for name, method in classes.methods(node).items():
                markers = frozenset(class_markers | _markers(method))
                result.items.append(PytestItem(path, node.name, name, markers))
    return result


# -- selection -----------------------------------------------------------------------------
def _selector_matches(selector: str, item: PytestItem) -> bool:
    path, _, rest = selector.partition("::")
    path = path.rstrip("/")
    if not path or path == ".":
        in_path = True
    else:
        in_path = item.path == path or item.path.startswith(path + "/")
    if not in_path:
        return False
    if not rest:
        return True
    parts = rest.split("::")
    names = [item.cls, item.function] if item.cls else [item.function]
    parts = [re.sub(r"\[.*\]$", "", part) for part in parts]  # parametrize ids
    return names[: len(parts)] == parts


def keyword_matches(expression: str, item: PytestItem) -> bool:
    """pytest's `-k` semantics: case-insensitive substring of any of the item's names."""
    directories = item.path.split("/")[:-1]
    names = [*directories, item.path.rsplit("/", 1)[-1], item.function, *item.markers]
    if item.cls:
        names.append(item.cls)
    lowered = [name.lower() for name in names]

    def matcher(ident: str, /, **kwargs: object) -> bool:
        return any(ident.lower() in name for name in lowered)

    expression_type, parse_error = _pytest_expression()
    try:
        return expression_type.compile(expression).evaluate(matcher)
    except (parse_error, SyntaxError):
        return True  # pytest would refuse to run; do not invent a gap from a typo


@functools.cache
def _pytest_expression() -> tuple[Any, type[Exception]]:
    """pytest's `-k` parser, imported when a `-k` is first met (pytest costs 40 ms to
    import, which the console's start does not pay)."""
    from _pytest.mark.expression import Expression

    try:  # pytest < 9.1 raises its own ParseError for a malformed -k; later ones SyntaxError
        from _pytest.mark.expression import ParseError
    except ImportError:  # pragma: no cover  (depends on the installed pytest)
        return Expression, SyntaxError
    return Expression, ParseError


def selects(invocation: Invocation, item: PytestItem) -> bool:
    if invocation.kind == "module":
        return invocation.selectors[0] == item.path
    selectors = invocation.selectors or (".",)
    if not any(_selector_matches(selector, item) for selector in selectors):
        return False
    if any(_selector_matches(selector, item) for selector in invocation.deselect):
        return False
    return invocation.keyword is None or keyword_matches(invocation.keyword, item)


class Selection:
    """Invocations indexed by the file they name, so deciding a test file looks at the
    invocations that can select it, not at every line of every workflow."""

    def __init__(self, invocations: list[Invocation]) -> None:
        self.invocations = invocations
        self.by_file: dict[str, list[Invocation]] = {}
        self.broad: list[Invocation] = []  # directories, no selector at all
        for invocation in invocations:
            paths = {
                selector.split("::", 1)[0].rstrip("/") for selector in invocation.selectors
            } or {"."}
            if all(path.endswith(".py") for path in paths):
                for path in paths:
                    self.by_file.setdefault(path, []).append(invocation)
            else:
                self.broad.append(invocation)

    def candidates(self, path: str) -> list[Invocation]:
        return self.by_file.get(path, []) + self.broad

    def selecting(self, items: list[PytestItem]) -> list[Invocation]:
        if not items:
            return []
        return [
            invocation
            for invocation in self.candidates(items[0].path)
            if any(selects(invocation, item) for item in items)
        ]

    def runs(self, items: list[PytestItem]) -> bool:
        return bool(items) and any(
            selects(invocation, item)
            for invocation in self.candidates(items[0].path)
            for item in items
        )
