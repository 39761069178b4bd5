"""Run collectors and stream their events as they happen.

Each collector runs independently: one that is skipped or fails is reported as such and
the others go on. The consumer (CLI, console worker, test) iterates the events.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import queue
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from scout_tui.collect.base import (
    Collector,
    CollectorContext,
    CollectorFinished,
    CollectorStarted,
    ConfigWarned,
    Event,
    FindingFound,
    Need,
    Note,
    Progress,
    Skipped,
    Unchecked,
    skipped_file_warning,
    unmet_need,
)
from scout_tui.errors import Cancelled, redact
from scout_tui.github.api import RateLimited, Unreachable
from scout_tui.model import CollectorState, ConfigWarning, Finding, fingerprint

NETWORK_NEEDS = frozenset({Need.NETWORK, Need.GITHUB})
HEAVY = 5  # cost (tenths of a second on torchtitan) from which a collector needs a core
_DONE = object()
_CHILD_DONE = "scout:child-done"
POLL = 0.1  # how often the parent looks at a cancel request while children run
CANCEL_GRACE = 10.0  # seconds children get to wind down after a cancel before being killed


def _events(cls: type[Collector], ctx: CollectorContext) -> Iterator[Event]:
    """One collector's events, its finish last, as they happen."""
    started = time.perf_counter()
    count = 0
    unchecked: list[str] = []
    notes: list[str] = []

    def finish(
        state: Literal["skipped", "failed", "cancelled", "done"],
        reason: str | None = None,
        by_request: bool = False,
    ) -> Iterator[Event]:
        for path, why in ctx.source.untold_skipped():
            yield ConfigWarned(skipped_file_warning(cls.name, path, why))
        yield CollectorFinished(
            CollectorState(
                name=cls.name,
                title=cls.title,
                state=state,
                reason=reason,
                findings=count,
                seconds=round(time.perf_counter() - started, 3),
                by_request=by_request,
                unchecked=unchecked,
                notes=notes,
            )
        )

    unmet = unmet_need(cls, ctx)
    if unmet:
        yield from finish("skipped", unmet.reason, unmet.by_request)
        return
    if ctx.cancelled.is_set():
        yield from finish("cancelled")
        return
    yield CollectorStarted(cls.name)
    try:
        for produced in cls().collect(ctx):
            if ctx.cancelled.is_set():
                yield from finish("cancelled")
                return
            if isinstance(produced, Finding):
                count += 1
                yield FindingFound(cls.name, produced)
            elif isinstance(produced, Progress):
                yield produced
            elif isinstance(produced, ConfigWarning):
                yield ConfigWarned(produced)
            elif isinstance(produced, Unchecked):
                kinds = produced.kinds or tuple(kind.name for kind in cls.kinds)
                unchecked.extend(fingerprint(kind, *produced.key) for kind in kinds)
            elif isinstance(produced, Note) and redact(produced.text) not in notes:
                notes.append(redact(produced.text))
    except Cancelled:
        yield from finish("cancelled")
        return
    except Skipped as exc:
        yield from finish("skipped", str(exc))
        return
    except Unreachable as exc:  # no network to GitHub: nothing to report, not a bug
        yield from finish("skipped", f"GitHub unreachable ({exc.why})")
        return
    except RateLimited as exc:  # GitHub's wait is longer than scout may wait: the others go on
        yield from finish("skipped", f"rate limited until {exc.until:%H:%M} UTC")
        return
    except Exception as exc:  # one collector's bug must not stop the others
        if ctx.cancelled.is_set():  # e.g. its git process was stopped under it
            yield from finish("cancelled")
            return
        message = f"{type(exc).__name__}: {exc}"
        yield from finish("failed", redact(message))
        return
    yield from finish("done")


def stream(
    ctx: CollectorContext, collectors: Sequence[type[Collector]], processes: int = 1
) -> Iterator[Event]:
    """Yield events from all collectors as they arrive; ends when every one has finished.

    With `processes` > 1 (and fork available) the collectors are split into that many
    forked processes by the files they mostly read, so that parsing, which holds the GIL,
    uses both cores; otherwise they run as threads in this process. Only fork from a
    process with no other threads running (the CLI; not the console).
    """
    # Network collectors wait on sockets, not the GIL: they stay in this process's threads
    # (a forked child would inherit connection pools and locks mid-use).
    network = [cls for cls in collectors if _networked(cls, ctx)]
    local = [cls for cls in collectors if cls not in network]
    # A heavy collector in this process's threads takes a core of its own.
    heavy = any(getattr(cls, "cost", 1) >= HEAVY for cls in network)
    groups = partition(local, max(1, processes - heavy))
    if processes > 1 and local and "fork" in multiprocessing.get_all_start_methods():
        yield from _stream_processes(ctx, groups, network)
    else:
        yield from _stream_threads(ctx, collectors, take_turns=True)
    ctx.source.blobs.facts.flush()


def _networked(cls: type[Collector], ctx: CollectorContext) -> bool:
    return bool(cls.needs & NETWORK_NEEDS) or (
        getattr(cls, "uses_github", False) and ctx.github is not None
    )


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
    ctx: CollectorContext, collectors: Sequence[type[Collector]], take_turns: bool = False
) -> Iterator[Event]:
    """A thread per collector; with `take_turns`, the local ones take turns instead:
    parsing holds the GIL, so threads of their own only add lock and GIL handoffs (a 30-day
    replay runs 10% faster without them). Then with no network collector they run in the
    caller's thread; else in one thread, and each network collector, waiting on sockets, in
    a thread of its own (one that will be skipped, offline, returns at once: local)."""
    local = [
        cls for cls in collectors if not _networked(cls, ctx) or unmet_need(cls, ctx) is not None
    ]
    if not take_turns:
        local = []
    elif len(local) == len(collectors):
        for cls in collectors:
            yield from _events(cls, ctx)
        return
    events: queue.Queue = queue.Queue()
    groups = [[cls] for cls in collectors if cls not in local] + ([local] if local else [])

    def run_group(group: list[type[Collector]]) -> None:
        for cls in group:
            for event in _events(cls, ctx):
                events.put(event)
            events.put(_DONE)

    threads = [
        threading.Thread(
            target=run_group, args=(group,), name=f"collector-{group[0].name}", daemon=True
        )
        for group in groups
    ]
    for thread in threads:
        thread.start()
    remaining = len(collectors)
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


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _ignore(signum: int, frame: object) -> None:
    pass


def _child(ctx: CollectorContext, group: list[type[Collector]], out: Any, cancel: Any) -> None:
    """A forked process: its own source tree (and git processes), the group's collectors.

    Ctrl-C is the parent's to handle (it kills its children); a SIGTERM sent to the whole
    process group, or the parent's cancel event, winds the collectors down as cancelled."""
    local_cancel = threading.Event()
    # A handler, not SIG_IGN: an ignored signal stays ignored across exec, and the git
    # processes this child starts must die on the terminal's Ctrl-C with the rest.
    signal.signal(signal.SIGINT, _ignore)
    signal.signal(signal.SIGTERM, lambda *_: local_cancel.set())
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)

    def watch() -> None:  # polls: a lock shared with a process that may be killed can hang
        while not cancel.value and not local_cancel.is_set():
            time.sleep(POLL)
        local_cancel.set()

    threading.Thread(target=watch, daemon=True).start()
    from scout_tui.source.tree import SourceTree

    # The same snapshot as the parent's (a dated run's commit), with a copy of its store.
    source = SourceTree(
        ctx.repo_path, cancel=local_cancel, at=ctx.source.at, blobs=ctx.source.blobs
    )
    local = dataclasses.replace(ctx, source=source, cancelled=local_cancel)
    for event in _stream_threads(local, group):
        out.put(event)
    source.blobs.facts.flush()
    out.put(_CHILD_DONE)


def _stream_processes(
    ctx: CollectorContext,
    groups: list[list[type[Collector]]],
    threaded: Sequence[type[Collector]] = (),
) -> Iterator[Event]:
    fork = multiprocessing.get_context("fork")
    events = fork.Queue()
    cancel = fork.RawValue("b", 0)  # no lock: set by the parent, polled by the children
    children = [
        fork.Process(target=_child, args=(ctx, group, events, cancel), daemon=True)
        for group in groups
    ]
    unfinished = {cls.name: cls for group in [*groups, threaded] for cls in group}
    # No signal may reach a child before it has set its own handlers (a KeyboardInterrupt
    # there would print a traceback): block them across the fork.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        for child in children:
            child.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def in_threads() -> None:  # after the forks: no thread of ours may be forked mid-step
        for event in _stream_threads(ctx, threaded):
            events.put(event)
        events.put(_CHILD_DONE)

    helper = threading.Thread(target=in_threads, name="network-collectors", daemon=True)
    if threaded:
        helper.start()
    expected = len(children) + (1 if threaded else 0)
    done = 0
    finished = False
    cancelled_at: float | None = None
    try:
        while done < expected:
            if ctx.cancelled.is_set() and cancelled_at is None:
                cancel.value = 1
                cancelled_at = time.monotonic()
            if cancelled_at is not None and time.monotonic() - cancelled_at > CANCEL_GRACE:
                break
            try:
                event = events.get(timeout=POLL)
            except queue.Empty:
                if not helper.is_alive() and all(not child.is_alive() for child in children):
                    break  # a child died without saying goodbye
                continue
            if event == _CHILD_DONE:
                done += 1
                continue
            if isinstance(event, CollectorFinished):
                unfinished.pop(event.state.name, None)
            yield event
        for cls in list(unfinished.values()):  # its process died, or was stopped
            cancelled = ctx.cancelled.is_set()
            yield CollectorFinished(
                CollectorState(
                    name=cls.name,
                    title=cls.title,
                    state="cancelled" if cancelled else "failed",
                    reason=None if cancelled else "the collector's process died",
                )
            )
        finished = True
    finally:
        cancel.value = 1
        for child in children:
            if child.is_alive():
                if finished:
                    child.join(timeout=5)
                if child.is_alive():  # interrupted, or stuck: no grace
                    child.kill()
            child.join(timeout=5)
        events.close()
        events.cancel_join_thread()
