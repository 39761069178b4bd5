"""A local GitHub for a sample world, as `scout demo` makes it, for the tests."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from scout_tui.config.profile import load_config
from scout_tui.report.render import report_marker
from scout_tui.sandbox.demo.github_world import DEMO_TOKEN, SCOUT_USER, demo_world
from scout_tui.sandbox.demo.sample import Sample
from scout_tui.sandbox.github.world import World

TOKEN = DEMO_TOKEN
TRACKING_ISSUE = 2856  # the sample scout.toml's tracking issue


def world_for(sample: Sample) -> World:
    priors = {
        date.fromisoformat(p.stem): p.read_text(encoding="utf-8")
        for p in sorted(sample.priors.glob("*.md"))
    }
    return demo_world(load_config(sample.config), priors)


def fast_config(sample: Sample, folder: Path) -> Path:
    """The sample's scout.toml with quick retries, for fault tests."""
    text = sample.config.read_text().replace(
        "consistency_wait = 0.5\n",
        "consistency_wait = 0.3\nbackoff = 0.05\ntimeout = 1\nsecondary_rate_wait = 0.2\n",
    )
    assert "consistency_wait = 0.3" in text
    path = folder / "scout.toml"
    path.write_text(text)
    return path


def scout_comments(world: World, day: date) -> list:
    [issue] = [i for i in world.repositories[0].issues if i.number == TRACKING_ISSUE]
    return [c for c in issue.comments if c.user == SCOUT_USER and report_marker(day) in c.body]
