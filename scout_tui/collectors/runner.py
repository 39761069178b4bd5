"""Run collectors in background threads and stream their events as they happen.

Each collector runs independently: one that is skipped or fails is reported as such and
the others go on. The consumer (CLI, console worker, test) iterates the events.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Sequence

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


def stream(ctx: CollectorContext, collectors: Sequence[type[Collector]]) -> Iterator[Event]:
    """Yield events from all collectors as they arrive; ends when every one has finished."""
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
