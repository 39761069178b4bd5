"""One retry layer, over real HTTP to the local GitHub with the real PyGithub client: each
rate-limit shape GitHub sends is waited out for as long as it says, never longer than
`max_rate_limit_wait`; writes are sent again only where that is safe; the requests GitHub
sees are counted exactly. The layer's sleep is replaced, so nothing really waits."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from scout_tui.config.models import GithubConfig
from scout_tui.config.profile import load_config
from scout_tui.github.api import Board, BoardItem, GitHubError, RateLimited, board_item_url
from scout_tui.github.client import GitHubClient
from scout_tui.pipeline.day import RunOptions, run
from scout_tui.sandbox.demo.github_world import demo_world
from scout_tui.sandbox.github.http import Fault, FaultError, LocalGitHub
from scout_tui.sandbox.github.world import World
from tests.conftest import TODAY
from tests.github_world import TOKEN
from tests.listener import SilentHost

REPO, ISSUE = "pytorch/torchtitan", 2856


def world() -> World:
    return demo_world(load_config(None), {})


class Sleeps(list):
    """The layer's sleep: each wait recorded, none taken."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client_for(server: LocalGitHub, **settings: float) -> tuple[GitHubClient, Sleeps]:
    sleeps = Sleeps()
    config = GithubConfig(mutation_interval=0, **settings)
    return GitHubClient(server.url, TOKEN, config, sleep=sleeps), sleeps


def sent(server: LocalGitHub, text: str) -> int:
    return len(server.requests_matching(text))


def test_one_comment_under_a_secondary_limit_is_two_requests():
    with LocalGitHub(world(), faults=[Fault.parse("POST /repos:ratelimit*1")]) as server:
        client, sleeps = client_for(server)
        client.create_comment(REPO, ISSUE, "hello")
        assert sent(server, "POST /repos") == 2
        assert sleeps == [1.0]


# (fault, the call it hits, the wait GitHub asks for: Retry-After, or until the reset)
SHAPES = [
    ("GET /repos:ratelimit=7*1", "issue", 7),  # 403, Retry-After
    ("GET /repos:secondary*1", "issue", 60),  # 403 with no Retry-After: at least a minute
    ("GET /repos:primary=40*1", "issue", 40),  # 403, x-ratelimit-remaining 0, reset
    ("GET /repos:429=40*1", "issue", 40),  # 429, x-ratelimit-remaining 0, reset
    ("query viewer:graphql-ratelimit=40*1", "viewer", 40),  # 200 with RATE_LIMITED
    ("addProjectV2DraftIssue:ratelimit=5*1", "draft", 5),  # a write refused: never happened
]


def call(client: GitHubClient, what: str) -> object:
    if what == "issue":
        return client.issue_state(REPO, ISSUE)
    if what == "viewer":
        return client.viewer()
    board = client.board("pytorch", 161, "Status")
    return client.add_draft(board, "A draft", "body")


@pytest.mark.parametrize(("spec", "what", "seconds"), SHAPES)
def test_each_rate_limit_is_waited_out_as_github_says(spec, what, seconds):
    fault = Fault.parse(spec)
    with LocalGitHub(world(), faults=[fault]) as server:
        client, sleeps = client_for(server)
        call(client, what)
        assert sent(server, fault.text) == 2
        [wait] = sleeps
        # a reset is a whole second on GitHub's clock: up to a second less is left of it
        assert seconds - 2 < wait <= seconds


@pytest.mark.parametrize(
    "spec", ["GET /repos:500*1", "GET /repos:502*1", "query viewer:graphql-timeout*1"]
)
def test_server_errors_and_githubs_transient_graphql_error_are_retried(spec):
    fault = Fault.parse(spec)
    with LocalGitHub(world(), faults=[fault]) as server:
        client, sleeps = client_for(server, backoff=3)
        call(client, "viewer" if "viewer" in spec else "issue")
        assert sent(server, fault.text) == 2
        assert sleeps == [3.0]


def test_a_longer_wait_than_allowed_is_not_waited_and_not_asked_again():
    with LocalGitHub(world(), faults=[Fault.parse("GET /repos:ratelimit=3600")]) as server:
        client, sleeps = client_for(server, max_rate_limit_wait=300)
        with pytest.raises(RateLimited) as raised:
            client.issue_state(REPO, ISSUE)
        assert sleeps == [] and sent(server, "GET /repos") == 1
        until = raised.value.until
        assert 3590 < (until - datetime.now(UTC)).total_seconds() <= 3600
        assert f"until {until:%H:%M} UTC" in str(raised.value)
        assert "\n" not in str(raised.value)
        with pytest.raises(RateLimited):  # still limited: said again without asking
            client.issue_state(REPO, 4100)
        assert sent(server, "GET /repos") == 1
        assert client.viewer() == "scout-bot"  # GraphQL is another limit


def test_waits_add_up_to_max_rate_limit_wait_at_most():
    with LocalGitHub(world(), faults=[Fault.parse("GET /repos:ratelimit=100")]) as server:
        client, sleeps = client_for(server, max_rate_limit_wait=250, retries=10)
        with pytest.raises(RateLimited):
            client.issue_state(REPO, ISSUE)
        assert sleeps == [100.0, 100.0]
        assert sent(server, "GET /repos") == 3


def test_retries_are_bounded_and_the_last_answer_is_said_in_one_line():
    with LocalGitHub(world(), faults=[Fault.parse("GET /repos:ratelimit")]) as server:
        client, sleeps = client_for(server, retries=4)
        with pytest.raises(GitHubError) as raised:
            client.issue_state(REPO, ISSUE)
        assert sent(server, "GET /repos") == 5 and sleeps == [1.0] * 4
        assert str(raised.value).startswith(f"GitHub answered 403 to looking up {REPO}#{ISSUE}")


def test_a_write_that_may_have_happened_is_sent_again_only_where_safe():
    with LocalGitHub(world()) as server:
        client, _ = client_for(server)
        board = client.board("pytorch", 161, "Status")
        # a create with no way to look for its result: never sent twice
        server.faults = [Fault.parse("POST /repos:500-after*1")]
        with pytest.raises(GitHubError, match="GitHub answered 500 to commenting"):
            client.create_comment(REPO, ISSUE, "once")
        assert sent(server, "POST /repos") == 1
        # a create whose result is looked for first: found, not sent again
        server.faults = [Fault.parse("addProjectV2DraftIssue:502-after*1")]

        def applied():
            return next((i for i in client.board_items(board, "Status") if i.title == "Mine"), None)

        made = client.add_draft(board, "Mine", "body", applied=applied)
        assert sent(server, "addProjectV2DraftIssue") == 1
        assert [i.id for i in client.board_items(board, "Status") if i.title == "Mine"] == [made.id]
        # the same status twice is the same status: sent again
        server.faults = [Fault.parse("updateProjectV2ItemFieldValue:graphql-timeout-after*1")]
        client.set_status(board, made.id, board.status_options["Backlog"])
        assert sent(server, "updateProjectV2ItemFieldValue") == 2


def test_github_unreachable_is_said_once_and_then_at_once():
    with LocalGitHub(world()) as gone:
        url = gone.url
    client = GitHubClient(url, TOKEN, GithubConfig(), sleep=Sleeps())
    with pytest.raises(GitHubError) as first:
        client.issue_state(REPO, ISSUE)
    assert str(first.value) == (
        f"cannot reach GitHub at {url} (looking up {REPO}#{ISSUE}): connection failed"
    )
    port = int(url.rsplit(":", 1)[1])
    with LocalGitHub(world(), port=port) as back:  # back on the same port: not asked again
        with pytest.raises(GitHubError) as later:
            client.viewer()
        assert str(later.value) == str(first.value)
        assert back.log == []
        client.new_run()  # the console's next collection asks again
        assert client.viewer() == "scout-bot"


def test_a_5xx_does_not_make_github_unreachable():
    with LocalGitHub(world(), faults=[Fault.parse("GET /repos:500")]) as server:
        client, _ = client_for(server, retries=1)
        with pytest.raises(GitHubError, match="answered 500"):
            client.issue_state(REPO, ISSUE)
        assert client.viewer() == "scout-bot"
        assert sent(server, "query viewer") == 1


def test_a_repeated_page_cursor_stops_the_listing():
    with LocalGitHub(world(), faults=[Fault.parse("query node:repeat-cursor")]) as server:
        client, _ = client_for(server)
        board = client.board("pytorch", 161, "Status")
        with pytest.raises(GitHubError) as raised:
            client.board_items(board, "Status")
        assert str(raised.value).startswith(
            "GitHub's answer lacked a new page cursor for the items of board pytorch/161"
        )
        assert sent(server, "query node") == 2


@pytest.mark.parametrize(
    ("target", "lacked"),
    [
        ("query node", "board pytorch/161 (node "),
        ("query viewer", "the token's login (viewer)"),
        ("addProjectV2DraftIssue", "the new draft"),
    ],
)
def test_a_null_node_is_what_githubs_answer_lacked(target, lacked):
    with LocalGitHub(world()) as server:
        client, _ = client_for(server)
        board = client.board("pytorch", 161, "Status")
        server.faults = [Fault.parse(f"{target}:null-node")]
        with pytest.raises(GitHubError) as raised:
            if target == "query node":
                client.board_items(board, "Status")
            elif target == "query viewer":
                client.viewer()
            else:
                client.add_draft(board, "A draft", "body")
        assert str(raised.value).startswith(f"GitHub's answer lacked {lacked}")
        assert sent(server, target) == 1


def test_a_collector_rate_limited_for_too_long_is_skipped_and_the_others_go_on(fresh_world):
    config = load_config(fresh_world.config)
    config = config.model_copy(update={"github": GithubConfig(max_rate_limit_wait=60)})
    with LocalGitHub(demo_world(config, {}), faults=[Fault.parse("GET /repos:429=3600")]) as server:
        client = GitHubClient(server.url, TOKEN, config.github, sleep=Sleeps())
        result = run(
            RunOptions(
                repo=fresh_world.repo,
                config=config,
                as_of=TODAY,
                prior_dir=fresh_world.priors,
                github=client,
                only=["ci_failures", "open_work", "docs"],
            )
        )
    states = {c.name: c for c in result.collectors}
    for name in ("ci_failures", "open_work"):
        assert states[name].state == "skipped"
        assert re.fullmatch(r"rate limited until \d\d:\d\d UTC", states[name].reason or "")
    assert states["docs"].state == "done"
    # each asked once at most (they run side by side): none waited, none asked again
    assert 1 <= sent(server, "GET /repos") <= 2


@pytest.mark.parametrize(
    "spec", ["x:ratelimit=soon", "x:secondary=5", "x:primary-after", "x:null-node-after", "x:slow"]
)
def test_fault_specs_are_checked(spec):
    with pytest.raises(FaultError, match=re.escape(f"--fault {spec!r}")):
        Fault.parse(spec)


def test_an_item_without_a_database_id_links_its_board():
    board = Board(
        id="PVT_1",
        owner="pytorch",
        owner_type="orgs",
        number=161,
        title="t",
        status_field_id="F",
        status_options={},
    )
    known = BoardItem(id="PVTI_1", database_id=7, title="t", body="", status=None)
    unknown = BoardItem(id="PVTI_2", database_id=None, title="t", body="", status=None)
    web = "https://github.com/orgs/pytorch/projects/161"
    assert board_item_url("https://github.com", board, known) == f"{web}?pane=issue&itemId=7"
    assert board_item_url("https://github.com", board, unknown) == web


def test_a_host_that_never_answers_is_unreachable_after_one_timeout():
    """The first request gets no answer within the timeout: GitHub is unreachable for the
    run — said at once by every later call, which never connects again."""
    from scout_tui.github.api import Unreachable

    host = SilentHost()
    try:
        client = GitHubClient(host.url, TOKEN, GithubConfig(timeout=1), sleep=Sleeps())
        with pytest.raises(Unreachable) as first:
            client.issue_state(REPO, ISSUE)
        assert str(first.value).endswith("): no answer in 1 s")
        assert first.value.why == f"{host.url}: no answer in 1 s"
        with pytest.raises(Unreachable):
            client.viewer()
        assert host.connections == 1
    finally:
        host.close()


def test_a_timeout_after_github_answered_is_retried_not_unreachable():
    """The near miss: GitHub answered this run, then one read timed out. That is a slow
    answer, worth another try, not an unreachable GitHub."""
    faults = [Fault.parse("query node:timeout*1")]
    with LocalGitHub(world(), faults=faults) as server:
        client, _ = client_for(server, timeout=1)
        assert client.viewer() == "scout-bot"
        board = client.board("pytorch", 161, "Status")
        assert isinstance(client.board_items(board, "Status"), list)  # after one retry
        assert sent(server, "query node") == 2
        assert client.viewer() == "scout-bot"


def test_collect_against_a_silent_github_skips_every_github_step_after_one_wait(
    tmp_path, fresh_world
):
    """`scout collect` with GitHub's host taking connections and never answering: one
    request waits out the timeout, every other GitHub step is skipped at once, saying why;
    the local collectors' findings are all there."""
    from tests.cli import scout, world_args

    config = fresh_world.config
    text = config.read_text()
    assert "\n[github]" in text and "timeout" not in text
    head, _, rest = text.partition("\n[github]")
    line, _, rest = rest.partition("\n")
    config.write_text(f"{head}\n[github]{line}\ntimeout = 1\n{rest}")
    host = SilentHost()
    try:
        done = scout(
            "collect",
            "--json",
            *world_args(fresh_world, tmp_path),
            env={"SCOUT_GITHUB_API_URL": host.url, "GH_ENTERPRISE_TOKEN": "ghe_token"},
        )
    except BaseException:
        host.close()
        raise
    connections = host.connections
    assert done.returncode == 0, done.stderr
    states = {s["name"]: s for s in json.loads(done.stdout)["collectors"]}
    online = [s for s in states.values() if "GitHub unreachable" in (s["reason"] or "")]
    assert {s["name"] for s in online} == {"ci_failures", "open_work"}
    assert all(
        s["state"] == "skipped"
        and s["reason"] == f"GitHub unreachable ({host.url}: no answer in 1 s)"
        for s in online
    )
    host.close()
    # The collectors that ask GitHub start together, each waiting once (in parallel: one
    # timeout in all); every step after them, the board's included, is told at once.
    assert 1 <= connections <= 3
    assert "board items: skipped — cannot reach GitHub at" in done.stderr
    assert any(s["state"] == "done" for s in states.values())
