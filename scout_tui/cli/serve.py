"""`scout serve-github`: the local GitHub-compatible server, for tests and demos."""

from __future__ import annotations

import argparse
from datetime import timedelta

from pydantic import ValidationError

from scout_tui.config.profile import load_config
from scout_tui.errors import UsageError
from scout_tui.sandbox.demo.files import HAND_WRITTEN_REPORT
from scout_tui.sandbox.demo.github_world import SCOUT_USER, demo_world
from scout_tui.sandbox.github.graphql_api import BoardTiming
from scout_tui.sandbox.github.http import Fault, FaultError, LocalGitHub
from scout_tui.sandbox.github.world import Token, World
from scout_tui.session import utc_today


def cmd_serve_github(args: argparse.Namespace) -> int:
    try:
        faults = [Fault.parse(spec) for spec in args.fault]
    except FaultError as exc:
        raise UsageError(str(exc)) from None
    if args.state is not None and args.state.exists():
        try:
            world = World.load(args.state)
        except (OSError, ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise UsageError(f"--state {args.state}: not a server state file ({first})") from None
    else:
        today = utc_today()
        prior = today - timedelta(days=1)
        first = (today - timedelta(days=3)).isoformat()
        report = HAND_WRITTEN_REPORT.format(date=prior.isoformat(), first=first)
        world = demo_world(load_config(None), {prior: report})
    for token in args.token or []:
        if world.login_for(token) is None:
            world.tokens.append(Token(token=token, login=SCOUT_USER))
    if args.automation_delay < 0 or args.lag < 0:
        raise UsageError("--automation-delay and --lag are seconds, 0 or more")
    timing = BoardTiming(
        lag=args.lag,
        automation_status=args.automation_status,
        automation_delay=args.automation_delay,
    )
    try:
        server = LocalGitHub(
            world, port=args.port, state_file=args.state, faults=faults, timing=timing
        )
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from None
    server.saved()
    print(f"listening on {server.url}", flush=True)
    server.serve_forever()
    return 0
