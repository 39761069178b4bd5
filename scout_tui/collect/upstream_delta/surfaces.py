"""The configured surfaces: compared across commits, adapted or not, moved or gone."""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import replace

from scout_tui.analysis.python import attributes, pyast, shapes
from scout_tui.analysis.python.changes import (
    Added,
    Change,
    Removed,
    Reshaped,
    ReturnsChanged,
    TypeChanged,
    in_order,
)
from scout_tui.analysis.python.dependencies import (
    Dependency,
    widened,
)
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import CollectorContext, Note
from scout_tui.config.models import Surface
from scout_tui.model import ConfigWarning, Finding
from scout_tui.source.records import CommitInfo

NAME = "upstream_delta"  # the collector's name, on every finding it makes


def under(path: str, prefixes: list[str]) -> bool:
    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def surface_diff(ctx: CollectorContext, surface: Surface, base: str, head: str) -> str:
    def segment(commit: str) -> list[str]:
        text = ctx.source.read_at(commit, surface.path) or ""
        node = pyast.find(ctx.source.parse_at(commit, surface.path), surface.qualname)
        return (pyast.source_of(text, node) if node else "").splitlines(keepends=True)

    return "".join(
        difflib.unified_diff(
            segment(base),
            segment(head),
            f"a/{surface.path} ({base[:10]})",
            f"b/{surface.path} ({head[:10]})",
        )
    )


def compare_surface(surface: Surface, old: pyast.Definition, new: pyast.Definition) -> list[Change]:
    """The changes to one surface between two versions."""
    check = surface.check
    if check in ("fields", "properties", "methods", "attributes") and not (
        isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef)
    ):
        return [Reshaped(surface.qualname, "no longer a class")]
    if check in ("signature", "returns") and isinstance(old, ast.ClassDef) != isinstance(
        new, ast.ClassDef
    ):
        return [Reshaped(surface.qualname, "class or function")]
    if isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef):
        return _compare_class(check, old, new)
    if isinstance(old, ast.ClassDef) or isinstance(new, ast.ClassDef):
        return []
    if check == "signature":
        return shapes.compare_signatures(shapes.signature(old), shapes.signature(new))
    before_arity, after_arity = shapes.return_arities(old), shapes.return_arities(new)
    if before_arity != after_arity:
        return [ReturnsChanged(_arity(after_arity), _arity(before_arity))]
    return []


def _compare_class(check: str, old: ast.ClassDef, new: ast.ClassDef) -> list[Change]:
    if check == "fields":
        return shapes.compare_fields(shapes.dataclass_fields(old), shapes.dataclass_fields(new))
    if check == "properties":
        before, after = pyast.properties(old), pyast.properties(new)
        return in_order(
            [Added("property", p) for p in after - before]
            + [Removed("property", p) for p in before - after]
        )
    if check == "methods":
        methods_before, methods_after = (
            set(pyast.public_methods(old)),
            set(pyast.public_methods(new)),
        )
        return in_order(
            [Added("method", m) for m in methods_after - methods_before]
            + [Removed("method", m) for m in methods_before - methods_after]
        )
    if check == "attributes":
        had, has = attributes.provided(old), attributes.provided(new)
        return in_order(
            [Added("attribute", a) for a in has - had]
            + [Removed("attribute", a) for a in had - has]
        )
    return []  # a signature or what it returns: a class has neither


_TOP_LEVEL = re.compile(r"^(?:async\s+def|def|class)\s+([A-Za-z]\w*)", re.MULTILINE)


_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Two-word terms every module has: they say nothing about what the experiment does.
GENERIC_TERMS = {
    "state_dict",
    "to_local",
    "from_config",
    "get_default",
    "build_model",
    "init_weights",
    "to_dtensor",
    "from_local",
    "test_case",
    "set_up",
}


def name_words(name: str) -> list[str]:
    """`AllGatherLinear` → all, gather, linear; `build_dist_muon` → build, dist, muon."""
    return [w.lower() for part in name.split("_") for w in _CAMEL.findall(part)]


def top_level_names(text: str | None) -> set[str]:
    return set(_TOP_LEVEL.findall(text or ""))


Made = list[tuple[CommitInfo, list[Change]]]  # commits, each with the changes it made


def changes_by_commit(ctx: CollectorContext, surface: Surface, commits: list[CommitInfo]) -> Made:
    """The commits that changed this surface, not merely its file, each with its changes."""
    found: Made = []
    for commit in commits:
        if surface.path not in commit.files:
            continue
        new = pyast.find(ctx.source.parse_at(commit.sha, surface.path), surface.qualname)
        old = pyast.find(ctx.source.parse_at(commit.sha + "^", surface.path), surface.qualname)
        if (old is None) != (new is None):
            appeared: list[Change] = [Reshaped(surface.qualname, "appeared or disappeared")]
            found.append((commit, appeared))
        elif old is not None and new is not None:
            changes = compare_surface(surface, old, new)
            if changes:
                found.append((commit, changes))
    return found


def changed_override(ctx: CollectorContext, commit: CommitInfo, path: str, qualname: str) -> bool:
    """Whether `commit` changed lines inside the experiment's method `qualname` in `path`."""
    if path not in commit.files and path not in ctx.source.changed_files(commit.sha, path):
        return False
    node = pyast.find(ctx.source.parse_at(commit.sha, path), qualname)
    if node is None:
        return False
    first, last = node.lineno, getattr(node, "end_lineno", None) or node.lineno
    return any(
        start <= last and end >= first for start, end in ctx.source.changed_lines(commit.sha, path)
    )


def adapts(
    ctx: CollectorContext,
    commit: CommitInfo,
    surface: Surface,
    experiment: str,
    names: tuple[str, ...] = (),
) -> bool:
    """Whether `commit` also changed experiment lines that name the surface (the class, the
    function, or one of `names`: the changed fields or parameters), removed lines included:
    then the experiment was adapted with the change."""
    words = (surface.qualname.split(".")[0], *names)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")
    diff = ctx.source.diff_range(commit.sha + "^", commit.sha, [experiment])
    return any(
        line[:1] in "+-" and not line.startswith(("+++", "---")) and pattern.search(line)
        for line in diff.splitlines()
    )


def constructions(ctx: CollectorContext, qualname: str) -> list[tuple[str, int]]:
    """Calls in the experiment that construct `qualname` directly: `ParallelDims(...)`."""
    short = qualname.rsplit(".", 1)[-1]
    found = []
    for path in ctx.source.glob(ctx.config.project.experiment, "*.py"):
        text = ctx.source.read(path) or ""
        if short + "(" not in text:
            continue  # cheap: most files never mention the class
        for node in pyast.nodes(ctx.source.parse(path), ast.Call):
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            if name in (qualname, short) or name.endswith("." + qualname):
                found.append((path, node.lineno))
    return sorted(found)


def mark_widened(
    ctx: CollectorContext,
    surface: Surface,
    changes: list[Change],
    head: str,
    old_tree: ast.Module | None = None,
) -> list[Change]:
    """A field's type changed to a base class of what it was: marked, for a value of the old
    type still fits (relevance then does not count it). A type only spelled another way
    (`ProcessGroup` imported by name, then `dist.ProcessGroup`) did not change: left out,
    given the module the old version was in."""
    tree = ctx.source.parse_at(head, surface.path)
    return [
        replace(change, widened=True)
        if isinstance(change, TypeChanged)
        and change.subject == "field"
        and widened(tree, change.before or "", change.after or "", ctx.source.parse)
        else change
        for change in changes
        if not (
            isinstance(change, TypeChanged)
            and old_tree is not None
            and change.before
            and change.after
            and shapes.qualified(change.before, old_tree) == shapes.qualified(change.after, tree)
        )
    ]


def positions(old: ast.AST) -> tuple[dict[str, int], set[int]]:
    """Each parameter's position as a caller counts them (a method's `self` not counted),
    and the tuple sizes it returned: what `depended_on` weighs calls and unpacks against."""
    if isinstance(old, ast.ClassDef):  # a dataclass's fields, in the order it takes them
        return {name: n for n, name in enumerate(shapes.dataclass_fields(old))}, set()
    if not isinstance(old, ast.FunctionDef | ast.AsyncFunctionDef):
        return {}, set()
    params = shapes.signature(old)
    if params and params[0].name in ("self", "cls"):
        params = params[1:]  # a bound call does not pass it
    return {p.name: n for n, p in enumerate(params)}, shapes.return_arities(old)


def dependency_name(dependency: Dependency) -> str:
    what = dependency.check if dependency.check in ("fields", "attributes") else "signature"
    prefix = f" (options `--{dependency.option_prefix}.*`)" if dependency.option_prefix else ""
    return f"`{dependency.qualname}` {what}{prefix}"


def _arity(arities: set[int]) -> str:
    words = [f"a {n}-tuple" if n else "a non-tuple" for n in sorted(arities)]
    return " or ".join(words) or "nothing"


def commit_lines(commits: list[CommitInfo]) -> str:
    return "\n".join(f"- {code(c.sha[:10])} {c.summary} ({c.author})" for c in commits)


def all_stable(
    ctx: CollectorContext, stable: list[Finding], discovered: tuple[int, int]
) -> Finding:
    """One All Clear line for every watched surface and discovered dependency that did
    not change: a list repeated every day is read by no one."""
    total, changed = discovered
    names = [f.title for f in stable]
    parts = [f"{len(names)} watched surface{'s' if len(names) != 1 else ''}"] if names else []
    if total:
        parts.append(
            f"{total - changed} of {total} upstream symbols the experiment "
            "imports, subclasses or configures"
        )
    body = ("Watched in scout.toml:\n" + "\n".join(f"- {n}" for n in names)) if names else ""
    finding = ctx.finding(
        NAME,
        "surface_stable",
        ("all",),
        f"Unchanged {ctx.since_words()}: " + " and ".join(parts),
        body,
        items=names,
    )
    # Yesterday's one-line-per-surface markers still match this line.
    return finding.model_copy(
        update={"aliases": sorted({*finding.aliases, *(f.fingerprint for f in stable)})}
    )


def misplaced(
    ctx: CollectorContext, surface: Surface, head: str
) -> tuple[ConfigWarning | Note, Surface | None]:
    """Why a configured surface is not where scout.toml says at the scanned commit, and
    where it is then when certain (then followed). scout.toml is written for the
    checkout's HEAD: a past commit that has it elsewhere, or not yet, is said in a note."""
    source = ctx.source
    where = f"`[upstream.surfaces]` {surface.target}"
    folder = surface.path.rpartition("/")[0]
    within = [*ctx.config.upstream.core_paths, folder] if folder else [""]
    back = followed_back(ctx, surface, head, within)
    if back is not None:
        return back
    if source.read_at(head, surface.path) is None:
        fate = source.path_fate(surface.path, head)
        home = None
        if (
            fate.kind == "moved"
            and fate.moved_to
            and pyast.find(source.parse_at(head, fate.moved_to), surface.qualname) is not None
        ):
            home = surface.model_copy(update={"target": f"{fate.moved_to}::{surface.qualname}"})
        what = f"{surface.path} does not exist"
    else:
        fate = source.moved_definition(surface.path, surface.qualname, head, within)
        home = (
            surface.model_copy(update={"target": f"{fate.moved_to}::{surface.qualname}"})
            if fate.kind == "moved" and fate.moved_to
            else None
        )
        what = f"{surface.qualname} is not in {surface.path}"
    commit = fate.commit
    when = f"{commit.sha[:10]} ({commit.summary}, {commit.date.date()})" if commit else ""
    if home is not None:
        said = (
            f"{where}: {what}; it moved to {home.target} in {when}. Followed today; "
            f"point scout.toml at {home.target}."
        )
    elif fate.kind == "never":
        said = (
            f"{where}: {what}, and never was in that file's history: a typo, or a name "
            "from another branch? Fix or remove it in scout.toml."
        )
    elif fate.kind == "unknown":
        said = (
            f"{where}: {what} (this clone's history cannot tell since when). Point "
            "scout.toml at its new home, or remove it."
        )
    else:
        said = (
            f"{where}: {what}; removed in {when}, with no single new home. Point "
            "scout.toml at what replaced it, or remove it."
        )
    return ConfigWarning(
        collector=NAME,
        subject=where,
        message=said,
        moved_to=home.target if home else None,
        commit=commit.sha if commit else None,
    ), home


def followed_back(
    ctx: CollectorContext, surface: Surface, head: str, within: list[str]
) -> tuple[Note, Surface | None] | None:
    """A surface the checkout's HEAD has where scout.toml says, and the scanned (older)
    commit has elsewhere — its file renamed since, or it moved from the one file under
    `within` that defines it then (followed back there) — or not yet. None: the
    checkout's HEAD does not have it either (scout.toml's to fix)."""
    source = ctx.source
    tip = source.checkout_head()
    if tip is None or pyast.find(source.parse_at(tip, surface.path), surface.qualname) is None:
        return None  # scout.toml is not right for today either
    fate = source.earlier_path(surface.path, head)
    home = fate.moved_to if fate.kind == "moved" else None
    if home is None or pyast.find(source.parse_at(head, home), surface.qualname) is None:
        fate = source.earlier_definition(surface.path, surface.qualname, head, within)
        home = fate.moved_to if fate.kind == "moved" else None
    if fate.kind not in ("moved", "later") or fate.commit is None:
        return None
    commit = fate.commit
    when = f"{commit.sha[:10]} ({commit.summary}, {commit.date.date()})"
    where = f"`[upstream.surfaces]` {surface.target}"
    if home is not None:
        target = f"{home}::{surface.qualname}"
        said = f"{where} is {target} at this commit (moved in {when}): compared there."
        return Note(said), surface.model_copy(update={"target": target})
    return Note(f"{where} is not there yet at this commit (it arrives in {when})."), None
