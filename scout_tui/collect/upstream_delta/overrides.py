"""An override in the experiment that no longer calls the upstream method it overrides,
while that method changed: the change does not reach the experiment."""

from __future__ import annotations

import ast

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.dependencies import (
    Dependency,
    body_shape,
)
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import (
    CollectorContext,
)
from scout_tui.collect.upstream_delta.surfaces import (
    NAME,
    changed_override,
    commit_lines,
    surface_diff,
)
from scout_tui.config.models import Surface
from scout_tui.model import Evidence, FileRef, Finding
from scout_tui.source.records import CommitInfo


def override_drift(
    ctx: CollectorContext,
    surface: Surface,
    dependency: Dependency,
    old: ast.AST,
    new: ast.AST,
    commits: list[CommitInfo],
    base: str,
    head: str,
) -> Finding | None:
    """An upstream method the experiment overrides without calling it changed its body:
    the experiment's copy does not get the change (a fix, a guard, a new step). An override
    that calls it only on a branch its settings' defaults do not take is such a copy on the
    default path."""
    if not dependency.override or dependency.calls_super:
        return None
    if (
        not isinstance(old, ast.FunctionDef | ast.AsyncFunctionDef)
        or not isinstance(new, ast.FunctionDef | ast.AsyncFunctionDef)
        or body_shape(old) == body_shape(new)
    ):
        return None
    experiment = ctx.config.project.experiment
    by: list[CommitInfo] = []
    for commit in commits:
        if surface.path not in commit.files:
            continue
        after = pyast.find(ctx.source.parse_at(commit.sha, surface.path), surface.qualname)
        before = pyast.find(ctx.source.parse_at(commit.sha + "^", surface.path), surface.qualname)
        if (
            isinstance(after, ast.FunctionDef | ast.AsyncFunctionDef)
            and isinstance(before, ast.FunctionDef | ast.AsyncFunctionDef)
            and body_shape(before) != body_shape(after)
        ):
            by.append(commit)
    # A commit that also changed the experiment's override carried the change over.
    override_path = dependency.override.rpartition(":")[0]
    missed = [
        c for c in by if not _carried_over(ctx, c, override_path, dependency.override_qualname)
    ]
    if by and not missed:
        return None
    path, _, line = dependency.override.rpartition(":")
    skipped = dependency.skipped_super
    how = (
        f"calling the upstream method only when {code(skipped.only_if)}"
        + (
            f", which {code(skipped.setting)} at its default {code(skipped.default)} does not "
            "take: on the default path it runs its own code"
            if skipped.setting
            else ""
        )
        if skipped is not None
        else "without calling the upstream method"
    )
    # Calling upstream on another branch, the override replaces it on the default path by
    # choice: awareness of what changed there, not a card asking to port it.
    return ctx.finding(
        NAME,
        "override_drift" if skipped is None else "override_bypassed",
        (surface.target,),
        f"{code(surface.qualname)} changed upstream; the experiment's override does not "
        + ("call it by default" if skipped is not None else "call it")
        + " and may lack the change",
        f"The experiment overrides {code(surface.qualname)} at "
        f"{code(dependency.override.removeprefix(experiment + '/'))} {how}, so what "
        f"changed in its body since {ctx.since.date()} does not reach the experiment:\n"
        + (commit_lines(missed) if missed else "- (the commits are outside this window)")
        + "\n\nCompare the two and carry over what applies.",
        suggested_fix=""
        if skipped is not None
        else f"Port the upstream change into the override at "
        f"{code(dependency.override.removeprefix(experiment + '/'))}, or call "
        "the upstream method.",
        files=[
            FileRef(path=path, line=int(line) if line.isdigit() else None),
            FileRef(path=surface.path, line=new.lineno),
        ],
        items=[c.sha for c in missed],
        evidence=Evidence(diff=surface_diff(ctx, surface, base, head)),
    )


def _carried_over(ctx: CollectorContext, commit: CommitInfo, path: str, qualname: str) -> bool:
    """Whether `commit` changed the override, or a function of its module the override
    reaches by calls (`self.helper()`, `helper()`, and what those call): where the
    experiment does that method's work."""
    tree = ctx.source.parse_at(commit.sha, path)
    owner = qualname.rpartition(".")[0]
    seen, pending = {qualname}, [qualname]
    while pending:
        name = pending.pop()
        if changed_override(ctx, commit, path, name):
            return True
        node = pyast.find(tree, name)
        for call in pyast.walk(node) if node is not None else []:
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            if isinstance(func, ast.Name):
                callee = func.id
            elif isinstance(func, ast.Attribute) and ast.unparse(func.value) == "self":
                callee = f"{owner}.{func.attr}" if owner else func.attr
            else:
                continue
            if callee not in seen and pyast.find(tree, callee) is not None:
                seen.add(callee)
                pending.append(callee)
    return False
