"""Docs freshness (SPEC §2.1 item 5).

In the configured docs: paths that do not exist, test commands whose files, classes or
tests do not exist, `--section.option` flags no config dataclass defines (or values its
`Literal` does not allow), and passes in code that no doc mentions. Clean docs give one
All Clear line, "docs are current".
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator
from fnmatch import fnmatch

from git import GitCommandError

from scout_tui.analysis.ci.workflows import read_test_file
from scout_tui.analysis.python import pyast, shapes
from scout_tui.analysis.python.definitions import pass_definitions
from scout_tui.analysis.python.experiment_tests import Disabled, disabled_entries, skipped_tests
from scout_tui.analysis.text.docs import (
    CountedClaim,
    contradicts,
    counted_claims,
    flag_claims,
    path_claims,
    pytest_command_claims,
    script_breaks,
    script_claims,
    supported_claims,
)
from scout_tui.analysis.text.markdown import code
from scout_tui.analysis.text.mentions import mentions
from scout_tui.collect.base import (
    Collector,
    CollectorContext,
    Kind,
    Lifetime,
    Need,
    Note,
    Progress,
    locate_path,
    missing_path_warning,
)
from scout_tui.collect.config_types import ClassRef, ConfigTypes, extending_configs
from scout_tui.collect.doc_defaults import default_claim_findings
from scout_tui.collect.doc_flags import unknown_flag
from scout_tui.model import ConfigWarning, FileRef, Finding, Section, fingerprint


class DocsCollector(Collector):
    name = "docs"
    title = "Docs freshness"
    section = Section.DOCS
    shares, cost = "core", 3  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (
        Kind("doc_inaccuracy"),
        Kind("docs_current"),
        Kind("doc_feature_missing", Lifetime.NEWS),
        Kind("doc_stale_name"),
        Kind("doc_default_wrong"),
    )

    def __init__(self) -> None:
        self._off: list[Disabled] | None = None  # the experiment's tests that do not run

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress | ConfigWarning | Note]:
        config = ctx.config
        # A symlinked doc is one doc: read once, as its real file (whose folder its
        # relative links resolve from), under every name scout.toml gives it.
        names: dict[str, list[str]] = {}
        for name in config.docs.files:
            path = config.experiment_path(name)
            real = ctx.source.real_path(path)
            if real is None:
                where = f"`[docs] files` {name}"
                located = locate_path(ctx, self.name, where, path)
                moved = located.path if located.path != path else None
                real = ctx.source.real_path(moved) if moved else None
                if located.said is not None:
                    yield located.said
                elif real is None:  # there, and not a readable file: a dangling link
                    yield missing_path_warning(ctx, self.name, where, path)
                if real is None or moved is None:
                    continue
                path = moved
            names.setdefault(real, []).append(path)
        docs = list(names)
        types = ConfigTypes(ctx)
        targets = list(config.docs.root_configs)
        targets += [t for t in extending_configs(ctx, targets) if t not in targets]
        roots = [
            ref
            for target in targets
            for path, _, qualname in [target.partition("::")]
            for ref in [types.resolve(path, qualname)]
            if ref is not None
        ]
        inaccurate = 0
        all_text = ""
        for done, doc in enumerate(docs, 1):
            text = ctx.source.read(doc) or ""
            all_text += text
            problems = (
                self._paths(ctx, doc, text)
                + self._tests(ctx, text)
                + self._scripts(ctx, text)
                + self._support(ctx, text)
            )
            fixes: list[tuple[int, str]] = []
            if roots:
                flag_problems, fixes = self._flags(ctx, types, roots, text)
                problems += flag_problems
                problems += self._counts(types, roots, counted_claims(text))
            problems = sorted(set(problems))
            if problems:
                inaccurate += 1
                others = [n for n in names[doc] if n != doc]
                also = (
                    ("\n\nThe same file as " + ", ".join(code(n) for n in others) + " (a symlink).")
                    if others
                    else ""
                )
                finding = ctx.finding(
                    self.name,
                    "doc_inaccuracy",
                    (doc,),
                    f"{code(doc.rsplit('/', 1)[-1])}: {len(problems)} "
                    f"inaccurac{'ies' if len(problems) != 1 else 'y'}",
                    "\n".join(f"- line {line}: {problem}" for line, problem in problems) + also,
                    suggested_fix="\n".join(
                        f"- line {line}: {fix}" for line, fix in sorted(set(fixes))
                    ),
                    files=[
                        FileRef(path=doc, line=line) for line in sorted({n for n, _ in problems})
                    ],
                    items=[problem for _, problem in problems],
                )
                # Yesterday's markers, keyed by a name that is a symlink, still match.
                yield finding.model_copy(
                    update={
                        "aliases": sorted(
                            {
                                *finding.aliases,
                                *(fingerprint("doc_inaccuracy", name) for name in others),
                            }
                        )
                    }
                )
            yield Progress(self.name, done, len(docs), doc)
        stale = self._stale_names(ctx)
        if stale:
            yield ctx.finding(
                self.name,
                "doc_stale_name",
                (config.project.experiment,),
                (
                    f"{len(stale)} docstrings or comments name passes"
                    if len(stale) != 1
                    else "A docstring or comment names a pass"
                )
                + " that no longer exist"
                + ("" if len(stale) != 1 else "s"),
                "\n".join(
                    f"- {code(f'{path.rsplit(chr(47), 1)[-1]}:{line}')} names {code(name)}{when}"
                    for path, line, name, when in stale
                ),
                suggested_fix="Name what replaced it, or drop the sentence.",
                files=[FileRef(path=path, line=line) for path, line, _, _ in stale][:20],
                items=[f"{path.rsplit('/', 1)[-1]}: {name}" for path, _, name, _ in stale],
            )
        wrong_defaults = list(default_claim_findings(ctx, self.name, docs))
        yield from wrong_defaults
        missing = self._undocumented(ctx, all_text) if docs else []
        if missing:
            yield ctx.finding(
                self.name,
                "doc_feature_missing",
                (config.project.experiment,),
                f"{len(missing)} new option{'s' if len(missing) != 1 else ''} or pass"
                f"{'es' if len(missing) != 1 else ''} since {ctx.since.date()} that no doc "
                "mentions",
                "A user can select these, and no doc names them ("
                + ", ".join(code(d.rsplit("/", 1)[-1]) for d in docs)
                + "):\n\n"
                + "\n".join(f"- {code(name)}" for name in missing),  # the report cuts it
                items=missing,
            )
        if docs and not inaccurate and not missing and not wrong_defaults:
            yield ctx.finding(
                self.name, "docs_current", (config.project.experiment,), "Docs", "docs are current"
            )

    def _paths(self, ctx: CollectorContext, doc: str, text: str) -> list[tuple[int, str]]:
        doc_dir = doc.rsplit("/", 1)[0]
        bases = ["", doc_dir + "/", ctx.config.project.experiment.rstrip("/") + "/"]
        problems = []
        for claim in path_claims(text):
            if claim.text.startswith("../"):  # relative to the doc, as GitHub resolves it
                path = posixpath.normpath(posixpath.join(doc_dir, claim.text))
                if path.startswith("../") or not ctx.source.exists(path):
                    problems.append(
                        (
                            claim.line,
                            f"link {code(claim.text)} does not resolve from {code(doc_dir + '/')}",
                        )
                    )
                continue
            path = claim.text.removeprefix("./")
            first = path.split("/", 1)[0]
            judgeable = any(ctx.source.exists(base + first) for base in bases) or "/" not in path
            if judgeable and not any(ctx.source.exists(base + path) for base in bases):
                problems.append((claim.line, f"path {code(claim.text)} does not exist"))
        return problems

    @staticmethod
    def _scripts(ctx: CollectorContext, text: str) -> list[tuple[int, str]]:
        """`python path/file.py` that can only fail: the module form is the way to run it."""
        problems = []
        roots = ctx.source.root_packages()
        for claim in script_claims(text):
            if not ctx.source.exists(claim.text):
                continue  # a missing file is said by the path check
            why = script_breaks(claim.text, ctx.source.parse(claim.text), roots)
            if why:
                module = claim.text.removesuffix(".py").replace("/", ".")
                problems.append(
                    (
                        claim.line,
                        f"{code('python ' + claim.text)} fails: {why}; "
                        f"run {code('python -m ' + module)}",
                    )
                )
        return problems

    def _tests(self, ctx: CollectorContext, text: str) -> list[tuple[int, str]]:
        problems = []
        for selector in pytest_command_claims(text):
            if not ctx.source.exists(selector.path):
                problems.append((selector.line, f"test file {code(selector.path)} does not exist"))
                continue
            if selector.cls is None:
                continue
            file = read_test_file(selector.path, ctx.source.parse(selector.path))
            if selector.function is None and selector.cls not in file.classes:
                functions = [i.function for i in file.items if i.cls is None]
                if selector.cls not in functions:
                    problems.append(
                        (
                            selector.line,
                            f"{code(selector.cls)} is not a test in {code(selector.path)}",
                        )
                    )
            elif selector.function is not None and not any(
                i.cls == selector.cls and i.function == selector.function for i in file.items
            ):
                test = code(f"{selector.cls}::{selector.function}")
                problems.append(
                    (selector.line, f"test {test} does not exist in {code(selector.path)}")
                )
        return problems

    @staticmethod
    def _flags(
        ctx: CollectorContext, types: ConfigTypes, roots: list[ClassRef], text: str
    ) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        """The problems of the doc's flags, and what to write instead where that is known."""
        problems = []
        fixes = []
        flags: dict[str, str] | None = None
        for claim, value in flag_claims(text):
            known, allowed = types.option(roots, claim.text)
            if not known:
                if flags is None:
                    flags = types.all_flags(roots)
                unknown = unknown_flag(ctx, claim.text, flags)
                problems.append((claim.line, unknown.problem()))
                fix = unknown.fix()
                if fix is not None:
                    fixes.append((claim.line, fix))
            elif value is not None and allowed is not None and value not in allowed:
                given = code(f"--{claim.text}={value}")
                choices = ", ".join(code(v) for v in allowed)
                problems.append((claim.line, f"{given}: allowed values are {choices}"))
        return problems, fixes

    def _support(self, ctx: CollectorContext, text: str) -> list[tuple[int, str]]:
        """ "Context Parallelism ✅" in a feature table while a test of the experiment is
        skipped because "Context Parallel is not supported by graph_trainer"."""
        claims = supported_claims(text)
        if not claims:
            return []
        if self._off is None:
            config = ctx.config
            tests_dir = config.experiment_path(config.ci.tests_dir)
            integration = (
                config.experiment_path(config.coverage.experiment_integration_tests)
                if config.coverage.experiment_integration_tests
                else ""
            )
            off = [
                d
                for path in ctx.source.glob(tests_dir, "*.py")
                for d in skipped_tests(path, ctx.source.parse(path))
            ]
            if integration:
                off += disabled_entries(
                    integration, ctx.source.read(integration) or "", ctx.source.parse(integration)
                )
            self._off = off
        problems = []
        for line, feature in claims:
            against = next(
                (d for d in self._off if d.reason and contradicts(feature, d.reason)), None
            )
            if against is not None:
                problems.append(
                    (
                        line,
                        f"says {feature} ✅, but {code(against.name)} is skipped: "
                        f"{against.reason[:120]!r}",
                    )
                )
        return problems

    @staticmethod
    def _counts(
        types: ConfigTypes, roots: list[ClassRef], claims: list[CountedClaim]
    ) -> list[tuple[int, str]]:
        """ "Two modes" where the flag the sentence names allows three."""
        problems = []
        for claim in claims:
            for flag in claim.flags:
                known, allowed = types.option(roots, flag)
                values = [
                    v for v in allowed or [] if v != "None" and v.strip("'\"") not in claim.besides
                ]
                if known and values and len(values) != claim.count:
                    problems.append(
                        (
                            claim.line,
                            f"says {claim.words!r}, but "
                            f"{code('--' + flag)} allows {len(values)}"
                            + (
                                f" besides {', '.join(map(code, claim.besides))}"
                                if claim.besides
                                else ""
                            )
                            + ": "
                            + ", ".join(code(v) for v in values),
                        )
                    )
                    break
        return problems

    @staticmethod
    def _stale_names(ctx: CollectorContext) -> list[tuple[str, int, str, str]]:
        """Passes (`*_pass`) the experiment's docstrings and comments name that nothing in
        the repository defines any more — not a module, not an import, not a variable of
        its code: (path, line, name, " — removed in <commit>")."""
        head = ctx.head_commit or "HEAD"
        experiment = ctx.config.project.experiment
        paths = ctx.source.glob(experiment, "*.py")
        code_names: set[str] = set()
        for path in paths:
            code_names |= pyast.identifiers(ctx.source.parse(path))
            code_names.add(path.rsplit("/", 1)[-1].removesuffix(".py"))
        candidates: list[tuple[str, int, str]] = []
        for path in paths:
            text = ctx.source.read(path) or ""
            if "_pass" not in text:
                continue
            for line, prose in _prose(text, ctx.source.parse(path)):
                for name in _PASS_NAME.findall(prose):
                    if name not in code_names:
                        candidates.append((path, line, name))
        if not candidates:
            return []
        defined = ctx.source.defined_names(head)
        stale = []
        for path, line, name in sorted(set(candidates)):
            if name in defined:
                continue
            try:
                gone = ctx.source.pickaxe(f"def {name}(", ".", head)
            except GitCommandError:
                gone = None
            if gone is None:
                continue  # never defined here: an example name, or another project's
            # A commit that removed one pass and added one other renamed it, most likely.
            diff = ctx.source.diff_range(gone.sha + "^", gone.sha, ["*.py"])
            added = set(re.findall(r"^\+\s*def (\w+_pass)\(", diff, re.MULTILINE))
            added -= _defined_before(diff)
            became = f" (it became {code(next(iter(added)))}?)" if len(added) == 1 else ""
            stale.append(
                (path, line, name, f", removed in {code(gone.sha[:10])} ({gone.summary}){became}")
            )
        return stale

    @staticmethod
    def _undocumented(ctx: CollectorContext, docs_text: str) -> list[str]:
        """What a user can select — pass registry keys (`--compile.passes key`) and the
        `Literal` values of the experiment's own config options — that no doc mentions,
        among what appeared since the baseline: the standing list is not news every day."""
        now = _selectable(ctx, None)
        before = _selectable(ctx, ctx.baseline_commit) if ctx.baseline_commit else set()
        return sorted(
            name
            for name in now - before
            if not mentions(docs_text, name.split(" = ", 1)[-1].strip("'\""))
        )


_PASS_NAME = re.compile(r"\b([a-z][a-z0-9_]*_pass)\b")


def _defined_before(diff: str) -> set[str]:
    """The passes a diff's removed lines defined: moved ones are not new."""
    return set(re.findall(r"^-\s*def (\w+_pass)\(", diff, re.MULTILINE))


@pyast.per_tree
def _prose(text: str, tree: ast.Module | None) -> list[tuple[int, str]]:
    """The docstrings and `#` comments of a module, with their first line."""
    found = []
    for node in pyast.nodes(tree, ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef):
        body = getattr(node, "body", [])
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            found.append((body[0].lineno, body[0].value.value))
    # Class-level attribute docstrings (`field: T = x` then `"""…"""`) too.
    for node in pyast.nodes(tree, ast.Expr):
        assert isinstance(node, ast.Expr)
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.append((node.lineno, node.value.value))
    for number, line in enumerate(text.splitlines(), 1):
        at = line.find("#")
        if at >= 0 and "_pass" in line[at:]:
            found.append((number, line[at:]))
    return sorted(set(found))


def _selectable(ctx: CollectorContext, commit: str | None) -> set[str]:
    """Pass registry keys, and `option = 'value'` for each Literal value of a config field
    the experiment defines, at HEAD (commit None) or at `commit`."""
    config = ctx.config
    experiment = config.project.experiment
    tests_dir = config.experiment_path(config.ci.tests_dir) + "/"
    paths = (
        ctx.source.glob(experiment, "*.py")
        if commit is None
        else ctx.source.python_files_at(commit, experiment)
    )
    found: set[str] = set()
    for path in paths:
        if path.startswith(tests_dir):
            continue
        tree = ctx.source.parse(path) if commit is None else ctx.source.parse_at(commit, path)
        passes = any(fnmatch(path.rsplit("/", 1)[-1], p) for p in config.coverage.pass_files)
        found |= _selectable_in(path, tree, passes)
    return found


@pyast.per_tree
def _selectable_in(path: str, tree: ast.Module | None, passes: bool) -> frozenset[str]:
    """`_selectable` of one file (`passes`: a pass file, whose registry keys count)."""
    if tree is None:
        return frozenset()
    found: set[str] = set()
    if passes:
        found |= {key for d in pass_definitions(path, tree) for key in d.keys}
    for node in pyast.nodes(tree, ast.AnnAssign):
        assert isinstance(node, ast.AnnAssign)
        values = shapes.literal_values(ast.unparse(node.annotation))
        if values and isinstance(node.target, ast.Name):
            found |= {f"{node.target.id} = {v}" for v in values if v != "None"}
    return frozenset(found)
