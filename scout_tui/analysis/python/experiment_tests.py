"""The experiment's tests as written: its integration entries (`OverrideDefinitions(...)`),
their flags (and the parallelism those turn on), suites and `disabled=` switches; its unit
tests skipped without a condition; and what the code says about why each is off. Pure
functions over parsed modules."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from scout_tui.analysis.python import pyast

# Keywords of an entry that name configuration functions rather than flags.
_CONFIG_KEYWORDS = ("configs", "config_fn", "config_fns", "config")
_FLAG = re.compile(r"(--parallelism\.[A-Za-z_][\w]*)(?:[=\s]+(\S+))?")


@dataclass
class Override:
    """One integration test entry (an `OverrideDefinitions(...)` call)."""

    name: str
    strings: list[str] = field(default_factory=list)
    disabled: bool = False
    line: int = 0
    switch: str = ""  # what disables it: `_JIT_DISABLED`, `_A or _B`, `True`
    # The configuration functions it runs (`configs=[recipes.llama3_tp2]`), as written.
    config_functions: list[str] = field(default_factory=list)
    # each command it runs (`[[flags of one run], [flags of the next]]`), as strings
    commands: list[list[str]] = field(default_factory=list)


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
        nodes = list(pyast.walk(argument))
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
            truth = _truth(keyword.value, constants)
            disabled = truth is not _UNKNOWN and bool(truth)
            switch = ast.unparse(keyword.value)
        elif keyword.arg == "test_name":
            name = _text(keyword.value, constants) or name
    if not name and len(node.args) >= 3:
        name = _text(node.args[2], constants) or ""
    functions = []
    for keyword in node.keywords:
        if keyword.arg in _CONFIG_KEYWORDS:
            value = keyword.value
            items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
            functions += [ast.unparse(item) for item in items if not isinstance(item, ast.Constant)]
    if not name:  # no test_name: the description says which it is
        described = [k.value for k in node.keywords if k.arg == "test_descr"] + node.args[1:2]
        name = next((t for v in described if (t := _text(v, constants))), "")
    runs = node.args[0] if node.args else None
    commands = (
        [
            [t for e in run.elts if (t := _text(e, constants)) is not None]
            for run in runs.elts
            if isinstance(run, ast.List | ast.Tuple)
        ]
        if isinstance(runs, ast.List | ast.Tuple)
        else []
    )
    return Override(name, strings, disabled, node.lineno, switch, functions, commands or [strings])


_UNKNOWN = object()  # decided on the machine that runs it (`find_spec(...)`, a call)


def _truth(node: ast.expr, constants: dict[str, object]) -> object:
    """`disabled=` as Python would see it: literals, module constants, and/or/not. What
    depends on the machine (a name bound to a call, `not _DEEPEP_AVAILABLE`) is unknown,
    and an unknown switch counts as enabled, like a `skipIf`."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id, _UNKNOWN)
    if isinstance(node, ast.BoolOp):
        values = [_truth(value, constants) for value in node.values]
        decided = [bool(v) for v in values if v is not _UNKNOWN]
        if isinstance(node.op, ast.And):
            return (
                False if not all(decided) else (True if len(decided) == len(values) else _UNKNOWN)
            )
        return True if any(decided) else (False if len(decided) == len(values) else _UNKNOWN)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _truth(node.operand, constants)
        return _UNKNOWN if value is _UNKNOWN else not value
    return _UNKNOWN


_MARKER = re.compile(r"(TODO|FIXME|XXX)\b")


def comment_above(lines: list[str], line: int, from_marker: bool = False) -> str:
    """The comment block right above 1-based `line` (TODO markers and `#` stripped); with
    `from_marker`, from its last TODO/FIXME/XXX line on when it has one."""
    found: list[str] = []
    index = line - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        found.insert(0, lines[index].strip().lstrip("#").strip())
        index -= 1
    marked = [n for n, part in enumerate(found) if _MARKER.match(part)]
    if from_marker and marked:
        found = found[marked[-1] :]
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


@pyast.per_tree
def runner_entries(path: str, text: str, tree: ast.Module | None) -> tuple[list[Disabled], int]:
    """The entries of a test runner's own definition class — a class of the module with a
    `disabled` field, built once per test (`PrecompileTestDefinition(test_name=…,
    disabled=True)`): the ones switched off, each with the comment above its switch, and
    how many there are in all."""
    if tree is None:
        return [], 0
    classes = {
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(
            isinstance(s, ast.AnnAssign)
            and isinstance(s.target, ast.Name)
            and s.target.id == "disabled"
            for s in node.body
        )
    }
    if not classes:
        return [], 0
    constants = _constants(tree)
    lines = text.splitlines()
    found = []
    total = 0
    for node in pyast.nodes(tree, ast.Call):
        if (
            not isinstance(node, ast.Call)
            or ast.unparse(node.func).rsplit(".", 1)[-1] not in classes
        ):
            continue
        total += 1
        switch = next((k for k in node.keywords if k.arg == "disabled"), None)
        truth = _truth(switch.value, constants) if switch is not None else False
        if switch is None or truth is _UNKNOWN or not truth:
            continue
        name = next(
            (t for k in node.keywords if k.arg == "test_name" and (t := _text(k.value, constants))),
            f"line {node.lineno}",
        )
        reason = comment_above(lines, getattr(switch, "lineno", node.lineno)) or comment_above(
            lines, node.lineno
        )
        found.append(Disabled(path, node.lineno, name, ast.unparse(switch.value), reason))
    return found, total


_SKIPS = ("unittest.skip", "pytest.mark.skip", "skip")


@pyast.per_tree
def skipped_tests(path: str, tree: ast.Module | None, text: str = "") -> list[Disabled]:
    """Test functions and classes skipped without a condition (`skipIf` and `skipUnless`
    depend on the machine: not counted). With the module's `text`, a reason is also the
    comment block above the decorators."""
    if tree is None:
        return []
    constants = _constants(tree)
    lines = text.splitlines()
    found = []

    def why(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef, message: str) -> str:
        """The skip's own message first (it is the code's reason), then what the comment
        above says of it: from its TODO on when it has one (a block may open with notes on
        something else)."""
        top = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        above = comment_above(lines, top, from_marker=True) if lines else ""
        return " — ".join(part for part in (message, above) if part)

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
                    found.append(Disabled(path, node.lineno, node.name, "@skip", why(node, reason)))
                else:
                    visit(node.body, node.name)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test"
            ):
                reason = skip_of(node)
                if reason is not None:
                    name = f"{owner}.{node.name}" if owner else node.name
                    found.append(Disabled(path, node.lineno, name, "@skip", why(node, reason)))

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
            for n in pyast.walk(functions[name])
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        ]
    spans = [(functions[n].lineno, functions[n].end_lineno or functions[n].lineno) for n in reached]
    return [
        entry
        for entry in override_definitions(tree)
        if any(first <= entry.line <= last for first, last in spans)
    ]
