"""Every collector is in the run: a collector class that `collect/registry.py` does not list
would be silently absent from every report."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from collections.abc import Iterable

import scout_tui.collect as package
from scout_tui.collect.base import registered
from scout_tui.model import Section


def _collector_classes(modules: Iterable[types.ModuleType]) -> set[type]:
    """Classes defined in `modules` that have what a collector has: a name, a section and a
    `collect` method."""
    return {
        cls
        for module in modules
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__
        and all(hasattr(cls, attribute) for attribute in ("name", "section", "collect"))
    }


def _collect_modules() -> list[types.ModuleType]:
    """Every module under collect/, in subpackages too."""
    return [
        importlib.import_module(module.name)
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    ]


def test_every_collector_class_is_registered():
    classes = _collector_classes(_collect_modules())
    assert len(classes) >= 8  # the eight collector modules, at least
    assert classes == set(registered().values())


def test_a_collector_that_is_not_listed_is_seen():
    stray = types.ModuleType(f"{package.__name__}.stray")

    class StrayCollector:
        name = "stray"
        section = Section.FYI

        def collect(self, ctx: object) -> Iterable[object]:
            return ()

    StrayCollector.__module__ = stray.__name__
    stray.StrayCollector = StrayCollector  # type: ignore[attr-defined]
    classes = _collector_classes([*_collect_modules(), stray])
    assert classes - set(registered().values()) == {StrayCollector}
