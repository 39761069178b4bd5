"""Coverage gaps (SPEC §2.1 item 3, "coverage gaps").

Graph passes no test references (none at all, or only enabled integration tests), model
configs no test uses, parallelism combinations core's integration tests run and the
experiment's never do, and code added or grown since the baseline that no test mentions.
Each kind is one finding with the list, never one finding per name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import replace
from fnmatch import fnmatch

import git

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.config_functions import module_combos
from scout_tui.analysis.python.definitions import (
    PassDef,
    branch_options,
    branch_values,
    default_choices,
    off_the_default_path,
    option_defaults,
    pass_definitions,
    selected_by_default,
)
from scout_tui.analysis.python.experiment_tests import override_definitions
from scout_tui.analysis.text.markdown import code
from scout_tui.analysis.text.mentions import Words, mentions
from scout_tui.collect.base import (
    Collector,
    CollectorContext,
    Kind,
    Lifetime,
    Need,
    Note,
    Progress,
    Unchecked,
    locate_path,
)
from scout_tui.collect.disabled_tests import disabled_findings
from scout_tui.model import ConfigWarning, FileRef, Finding, Section

WORKFLOWS_DIR = ".github/workflows"


def _enabled_strings(ctx: CollectorContext, path: str, disabled: bool = False) -> str:
    """The strings of the integration entries that run (or, `disabled`, of those that
    do not)."""
    overrides = override_definitions(ctx.source.parse(path)) if path else []
    return "\n".join(s for o in overrides if o.disabled == disabled for s in o.strings)


def sets_option(text: str, option: str, value: str) -> bool:
    """Whether a command line in `text` sets `--….option` to `value` (`--x.option v`,
    `--x.option=v`, quoted or not)."""
    pattern = rf"--(?:[\w-]+\.)*{re.escape(option)}(?:\s+|=)[\"']?{re.escape(value)}(?![\w.-])"
    return re.search(pattern, text) is not None


def _combo_name(combo: frozenset[str]) -> str:
    """`--parallelism.tensor_parallel_degree` + … → `tensor_parallel+…`."""
    short = (flag.removeprefix("--parallelism.").removesuffix("_degree") for flag in combo)
    return "+".join(sorted(short))


def _callers(code_text: str, definition: PassDef) -> bool:
    """Whether the experiment's code names the pass anywhere but its own `def` line (a
    registry key counts: selecting it by key is calling it)."""
    if definition.keys:
        return True  # registered: reachable from a config or the command line
    name = definition.name
    uses = code_text.count(name)  # cheap first: a name used once is only its def
    return uses > 1 and mentions(code_text.replace(f"def {name}(", "", 1), name)


def _called(code_text: str, function: str) -> bool:
    """Whether the experiment's code calls `function` somewhere besides defining it."""
    return mentions(code_text.replace(f"def {function}(", "", 1), function)


def _defined_before(ctx: CollectorContext, name: str, path: str, base: str) -> bool:
    """Whether `path` defined the function `name` at some commit up to `base` (one that
    added or removed it): a config deleted before the window and brought back in it."""
    try:
        return ctx.source.pickaxe(f"def {name}(", path, base) is not None
    except git.GitCommandError:  # a history it cannot read says nothing
        return False


def _passes_with_keys(ctx: CollectorContext, files: list[str]) -> list[PassDef]:
    """Each pass once, where it is defined, with every registry key any pass file gives it:
    a registry in one module may select a pass another module defines."""
    found = [d for path in files for d in pass_definitions(path, ctx.source.parse(path))]
    keys: dict[str, tuple[str, ...]] = {}
    for d in found:
        keys[d.name] = tuple(dict.fromkeys((*keys.get(d.name, ()), *d.keys)))
    defined = {
        d.name: d.path
        for d in found
        if (tree := ctx.source.parse(d.path)) is not None
        and (pyast.definition_of(tree, d.name) or ("",))[0] == "def"
    }
    return [
        replace(d, keys=keys[d.name])
        for d in found
        if defined.get(d.name, d.path) == d.path  # a registry entry of a pass defined elsewhere
    ]


def _is_test_file(path: str, tests_dir: str, integration: str | None) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path == integration or (
        path.startswith(tests_dir + "/") and (name.startswith("test_") or name.endswith("_test.py"))
    )


def _top_level(tree: ast.Module | None) -> set[str]:
    """The functions and classes a module defines at its top level."""
    return {
        node.name
        for node in (tree.body if tree is not None else [])
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _bullets(names: list[str]) -> str:
    """One a line, every one: the report cuts a long list ("… N more"), the JSON keeps it."""
    return "\n".join(f"- {code(name)}" for name in names)


def _listing(names: list[str], limit: int = 30) -> str:
    shown = ", ".join(code(name) for name in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# What a hand-written item that says one pass is untested reads like. Every pass is checked
# for tests (and for being reached by default), so such an item can be Resolved like
# scout's own.
_UNTESTED_WORDS = re.compile(
    r"\b(?:(?:zero|no) (?:unit )?(?:tests?|test coverage|coverage)|"
    r"untested|lacks? (?:unit )?tests?)\b",
    re.IGNORECASE,
)
_PASS = re.compile(r"`\w+_pass`")


def said_untested(title: str) -> bool:
    return bool(_UNTESTED_WORDS.search(title)) and len(_PASS.findall(title)) == 1


class CoverageCollector(Collector):
    name = "coverage"
    title = "Coverage gaps"
    section = Section.ACTION_ITEMS
    shares, cost = "experiment", 4  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (
        Kind("pass_untested", said_by=said_untested),
        Kind("pass_integration_only"),
        Kind("model_config_untested"),
        Kind("model_configs_untested"),
        Kind("pass_tests_disabled"),
        Kind("tests_newly_disabled", Lifetime.NEWS),
        Kind("tests_disabled_tracked", Lifetime.NEWS),
        Kind("parallelism_gap"),
        Kind("new_code_untested", Lifetime.NEWS),
        Kind("tests_disabled"),
        Kind("pass_dead"),
    )

    def collect(
        self, ctx: CollectorContext
    ) -> Iterator[Finding | Progress | ConfigWarning | Note | Unchecked]:
        config = ctx.config
        experiment = config.project.experiment.rstrip("/")
        tests_dir = config.experiment_path(config.ci.tests_dir)
        integration = (
            config.experiment_path(config.coverage.experiment_integration_tests)
            if config.coverage.experiment_integration_tests
            else ""
        )
        if integration and not ctx.source.exists(integration):
            # Gone (moved, removed) is scout.toml's to fix; never there is an experiment with
            # no integration tests of its own, as the default path allows.
            located = locate_path(
                ctx,
                self.name,
                "`[coverage] experiment_integration_tests` "
                f"{config.coverage.experiment_integration_tests}",
                integration,
            )
            said = located.said
            if isinstance(said, Note) or (said is not None and said.commit is not None):
                yield said
            integration = located.path or ""
        unit_paths = [p for p in ctx.source.glob(tests_dir, "*.py") if p != integration]
        unit_text = Words(*(ctx.source.read(p) or "" for p in unit_paths))
        integration_text = Words(_enabled_strings(ctx, integration))
        yield Progress(self.name, 1, 4, "passes")
        yield from self._passes(
            ctx, experiment, tests_dir, unit_text, integration_text, integration
        )
        yield Progress(self.name, 2, 4, "model configs")
        workflows_text = Words(
            *(ctx.source.read(p) or "" for p in ctx.source.glob(WORKFLOWS_DIR, "*.y*ml"))
        )
        yield from self._configs(ctx, experiment, unit_text, integration_text, workflows_text)
        yield Progress(self.name, 3, 4, "parallelism")
        yield from self._parallelism(ctx, integration)
        yield Progress(self.name, 4, 4, "new code")
        yield from self._new_code(ctx, experiment, tests_dir, unit_text | integration_text)
        yield from disabled_findings(ctx, self.name, integration, unit_paths)

    def _passes(
        self,
        ctx: CollectorContext,
        experiment: str,
        tests_dir: str,
        unit: Words,
        integ: Words,
        integration: str = "",
    ) -> Iterator[Finding]:
        patterns = ctx.config.coverage.pass_files
        files = [
            p
            for p in ctx.source.glob(experiment, "*.py")
            if not p.startswith(tests_dir + "/")
            and any(fnmatch(p.rsplit("/", 1)[-1], pattern) for pattern in patterns)
        ]
        untested, integration_only, dead = [], [], []
        code_text = ""  # the experiment's own code (not its tests): who calls what
        modules: dict[str, ast.Module] = {}
        for path in ctx.source.glob(experiment, "*.py"):
            if not path.startswith(tests_dir + "/"):
                code_text += (ctx.source.read(path) or "") + "\n"
                if (tree := ctx.source.parse(path)) is not None:
                    modules[path] = tree
        defaults: dict[str, str] | None = None
        disabled_only: list[PassDef] = []
        disabled_words = Words(_enabled_strings(ctx, integration, disabled=True))
        for definition in _passes_with_keys(ctx, files):
            names = [definition.name, *definition.keys]
            via: list[str] = []  # the mode values through which alone it runs
            if any(name in unit for name in names):
                continue
            if any(name in integ for name in names):
                integration_only.append(definition)
            elif _callers(code_text, definition):
                if integ.text.strip():
                    defaults = option_defaults(modules) if defaults is None else defaults
                    chosen = selected_by_default(modules, definition.name, defaults)
                    if chosen is not None and chosen[0]:
                        # Every run that leaves the option alone runs it, unit tests of
                        # the default pipeline included: covered, not a gap.
                        continue
                    # Used whatever the options by functions: it runs when one of them
                    # does, unless only modes no default run takes call them.
                    users = [
                        user for _, user, _ in default_choices(modules, definition.name, defaults)
                    ]
                    if any(
                        _called(code_text, user)
                        and not off_the_default_path(modules, user, defaults)
                        for user in users
                    ):
                        continue
                    via = sorted(
                        value
                        for user in users
                        if off_the_default_path(modules, user, defaults)
                        for value in branch_values(modules, user)
                    )
                selectors = names + sorted(branch_values(modules, definition.name)) + via
                modes = branch_options(modules, definition.name)
                if any(value in integ for value in via) or any(
                    sets_option(integ.text, option, value) for option, value in modes
                ):
                    integration_only.append(definition)  # its mode's enabled tests
                elif any(name in disabled_words for name in selectors):
                    disabled_only.append(definition)  # switched off on purpose: FYI
                else:
                    untested.append(definition)
            else:  # nothing calls or registers it: testing it would test dead code
                dead.append(definition)

        def dead_body(names: str, count: int) -> str:
            return (
                f"{names} {'is' if count == 1 else 'are'} defined but never called, "
                "registered or selected by the experiment's code, tests or workflows."
            )

        groups = [
            (
                "pass_dead",
                dead,
                "nothing calls",
                dead_body,
                "Delete it, or wire it in where it was meant to run.",
            ),
            (
                "pass_untested",
                untested,
                "with no test",
                lambda names, _: (
                    "No unit test and no enabled integration test references "
                    f"{names} (by function name or registry key)."
                ),
                "Add a unit test per pass in the experiment's tests.",
            ),
            (
                "pass_tests_disabled",
                disabled_only,
                "whose only tests are disabled",
                lambda names, _: (
                    f"Only disabled integration tests select {names}; no unit test "
                    "does. They run nowhere until those tests are enabled again."
                ),
                "Give each a unit test, or retire them with the mode they belong to.",
            ),
            (
                "pass_integration_only",
                integration_only,
                "only exercised by integration tests",
                lambda names, _: (
                    f"{names} run only inside multi-GPU integration tests: a "
                    "regression shows up late and far from its cause."
                ),
                "Add a small unit test (a traced toy graph) for each.",
            ),
        ]
        for kind, passes, what, body, fix in groups:
            if passes:
                yield ctx.finding(
                    self.name,
                    kind,
                    (experiment,),
                    f"{len(passes)} graph pass{'es' if len(passes) != 1 else ''} {what}",
                    body(_listing([d.name for d in passes]), len(passes)),
                    suggested_fix=fix,
                    files=[FileRef(path=d.path, line=d.line) for d in passes],
                    items=[d.name for d in passes],
                )

    def _configs(
        self, ctx: CollectorContext, experiment: str, unit: Words, integ: Words, workflows: Words
    ) -> Iterator[Finding]:
        unused: list[tuple[str, str, int]] = []
        by_scripts: list[str] = []
        scripts: Words | None = None
        for file_name in ctx.config.coverage.config_registries:
            for path in ctx.source.glob(experiment, file_name):
                tree = ctx.source.parse(path)
                for name in sorted(pyast.public_names(tree)):
                    kind, line = (tree and pyast.definition_of(tree, name)) or ("", 0)
                    if kind != "def":
                        continue
                    if not any(name in text for text in (unit, integ, workflows)):
                        if scripts is None:
                            scripts = Words(
                                *(
                                    ctx.source.read(p) or ""
                                    for p in ctx.source.glob(experiment, "*.sh")
                                )
                            )
                        if name in scripts:
                            by_scripts.append(name)  # a benchmark's config, run on purpose
                            continue
                        unused.append((name, path, line))
        if not unused:
            return
        # A fixed list read every day is noise: the configs registered since the baseline
        # with no test are the task; the ones that were already there are a count.
        base = ctx.baseline_commit
        known = {
            path: pyast.public_names(ctx.source.parse_at(base, path)) if base else set()
            for path in {path for _, path, _ in unused}
        }
        new, old = [], []
        for name, path, line in unused:
            if name in known[path] or (base and _defined_before(ctx, name, path, base)):
                old.append(name)  # there at the baseline, or removed before it and restored
            else:
                new.append((name, path, line))
        if base is None and ctx.history_gap:  # the history does not say which are new
            new, old = [], [name for name, _, _ in unused]
        if new:
            yield ctx.finding(
                self.name,
                "model_config_untested",
                (experiment,),
                f"{len(new)} model config{'s' if len(new) != 1 else ''} registered since "
                f"{ctx.since.date()} that no test uses",
                "No unit test, enabled integration test or workflow uses these:\n\n"
                + _bullets([name for name, _, _ in new])
                + (f"\n\n{len(old)} older registered configs no test uses either." if old else "")
                + (
                    f"\n\nLeft out, run by the experiment's scripts: {_listing(by_scripts)}."
                    if by_scripts
                    else ""
                ),
                files=[FileRef(path=path, line=line) for _, path, line in new],
                items=[name for name, _, _ in new],
            )
        if old:
            yield ctx.finding(
                self.name,
                "model_configs_untested",
                (experiment,),
                f"{len(old)} registered model config{'s' if len(old) != 1 else ''} no test "
                f"uses, none new {ctx.since_words()}"
                if not new
                else f"{len(old)} older registered model config{'s' if len(old) != 1 else ''} no "
                "test uses",
                "No unit test, enabled integration test or workflow uses these:\n\n"
                + _bullets(old),
                items=old,
            )

    def _parallelism(
        self, ctx: CollectorContext, integration: str
    ) -> Iterator[Finding | ConfigWarning | Note | Unchecked]:
        pattern = ctx.config.coverage.parallelism_flags
        core: dict[frozenset[str], str] = {}
        blind: list[str] = []  # configuration functions scout could not read
        for path in ctx.config.coverage.core_integration_tests:
            where = f"`[coverage] core_integration_tests` {path}"
            located = locate_path(ctx, self.name, where, path)
            if located.said is not None:
                yield located.said
            tree = ctx.source.parse(located.path) if located.path else None
            if located.path is None or tree is None:
                continue  # not there (said), or unparsable (the skipped-file warning)
            path = located.path
            if not override_definitions(tree):
                yield ConfigWarning(
                    collector=self.name,
                    subject=where,
                    message=f"{where}: holds no integration entries (`OverrideDefinitions`) "
                    "any more: the parallelism check has nothing of it to compare; point "
                    "scout.toml at where they went.",
                )
                continue
            for name, line, disabled, combos, unread in module_combos(
                path, tree, pattern, ctx.source.parse
            ):
                if disabled:
                    continue
                blind += [f"{path}::{name or line}: {f}" for f in unread]
                for combo in combos:
                    if combo:
                        core.setdefault(combo, f"{path}::{name}")
        # A run that sets no degree still runs the default (FSDP over every GPU); a run of a
        # larger combination goes through the smaller one's code too.
        default = frozenset(ctx.config.coverage.default_parallelism)
        ours: set[frozenset[str]] = set()
        own_tree = ctx.source.parse(integration) if integration else None
        # An entry switched off still says the experiment means to run that combination:
        # the disabled tests' list says it is off, not this one.
        if own_tree is not None and integration:
            for name, line, _, combos, unread in module_combos(
                integration, own_tree, pattern, ctx.source.parse
            ):
                ours |= {combo or default for combo in combos}
                blind += [f"{integration}::{name or line}: {f}" for f in unread]
        key = (integration or "integration",)
        if blind:
            # Not "no parallelism": what those entries run is unknown, and said so.
            yield ConfigWarning(
                collector=self.name,
                subject="[coverage] core_integration_tests",
                message=f"{len(blind)} integration "
                f"entr{'ies name' if len(blind) != 1 else 'y names'} a configuration "
                "function scout could not read statically (not defined in the repository, "
                "or built at run time): "
                + ", ".join(blind[:5])
                + (f" and {len(blind) - 5} more" if len(blind) > 5 else "")
                + "; the parallelism comparison leaves them out.",
            )
        missing = sorted(
            (_combo_name(c), where)
            for c, where in core.items()
            if not any(c <= mine for mine in ours)
        )
        if not missing:
            if blind:
                yield Unchecked(key, ("parallelism_gap",))  # not known to be gone
            return
        rows = "\n".join(f"- {code(combo)} (core: {code(where)})" for combo, where in missing)
        yield ctx.finding(
            self.name,
            "parallelism_gap",
            key,
            f"{len(missing)} parallelism combination{'s' if len(missing) != 1 else ''} "
            "core tests but the experiment has no test for",
            f"Core's integration tests run these; no entry of {code(integration)}, enabled "
            f"or switched off, does:\n\n{rows}",
            files=[FileRef(path=integration)] if integration else [],
            items=[combo for combo, _ in missing],
        )

    def _new_code(
        self, ctx: CollectorContext, experiment: str, tests_dir: str, tests_text: Words
    ) -> Iterator[Finding]:
        base, head = ctx.baseline_commit, ctx.head_commit
        if base is None or head is None:
            return
        commits = ctx.source.log(base, head, [experiment])
        touched = {
            path
            for commit in commits
            for path in commit.files
            if path.endswith(".py") and not path.startswith(tests_dir + "/")
        }
        # Code that landed with tests in the same commit came with its tests (a test file or
        # the integration list; a helper of the tests is not one).
        config = ctx.config
        integration = (
            config.experiment_path(config.coverage.experiment_integration_tests)
            if config.coverage.experiment_integration_tests
            else None
        )
        with_tests = {
            path
            for commit in commits
            if any(_is_test_file(p, tests_dir, integration) for p in commit.files)
            for path in commit.files
        }
        growth = ctx.config.thresholds.new_code_lines
        untested = []
        # What the window's other files defined at the baseline: code moved into a new file
        # from one of them is not new code.
        defined_before = {
            path: _top_level(ctx.source.parse_at(base, path)) for path in sorted(touched)
        }
        for path in sorted(touched):
            after = ctx.source.read_at(head, path)
            if after is None:
                continue
            before = ctx.source.read_at(base, path)
            # New, or grown by a real chunk: a few changed lines in a file every
            # integration run goes through are no new untested code.
            if before is None and ctx.source.log(None, base, [path]):
                continue  # deleted before the window and brought back: not new code
            grew = before is None or after.count("\n") - before.count("\n") >= growth
            stem = path.rsplit("/", 1)[-1].removesuffix(".py")
            module = path.removesuffix(".py").replace("/", ".")
            if not grew or stem == "__init__" or module in tests_text or stem in tests_text:
                continue
            if path in with_tests:
                continue
            added = _top_level(ctx.source.parse_at(head, path)) - defined_before[path]
            elsewhere = set().union(*(d for p, d in defined_before.items() if p != path))
            if added and added <= elsewhere:
                continue  # moved here from a file the window changed
            if any(name in tests_text for name in added if not name.startswith("_")):
                continue  # a test names what it defines (through a re-export, say)
            untested.append(path)
        if untested:
            yield ctx.finding(
                self.name,
                "new_code_untested",
                (experiment,),
                f"{len(untested)} file{'s' if len(untested) != 1 else ''} added or grown since "
                f"{ctx.since.date()} with no test touching {'them' if len(untested) > 1 else 'it'}",
                f"No test imports or mentions these (new, or {growth}+ lines longer):\n\n"
                + _bullets(untested),
                files=[FileRef(path=path) for path in untested],
                items=untested,
            )
