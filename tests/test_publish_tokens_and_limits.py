"""`scout publish` with every kind of token GitHub issues, and under GitHub's rate limits:
the real CLI in a subprocess, the real PyGithub client, the local GitHub over HTTP."""

from __future__ import annotations

import re

import pytest

from scout_tui.report.render import report_marker
from scout_tui.sandbox.github.http import Fault, LocalGitHub
from scout_tui.sandbox.github.world import Account, Token
from tests.github_world import TRACKING_ISSUE, world_for
from tests.test_publish import TODAY, expected_drafts, mutations, options, publish

# A fine-grained token and a GitHub App installation token carry no X-OAuth-Scopes, and
# `GET /user` refuses the App's: neither may be refused for it.
TOKENS = {
    "fine-grained": Token(
        token="github_pat_11FINEGRAINED0123456789", login="scout-bot", scopes=None
    ),
    "app": Token(
        token="ghs_INSTALLATION0123456789", login="scout-app[bot]", scopes=None, installation=True
    ),
}


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_fine_grained_and_app_tokens_publish(tmp_path, fresh_world, kind):
    token = TOKENS[kind]
    world = world_for(fresh_world)
    if not any(a.login == token.login for a in world.accounts):
        world.accounts.append(Account(login=token.login, id=world.new_id(), type="Bot"))
    world.tokens.append(token)
    with LocalGitHub(world) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        assert wanted
        done = publish(args, token=token.token)
        assert done.returncode == 0, done.stderr
        [issue] = [i for i in server.world.repositories[0].issues if i.number == TRACKING_ISSUE]
        [comment] = [
            c for c in issue.comments if c.user == token.login and report_marker(TODAY) in c.body
        ]
        [board] = server.world.projects
        status = board.field("Status")
        backlog = next(o.id for o in status.options if o.name == "Backlog")
        for fingerprint in wanted:
            [draft] = [i for i in board.items if f"scout:fp={fingerprint}" in i.body]
            assert draft.creator == token.login and draft.values.get(status.id) == backlog
            assert f"itemId={draft.full_database_id})" in comment.body
        assert not any(e.path == "/user" for e in server.log)


def test_a_publish_rate_limited_longer_than_allowed_stops_in_one_line(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        server.faults = [Fault.parse("POST /repos:ratelimit=3600")]
        server.log.clear()
        done = publish(args)
        assert done.returncode == 1
        assert "Traceback" not in done.stderr
        line = done.stderr.strip().splitlines()[-1]
        assert re.match(
            r"scout: error: GitHub rate-limited commenting on \w+/\w+#"
            rf"{TRACKING_ISSUE} until \d\d:\d\d UTC, longer than \[github\] "
            r"max_rate_limit_wait \(300 s\)",
            line,
        )
        [post] = mutations(server)  # asked once, not waited for an hour, not asked again
        assert post.description.endswith(f"/issues/{TRACKING_ISSUE}/comments")


def test_a_publish_waits_out_graphqls_rate_limit_once(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        server.faults = [Fault.parse("addProjectV2DraftIssue:graphql-ratelimit*1")]
        server.log.clear()
        done = publish(args)
        assert done.returncode == 0, done.stderr
        adds = server.requests_matching("addProjectV2DraftIssue")
        assert len(adds) == len(wanted) + 1
        assert [e.fault for e in adds].count("graphql-ratelimit") == 1
