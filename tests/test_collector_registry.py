"""Every collector module is in the run: one that `collectors/__init__.py` forgets to import
would be silently absent from every report."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import scout_tui.collectors as package
from scout_tui.collectors.base import registered


def test_every_module_that_registers_a_collector_is_imported():
    registering = set()
    for module in pkgutil.iter_modules(package.__path__):
        tree = ast.parse(Path(package.__path__[0], f"{module.name}.py").read_text())
        classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
        if any(
            isinstance(d, ast.Name) and d.id == "register"
            for c in classes
            for d in c.decorator_list
        ):
            registering.add(f"{package.__name__}.{module.name}")
    assert len(registering) >= 8  # the eight collector modules, at least
    assert registering == {cls.__module__ for cls in registered().values()}
