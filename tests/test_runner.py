"""Collectors stream: findings arrive while a collector is still running, and one
collector's failure or skip does not stop the others."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime

from scout_tui.collect.base import (
    CollectorContext,
    CollectorFinished,
    CollectorStarted,
    FindingFound,
    Kind,
    Need,
    Progress,
    Skipped,
)
from scout_tui.collect.runner import stream
from scout_tui.errors import register_secret
from scout_tui.model import Section
from scout_tui.source.tree import SourceTree


def context(config, repo) -> CollectorContext:
    return CollectorContext(
        config=config,
        repo_path=repo,
        as_of=date(2026, 12, 2),
        since=datetime(2026, 12, 1, tzinfo=UTC),
        until=datetime(2026, 12, 2, tzinfo=UTC),
        source=SourceTree(repo),
    )


SECRET = "ghp_secret_value_123"
register_secret(SECRET)  # the token in use, as github.auth registers it


release = threading.Event()


class Slow:
    name, title, section = "slow", "Slow", Section.FYI
    needs = frozenset({Need.REPO})
    kinds = (Kind("todo_unclassified"),)

    def collect(self, ctx):
        yield ctx.finding(self.name, "todo_unclassified", ("one",), "first finding")
        yield Progress(self.name, 1, 2, "half way")
        # Do not finish until the consumer has seen the first finding.
        assert release.wait(10), "the consumer never saw the first finding"
        yield ctx.finding(self.name, "todo_unclassified", ("two",), "second finding")


class Broken:
    name, title, section = "broken", "Broken", Section.FYI
    needs = frozenset({Need.REPO})
    kinds = ()

    def collect(self, ctx):
        yield ctx.finding(self.name, "todo_unclassified", ("b",), "before the crash")
        raise RuntimeError(f"boom with {SECRET}")


class SkipsItself:
    name, title, section = "skips", "Skips", Section.FYI
    needs = frozenset({Need.REPO})
    kinds = ()

    def collect(self, ctx):
        raise Skipped("API refused")
        yield


class NeedsTorch:
    name, title, section = "torchy", "Torchy", Section.FYI
    needs = frozenset({Need.TORCH})
    kinds = ()

    def collect(self, ctx):
        raise AssertionError("must not run without torch")
        yield


def test_findings_arrive_before_the_collector_finishes(shipped_config, sample_world):
    release.clear()
    seen = []
    for event in stream(context(shipped_config, sample_world.repo), [Slow]):
        seen.append(event)
        if isinstance(event, FindingFound) and event.finding.title == "first finding":
            assert not any(isinstance(e, CollectorFinished) for e in seen)
            release.set()
    kinds = [type(e).__name__ for e in seen]
    assert kinds == [
        "CollectorStarted",
        "FindingFound",
        "Progress",
        "FindingFound",
        "CollectorFinished",
    ]
    assert seen[-1].state.state == "done" and seen[-1].state.findings == 2


def test_failures_and_skips_are_isolated(shipped_config, sample_world):
    release.set()
    events = list(
        stream(context(shipped_config, sample_world.repo), [Broken, SkipsItself, NeedsTorch, Slow])
    )
    states = {e.state.name: e.state for e in events if isinstance(e, CollectorFinished)}
    assert states["broken"].state == "failed"
    assert states["broken"].reason == "RuntimeError: boom with ***"  # token redacted
    assert states["skips"].state == "skipped" and states["skips"].reason == "API refused"
    assert states["torchy"].state == "skipped" and states["torchy"].reason == "torch not installed"
    assert states["slow"].state == "done" and states["slow"].findings == 2
    started = {e.collector for e in events if isinstance(e, CollectorStarted)}
    assert "torchy" not in started
    titles = {e.finding.title for e in events if isinstance(e, FindingFound)}
    assert "before the crash" in titles  # what was found before the crash is kept


class Quick:
    name, title, section = "quick", "Quick", Section.FYI
    needs = frozenset({Need.REPO})
    kinds = (Kind("todo_unclassified"),)
    shares, cost = "a", 1

    def collect(self, ctx):
        yield ctx.finding(self.name, "todo_unclassified", ("q",), "found in a process")
        # The child's own source tree works (a git process of its own).
        assert ctx.source.read_at(ctx.source.commit_before(ctx.until), "README.md")


class Dies:
    name, title, section = "dies", "Dies", Section.FYI
    needs = frozenset({Need.REPO})
    kinds = ()
    shares, cost = "b", 1

    def collect(self, ctx):
        import os

        yield Progress(self.name, 0, 1, "about to vanish")
        os._exit(3)  # the whole process goes, as on a segfault or the OOM killer


def test_partition_keeps_sharers_together():
    from scout_tui.collect.runner import partition

    class A:
        name, shares, cost = "a", "core", 3

    class B:
        name, shares, cost = "b", "core", 1

    class C:
        name, shares, cost = "c", "exp", 3

    class D:
        name, shares, cost = "d", "exp", 3

    class E:
        name, shares, cost = "e", "tests", 2

    groups = partition([A, B, C, D, E], 2)
    assert sorted(sorted(c.name for c in g) for g in groups) == [["a", "b", "e"], ["c", "d"]]
    assert partition([A, B], 1) == [[A, B]]


def test_processes_stream_and_a_dead_process_is_a_failed_collector(shipped_config, sample_world):
    events = list(stream(context(shipped_config, sample_world.repo), [Quick, Dies], processes=2))
    states = {e.state.name: e.state for e in events if isinstance(e, CollectorFinished)}
    assert states["quick"].state == "done" and states["quick"].findings == 1
    assert states["dies"].state == "failed"
    assert states["dies"].reason == "the collector's process died"
    found = [e.finding.title for e in events if isinstance(e, FindingFound)]
    assert found == ["found in a process"]
