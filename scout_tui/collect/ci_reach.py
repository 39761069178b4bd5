"""What `ci_tests` reaches besides `test_*.py` files: test runners started as scripts or with
`python -m` that no workflow starts (`test_runner_not_in_ci`), and tests gated on hardware
that only jobs on runners lacking it select (`test_hardware_idle`): green, having run
nothing. The kinds are declared by `CiTestsCollector`."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from scout_tui.analysis.ci.hardware import Gate, Gates, Hardware, Job, runs_on, workflow_jobs
from scout_tui.analysis.ci.workflows import (
    PytestItem,
    WorkflowError,
    _commands,
    logical_lines,
    read_test_file,
    selects,
    shell_blocks,
)
from scout_tui.analysis.python import pyast
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import CollectorContext
from scout_tui.config.models import CiRunner
from scout_tui.model import ConfigWarning, FileRef, Finding

WORKFLOWS_DIR = ".github/workflows"


# -- test runners ----------------------------------------------------------------------------
@pyast.per_tree
def _script_kind(tree: ast.Module) -> str:
    """ "runner" when the module's `__main__` block reaches a test entry, "script" when it
    has one that does not, "" when it has none."""
    block = _main_block(tree)
    if block is None:
        return ""
    return "runner" if _runs_tests(tree, block) else "script"


def _main_block(tree: ast.Module) -> ast.If | None:
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"'
        ):
            return node
    return None


def _runs_tests(tree: ast.Module, block: ast.If) -> bool:
    """Whether the `__main__` block reaches (through the module's own functions) a test
    entry: `unittest.main()`, `pytest.main()`, or a `run…tests` function."""
    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    todo: list[ast.AST] = [block]
    seen: set[str] = set()
    while todo:
        for node in pyast.walk(todo.pop()):
            if not isinstance(node, ast.Call):
                continue
            called = ast.unparse(node.func)
            name = called.rsplit(".", 1)[-1]
            if called in ("unittest.main", "pytest.main") or (
                name.startswith("run") and name.rstrip("s").endswith("test")
            ):
                return True
            if isinstance(node.func, ast.Name) and name in functions and name not in seen:
                seen.add(name)
                todo.append(functions[name])
    return False


def _started(path: str, workflows: dict[str, str]) -> tuple[bool, list[str]]:
    """Whether a workflow's shell starts `path` (as a script, or `python -m` its module), and
    the workflows where that line is commented out."""
    module = path.removesuffix(".py").replace("/", ".")
    commented = []
    for workflow, text in workflows.items():
        try:
            blocks = shell_blocks(text)
        except WorkflowError:
            continue
        for block in blocks:
            for line, off in logical_lines(block):
                if path.rsplit("/", 1)[-1].removesuffix(".py") not in line:
                    continue
                for command in _commands(line):
                    words = [w.removeprefix("./") for w in command]
                    hit = path in words or any(
                        a == "-m" and b == module for a, b in itertools.pairwise(words)
                    )
                    if hit and not off:
                        return True, []
                    if hit:
                        commented.append(workflow)
    return False, sorted(set(commented))


def runners_not_in_ci(
    ctx: CollectorContext, collector: str, workflows: dict[str, str]
) -> Iterator[Finding]:
    experiment = ctx.config.project.experiment.rstrip("/")
    tests_dir = ctx.config.experiment_path(ctx.config.ci.tests_dir)
    missing: list[tuple[str, list[str]]] = []
    for path in ctx.source.glob(experiment, "*.py"):
        name = path.rsplit("/", 1)[-1]
        if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
            continue  # what pytest collects: `test_not_in_ci` and its kin say those
        tree = ctx.source.parse(path)
        kind = _script_kind(tree) if tree is not None else ""
        if not kind or (kind == "script" and not path.startswith(tests_dir + "/")):
            continue
        started, commented = _started(path, workflows)
        if not started:
            missing.append((path, commented))
    if not missing:
        return
    workflow = (ctx.config.ci.workflows or [WORKFLOWS_DIR + "/<workflow>.yaml"])[0]
    rows = "\n".join(
        f"- {code(path)}"
        + (f" (commented out in {', '.join(code(w) for w in commented)})" if commented else "")
        for path, commented in missing
    )
    lines = "\n".join(
        f"python -m {path.removesuffix('.py').replace('/', '.')}" for path, _ in missing
    )
    count = len(missing)
    yield ctx.finding(
        collector,
        "test_runner_not_in_ci",
        (tests_dir,),
        f"{count} test runner{'s' if count != 1 else ''} no workflow starts",
        "These run tests when started as a script or with `python -m` (pytest does not "
        f"collect them), and no workflow's shell starts them:\n\n{rows}",
        suggested_fix=f"Add to {code(workflow)}, with the arguments each needs:\n\n"
        f"```bash\n{lines}\n```",
        files=[FileRef(path=path) for path, _ in missing],
        items=[path for path, _ in missing],
    )


# -- hardware-gated tests ----------------------------------------------------------------
def _runner(config: dict[str, CiRunner], job: Job) -> list[Hardware] | None:
    """The hardware a job may run on; None when a runner is not in `[ci.runners]`."""
    own = config.get(f"{job.workflow.rsplit('/', 1)[-1]}:{job.name}")
    if own is not None:
        return [Hardware(own.has_gpu, own.compute)]
    if not job.runners:
        return None
    found: list[Hardware] = []
    for labels in job.runners:
        known = next((config[label] for label in labels if label in config), None)
        if known is None:
            return None
        found.append(Hardware(known.has_gpu, known.compute))
    return found


def _lineage(classes: dict[str, ast.ClassDef], node: ast.ClassDef) -> list[ast.ClassDef]:
    """The class and its bases defined in the same module, nearest first."""
    found: list[ast.ClassDef] = []
    todo = [node]
    while todo and len(found) < 20:
        current = todo.pop(0)
        if current in found:
            continue
        found.append(current)
        todo += [
            classes[name]
            for base in current.bases
            if (name := ast.unparse(base).rsplit(".", 1)[-1]) in classes
        ]
    return found


@pyast.per_tree
def _gated_runs(
    tree: ast.Module, path: str, hardware: tuple[tuple[bool, tuple[int, int] | None], ...]
) -> list[tuple[PytestItem, str, tuple[bool | None, ...]]]:
    """(pytest item, its gates as written, whether it runs on each hardware) of every gated
    test: True, False, or None when scout cannot tell."""
    gates = Gates(tree)
    return [
        (item, words, tuple(runs_on(gates, conditions, Hardware(*hw)) for hw in hardware))
        for item, conditions, words in _gated(tree, path)
    ]


def _gated(tree: ast.Module, path: str) -> list[tuple[PytestItem, list[Gate], str]]:
    """(pytest item, its hardware gates, the gates as written) of every gated test."""
    gates = Gates(tree)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    module = gates.module_conditions()
    found: list[tuple[PytestItem, list[Gate], str]] = []
    for item in read_test_file(path, tree).items:
        conditions = list(module)
        if item.cls is not None and item.cls in classes:
            # A skip on a base class is inherited; the method is the nearest definition.
            chain = _lineage(classes, classes[item.cls])
            for owner in chain:
                conditions += gates.conditions(owner)
            method = next(
                (
                    n
                    for owner in chain
                    for n in owner.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                    and n.name == item.function
                ),
                None,
            )
        else:
            method = functions.get(item.function)
        if method is not None:
            conditions += gates.conditions(method)
        if conditions:
            words = ", ".join(dict.fromkeys(gate.written for gate in conditions))
            found.append((item, conditions, words))
    return found


def hardware_idle(
    ctx: CollectorContext, collector: str, workflows: dict[str, str], paths: list[str]
) -> Iterator[Finding | ConfigWarning]:
    jobs: list[Job] = []
    for workflow, text in workflows.items():
        try:
            jobs += workflow_jobs(workflow, text)
        except WorkflowError:
            continue  # `workflow_unreadable` says it
    runners = ctx.config.ci.runners
    unknown: dict[str, str] = {}  # job → why its hardware is unknown
    every = sorted(
        {(hw.gpu, hw.capability) for job in jobs for hw in _runner(runners, job) or []}, key=repr
    )
    for path in paths:
        tree = ctx.source.parse(path)
        if tree is None:
            continue
        idle: list[tuple[str, str, list[str]]] = []
        capable: set[str] = set()
        for item, words, verdicts_on in _gated_runs(tree, path, tuple(every)):
            on = dict(zip(every, verdicts_on, strict=True))
            selecting = [
                job
                for job in jobs
                if any(not inv.commented and selects(inv, item) for inv in job.invocations)
            ]
            if not selecting:
                continue  # not run at all: `test_not_in_ci` says it
            verdicts: list[bool | None] = []
            for job in selecting:
                hardware = _runner(runners, job)
                if hardware is None:
                    labels = job.unresolved or " ".join(job.runners[0] if job.runners else ())
                    unknown[f"{job.workflow}:{job.name}"] = labels
                    verdicts.append(None)
                    continue
                verdicts += [on[(hw.gpu, hw.capability)] for hw in hardware]
            if all(v is False for v in verdicts):
                name = f"{item.cls}.{item.function}" if item.cls else item.function
                jobs_of = sorted(
                    {f"{job.workflow.rsplit('/', 1)[-1]}:{job.name}" for job in selecting}
                )
                idle.append((name, words, jobs_of))
                for job in jobs:
                    if job.workflow not in ctx.config.ci.workflows:
                        continue  # suggest the experiment's own workflows
                    hardware = _runner(runners, job) or []
                    if job.invocations and any(on[(h.gpu, h.capability)] for h in hardware):
                        capable.add(job.workflow)
        if idle:
            yield _idle_finding(ctx, collector, path, idle, sorted(capable))
    for where, labels in sorted(unknown.items()):
        workflow, name = where.rsplit(":", 1)
        # A label computed at run time cannot be a key: the job is named instead.
        key = f"{workflow.rsplit('/', 1)[-1]}:{name}" if "${{" in labels or not labels else labels
        yield ConfigWarning(
            collector=collector,
            subject=f"[ci.runners] {labels}",
            message=f"[ci.runners]: job `{name}` of {workflow} runs on `{labels}`, which "
            "[ci.runners] does not name: its hardware-gated tests are not checked; add "
            f'"{key}" = {{ gpu = "…", capability = "…" }}.',
        )


def _idle_finding(
    ctx: CollectorContext,
    collector: str,
    path: str,
    idle: list[tuple[str, str, list[str]]],
    capable: list[str],
) -> Finding:
    name = path.rsplit("/", 1)[-1]
    rows = "\n".join(
        f"- {code(test)}: {code(words)}, selected only by {', '.join(code(w) for w in where)}"
        for test, words, where in idle
    )
    fix = (
        f"Run {code(f'pytest {path} -v')} in {', '.join(code(w) for w in capable)}, whose "
        "runner has what the gate asks."
        if capable
        else "Run it in a job whose runner has what the gate asks (add that runner to "
        "`[ci.runners]`), or drop the gate if the test no longer needs it."
    )
    count = len(idle)
    return ctx.finding(
        collector,
        "test_hardware_idle",
        (path,),
        f"{count} test{'s' if count != 1 else ''} in {code(name)} gated on hardware only "
        "CI runners without it select",
        "Each is skipped on every runner of the jobs that run it (`[ci.runners]`): the step "
        f"passes having run nothing of it.\n\n{rows}",
        suggested_fix=fix,
        files=[FileRef(path=path)],
        items=[test for test, _, _ in idle],
    )
