"""The demo's world, running: the sample repository, the local GitHub that holds its prior
reports, board, CI runs and open work, and a local nightly index — what `scout demo` opens
the console on, or runs headless."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import git

from scout_tui.config.profile import load_config
from scout_tui.sandbox.demo.file_server import FileServer, Served
from scout_tui.sandbox.demo.github_world import DEMO_TOKEN, demo_world, nightly_wheels
from scout_tui.sandbox.demo.sample import Sample, build_sample
from scout_tui.sandbox.github.http import LocalGitHub
from scout_tui.session import SessionOptions


@dataclass(frozen=True)
class RunningDemo:
    sample: Sample
    github: LocalGitHub

    def session_options(self, processes: int = 1, today: date | None = None) -> SessionOptions:
        sample = self.sample
        return SessionOptions(
            repo=sample.repo,
            config=sample.config,
            cache_dir=sample.cache,
            state_dir=sample.state,
            as_of=today,
            processes=processes,
            api_url=self.github.url,
            api_url_said="the demo's local GitHub",
            token=DEMO_TOKEN,
            publish_today=today,
            today=today,
        )


# The demo's GitHub is the local one it starts and stops; reviewing again afterwards uses
# this scout.toml: a closed loopback port answers it (the discard port: refused at once),
# never api.github.com with a token found for it.
GONE = "http://127.0.0.1:9"
_GONE = (
    "# the demo's own GitHub: gone with the demo, so nothing answers here\n"
    f'api_url = "{GONE}"\nweb_url = "{GONE}"\n'
)


@contextmanager
def running_demo(base: Path, today: date) -> Iterator[RunningDemo]:
    sample = build_sample(base, today)
    priors = {
        date.fromisoformat(p.stem): p.read_text(encoding="utf-8")
        for p in sorted(sample.priors.glob("*.md"))
    }
    authors = {sha: "sample-dev" for sha in git.Repo(sample.repo).git.rev_list("HEAD").split()}
    world = demo_world(load_config(sample.config), priors, today=today, commit_authors=authors)
    nightlies = Served(files=nightly_wheels(base / "nightlies"))
    with LocalGitHub(world) as github, FileServer(nightlies) as index:
        # The regression range reads the nightlies' wheels from a local index too.
        text = sample.config.read_text(encoding="utf-8")
        if "nightly_index" not in text:
            text = text.replace("[torch]\n", f'[torch]\nnightly_index = "{index}"\n')
        if "api_url" not in text:
            text = text.replace("[project]\n", f"[project]\n{_GONE}", 1)
        sample.config.write_text(text, encoding="utf-8")
        yield RunningDemo(sample, github)
