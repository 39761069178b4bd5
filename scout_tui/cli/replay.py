"""`scout replay`: the daily reports over past days, and a line per day."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from dataclasses import asdict, replace
from pathlib import Path

from scout_tui.cli.common import open_session, warn
from scout_tui.errors import EXIT_INTERRUPTED, EXIT_OK, Cancelled
from scout_tui.history.baseline import check_date
from scout_tui.model import SECTIONS
from scout_tui.pipeline.replay import (
    DayRow,
    Folder,
    ReplayOptions,
    check_days,
    flickers,
    replay,
)
from scout_tui.session import utc_today

_HEADER = (
    "date",
    "head",
    *(traits.column for traits in SECTIONS.values()),
    "new",
    "carried",
    "resolved",
    "left_out",
    "bytes",
    "seconds",
)


def _cells(row: DayRow) -> list[str]:
    return [
        row.date,
        row.head[:10],
        *(str(row.sections.get(t.column, 0)) for t in SECTIONS.values()),
        str(row.new),
        str(row.carried),
        str(row.resolved),
        str(row.left_out),
        f"{row.bytes:,}",
        f"{row.seconds:.1f}",
    ]


def _line(cells: list[str] | tuple[str, ...]) -> str:
    widths = [10, 10, *(len(c) for c in _HEADER[2:])]
    pairs = enumerate(zip(cells, widths, strict=True))
    return "  ".join(c.rjust(width) if n > 1 else c.ljust(width) for n, (c, width) in pairs)


def cmd_replay(args: argparse.Namespace) -> int:
    last = args.last or utc_today()
    check_date(args.first, flag="--from")  # before anything is written
    check_date(last, flag="--to")
    out: Path = args.out or Path(f"scout-replay-{args.first}-{last}")
    Folder.check(out)
    args.cache_dir, args.as_of = out / ".cache", None  # its own cache; each day's date
    session = open_session(args)
    cache = session.cache  # its own: a past day's answers never mix with today's
    # One process: forked collectors would parse into copies of the shared blob store and
    # every day would parse again (measured: 7 days in 7.9 s so, 11.2 s in two processes).
    base = replace(session.run_options(), prior_dir=None, only=None, processes=1)
    options = ReplayOptions(
        base=base, first=args.first, last=last, out=out, prior=args.prior, state_dir=args.state_dir
    )
    check_days(options)
    if not args.json:
        print(_line(_HEADER), flush=True)

    def on_day(row: DayRow, reused: bool) -> None:
        if not args.json:
            print(_line(_cells(row)) + ("  (kept)" if reused else ""), flush=True)

    cancel = threading.Event()
    try:
        rows = replay(options, on_day, warn, cancel)
    except (Cancelled, KeyboardInterrupt):
        cancel.set()
        print(
            f"scout: the days done are kept: `scout replay` with the same --out {out} resumes",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    finally:
        cache.close()
    if args.json:
        print(json.dumps([asdict(row) for row in rows], indent=2))
    else:
        churn = flickers(out, rows)
        print(
            f"{len(rows)} days: {sum(r.action_items for r in rows)} new Action Items, "
            f"{sum(r.resolved for r in rows)} Resolved lines, {churn} "
            f"item{'s' if churn != 1 else ''} (news aside) that appeared and vanished "
            "within 3 days"
        )
        print(
            f"scout: {len(rows)} day(s) in {out}: `scout open {out}/{last}.json` reviews one",
            file=sys.stderr,
        )
    return EXIT_OK
