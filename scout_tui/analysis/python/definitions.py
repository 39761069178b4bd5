"""What the experiment defines that tests could exercise: graph passes, registered model
configs, integration-test parallelism combinations. Pure functions over parsed modules."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field

from scout_tui.analysis.python import pyast

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
    line: int = 0
    switch: str = ""  # what disables it: `_JIT_DISABLED`, `_A or _B`, `True`


@dataclass(frozen=True)
class Disabled:
    """A test that does not run: an integration entry with `disabled=…`, or a unit test
    skipped without a condition."""

    path: str
    line: int
    name: str
    switch: str  # `_JIT_DISABLED`, `disabled=True`, `@unittest.skip`
    reason: str  # what the code says about why: the comment above, the skip's message


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


@pyast.per_tree
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
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, ast.AnnAssign) else [])
        )
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
            selected_by = (*(existing.keys if existing else ()), key.value)
            found[function] = PassDef(function, path, line, selected_by)
    return sorted(found.values(), key=lambda p: p.line)


@pyast.per_tree
def override_definitions(tree: ast.Module | None) -> list[Override]:
    """Integration test entries, with their flag strings and whether they are disabled. An
    entry written once in a list comprehension over a literal table (`for (mode, …,
    disabled) in TABLE`) is one entry per row, as Python would build them."""
    if tree is None:
        return []
    constants = _constants(tree)
    found = []
    expanded: set[int] = set()
    for comprehension in pyast.nodes(tree, ast.ListComp):
        assert isinstance(comprehension, ast.ListComp)
        rows = _table_rows(tree, comprehension)
        if rows is None or not _is_entry(comprehension.elt):
            continue
        assert isinstance(comprehension.elt, ast.Call)
        expanded.add(id(comprehension.elt))
        for row in rows:
            found.append(_entry(comprehension.elt, {**constants, **row}))
    for node in pyast.nodes(tree, ast.Call):
        if _is_entry(node) and id(node) not in expanded:
            assert isinstance(node, ast.Call)
            found.append(_entry(node, constants))
    return sorted(found, key=lambda o: o.line)


def _is_entry(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func).endswith("OverrideDefinitions")


def _table_rows(tree: ast.Module, comprehension: ast.ListComp) -> list[dict[str, object]] | None:
    """The name bindings of `[… for (a, b) in TABLE]` when TABLE is a literal list of tuples
    assigned in the module (at any depth); None when scout cannot tell."""
    if len(comprehension.generators) != 1:
        return None
    generator = comprehension.generators[0]
    if generator.ifs or not isinstance(generator.iter, ast.Name):
        return None
    target = generator.target
    names = (
        [t.id for t in target.elts if isinstance(t, ast.Name)]
        if isinstance(target, ast.Tuple)
        else [target.id]
        if isinstance(target, ast.Name)
        else []
    )
    if not names:
        return None
    for node in pyast.nodes(tree, ast.Assign):
        assert isinstance(node, ast.Assign)
        if [ast.unparse(t) for t in node.targets] != [generator.iter.id]:
            continue
        try:
            table = ast.literal_eval(node.value)
        except ValueError:
            return None
        if not isinstance(table, list | tuple):
            return None
        rows = []
        for row in table:
            values = row if len(names) > 1 else (row,)
            if not isinstance(values, tuple | list) or len(values) != len(names):
                return None
            rows.append(dict(zip(names, values, strict=True)))
        return rows
    return None


def _text(node: ast.AST, bindings: dict[str, object]) -> str | None:
    """A string literal, or an f-string whose names are bound: its text."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif (
                isinstance(value, ast.FormattedValue)
                and isinstance(value.value, ast.Name)
                and value.value.id in bindings
            ):
                parts.append(str(bindings[value.value.id]))
            else:
                return None
        return "".join(parts)
    return None


def _entry(node: ast.Call, constants: dict[str, object]) -> Override:
    strings = []
    for argument in [*node.args, *(k.value for k in node.keywords)]:
        nodes = list(ast.walk(argument))
        # A constant that is a piece of an f-string: its text is taken with the whole.
        pieces = {id(v) for j in nodes if isinstance(j, ast.JoinedStr) for v in j.values}
        for child in nodes:
            text = (
                _text(child, constants) if isinstance(child, ast.Constant | ast.JoinedStr) else None
            )
            if text is not None and not (isinstance(child, ast.Constant) and id(child) in pieces):
                strings.append(text)
    disabled = False
    name = ""
    switch = ""
    for keyword in node.keywords:
        if keyword.arg == "disabled":
            disabled = bool(_truth(keyword.value, constants))
            switch = ast.unparse(keyword.value)
        elif keyword.arg == "test_name":
            name = _text(keyword.value, constants) or name
    if not name and len(node.args) >= 3:
        name = _text(node.args[2], constants) or ""
    if not name:  # no test_name: the description says which it is
        described = [k.value for k in node.keywords if k.arg == "test_descr"] + node.args[1:2]
        name = next((t for v in described if (t := _text(v, constants))), "")
    return Override(name, strings, disabled, node.lineno, switch)


def _truth(node: ast.expr, constants: dict[str, object]) -> object:
    """`disabled=` as Python would see it: literals, module constants, and/or/not."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id, False)
    if isinstance(node, ast.BoolOp):
        values = [_truth(value, constants) for value in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _truth(node.operand, constants)
    return False  # a call, an expression: scout cannot tell; counted as enabled


def comment_above(lines: list[str], line: int) -> str:
    """The comment block right above 1-based `line` (TODO markers and `#` stripped)."""
    found: list[str] = []
    index = line - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        found.insert(0, lines[index].strip().lstrip("#").strip())
        index -= 1
    text = " ".join(part for part in found if part)
    return re.sub(r"^(TODO|FIXME|NOTE)(\([^)]*\))?:?\s*", "", text)


@pyast.per_tree
def disabled_entries(path: str, text: str, tree: ast.Module | None) -> list[Disabled]:
    """The integration entries that do not run, each with the comment that says why: above
    the constant that disables it, else above its `disabled=` line or its entry."""
    if tree is None:
        return []
    lines = text.splitlines()
    assigned = {
        target.id: node.lineno
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = []
    for override in override_definitions(tree):
        if not override.disabled:
            continue
        names = re.findall(r"[A-Za-z_]\w*", override.switch)
        reasons = [comment_above(lines, assigned[n]) for n in names if n in assigned]
        said = [r for r in reasons if r]
        # Each switch's reason is a sentence: joined as sentences ("….; Re-enable…" reads
        # badly), the last one as written.
        reason = " ".join(
            r if n == len(said) - 1 or r.endswith((".", "!", "?")) else r + "."
            for n, r in enumerate(said)
        )
        if not reason:
            at = next(
                (
                    n + 1
                    for n in range(override.line - 1, min(len(lines), override.line + 60))
                    if re.search(r"\bdisabled\s*=", lines[n])
                ),
                override.line,
            )
            reason = comment_above(lines, at) or comment_above(lines, override.line)
        found.append(
            Disabled(
                path,
                override.line,
                override.name or f"line {override.line}",
                override.switch,
                reason,
            )
        )
    return found


_SKIPS = ("unittest.skip", "pytest.mark.skip", "skip")


@pyast.per_tree
def skipped_tests(path: str, tree: ast.Module | None) -> list[Disabled]:
    """Test functions and classes skipped without a condition (`skipIf` and `skipUnless`
    depend on the machine: not counted)."""
    if tree is None:
        return []
    constants = _constants(tree)
    found = []

    def skip_of(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = ast.unparse(call.func if call else decorator)
            if target not in _SKIPS:
                continue
            arguments = [
                *(call.args if call else []),
                *(k.value for k in (call.keywords if call else []) if k.arg == "reason"),
            ]
            for argument in arguments:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    return argument.value
                if isinstance(argument, ast.Name) and isinstance(constants.get(argument.id), str):
                    return str(constants[argument.id])
            return ""
        return None

    def visit(nodes: list[ast.stmt], owner: str | None) -> None:
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                reason = skip_of(node)
                if reason is not None:
                    found.append(Disabled(path, node.lineno, node.name, "@skip", reason))
                else:
                    visit(node.body, node.name)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test"
            ):
                reason = skip_of(node)
                if reason is not None:
                    name = f"{owner}.{node.name}" if owner else node.name
                    found.append(Disabled(path, node.lineno, name, "@skip", reason))

    visit(tree.body, None)
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

    def __init__(self, *texts: str) -> None:
        """The words of `texts` (files, say) joined by newlines: each text's words are
        found once, and a file unchanged since the last run is not read again."""
        self.text = "\n".join(texts)
        self.words: frozenset[str] = frozenset().union(*map(_words, texts))

    def __or__(self, other: Words) -> Words:
        joined = Words()
        joined.text, joined.words = self.text + "\n" + other.text, self.words | other.words
        return joined

    def __contains__(self, name: str) -> bool:
        if re.fullmatch(r"\w+", name):
            return name in self.words
        return mentions(self.text, name)


@functools.lru_cache(maxsize=1024)
def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", text))


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


@pyast.per_tree
def option_defaults(modules: dict[str, ast.Module]) -> dict[str, str]:
    """Config option → its default literal (`ast.unparse` form), from the dataclass fields
    these modules define; an option two classes default differently is left out."""
    found: dict[str, set[str]] = {}
    for tree in modules.values():
        for node in pyast.nodes(tree, ast.ClassDef):
            assert isinstance(node, ast.ClassDef)
            for statement in node.body:
                if not isinstance(statement, ast.AnnAssign) or not isinstance(
                    statement.target, ast.Name
                ):
                    continue
                value = _literal_default(statement.value)
                if value is not None:
                    found.setdefault(statement.target.id, set()).add(value)
    return {name: next(iter(values)) for name, values in found.items() if len(values) == 1}


def _literal_default(value: ast.expr | None) -> str | None:
    """A field's default as a literal: `"x"`, `3`; an empty list or tuple (`[]`, `()`,
    `field(default_factory=list)`) as `[]`."""
    if isinstance(value, ast.Constant):
        return ast.unparse(value)
    if isinstance(value, ast.List | ast.Tuple) and not value.elts:
        return "[]"
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("field"):
        for keyword in value.keywords:
            if keyword.arg == "default":
                return _literal_default(keyword.value)
            if keyword.arg == "default_factory" and ast.unparse(keyword.value) in ("list", "tuple"):
                return "[]"
    return None


@pyast.per_tree
def _option_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Local names a function binds to config options: `names = getattr(cfg, "passes", [])`
    or `mode = cfg.compile.mode` → the option's name."""
    found = {}
    for node in ast.walk(function):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        value = node.value
        if isinstance(value, ast.Attribute):
            found[node.targets[0].id] = value.attr
        elif (
            isinstance(value, ast.Call)
            and ast.unparse(value.func) == "getattr"
            and len(value.args) >= 2
            and isinstance(value.args[1], ast.Constant)
        ):
            found[node.targets[0].id] = str(value.args[1].value)
    return found


@pyast.per_tree
def selected_by_default(
    modules: dict[str, ast.Module], name: str, defaults: dict[str, str]
) -> tuple[str, str, str] | None:
    """Where code picks the pass `name` on a branch every default takes: each `if` around it
    compares an option to a literal, and the option's default takes that branch
    (`if mode == "full": … elif mode == "regional": <here>` with `mode` defaulting to
    "regional"). Returns (option, value, "path:line") of the deciding test: every run that
    leaves the option alone runs the pass — or ("", function, "path:line") when a function
    uses it whatever the options (then it runs whenever that function does)."""
    for path, tree in modules.items():
        if name not in pyast.identifiers(tree):
            continue
        found = _on_default_branch(tree.body, name, defaults, None)
        if found is not None:
            return found[0], found[1], f"{path}:{found[2]}"
    return None


def _default_truth(
    test: ast.expr, defaults: dict[str, str], aliases: dict[str, str] | None = None
) -> tuple[bool, str, str, int] | None:
    """Whether an `x.option == "v"` (or `!=`) test holds at the option's default; or a
    `"v" not in x.option` (`in`) test where the option defaults to an empty list."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None

    def option_of(node: ast.expr) -> str:
        text = ast.unparse(node)
        return (aliases or {}).get(text, text.rsplit(".", 1)[-1])

    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq | ast.NotEq) and isinstance(right, ast.Constant):
        option = option_of(test.left)
        value = ast.unparse(right)
        if option not in defaults:
            return None
        holds = (defaults[option] == value) == isinstance(op, ast.Eq)
        return holds, option, defaults[option], test.lineno
    if isinstance(op, ast.In | ast.NotIn) and isinstance(test.left, ast.Constant):
        option = option_of(right)
        if defaults.get(option) != "[]":
            return None
        return isinstance(op, ast.NotIn), option, "[]", test.lineno
    return None


def _on_default_branch(
    statements: list[ast.stmt],
    name: str,
    defaults: dict[str, str],
    decided: tuple[str, str, int] | None,
    function: str | None = None,
    aliases: dict[str, str] | None = None,
) -> tuple[str, str, int] | None:
    """Where `name` is used on a path every default run of its function takes: the deciding
    test (option, value, line), or ("", function, line) when nothing decides — the function
    uses it whenever it runs."""
    for statement in statements:
        if isinstance(statement, ast.If):
            truth = _default_truth(statement.test, defaults, aliases)
            if truth is None:
                continue  # a condition scout cannot settle: not "by default"
            holds, option, value, line = truth
            branch = statement.body if holds else statement.orelse
            found = _on_default_branch(
                branch,
                name,
                defaults,
                (option, value, line) if holds else decided,
                function,
                aliases,
            )
            if found is not None:
                return found
            continue
        if isinstance(statement, ast.For | ast.AsyncFor | ast.While | ast.ClassDef):
            continue  # a loop may run zero times; a class body is not a run
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            found = _on_default_branch(
                statement.body, name, defaults, None, statement.name, _option_names(statement)
            )
            if found is not None:
                return found
            continue
        nested = [
            child
            for field in ("body", "orelse", "finalbody", "handlers")
            for child in getattr(statement, field, []) or []
            if isinstance(child, ast.stmt)
        ]
        if nested:
            found = _on_default_branch(nested, name, defaults, decided, function, aliases)
            if found is not None:
                return found
            continue
        if (decided is not None or function is not None) and any(
            (isinstance(n, ast.Name) and n.id == name)
            or (isinstance(n, ast.Attribute) and n.attr == name)
            for n in ast.walk(statement)
        ):
            return decided or ("", function or "", statement.lineno)
    return None


@pyast.per_tree
def branch_values(modules: dict[str, ast.Module], name: str) -> set[str]:
    """The string literals the `if`s around each use of `name` compare against
    (`if jit_pass_name == "auto_bucketing":`): the words a test selects the pass by."""
    found: set[str] = set()

    def walk(statements: list[ast.stmt], values: tuple[str, ...]) -> None:
        for statement in statements:
            here = values
            if isinstance(statement, ast.If) and isinstance(statement.test, ast.Compare):
                here = values + tuple(
                    c.value
                    for c in statement.test.comparators
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)
                )
                walk(statement.body, here)
                walk(statement.orelse, values)
                continue
            nested = [
                child
                for field in ("body", "orelse", "finalbody", "handlers")
                for child in getattr(statement, field, []) or []
                if isinstance(child, ast.stmt)
            ]
            if nested:
                walk(nested, here)
            elif any(
                (isinstance(n, ast.Name) and n.id == name)
                or (isinstance(n, ast.Attribute) and n.attr == name)
                for n in ast.walk(statement)
            ):
                found.update(here)

    for tree in modules.values():
        if name in pyast.identifiers(tree):
            walk(tree.body, ())
    return found


@pyast.per_tree
def suite_entries(tree: ast.Module | None, suite: str) -> list[Override] | None:
    """The integration entries `--test_suite <suite>` runs: the suite table (a module-level
    dict of name → builder function) names a builder; the entries are those written in it
    and in the module's functions it calls, transitively. None when scout cannot tell."""
    if tree is None:
        return None
    builder = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value == suite
                    and isinstance(value, ast.Name)
                ):
                    builder = value.id
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if builder not in functions:
        return None
    reached: set[str] = set()
    todo = [builder]
    while todo:
        name = todo.pop()
        if name in reached or name not in functions:
            continue
        reached.add(name)
        todo += [
            n.func.id
            for n in ast.walk(functions[name])
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        ]
    spans = [(functions[n].lineno, functions[n].end_lineno or functions[n].lineno) for n in reached]
    return [
        entry
        for entry in override_definitions(tree)
        if any(first <= entry.line <= last for first, last in spans)
    ]
