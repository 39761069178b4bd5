"""Requests spent on GitHub by the network collectors: a cold run, then a warm rerun with
nothing changed upstream, against the local GitHub-compatible server with the demo's data.
Printed per endpoint: answers that cost rate limit, and 304s (free, as on GitHub). Then the
requests one report comment spends under a secondary rate limit (GitHub warns that going on
while limited can get an integration banned): once with `Retry-After: 1`, and under a limit
that never lifts (the waits are recorded, not taken).

    python benchmarks/github_requests.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from scout_tui.config.profile import load_config
from scout_tui.github.api import GitHubError
from scout_tui.github.client import GitHubClient
from scout_tui.sandbox.demo.github_world import DEMO_TOKEN, demo_world
from scout_tui.sandbox.demo.sample import build_sample
from scout_tui.sandbox.github.http import Fault, LocalGitHub

NETWORK = ("ci_failures", "open_work", "todos")


def endpoint(description: str) -> str:
    """`GET /repos/o/r/issues/161234` → `GET /repos/{repo}/issues/{n}`."""
    text = re.sub(r"/repos/[^/]+/[^/]+", "/repos/{repo}", description)
    text = re.sub(r"/[0-9a-f]{40}", "/{sha}", text)
    return re.sub(r"/\d+", "/{n}", re.sub(r"/workflows/[^/]+", "/workflows/{file}", text))


def collect(sample, server: LocalGitHub, cache: Path, state: Path) -> None:
    args = [
        sys.executable,
        "-m",
        "scout_tui",
        "collect",
        "--repo",
        str(sample.repo),
        "--config",
        str(sample.config),
        "--cache-dir",
        str(cache),
        "--state-dir",
        str(state),
        "--api-url",
        server.url,
        *[f"--only={name}" for name in NETWORK],
    ]
    env = {**os.environ, "GH_ENTERPRISE_TOKEN": DEMO_TOKEN}
    subprocess.run(args, check=True, capture_output=True, env=env)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        today = datetime.now(UTC).date()
        sample = build_sample(base / "world", today)
        priors = {
            datetime.strptime(p.stem, "%Y-%m-%d").date(): p.read_text()
            for p in sample.priors.glob("*.md")
        }
        with LocalGitHub(demo_world(load_config(sample.config), priors, today=today)) as server:
            runs = {}
            for name in ("cold", "warm"):
                server.log.clear()
                collect(sample, server, base / "cache", base / f"state-{name}")
                runs[name] = list(server.log)
    rows = sorted({endpoint(e.description) for entries in runs.values() for e in entries})
    print(f"{'endpoint':<58} {'cold paid':>9} {'warm paid':>9} {'warm 304':>8}")
    for row in rows:
        counts = {name: Counter() for name in runs}
        for name, entries in runs.items():
            for entry in entries:
                if endpoint(entry.description) == row:
                    counts[name]["paid" if entry.cost else "free"] += 1
        print(
            f"{row:<58} {counts['cold']['paid']:>9} {counts['warm']['paid']:>9} "
            f"{counts['warm']['free']:>8}"
        )
    paid = {name: sum(1 for e in entries if e.cost) for name, entries in runs.items()}
    print(
        f"\nrate-limited requests: cold {paid['cold']}, warm {paid['warm']} "
        f"(target: warm at most 5); {len(runs['warm'])} requests in the warm run in all"
    )


def under_a_secondary_limit(fault: str) -> tuple[int, list[float], str]:
    """The POSTs one comment costs with `fault` on them, the waits asked for, the outcome."""
    config = load_config(None)
    waits: list[float] = []
    with LocalGitHub(demo_world(config, {}), faults=[Fault.parse(fault)]) as server:
        client = GitHubClient(server.url, DEMO_TOKEN, config.github, sleep=waits.append)
        try:
            client.create_comment(config.project.repo, config.project.tracking_issue, "report")
            outcome = "posted"
        except GitHubError as exc:
            outcome = f"error: {exc}"
        return len(server.requests_matching("POST /repos")), waits, outcome


def secondary_limits() -> None:
    print("\none report comment under a secondary rate limit (403, Retry-After):")
    for fault, what in (
        ("POST /repos:ratelimit*1", "Retry-After: 1, once"),
        ("POST /repos:ratelimit", "a limit that never lifts"),
    ):
        posts, waits, outcome = under_a_secondary_limit(fault)
        said = ", ".join(f"{w:g}" for w in waits) or "none"
        print(f"  {what}: {posts} POST request(s), waits {said} s — {outcome}")


if __name__ == "__main__":
    main()
    secondary_limits()
