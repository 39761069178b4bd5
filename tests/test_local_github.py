"""The local GitHub server as any GitHub client sees it: real HTTP, GitHub's answers."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import UTC, datetime

import requests
from github import Auth, Github

from scout_tui.config.profile import load_config
from scout_tui.github.client import GitHubClient
from scout_tui.sandbox.demo.github_world import demo_world
from scout_tui.sandbox.github.http import Fault, LocalGitHub
from scout_tui.sandbox.github.world import Comment, Issue, Job, Run, Token, Workflow
from tests.github_world import TOKEN


def world():
    config = load_config(None)
    built = demo_world(config, {})
    repo = built.repositories[0]
    # Only the tracking issue of the demo's story: these tests place their own runs and PRs.
    repo.issues = [i for i in repo.issues if i.number == config.project.tracking_issue]
    repo.workflows, repo.runs = [], []
    merged = datetime(2026, 12, 1, tzinfo=UTC)
    repo.issues.append(
        Issue(
            number=4100,
            id=built.new_id(),
            title="graph_trainer: fix passes",
            user="dev",
            pull=True,
            merged_at=merged,
        )
    )
    workflow = ".github/workflows/integration_test_8gpu_graph_trainer.yaml"
    repo.workflows.append(Workflow(id=77, name="8 GPU graph_trainer", path=workflow))
    repo.runs.append(
        Run(
            id=501,
            workflow_id=77,
            run_number=12,
            conclusion="failure",
            jobs=[
                Job(
                    id=9001, name="test", conclusion="failure", log="line one\nRuntimeError: boom\n"
                )
            ],
        )
    )
    built.tokens.append(Token(token="someone-else", login="nightly-agent"))
    return built


def api(server, token=TOKEN, per_page=30):
    return Github(
        auth=Auth.Token(token),
        base_url=server.url,
        per_page=per_page,
        seconds_between_requests=None,
        retry=None,
    )


def test_comments_paginate_with_link_headers(tmp_path):
    built = world()
    [issue] = [i for i in built.repositories[0].issues if i.number == 2856]
    issue.comments += [
        Comment(id=built.new_id(), user="nightly-agent", body=f"c{n}") for n in range(7)
    ]
    with LocalGitHub(built) as server:
        bodies = [
            c.body
            for c in api(server, per_page=3)
            .get_repo("pytorch/torchtitan")
            .get_issue(2856)
            .get_comments()
        ]
        assert bodies == [f"c{n}" for n in range(7)]
        answer = requests.get(
            f"{server.url}/repos/pytorch/torchtitan/issues/2856/comments",
            params={"per_page": 3},
            headers={"Authorization": f"token {TOKEN}"},
        )
        assert 'rel="next"' in answer.headers["Link"] and "page=3" in answer.headers["Link"]


def test_etags_answer_304_at_no_cost(tmp_path):
    with LocalGitHub(world()) as server:
        headers = {"Authorization": f"token {TOKEN}"}
        url = f"{server.url}/repos/pytorch/torchtitan/issues/2856"
        first = requests.get(url, headers=headers)
        again = requests.get(url, headers={**headers, "If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["X-RateLimit-Remaining"] == first.headers["X-RateLimit-Remaining"]


def test_auth_and_authorship_as_github_checks_them():
    with LocalGitHub(world()) as server:
        url = f"{server.url}/user"
        assert requests.get(url).status_code == 401
        bad = requests.get(url, headers={"Authorization": "token nope"})
        assert bad.status_code == 401 and bad.json()["message"] == "Bad credentials"
        ours = api(server).get_repo("pytorch/torchtitan").get_issue(2856).create_comment("x")
        theirs = api(server, "someone-else").get_repo("pytorch/torchtitan")
        edit = requests.patch(
            f"{server.url}/repos/pytorch/torchtitan/issues/comments/{ours.id}",
            json={"body": "y"},
            headers={"Authorization": "token someone-else"},
        )
        assert edit.status_code == 403
        assert theirs.get_issue(2856).get_comments()[0].body == "x"


def test_the_client_reads_runs_jobs_logs_pulls_and_search():
    with LocalGitHub(world()) as server:
        client = GitHubClient(server.url, TOKEN, load_config(None).github)
        runs = client.workflow_runs(
            "pytorch/torchtitan",
            ".github/workflows/integration_test_8gpu_graph_trainer.yaml",
            "main",
            "schedule",
            5,
        )
        assert [(r.id, r.conclusion) for r in runs] == [(501, "failure")]
        [job] = client.run_jobs("pytorch/torchtitan", 501)
        log = io.BytesIO()
        assert client.job_log("pytorch/torchtitan", job.id, log) > 0
        assert log.getvalue() == b"line one\nRuntimeError: boom\n"
        state = client.issue_state("pytorch/torchtitan", 4100)
        assert state.is_pull and state.merged
        found = client.search_issues("repo:pytorch/torchtitan is:pr graph_trainer", 10)
        assert [s.number for s in found] == [4100]
        assert client.rate_limit().remaining < 5000
        assert client.scopes() == ["repo", "project", "read:org"]


def test_github_enterprise_style_urls():
    with LocalGitHub(world()) as server:
        client = GitHubClient(f"{server.url}/api/v3", TOKEN, load_config(None).github)
        assert client.viewer() == "scout-bot"  # GraphQL at /api/graphql
        board = client.board("pytorch", 161, "Status")
        assert "Backlog" in board.status_options
        assert any(e.path == "/api/graphql" for e in server.log)
        assert client.issue_state("pytorch/torchtitan", 4100).merged  # REST under /api/v3
        assert any(e.path.startswith("/api/v3/repos/") for e in server.log)


def test_faults_fail_what_they_name():
    faults = [Fault.parse("2:500"), Fault.parse("GET /rate_limit:ratelimit*1")]
    with LocalGitHub(world(), faults=faults) as server:
        headers = {"Authorization": f"token {TOKEN}"}
        assert requests.get(f"{server.url}/user", headers=headers).status_code == 200
        assert requests.get(f"{server.url}/user", headers=headers).status_code == 500
        limited = requests.get(f"{server.url}/rate_limit", headers=headers)
        assert limited.status_code == 403 and limited.headers["Retry-After"] == "1"
        assert requests.get(f"{server.url}/rate_limit", headers=headers).status_code == 200


def test_serve_github_from_the_command_line(tmp_path):
    state = tmp_path / "github.json"

    def serve(*extra):
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "scout_tui",
                "serve-github",
                "--state",
                str(state),
                "--token",
                "t-one",
                *extra,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )

    server = serve()
    try:
        line = server.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:")
        url = line.split()[-1]
        made = api_at(url, "t-one").get_repo("pytorch/torchtitan").get_issue(2856)
        made.create_comment("kept across restarts")
    finally:
        server.terminate()
        server.wait(10)
    server = serve()
    try:
        url = server.stdout.readline().split()[-1]
        bodies = [
            c.body
            for c in api_at(url, "t-one")
            .get_repo("pytorch/torchtitan")
            .get_issue(2856)
            .get_comments()
        ]
        assert "kept across restarts" in bodies
    finally:
        server.terminate()
        server.wait(10)
    assert json.loads(state.read_text())["repositories"][0]["full_name"] == "pytorch/torchtitan"
    bad = subprocess.run(
        [sys.executable, "-m", "scout_tui", "serve-github", "--fault", "x:oops"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("scout: error: --fault 'x:oops'")


def api_at(url, token):
    return Github(auth=Auth.Token(token), base_url=url, seconds_between_requests=None)
