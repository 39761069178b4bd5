"""Which hardware a CI job runs on, and which hardware a test needs to run at all.

A job's runner is its `runs-on` label, or the `runner` input of a reusable workflow it calls
(`with: runner:`); `${{ matrix.x }}` resolves through a literal matrix. A test's gates are
its skip decorators whose condition reads the machine (`skipUnless(has_cuda_capability(9,
0))`, `skipIf(not torch.cuda.is_available())`, `pytest.mark.skipif(...)`, `@requires_cuda`),
evaluated three-valued against a runner's hardware: True (runs), False (skipped), None
(scout cannot tell). Pure: YAML text and ASTs in.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

import yaml

from scout_tui.analysis.ci.workflows import (
    _LOADER,
    _SHELL_KEYS,
    Invocation,
    WorkflowError,
    logical_lines,
    parse_invocation,
)

_MATRIX = re.compile(r"^\$\{\{\s*matrix\.([\w-]+)\s*\}\}$")
# Names torch's testing helpers give the machine's abilities (`SM90OrLater`, `TEST_CUDA`).
_SM = re.compile(r"^SM(\d)(\d)OrLater$")
_HAS_GPU = {"TEST_CUDA", "HAS_CUDA", "HAS_GPU", "TEST_GPU"}
_REQUIRES_GPU = re.compile(r"^(?:requires_(?:cuda|gpu)\w*|skip_?if_?no_?(?:cuda|gpu))$", re.I)


@dataclass(frozen=True)
class Job:
    workflow: str
    name: str
    # The runners it may run on (a matrix gives several), each as its labels; empty when the
    # runner is computed at run time (`unresolved` says how).
    runners: tuple[tuple[str, ...], ...]
    unresolved: str
    invocations: tuple[Invocation, ...]


@dataclass(frozen=True)
class Hardware:
    gpu: bool
    capability: tuple[int, int] | None = None


def _labels(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if isinstance(value, dict):
        return _labels(value.get("labels"))
    return None


def _runners(job: dict[str, Any]) -> tuple[tuple[tuple[str, ...], ...], str]:
    runner = job.get("runs-on")
    if runner is None and isinstance(job.get("with"), dict):
        runner = job["with"].get("runner", job["with"].get("runs-on"))
    labels = _labels(runner)
    if labels is None:
        return (), str(runner)
    matrix_key = _MATRIX.match(labels[0]) if len(labels) == 1 else None
    if matrix_key is None:
        joined = " ".join(labels)
        return ((), joined) if "${{" in joined else ((labels,), "")
    strategy = job.get("strategy")
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    if not isinstance(matrix, dict):
        return (), labels[0]  # `fromJSON(…)`: known only when the workflow runs
    key = matrix_key.group(1)
    values, include = matrix.get(key), matrix.get("include")
    found = [v for v in values if isinstance(v, str)] if isinstance(values, list) else []
    found += [
        entry[key]
        for entry in (include if isinstance(include, list) else [])
        if isinstance(entry, dict) and isinstance(entry.get(key), str)
    ]
    if not found or any("${{" in value for value in found):
        return (), labels[0]
    return tuple((value,) for value in dict.fromkeys(found)), ""


def _shell(node: Any, found: list[str], seen: set[int]) -> None:
    if isinstance(node, dict | list):
        if id(node) in seen:
            return
        seen.add(id(node))
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _SHELL_KEYS and isinstance(value, str):
                found.append(value)
            else:
                _shell(value, found, seen)
    elif isinstance(node, list):
        for value in node:
            _shell(value, found, seen)


def workflow_jobs(workflow: str, yaml_text: str) -> list[Job]:
    """The jobs of a workflow with their runners and the test invocations of their shell."""
    try:
        document = yaml.load(yaml_text, Loader=_LOADER)
    except (yaml.YAMLError, RecursionError):
        raise WorkflowError("not valid YAML") from None
    jobs = document.get("jobs") if isinstance(document, dict) else None
    if not isinstance(jobs, dict):
        return []
    found = []
    for name, job in jobs.items():
        if not isinstance(job, dict):
            continue
        blocks: list[str] = []
        try:
            _shell(job, blocks, set())
        except RecursionError:
            continue
        invocations = tuple(
            invocation
            for block in blocks
            for line, commented in logical_lines(block)
            for invocation in parse_invocation(workflow, line, commented)
        )
        runners, unresolved = _runners(job)
        found.append(Job(workflow, str(name), runners, unresolved, invocations))
    return found


# -- gates -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gate:
    condition: ast.expr
    runs_when: bool  # skipUnless: the test runs when the condition holds; skipIf: when not
    written: str  # as the decorator says it, its reason left out


def _and(values: list[bool | None]) -> bool | None:
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def _or(values: list[bool | None]) -> bool | None:
    if any(v is True for v in values):
        return True
    return None if any(v is None for v in values) else False


def _pair(node: ast.expr) -> tuple[int, int] | None:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return value[0], value[1]
    return None


def _last(node: ast.expr) -> str:
    return ast.unparse(node).rsplit(".", 1)[-1]


class Gates:
    """The hardware conditions of one test module."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.constants: dict[str, ast.expr] = {
            target.id: node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }

    def holds(self, node: ast.expr, hw: Hardware, depth: int = 0) -> bool | None:
        """The condition on `hw`: True, False, or None when scout cannot tell."""
        if depth > 8:
            return None
        if isinstance(node, ast.BoolOp):
            values = [self.holds(v, hw, depth + 1) for v in node.values]
            return _and(values) if isinstance(node.op, ast.And) else _or(values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.holds(node.operand, hw, depth + 1)
            return None if inner is None else not inner
        if isinstance(node, ast.Call):
            name = _last(node.func)
            if name == "is_available" and ast.unparse(node.func).endswith("cuda.is_available"):
                return hw.gpu
            if name == "has_cuda_capability" and len(node.args) == 2:
                wanted = _pair(ast.Tuple(elts=list(node.args), ctx=ast.Load()))
                return self._at_least(hw, wanted)
            return None
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right, op = node.left, node.comparators[0], node.ops[0]
            if isinstance(left, ast.Call) and _last(left.func) == "get_device_capability":
                wanted = _pair(right)
                if wanted is None or hw.capability is None or not hw.gpu:
                    return None  # without a GPU the call itself fails: not a skip
                return _compare(hw.capability, op, wanted)
            return None
        if isinstance(node, ast.Name):
            if match := _SM.match(node.id):
                return self._at_least(hw, (int(match.group(1)), int(match.group(2))))
            if node.id in _HAS_GPU:
                return hw.gpu
            if node.id in self.constants:
                return self.holds(self.constants[node.id], hw, depth + 1)
        return None

    @staticmethod
    def _at_least(hw: Hardware, wanted: tuple[int, int] | None) -> bool | None:
        if not hw.gpu:
            return False
        if wanted is None or hw.capability is None:
            return None
        return hw.capability >= wanted

    def reads_hardware(self, node: ast.expr) -> bool:
        """Whether the condition depends on the machine at all (on some hardware it holds,
        on other it does not)."""
        outcomes = {
            self.holds(node, hw)
            for hw in (Hardware(False), Hardware(True, (7, 0)), Hardware(True, (10, 0)))
        }
        return len(outcomes - {None}) > 1

    def conditions(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> list[Gate]:
        """(condition, runs when it holds) of each hardware gate decorating `node`."""
        return [g for d in node.decorator_list if (g := self._gate(d)) is not None]

    def module_conditions(self) -> list[Gate]:
        """`pytestmark = pytest.mark.skipif(…)` (or a list of marks): every test's gate."""
        found = []
        for name, value in self.constants.items():
            if name == "pytestmark":
                marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
                found += [g for mark in marks if (g := self._gate(mark)) is not None]
        return found

    def _gate(self, decorator: ast.expr) -> Gate | None:
        call = decorator if isinstance(decorator, ast.Call) else None
        name = _last(call.func if call else decorator)
        if _REQUIRES_GPU.match(name):
            return Gate(ast.Name(id="TEST_CUDA", ctx=ast.Load()), True, ast.unparse(decorator))
        if call is None or not call.args or name not in ("skipIf", "skipUnless", "skipif"):
            return None
        condition = call.args[0]
        if not self.reads_hardware(condition):
            return None
        written = f"{ast.unparse(call.func)}({ast.unparse(condition)})"  # the reason left out
        return Gate(condition, name == "skipUnless", written)


def _compare(have: tuple[int, int], op: ast.cmpop, wanted: tuple[int, int]) -> bool | None:
    table = {
        ast.Lt: have < wanted,
        ast.LtE: have <= wanted,
        ast.Gt: have > wanted,
        ast.GtE: have >= wanted,
        ast.Eq: have == wanted,
        ast.NotEq: have != wanted,
    }
    return table.get(type(op))


def runs_on(gates: Gates, conditions: list[Gate], hw: Hardware) -> bool | None:
    """Whether a test with these gates runs on `hw` (None: cannot tell)."""
    values = []
    for gate in conditions:
        held = gates.holds(gate.condition, hw)
        values.append(None if held is None else held == gate.runs_when)
    return _and(values)
