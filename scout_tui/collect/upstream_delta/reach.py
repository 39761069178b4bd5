"""Upstream code the experiment reaches without naming it: a factory it looks up by key in
an upstream registry (`configs["debugmodel"](…)`), judged as if it called it by name."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from scout_tui.analysis.python.dependencies import Definition
from scout_tui.analysis.python.lookups import entry, lookup_uses, lookups
from scout_tui.analysis.python.relevance import Uses
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import CollectorContext
from scout_tui.collect.upstream_delta.surfaces import NAME
from scout_tui.config.models import Surface
from scout_tui.model import FileRef, Finding


@dataclass(frozen=True)
class Reached:
    surface: Surface  # the function or class the key resolves to, by its signature
    old: Definition
    new: Definition
    uses: Uses  # the calls of the lookup
    via: str


def looked_up(
    ctx: CollectorContext,
    modules: dict[str, ast.Module],
    base: str,
    head: str,
    changed_files: set[str],
) -> Iterator[Reached | Finding]:
    """What each registry lookup of the experiment resolves to, at the baseline and at
    HEAD, when a file of either changed: a key gone is a finding (`surface_missing`); a
    definition behind the key, to compare and judge."""
    experiment = ctx.config.project.experiment
    for lookup in lookups(experiment, modules):
        now = entry(lookup, ctx.source.parse)
        if now is None:
            continue  # not a registry scout can read
        files = {now.registry_path} | ({now.found[0]} if now.found else set())
        if not files & changed_files:
            continue
        then = entry(lookup, lambda path: ctx.source.parse_at(base, path))
        if then is None or then.found is None:
            continue  # not a registry then, or the key is new: nothing to compare
        places = ", ".join(code(p.removeprefix(experiment + "/")) for p in lookup.places[:3])
        if now.found is None:
            yield ctx.finding(
                NAME,
                "surface_missing",
                (f"{now.registry_path}::{lookup.name}[{lookup.key!r}]",),
                f"{code(lookup.written)} disappeared from {code(now.registry_path)}",
                f"The experiment looks up {code(lookup.written)} at {places}; the key "
                f"existed at the baseline (it held {code(then.found[1].name)}) and is gone "
                "at HEAD: the lookup raises KeyError.",
                suggested_fix=f"Use a key {code(lookup.name)} still has, or build the "
                "configuration another way.",
                files=[FileRef(path=now.registry_path)],
            )
            continue
        path, new = now.found
        old = then.found[1]
        surface = Surface(
            name=f"{code(lookup.written)} → `{new.name}` signature",
            target=f"{path}::{new.name}",
            check="signature",
        )
        via = f"looked up as {code(lookup.written)} at {places}"
        yield Reached(surface, old, new, lookup_uses(modules, lookup), via)
