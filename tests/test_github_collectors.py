"""The collectors that read GitHub, against the local server over real HTTP: CI runs
classified, a log bigger than memory would like, TODO blocker states, open work as changes,
one endpoint failing, and conditional requests that cost no rate limit."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date, timedelta

from scout_tui.config.profile import load_config
from scout_tui.model import RunResult
from scout_tui.sandbox.demo.ci_logs import write_noisy_log
from scout_tui.sandbox.demo.file_server import FileServer, Served
from scout_tui.sandbox.demo.github_world import demo_world, nightly_wheels
from scout_tui.sandbox.github.http import Fault, LocalGitHub
from scout_tui.sandbox.github.world import Issue, Job
from tests.cli import DAY, scout
from tests.github_world import TOKEN, fast_config, world_for

TODAY = date.fromisoformat(DAY)


def story(sample):
    """The sample's GitHub, with the demo's CI story, open work and upstream PRs."""
    return world_for(sample)


def collect(sample, tmp_path, server, *extra, config=None, state="state"):
    config = config or fast_config(sample, tmp_path)
    args = [
        "--repo",
        str(sample.repo),
        "--config",
        str(config),
        "--date",
        DAY,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / state),
        "--api-url",
        server.url,
        *extra,
    ]
    done = scout("collect", "--json", *args, env={"GH_ENTERPRISE_TOKEN": TOKEN})
    assert done.returncode == 0, done.stderr
    return RunResult.model_validate_json(done.stdout), done


def with_index(sample, tmp_path, index: str):
    config = fast_config(sample, tmp_path)
    text = config.read_text().replace("[torch]\n", f'[torch]\nnightly_index = "{index}"\n')
    config.write_text(text)
    return config


def by_kind(run: RunResult) -> dict[str, list]:
    found: dict[str, list] = {}
    for finding in run.findings:
        found.setdefault(finding.kind, []).append(finding)
    return found


def test_ci_failures_are_classified_over_the_window(tmp_path, fresh_world):
    wheels = Served(files=nightly_wheels(tmp_path / "wheels"))
    with LocalGitHub(story(fresh_world)) as server, FileServer(wheels) as index:
        config = with_index(fresh_world, tmp_path, index)
        run, _ = collect(fresh_world, tmp_path, server, "--only", "ci_failures", config=config)
    [finding] = by_kind(run)["ci_failure"]
    assert finding.title.startswith("`integration_test_8gpu_graph_trainer.yaml` failing on torch")
    body = finding.body
    assert "`aot_fx_trace_llama3_fsdp_tp` (rc=1)" in body
    assert "recurring (also failed in run #104)" in body
    assert "intermittent (failed in run #102, passed in #104, #103)" in body
    assert "`aot_fx_trace_deepseek_v3_ep` (timed out after 600s) — new failure" in body
    assert (
        "The error above picked by: the last exception of rank 0's traceback chain, wrappers "
        "skipped." in body
    )
    assert [(r.nightly, r.status) for r in finding.evidence.regression] == [
        ("2.13.0.dev20260818+cu130", "pass"),
        ("2.13.0.dev20260819+cu130", "fail"),
    ]
    assert all(r.commit for r in finding.evidence.regression)
    assert finding.evidence.repro.startswith("NGPU=4 ./run_train.sh")
    assert finding.section.value == "ci_failures" and finding.priority.value == "P0"
    # The second workflow is green: said, from its latest scheduled run.
    [green] = by_kind(run)["ci_passing"]
    assert "h100" in green.title and green.title.startswith("CI green: ")
    assert not any("h100" in f.title for f in by_kind(run)["ci_failure"])


def test_green_and_no_recent_success(tmp_path, fresh_world):
    world = story(fresh_world)
    repo = world.repositories[0]
    for run in repo.runs:  # every run of the first workflow fails
        if run.workflow_id == repo.workflows[0].id and run.conclusion == "success":
            run.conclusion = "failure"
            run.jobs[0].conclusion = "failure"
    with LocalGitHub(world) as server:
        run, _ = collect(fresh_world, tmp_path, server, "--only", "ci_failures", "--offline")
        assert {s.name: s.reason for s in run.collectors} == {"ci_failures": "offline"}
        run, _ = collect(fresh_world, tmp_path, server, "--only", "ci_failures")
    [finding] = by_kind(run)["ci_failure"]
    assert "No recent success in the last 5 scheduled runs." in finding.body
    green = story(fresh_world)
    green.repositories[0].runs = [r for r in green.repositories[0].runs if r.run_number != 105]
    for run in green.repositories[0].runs:
        if run.run_number == 104:
            run.conclusion, run.jobs[0].conclusion = "success", "success"
    with LocalGitHub(green) as server:
        run, _ = collect(fresh_world, tmp_path, server, "--only", "ci_failures", state="s2")
        report = scout(
            "report",
            "--repo",
            fresh_world.repo,
            "--config",
            fresh_world.config,
            "--date",
            DAY,
            "--cache-dir",
            tmp_path / "cache",
            "--state-dir",
            tmp_path / "s2",
            "--only",
            "ci_failures",
            "--api-url",
            server.url,
            env={"GH_ENTERPRISE_TOKEN": TOKEN},
        ).stdout
    assert "ci_failure" not in by_kind(run)
    ci = re.search(r"## CI Failures\n\n(.*?)\n\n##", report, re.S).group(1)
    assert ci.startswith("- **CI green: `integration_test_8gpu_graph_trainer.yaml` run #104 "), ci


def test_no_scheduled_runs_is_never_ci_green(tmp_path, fresh_world):
    """A workflow, branch or event that matches no run: said, with what was asked, and no
    "CI green" anywhere."""
    config = fast_config(fresh_world, tmp_path)
    config.write_text(config.read_text() + '\n[ci]\nbranch = "release"\n')
    with LocalGitHub(story(fresh_world)) as server:
        run, _ = collect(fresh_world, tmp_path, server, "--only", "ci_failures", config=config)
        report = scout(
            "report",
            "--repo",
            fresh_world.repo,
            "--config",
            config,
            "--date",
            DAY,
            "--cache-dir",
            tmp_path / "cache",
            "--state-dir",
            tmp_path / "state",
            "--only",
            "ci_failures",
            "--api-url",
            server.url,
            env={"GH_ENTERPRISE_TOKEN": TOKEN},
        ).stdout
    none, h100 = [f for f in run.findings if f.collector == "ci_failures"]
    assert none.kind == h100.kind == "ci_no_runs" and none.title == (
        "No scheduled runs of `integration_test_8gpu_graph_trainer.yaml` found in the window "
        "(branch release, event schedule)"
    )
    assert "CI green" not in report and "No scheduled runs of" in report
    assert not any(f.board_item for f in run.findings)


def test_a_log_bigger_than_memory_would_like_is_streamed(tmp_path, fresh_world):
    big = tmp_path / "big.log"
    write_noisy_log(big, 200)  # MiB, failures spread through it
    world = story(fresh_world)
    repo = world.repositories[0]
    latest = max(
        (
            r
            for r in repo.runs
            if r.workflow_id == repo.workflows[0].id
            and r.event == "schedule"
            and r.conclusion != "cancelled"
        ),
        key=lambda r: r.created_at,
    )
    latest.jobs.append(Job(id=world.new_id(), name="big", conclusion="failure", log_file=str(big)))
    with LocalGitHub(world) as server:
        # Measured in a process of its own: its only child is this one scout.
        code = (
            "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
            "capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN)"
            ".ru_maxrss)"
        )
        args = [
            sys.executable,
            "-m",
            "scout_tui",
            "collect",
            "--only",
            "ci_failures",
            "--repo",
            str(fresh_world.repo),
            "--config",
            str(fresh_world.config),
            "--date",
            DAY,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--state-dir",
            str(tmp_path / "s"),
            "--api-url",
            server.url,
        ]
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            env={**os.environ, "GH_ENTERPRISE_TOKEN": TOKEN},
        )
        assert done.returncode == 0, done.stderr
    peak_mib = int(done.stdout.strip()) / 1024
    kept = list((tmp_path / "cache").rglob(f"{latest.jobs[-1].id}.log"))
    assert kept and kept[0].stat().st_size == big.stat().st_size  # streamed to the cache whole
    assert peak_mib < 0.6 * big.stat().st_size / 2**20, peak_mib


def test_todo_blockers_are_looked_up(tmp_path, fresh_world):
    with LocalGitHub(story(fresh_world)) as server:
        run, _ = collect(fresh_world, tmp_path, server, "--only", "todos")
    kinds = by_kind(run)
    [unblocked] = kinds["todo_unblocked"]
    assert unblocked.title == "TODO in `passes.py` likely unblocked: pytorch/pytorch#161234 merged"
    assert unblocked.section.value == "action_items" and unblocked.priority.value == "P1"
    assert "(merged 2026-12-01)" in unblocked.body
    # Linked where the API it was looked up on lives, never another host's same number.
    assert unblocked.evidence.urls == [f"{server.url}/pytorch/pytorch/issues/161234"]
    world = story(fresh_world)
    upstream = world.repository("pytorch/pytorch")
    [pr] = [i for i in upstream.issues if i.number == 161234]
    pr.merged_at = None  # closed without merging
    with LocalGitHub(world) as server:
        run, _ = collect(fresh_world, tmp_path, server, "--only", "todos", state="s2")
    [blocked] = [f for f in by_kind(run)["todo_blocked"] if "161234" in f.title]
    assert "a pull request closed without merging on 2026-12-01: the TODO may need another way" in (
        blocked.body
    )
    pr.state, pr.closed_at = "open", None
    with LocalGitHub(world) as server:
        run, _ = collect(fresh_world, tmp_path, server, "--only", "todos", state="s3", config=None)
    [blocked] = [f for f in by_kind(run)["todo_blocked"] if "161234" in f.title]
    assert "pytorch/pytorch#161234, an open pull request" in blocked.body


def test_open_work_is_said_as_changes(tmp_path, fresh_world):
    world = story(fresh_world)
    with LocalGitHub(world) as server:
        first, _ = collect(fresh_world, tmp_path, server, "--only", "open_work")
        kinds = by_kind(first)
        assert [f.items for f in kinds["pr_waiting_review"]] == [["#4101"]]
        assert [f.items for f in kinds["pr_merged_recently"]] == [["#4103"]]
        assert [f.items for f in kinds["issue_stale"]] == [["#4104"]]
        # Published today; tomorrow one more pull request has waited five days.
        assert (
            scout(
                "publish",
                "--yes",
                "--repo",
                fresh_world.repo,
                "--config",
                fresh_world.config,
                "--date",
                DAY,
                "--cache-dir",
                tmp_path / "cache",
                "--state-dir",
                tmp_path / "state",
                "--api-url",
                server.url,
                env={"GH_ENTERPRISE_TOKEN": TOKEN},
            ).returncode
            == 0
        )
        repo = world.repositories[0]
        created = next(i for i in repo.issues if i.number == 4101).created_at
        repo.issues.append(
            Issue(
                number=4107,
                id=world.new_id(),
                user="contributor",
                title="[graph_trainer] Add a float8 pass",
                pull=True,
                created_at=created,
                updated_at=created,
            )
        )
        tomorrow = (TODAY + timedelta(days=1)).isoformat()
        done = scout(
            "collect",
            "--json",
            "--only",
            "open_work",
            "--repo",
            fresh_world.repo,
            "--config",
            fresh_world.config,
            "--date",
            tomorrow,
            "--cache-dir",
            tmp_path / "cache",
            "--state-dir",
            tmp_path / "state",
            "--api-url",
            server.url,
            env={"GH_ENTERPRISE_TOKEN": TOKEN},
        )
    second = RunResult.model_validate_json(done.stdout)
    [waiting] = by_kind(second)["pr_waiting_review"]
    assert waiting.title.endswith("(1 new)")
    assert waiting.body.startswith("New since the prior report:\n- demo/minititan#4107")
    assert "As before: demo/minititan#4101" in waiting.body
    assert waiting.status.value == "carried" and waiting.status_update.startswith(
        "situation worsened"
    )


def test_one_endpoint_failing_fails_only_its_collector(tmp_path, fresh_world):
    with LocalGitHub(story(fresh_world), faults=[Fault.parse("GET /search/issues:500")]) as server:
        run, _ = collect(
            fresh_world,
            tmp_path,
            server,
            "--only",
            "open_work",
            "--only",
            "ci_failures",
            "--only",
            "todos",
        )
    states = {s.name: s for s in run.collectors}
    assert states["open_work"].state == "failed"
    assert states["open_work"].reason.startswith("GitHubError: GitHub answered 500 to searching")
    assert states["open_work"].reason.endswith("again after retrying")
    assert states["ci_failures"].state == "done" and states["todos"].state == "done"


def test_a_warm_rerun_costs_almost_no_rate_limit(tmp_path, fresh_world):
    with LocalGitHub(story(fresh_world)) as server:
        collect(fresh_world, tmp_path, server)
        cold = [e for e in server.log if e.cost]
        server.log.clear()
        collect(
            fresh_world,
            tmp_path,
            server,
            "--only",
            "ci_failures",
            "--only",
            "open_work",
            "--only",
            "todos",
            state="again",
        )
        warm = list(server.log)
    assert len(cold) >= 15  # comments, runs, jobs, logs, searches, reviews, commits, PRs
    revalidated = [e for e in warm if e.status == 304]
    paid = [e for e in warm if e.cost]
    assert revalidated and len(paid) <= 5, [e.description for e in paid]
    json.dumps([e.description for e in paid])  # printable, for the failure message above


def test_demo_world_is_built_from_any_config():
    world = demo_world(load_config(None), {}, today=TODAY)
    assert world.repository("pytorch/torchtitan") is not None
    assert len(world.repository("pytorch/torchtitan").workflows) == 2
