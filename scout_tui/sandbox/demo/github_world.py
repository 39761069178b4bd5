"""The demo's GitHub: the tracking issue with the prior reports as comments (one by the old
LLM agent, one by scout); the board with its Status columns and a few items people filed by
hand; scheduled runs of the configured workflows — the first with a recurring, an
intermittent and a new failure, their job logs in the real runner's format, the second
green; pull requests and issues of each open-work kind; the upstream pull requests TODOs
wait on, one merged. Served by the local server in `scout demo` and `scout serve-github`."""

from __future__ import annotations

import zipfile
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Literal

from scout_tui.config.models import Config
from scout_tui.sandbox.demo.ci_logs import TESTS, SampleTest, actions_format, runner_log
from scout_tui.sandbox.github.world import (
    Account,
    Comment,
    Issue,
    Item,
    Job,
    Repository,
    Review,
    Run,
    Token,
    Workflow,
    World,
    new_project,
)

DEMO_TOKEN = "demo-token"
SCOUT_USER = "scout-bot"
OLD_AGENT = "nightly-agent"
MAINTAINER = "graph-trainer-maintainer"  # files board items by hand


PASSING_TORCH = "2.13.0.dev20260818+cu130"
FAILING_TORCH = "2.13.0.dev20260819+cu130"


def demo_world(
    config: Config,
    priors: dict[date, str],
    *,
    today: date | None = None,
    token: str = DEMO_TOKEN,
    commit_authors: dict[str, str] | None = None,
) -> World:
    """`priors`: report date → Markdown; the oldest is the old agent's, the rest scout's.
    `today`: the day the story is told as of (default: the newest prior's next day)."""
    today = today or (max(priors) + timedelta(days=1) if priors else date.today())
    world = World()
    owner, name = config.project.repo.split("/", 1)
    accounts: tuple[tuple[str, Literal["User", "Organization"]], ...] = (
        (owner, "Organization"),
        (config.board.owner, "Organization"),
        (SCOUT_USER, "User"),
        (OLD_AGENT, "User"),
        (MAINTAINER, "User"),
    )
    for login, kind in accounts:
        if world.account(login) is None:
            world.accounts.append(Account(login=login, id=world.new_id(), type=kind))
    world.tokens.append(Token(token=token, login=SCOUT_USER))
    tracking = Issue(
        number=config.project.tracking_issue,
        id=world.new_id(),
        title="[graph_trainer] Nightly scout reports",
        user=OLD_AGENT,
        body="Nightly Scout Reports are posted here as comments.",
    )
    for position, (day, text) in enumerate(sorted(priors.items())):
        when = datetime.combine(day, time(6, 30), UTC)
        author = OLD_AGENT if position == 0 else SCOUT_USER
        tracking.comments.append(
            Comment(id=world.new_id(), user=author, body=text, created_at=when, updated_at=when)
        )
    repo = Repository(
        full_name=f"{owner}/{name}",
        id=world.new_id(),
        issues=[tracking],
        commit_authors=dict(commit_authors or {}),
    )
    world.repositories.append(repo)
    _ci(world, repo, config, today)
    _open_work(world, repo, config, today)
    _upstream(world, today)
    board = new_project(
        world, config.board.owner, config.board.number, "graph_trainer: nightly scout"
    )
    status = board.field(config.board.status_field)
    assert status is not None
    by_name = {option.name: option.id for option in status.options}
    for title, column in (
        ("Port the FSDP bucketing pass to the new pass manager", "In Progress"),
        ("Document the graph_trainer config converter", "Done"),
    ):
        number = world.new_id()
        board.items.append(
            Item(
                id=f"PVTI_lADO{number}",
                full_database_id=number,
                draft_id=f"DI_lADO{number}",
                title=title,
                body="Filed by hand.",
                values={status.id: by_name[column]},
                creator=MAINTAINER,
            )
        )
    return world


def _at(day: date, hour: int = 6) -> datetime:
    return datetime.combine(day, time(hour), UTC)


def _log(tests: list[SampleTest], torch: str) -> str:
    return "".join(actions_format(runner_log(tests, torch_version=torch, noise=5)))


def _ci(world: World, repo: Repository, config: Config, today: date) -> None:
    """Newest first, the first workflow: #105 fails (recurring, intermittent and new
    failures), #104 fails, #103 passes, #102 fails, #101 passes; a cancelled and a pushed
    run that do not count. The second workflow: green."""
    by_name = {t.name: t for t in TESTS}
    recurring = by_name["aot_fx_trace_llama3_fsdp_tp"]
    intermittent = by_name["jit_1d_auto_bucketing"]
    new = by_name["aot_fx_trace_deepseek_v3_ep"]
    passing = SampleTest(recurring.name, recurring.description, recurring.ngpu, "pass")
    story = [  # (run number, days ago, failing tests, torch)
        (101, 5, [], PASSING_TORCH),
        (102, 4, [intermittent], PASSING_TORCH),
        (103, 3, [], PASSING_TORCH),
        (104, 2, [recurring], FAILING_TORCH),
        (105, 1, [recurring, intermittent, new], FAILING_TORCH),
    ]
    for position, path in enumerate(config.ci.workflows):
        workflow = Workflow(
            id=world.new_id(), name=path.rsplit("/", 1)[-1].split(".")[0], path=path
        )
        repo.workflows.append(workflow)
        for number, ago, failing, torch in story:
            failing = failing if position == 0 else []
            tests = failing or [passing]
            day = today - timedelta(days=ago)
            conclusion = "failure" if failing else "success"
            job = Job(
                id=world.new_id(),
                name="build-test / integration",
                conclusion=conclusion,
                started_at=_at(day),
                completed_at=_at(day, 8),
                log=_log(tests, torch),
            )
            repo.runs.append(
                Run(
                    id=world.new_id(),
                    workflow_id=workflow.id,
                    run_number=number,
                    conclusion=conclusion,
                    created_at=_at(day),
                    updated_at=_at(day, 8),
                    jobs=[job],
                )
            )
        for number, event, conclusion in ((106, "schedule", "cancelled"), (107, "push", "failure")):
            repo.runs.append(
                Run(
                    id=world.new_id(),
                    workflow_id=workflow.id,
                    run_number=number,
                    event=event,
                    conclusion=conclusion,
                    created_at=_at(today, 2),
                )
            )


def _open_work(world: World, repo: Repository, config: Config, today: date) -> None:
    term = config.open_work.search or config.project.experiment.rstrip("/").rsplit("/", 1)[-1]
    now = _at(today, 5)
    # number, title, pull?, created / updated days ago, merged hours ago, reviewed
    stories = [
        (4101, f"[{term}] Fold the SAC pass into the pass manager", True, 8, 8, None, False),
        (4102, f"[{term}] Trace DeepSeek V3 with EP", True, 9, 1, None, True),
        (4103, f"[{term}] Bucket FSDP collectives by size", True, 3, 0, 3, True),
        (
            4104,
            f"[{term}] precompile fails with activation checkpointing",
            False,
            30,
            20,
            None,
            False,
        ),
        (4105, f"[{term}] Support Qwen3", False, 2, 1, None, False),
        (4106, "Unrelated: docs typo", True, 10, 10, None, False),
    ]
    for number, title, pull, created, updated, merged, reviewed in stories:
        issue = Issue(
            number=number,
            id=world.new_id(),
            title=title,
            user="contributor",
            body=f"Touches torchtitan/experiments/{term}." if term in title else "",
            created_at=now - timedelta(days=created),
            updated_at=now - timedelta(days=updated),
            pull=pull,
            merged_at=now - timedelta(hours=merged) if merged is not None else None,
            state="closed" if merged is not None else "open",
            reviews=[Review(id=world.new_id(), user="maintainer")] if reviewed else [],
        )
        repo.issues.append(issue)


def _upstream(world: World, today: date) -> None:
    """The pull requests and issues TODOs wait on: pytorch/pytorch#161234 merged yesterday."""
    if world.account("pytorch") is None:
        world.accounts.append(Account(login="pytorch", id=world.new_id(), type="Organization"))
    upstream = world.repository("pytorch/pytorch")
    if upstream is None:
        upstream = Repository(full_name="pytorch/pytorch", id=world.new_id())
        world.repositories.append(upstream)
    yesterday = _at(today - timedelta(days=1), 14)
    upstream_work = (
        (161234, "CSE: handle in-place ops", True),
        (188723, "Metadata tree transfer utility", False),
        (188727, "Scalar closure leaves in PP split", False),
    )
    for number, title, merged in upstream_work:
        upstream.issues.append(
            Issue(
                number=number,
                id=world.new_id(),
                title=title,
                user="upstream-dev",
                pull=merged,
                state="closed" if merged else "open",
                merged_at=yesterday if merged else None,
                closed_at=yesterday if merged else None,
                created_at=yesterday - timedelta(days=30),
            )
        )


def nightly_wheels(folder: Path) -> dict[str, Path]:
    """Stand-ins for the two nightlies of the story: a wheel holding only torch/version.py,
    as the nightly index would serve them (the demo's regression range reads them)."""
    folder.mkdir(parents=True, exist_ok=True)
    wheels = {}
    builds = (
        (PASSING_TORCH, "1f0e2d3c4b5a69788796a5b4c3d2e1f001122334"),
        (FAILING_TORCH, "9a8b7c6d5e4f30211203f4e5d6c7b8a9f0e1d2c3"),
    )
    for version, commit in builds:
        name = f"torch-{version}-cp312-cp312-manylinux_2_28_x86_64.whl"
        with zipfile.ZipFile(folder / name, "w") as wheel:
            wheel.writestr("torch/__init__.py", "")
            wheel.writestr(
                "torch/version.py", f"__version__ = '{version}'\ngit_version = '{commit}'\n"
            )
        wheels[name] = folder / name
    return wheels
