"""The collectors scout runs, in report order. A collector exists for scout when it is listed
here; a collector class in `collect/` that is not listed fails a test
(tests/test_collector_registry.py) instead of leaving every report silently without it."""

from __future__ import annotations

from scout_tui.collect.base import Collector
from scout_tui.collect.ci_failures import CiFailureCollector
from scout_tui.collect.ci_tests import CiTestsCollector
from scout_tui.collect.coverage import CoverageCollector
from scout_tui.collect.docs import DocsCollector
from scout_tui.collect.freshness import FreshnessCollector
from scout_tui.collect.open_work import OpenWorkCollector
from scout_tui.collect.todos import TodoCollector
from scout_tui.collect.unused import UnusedCollector
from scout_tui.collect.upstream_delta.collector import UpstreamDeltaCollector

COLLECTORS: tuple[type[Collector], ...] = (
    CiFailureCollector,
    CiTestsCollector,
    CoverageCollector,
    DocsCollector,
    FreshnessCollector,
    OpenWorkCollector,
    TodoCollector,
    UnusedCollector,
    UpstreamDeltaCollector,
)
