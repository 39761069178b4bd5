"""`scout triage`: the console's decisions, headless, for scripts and cron.

Every action resolves all its fingerprints first (nothing is recorded when one is unknown
or ambiguous), then records one undoable action in the state store."""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from scout_tui.cli.common import open_session, progress
from scout_tui.cli.output import write_output
from scout_tui.errors import EXIT_FAILURE, EXIT_OK, UsageError, clean
from scout_tui.model import Priority, RunResult, Section
from scout_tui.session import Session
from scout_tui.store.state import StateStore
from scout_tui.triage import decisions as triage
from scout_tui.triage.query import FILTER_TOKENS, Filter
from scout_tui.triage.review import resolve
from scout_tui.triage.stats import render_table, stats_since
from scout_tui.triage.store import Change, DecisionStore

SECTION_ORDER = list(Section)
PRIORITY_ORDER = {"P0": 0, "P1": 1, "P2": 2, None: 3}


def cmd_triage(args: argparse.Namespace) -> int:
    session = open_session(args)
    if args.action in ("undo", "redo"):
        return _undo_redo(session, args.action)
    # Never replaced by a listing. Which run is the day's is said by `list`; a decision on
    # it need not say it again every time.
    run = session.day_run(on_event=progress, stale_ok=True, say_kept_apart=args.action == "list")
    if args.action == "list":
        text = " ".join(args.filter)
        for word in text.lower().split():  # `p3`: a priority misread, not a word to find
            if re.fullmatch(r"p\d+", word) and word not in FILTER_TOKENS:
                raise UsageError(
                    f"no priority {word} (P0, P1, P2); to search the word, quote it twice: "
                    f"\"'{word}'\""
                )
        return _list(session, run, args.json, Filter.parse(text), args.section)
    if args.action == "edit":
        return _edit(session, run, args)
    findings = [resolve(run, reference) for reference in args.fingerprints]
    try:
        if args.action == "merge":
            into = resolve(run, args.into)
            notes = session.merge_notes(findings, into)
            done = _said(session.review.merge(findings, into), run, "merged")
            for note in notes:
                print(f"scout: warning: {note}", file=sys.stderr)
            return done
        if args.action in ("demote", "promote"):
            up = args.action == "promote"
            changes, stuck = session.review.move(findings, up)
            sections = {f.fingerprint: f.section for f in findings}
            for fp in stuck:
                why = (
                    "an All Clear line does not move"
                    if sections.get(fp) is Section.ALL_CLEAR
                    else f"already at the {'top' if up else 'bottom'}"
                )
                print(f"{fp}: {why}, unchanged", file=sys.stderr)
            return _said(changes, run, args.action + "d")
        if args.action == "accept":
            return _said(session.review.accept(findings), run, "accepted")
        if args.action == "drop":
            if not args.reason.strip():
                raise UsageError("--reason cannot be empty: a drop is remembered, say why")
            return _said(session.review.drop(findings, args.reason), run, "dropped")
    except triage.TriageError as exc:
        raise UsageError(str(exc)) from None
    raise UsageError(f"unknown triage action {args.action}")


def _edit(session: Session, run: RunResult, args: argparse.Namespace) -> int:
    finding = resolve(run, args.fingerprint)
    body = None
    if args.body_file is not None:
        body = _read_body(args.body_file)
    if args.title is None and args.priority is None and args.section is None and body is None:
        raise UsageError("nothing to edit: give --title, --priority, --section or --body-file")
    priority = None if args.priority in (None, "none") else Priority(args.priority)

    try:
        changes = session.review.edit(
            finding,
            title=args.title,
            body=body,
            section=Section(args.section) if args.section else None,
            priority=priority,
            set_priority=args.priority is not None,
        )
    except triage.TriageError as exc:
        raise UsageError(str(exc)) from None
    return _said(changes, run, "edited")


def _read_body(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"--body-file {path}: cannot read: {detail}") from None


def _undo_redo(session: Session, op: str) -> int:
    action = session.review.undo() if op == "undo" else session.review.redo()
    if action is None:  # a script that undoes until it fails stops here
        print(f"scout: nothing to {op}", file=sys.stderr)
        return EXIT_FAILURE
    done = "undid" if op == "undo" else "redid"
    count = len(action.changes)
    whose = ""
    if action.origin and action.origin != session.options.origin:
        whose = f" — made by {action.origin} at {action.at.astimezone():%H:%M}"
    write_output(
        f"{done}: {action.label} ({count} finding{'s' if count != 1 else ''}){whose}", None
    )
    return EXIT_OK


def _said(changes: list[Change], run: RunResult, verb: str) -> int:
    titles = {f.fingerprint: f.title for f in run.findings}
    if not changes:
        write_output("nothing changed", None)
        return EXIT_OK
    lines = []
    for change in changes:
        after = change.after
        what = verb
        if verb == "merged" and after is not None and after.merged_into:
            what = f"merged into {after.merged_into}"
        title = (
            after.title if after is not None and after.title else titles.get(change.fingerprint, "")
        )
        lines.append(f"{what}: {change.fingerprint}  {title}")
    write_output("\n".join(lines), None)
    return EXIT_OK


def _list(
    session: Session, run: RunResult, as_json: bool, keep: Filter, section: str | None
) -> int:
    shown = [
        d
        for d in session.review.decided(run)
        if keep.matches(d, triage.reviewed(d.entry))
        and (section is None or d.current.section.value == section)
    ]
    rows = sorted(
        shown,
        key=lambda d: (
            SECTION_ORDER.index(d.current.section),
            PRIORITY_ORDER[d.current.priority.value if d.current.priority else None],
            d.current.title,
        ),
    )
    if as_json:
        data = [
            {
                "fingerprint": d.original.fingerprint,
                "section": d.current.section.value,
                "priority": d.current.priority.value if d.current.priority else None,
                "decision": d.label or None,
                "reason": d.entry.reason if d.entry else None,
                "merged_into": d.entry.merged_into if d.entry else None,
                "status": d.original.status.value,
                "title": d.current.title,
            }
            for d in rows
        ]
        write_output(json.dumps(data, indent=2), None)
        return EXIT_OK
    if not rows:
        asked = bool(keep) or section is not None
        said = "of the run of {0} matches" if asked else "in the run of {0}"
        write_output("no finding " + said.format(run.date), None)
        return EXIT_OK
    width = max(len(d.original.fingerprint) for d in rows)
    # As the console counts: All Clear lines need no review.
    to_review = [d for d in rows if d.current.section is not Section.ALL_CLEAR]
    reviewed = sum(1 for d in to_review if triage.reviewed(d.entry))
    out = [
        f"{run.date}: {len(rows)} finding{'s' * (len(rows) != 1)}, "
        f"{reviewed} of {len(to_review)} reviewed"
    ]
    for d in rows:
        priority = d.current.priority.value if d.current.priority else "-"
        label = d.label or "-"
        if d.label == "merged" and d.entry and d.entry.merged_into:
            label = f"merged→{d.entry.merged_into.rsplit('-', 1)[-1][:6]}"
        why = d.entry.reason if d.label == "dropped" and d.entry and d.entry.reason else ""
        out.append(
            f"{d.original.fingerprint:<{width}}  {d.current.section.value:<15} "
            f"{priority:<2}  {label:<14} {d.current.title}"
            + (f"  (why: {' '.join(clean(why).split())})" if why else "")
        )
    write_output("\n".join(out), None)
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    """`scout stats`: the reviewers' decisions per kind, from the state store only (no
    checkout, no run)."""
    state = StateStore(args.state_dir)
    now = datetime.now(UTC)
    found = stats_since(DecisionStore(state), now, args.days)
    since = now - timedelta(days=args.days)
    if args.json:
        data = {
            "days": args.days,
            "since": since.isoformat(),
            "state_store": str(state.path),
            "kinds": [s.to_json() for s in found],
        }
        write_output(json.dumps(data, indent=2), args.output)
    else:
        write_output(render_table(found, args.days, since, str(state.path)), args.output)
    return EXIT_OK
