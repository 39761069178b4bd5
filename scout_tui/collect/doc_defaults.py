"""`doc_default_wrong` for the docs collector: a docstring, comment or doc line that says a
pass runs by default where the code runs it only when an option that defaults to off is
set. One finding with every such sentence."""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatch

from scout_tui.analysis.python.default_claims import (
    Claim,
    Gate,
    default_claims,
    gated_off,
    markdown_prose,
    python_prose,
)
from scout_tui.analysis.python.definitions import option_defaults, pass_definitions
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import CollectorContext
from scout_tui.model import FileRef, Finding


def default_claim_findings(
    ctx: CollectorContext, collector: str, docs: list[str]
) -> Iterator[Finding]:
    config = ctx.config
    experiment = config.project.experiment.rstrip("/") + "/"
    tests_dir = config.experiment_path(config.ci.tests_dir) + "/"
    paths = [p for p in ctx.source.glob(experiment, "*.py") if not p.startswith(tests_dir)]
    modules = {p: tree for p in paths if (tree := ctx.source.parse(p)) is not None}
    # What each name a sentence may use means: the pass function, by name or registry key.
    passes: dict[str, str] = {}
    for path, tree in modules.items():
        if any(fnmatch(path.rsplit("/", 1)[-1], p) for p in config.coverage.pass_files):
            for definition in pass_definitions(path, tree):
                passes[definition.name] = definition.name
                passes.update({key: definition.name for key in definition.keys})
    if not passes:
        return
    claims: list[tuple[str, Claim]] = []
    for path, tree in modules.items():
        text = ctx.source.read(path) or ""
        claims += [(path, c) for c in default_claims(python_prose(text, tree), set(passes))]
    for doc in docs:
        text = ctx.source.read(doc) or ""
        claims += [(doc, c) for c in default_claims(markdown_prose(text), set(passes))]
    if not claims:
        return
    defaults = option_defaults(modules)
    wrong: list[tuple[str, Claim, Gate]] = []
    for path, claim in claims:
        gate = gated_off(modules, passes[claim.name], defaults)
        if gate is not None:
            wrong.append((path, claim, gate))
    if not wrong:
        return
    short = lambda path: path.removeprefix(experiment)  # noqa: E731
    rows = [
        f"- {code(f'{short(path)}:{claim.line}')} says {code(claim.name)} runs by default "
        f"({claim.sentence[:160]!r}); it runs only when {code(gate.option)} is set, which "
        f"defaults to {code(gate.default)} ({code(f'{short(gate.path)}:{gate.line}')})"
        for path, claim, gate in wrong
    ]
    yield ctx.finding(
        collector,
        "doc_default_wrong",
        (config.project.experiment,),
        f"{len(wrong)} sentence{'s' if len(wrong) != 1 else ''} say a pass runs by default "
        "that an option off by default gates"
        if len(wrong) != 1
        else "A sentence says a pass runs by default that an option off by default gates",
        "\n".join(rows),
        suggested_fix="Say which option turns it on, or turn the option on by default.",
        files=[FileRef(path=path, line=claim.line) for path, claim, _ in wrong][:20],
        items=[f"{short(path)}: {claim.name}" for path, claim, _ in wrong],
    )
