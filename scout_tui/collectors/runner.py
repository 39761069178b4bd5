"""Run collectors in background threads and stream their events as they happen.

Each collector runs independently: one that is skipped or fails is reported as such and
the others go on. The consumer (CLI, console worker, test) iterates the events.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from scout_tui.collectors.base import (
    Collector,
    CollectorContext,
    CollectorFinished,
    CollectorStarted,
    Event,
    FindingFound,
    Progress,
    Skipped,
    unmet_need,
)
from scout_tui.model import CollectorState, Finding

_DONE = object()
_CHILD_DONE = "scout:child-done"


def _run_one(cls: type[Collector], ctx: CollectorContext, out: queue.Queue) -> None:
    started = time.perf_counter()
    count = 0

    def finish(state: str, reason: str | None = None) -> None:
        out.put(
            CollectorFinished(
                CollectorState(
                    name=cls.name,
                    title=cls.title,
                    state=state,  # type: ignore[arg-type]
                    reason=reason,
                    findings=count,
                    seconds=round(time.perf_counter() - started, 3),
                )
            )
        )

    reason = unmet_need(cls, ctx)
    if reason:
        finish("skipped", reason)
        return
    out.put(CollectorStarted(cls.name))
    try:
        for produced in cls().collect(ctx):
            if ctx.cancelled.is_set():
                finish("failed", "cancelled")
                return
            if isinstance(produced, Finding):
                count += 1
                out.put(FindingFound(cls.name, produced))
            elif isinstance(produced, Progress):
                out.put(produced)
    except Skipped as exc:
        finish("skipped", str(exc))
        return
    except Exception as exc:  # one collector's bug must not stop the others
        message = _redact(f"{type(exc).__name__}: {exc}", ctx.token)
        finish("failed", message)
        return
    finish("done")


def _redact(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def stream(
    ctx: CollectorContext, collectors: Sequence[type[Collector]], processes: int = 1
) -> Iterator[Event]:
    """Yield events from all collectors as they arrive; ends when every one has finished.

    With `processes` > 1 (and fork available) the collectors are split into that many
    forked processes by the files they mostly read, so that parsing, which holds the GIL,
    uses both cores; otherwise they run as threads in this process. Only fork from a
    process with no other threads running (the CLI; not the console).
    """
    groups = partition(collectors, processes)
    if len(groups) > 1 and "fork" in multiprocessing.get_all_start_methods():
        yield from _stream_processes(ctx, groups)
    else:
        yield from _stream_threads(ctx, collectors)


def partition(collectors: Sequence[type[Collector]], bins: int) -> list[list[type[Collector]]]:
    """Collectors that read the same files stay together; groups are balanced by cost."""
    by_share: dict[str, list[type[Collector]]] = {}
    for cls in collectors:
        by_share.setdefault(getattr(cls, "shares", cls.name), []).append(cls)
    groups: list[list[type[Collector]]] = [[] for _ in range(max(1, bins))]
    loads = [0] * len(groups)
    weight = lambda members: sum(getattr(c, "cost", 1) for c in members)  # noqa: E731
    for members in sorted(by_share.values(), key=weight, reverse=True):
        lightest = loads.index(min(loads))
        groups[lightest].extend(members)
        loads[lightest] += weight(members)
    return [group for group in groups if group]


def _stream_threads(
    ctx: CollectorContext, collectors: Sequence[type[Collector]]
) -> Iterator[Event]:
    events: queue.Queue = queue.Queue()
    threads = [
        threading.Thread(
            target=lambda c=cls: (_run_one(c, ctx, events), events.put(_DONE)),
            name=f"collector-{cls.name}",
            daemon=True,
        )
        for cls in collectors
    ]
    for thread in threads:
        thread.start()
    remaining = len(threads)
    try:
        while remaining:
            event = events.get()
            if event is _DONE:
                remaining -= 1
                continue
            yield event
    finally:
        # The consumer stopped early (or raised): tell the collectors to stop too.
        if remaining:
            ctx.cancelled.set()


def _child(ctx: CollectorContext, group: list[type[Collector]], out: Any) -> None:
    """A forked process: its own source tree (and git processes), the group's collectors."""
    from scout_tui.source import SourceTree

    local = dataclasses.replace(ctx, source=SourceTree(ctx.repo_path),
                                cancelled=threading.Event())  # fmt: skip
    for event in _stream_threads(local, group):
        out.put(event)
    out.put(_CHILD_DONE)


def _stream_processes(
    ctx: CollectorContext, groups: list[list[type[Collector]]]
) -> Iterator[Event]:
    fork = multiprocessing.get_context("fork")
    events = fork.Queue()
    children = [fork.Process(target=_child, args=(ctx, group, events), daemon=True)
                for group in groups]  # fmt: skip
    unfinished = {cls.name: cls for group in groups for cls in group}
    for child in children:
        child.start()
    done = 0
    try:
        while done < len(children):
            try:
                event = events.get(timeout=0.5)
            except queue.Empty:
                if all(not child.is_alive() for child in children):
                    break  # a child died without saying goodbye
                continue
            if event == _CHILD_DONE:
                done += 1
                continue
            if isinstance(event, CollectorFinished):
                unfinished.pop(event.state.name, None)
            yield event
        for cls in list(unfinished.values()):  # its process died under it
            yield CollectorFinished(CollectorState(
                name=cls.name, title=cls.title, state="failed",
                reason="the collector's process died",
            ))  # fmt: skip
    finally:
        for child in children:
            if child.is_alive():
                child.terminate()
            child.join(timeout=5)
        events.close()
