"""The token goes only to hosts the user chose: a checkout's scout.toml naming another host
is refused until the user trusts it; hosts are compared whole; a github.com token never goes
elsewhere; a redirect never carries it; a bundle's hosts are never used. Real HTTP listeners
on 127.0.0.1 count what reaches them."""

from __future__ import annotations

import io
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scout_tui.config.models import ConfigError, GithubConfig, origin_of
from scout_tui.config.profile import load_config, untrusted_hosts, user_config_path
from scout_tui.github.auth import find_token
from scout_tui.github.client import GitHubClient
from scout_tui.model import RunResult
from scout_tui.sandbox.github.http import LocalGitHub
from scout_tui.session import Session, SessionOptions
from scout_tui.store.bundle import make_bundle, write_bundle
from tests.cli import DAY, scout
from tests.github_world import TOKEN, world_for
from tests.listener import Listener

GITHUB_TOKEN = "ghp_ONLYFORGITHUBCOM0123456789"


def in_checkout(world, **project: str) -> Path:
    """The sample's scout.toml, with `project` keys added, committed-style in its checkout."""
    lines = "".join(f'{key} = "{value}"\n' for key, value in project.items())
    text = world.config.read_text().replace("[project]\n", f"[project]\n{lines}")
    path = world.repo / "scout.toml"
    path.write_text(text)
    return path


def user_config(home: Path, text: str) -> Path:
    path = home / "scout-tui" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def collect(world, tmp_path, *extra, env=None):
    """`scout collect` of the open work only, in the world's checkout, with a home of its own."""
    args = [
        "--repo",
        world.repo,
        "--date",
        DAY,
        "--cache-dir",
        tmp_path / "cache",
        "--state-dir",
        tmp_path / "state",
        "--only",
        "open_work",
        *extra,
    ]
    home = {"XDG_CONFIG_HOME": str(tmp_path / "home"), "GH_ENTERPRISE_TOKEN": TOKEN}
    return scout("collect", "--json", *args, env={**home, **(env or {})})


def no_gh(tmp_path: Path) -> dict[str, str]:
    """A PATH whose `gh` knows no token: only the variables given count."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    gh = folder / "gh"
    gh.write_text("#!/bin/sh\nexit 1\n")
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def test_a_checkout_naming_an_untrusted_api_host_is_refused_before_any_request(
    tmp_path, fresh_world
):
    with Listener() as listener:
        in_checkout(fresh_world, api_url=listener.url)
        found = collect(fresh_world, tmp_path)
        given = collect(fresh_world, tmp_path, "--config", fresh_world.repo / "scout.toml")
    user_file = tmp_path / "home" / "scout-tui" / "config.toml"
    for done in (found, given):
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            f"scout: error: {fresh_world.repo / 'scout.toml'}, line 3: [project] api_url names "
            f"{listener.url}, a host you have not trusted (a checkout's scout.toml may name only "
            "GitHub's and PyTorch's hosts and those you trust): to trust it, add [trust] hosts "
            f'= ["{listener.url}"] to {user_file}, or pass --api-url with that host\n'
        )
        assert done.stdout == ""
    assert listener.seen == []  # 127.0.0.1 is not trusted for being local


def test_a_trusted_host_or_the_same_host_on_the_command_line_is_used(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        in_checkout(fresh_world, api_url=server.url)
        trusted_file = user_config(tmp_path / "home", f'[trust]\nhosts = ["{server.url}"]\n')
        trusted = collect(fresh_world, tmp_path)
        trusted_file.unlink()
        on_the_command_line = collect(fresh_world, tmp_path, "--api-url", server.url + "/")
        requests = len(server.log)
    for done in (trusted, on_the_command_line):
        assert done.returncode == 0, done.stderr
        [state] = RunResult.model_validate_json(done.stdout).collectors
        assert state.state == "done", state.reason  # the local server accepted the token
    assert requests > 0


def test_a_trusted_host_is_that_scheme_host_and_port_only(tmp_path, fresh_world):
    """Trusting `http://127.0.0.1:PORT` trusts neither another port nor https on it, and a
    web URL or package index is judged as the API host is."""
    with Listener() as listener:
        port = origin_of(listener.url).port
        user_config(
            tmp_path / "home",
            f'[trust]\nhosts = ["127.0.0.1:{port}", "http://127.0.0.1:{port + 1}"]\n',
        )
        in_checkout(fresh_world, web_url=listener.url)
        done = collect(fresh_world, tmp_path)
    assert done.returncode == 2
    assert f"[project] web_url names {listener.url}, a host you have not trusted" in done.stderr
    assert listener.seen == []


@pytest.mark.parametrize(
    "url",
    [
        "https://api.github.com.evil.example",
        "https://api.github.com@evil.example",
        "https://x-access-token:t@api.github.com",
    ],
)
def test_look_alike_hosts_and_user_names_in_urls_are_refused(tmp_path, fresh_world, url):
    in_checkout(fresh_world, api_url=url)
    done = collect(fresh_world, tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    if "@" in url:
        assert "line 3: project.api_url" in done.stderr and "user name or password" in done.stderr
    else:
        assert (
            "[project] api_url names https://api.github.com.evil.example, a host you have "
            "not trusted" in done.stderr
        )


def test_a_user_name_in_the_api_url_given_is_refused_before_any_request(tmp_path, sample_world):
    with Listener() as listener:
        url = listener.url.replace("http://", "http://x-access-token:t@")
        done = collect(sample_world, tmp_path, "--config", sample_world.config, "--api-url", url)
        from_environment = collect(
            sample_world,
            tmp_path,
            "--config",
            sample_world.config,
            env={"SCOUT_GITHUB_API_URL": url},
        )
    for refused in (done, from_environment):
        assert refused.returncode == 2 and refused.stderr == (
            f"scout: error: GitHub API URL {listener.url.replace('http://', 'http://***@')!r}: "
            "a user name or password in a URL (USER@HOST) "
            "is refused (e.g. https://api.github.com or https://HOST/api/v3)\n"
        )
    assert listener.seen == []


def test_githubs_web_address_as_the_api_url_is_refused_with_the_api_s(tmp_path, sample_world):
    for url in ("https://github.com", "https://GitHub.com/"):
        done = collect(sample_world, tmp_path, "--config", sample_world.config, "--api-url", url)
        assert done.returncode == 2 and done.stderr == (
            f"scout: error: GitHub API URL {url!r} is GitHub's web address; "
            "its API is https://api.github.com\n"
        )
    done = collect(sample_world, tmp_path, "--api-url", "https://api.github.com", "--offline")
    assert done.returncode == 0, done.stderr


def test_a_checkouts_symlink_to_a_file_elsewhere_is_still_the_checkouts(tmp_path):
    outside = tmp_path / "anyone-can-write.toml"
    outside.write_text('[torch]\nnightly_index = "https://index.evil.example/simple"\n')
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "scout.toml").symlink_to(outside)
    assert load_config(outside).torch.nightly_index.startswith("https://index.evil")  # yours
    with pytest.raises(ConfigError, match=r"\[torch\] nightly_index names https://index.evil"):
        load_config(checkout / "scout.toml")


def test_hosts_are_compared_after_parsing_never_by_prefix():
    trusted = [origin_of("http://127.0.0.1:5000")]
    urls = {
        ("project", "api_url"): "https://API.github.com:443/",
        ("project", "web_url"): "https://github.com.evil.example",
        ("torch", "nightly_index"): "http://download.pytorch.org/whl/nightly",  # not https
        ("torch", "compare_url"): "https://github.com:8443/x/{old}...{new}",
        ("local", "same"): "http://127.0.0.1:5000/api/v3",
        ("local", "other port"): "http://127.0.0.1:5001",
        ("local", "other scheme"): "https://127.0.0.1:5000",
    }
    refused = {key for key, _ in untrusted_hosts(urls, trusted)}
    assert refused == {
        ("project", "web_url"),
        ("torch", "nightly_index"),
        ("torch", "compare_url"),
        ("local", "other port"),
        ("local", "other scheme"),
    }
    for url in (
        "https://api.github.com@evil",
        "https://api.github.com\\@evil",
        "ftp://host",
        "https://:x@api.github.com",
        "https://api.github.com:99999",
    ):
        with pytest.raises(ValueError):
            origin_of(url)


@pytest.mark.parametrize("url", ["https://download.pytorch.org", "https://github.com"])
def test_each_key_may_name_only_its_own_shipped_host(tmp_path, fresh_world, url):
    """download.pytorch.org is a package index, github.com a web host: neither is an API
    host the token may go to."""
    in_checkout(fresh_world, api_url=url)
    done = collect(fresh_world, tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"[project] api_url names {url}, a host you have not trusted" in done.stderr
    refused = untrusted_hosts({("torch", "nightly_index"): "https://api.github.com/x"}, [])
    assert [key for key, _ in refused] == [("torch", "nightly_index")]


def test_a_scout_toml_string_with_escapes_is_refused(tmp_path, fresh_world):
    """TOML's \\u escapes can carry a terminal's escape sequences into every message that
    names the value."""
    path = in_checkout(fresh_world)
    path.write_text(path.read_text() + '\n[docs]\nfiles = ["\\u001b]2;PWNED\\u0007README.md"]\n')
    done = collect(fresh_world, tmp_path, "--offline")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "docs.files[0] holds control or bidi characters" in done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr


def test_a_github_token_never_goes_to_another_host(tmp_path, sample_world):
    with Listener() as listener:
        args = [
            "--repo",
            sample_world.repo,
            "--config",
            sample_world.config,
            "--date",
            DAY,
            "--cache-dir",
            tmp_path / "cache",
            "--state-dir",
            tmp_path / "state",
            "--only",
            "open_work",
            "--api-url",
            listener.url,
        ]
        env = {"GH_TOKEN": GITHUB_TOKEN, "GITHUB_TOKEN": GITHUB_TOKEN, **no_gh(tmp_path)}
        done = scout("collect", "--json", *args, env=env)
    assert done.returncode == 0, done.stderr
    [state] = RunResult.model_validate_json(done.stdout).collectors
    host = listener.url.removeprefix("http://")
    assert state.state == "skipped"
    assert state.reason == (
        f"no token for {host} (set GH_ENTERPRISE_TOKEN or "
        f"GITHUB_ENTERPRISE_TOKEN, or `gh auth login --hostname {host}`; "
        "GH_TOKEN is for github.com only)"
    )
    assert listener.authorized() == []


def test_an_enterprise_token_comes_from_its_variables_or_gh_for_that_host(tmp_path, monkeypatch):
    gh = tmp_path / "gh"
    gh.write_text(
        '#!/bin/sh\n[ "$*" = "auth token --hostname ghe.example:8443" ] && '
        "echo gho_FORTHEENTERPRISEHOST42\n"
    )
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GH_TOKEN", GITHUB_TOKEN)
    assert find_token("https://ghe.example:8443/api/v3") == "gho_FORTHEENTERPRISEHOST42"
    assert find_token("https://other.example/api/v3") is None  # gh has none for it
    monkeypatch.setenv("GITHUB_ENTERPRISE_TOKEN", "ghp_ENTERPRISEVARIABLE1")
    assert find_token("https://other.example/api/v3") == "ghp_ENTERPRISEVARIABLE1"
    assert find_token("https://api.github.com") == GITHUB_TOKEN


def test_a_redirect_to_another_host_gets_no_token():
    """GitHub answers a job's log with a 302 to another host: the token stays behind."""
    with Listener(lambda path: (200, {}, b"the log\n")) as storage:

        def api(path: str):
            return 302, {"Location": f"{storage.url}/logs/7.txt?sig=x"}, b""

        with Listener(api) as github:
            into = io.BytesIO()
            client = GitHubClient(github.url, "ghp_JOBLOGTOKEN0123456789", GithubConfig())
            assert client.job_log("o/r", 7, into) == len(b"the log\n")
    [asked] = github.seen
    assert asked.path == "/repos/o/r/actions/jobs/7/logs"
    assert asked.headers["authorization"] == "token ghp_JOBLOGTOKEN0123456789"
    [fetched] = storage.seen
    assert fetched.path == "/logs/7.txt?sig=x" and "authorization" not in fetched.headers


def test_a_bundle_never_chooses_where_the_token_goes(tmp_path, monkeypatch, shipped_config):
    with Listener() as listener:
        config = shipped_config.model_dump()
        config["project"].update(api_url=listener.url, web_url=f"{listener.url}/look-alike")
        run = RunResult(
            date=DAY, since=datetime(2026, 12, 1, tzinfo=UTC), repo="pytorch/torchtitan"
        )
        path = tmp_path / "run.json.gz"
        write_bundle(make_bundle(run, config, [], "0", datetime.now(UTC)), path)
        monkeypatch.setenv("GH_ENTERPRISE_TOKEN", TOKEN)
        options = SessionOptions(cache_dir=tmp_path / "cache", state_dir=tmp_path / "state")
        session = Session.of_bundle(path, options)
        assert (session.api_url, session.web_url) == (
            "https://api.github.com",
            "https://github.com",
        )
        chosen = Session.of_bundle(
            path,
            SessionOptions(
                cache_dir=tmp_path / "cache",
                state_dir=tmp_path / "state",
                api_url="https://ghe.example/api/v3",
            ),
        )
        assert (chosen.api_url, chosen.web_url) == (
            "https://ghe.example/api/v3",
            "https://ghe.example",
        )
    assert listener.seen == []


def test_the_users_keys_win_over_the_checkouts(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home"))
    user_config(tmp_path / "home", '[keys]\naccept = "y"\n')
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "scout.toml").write_text('[keys]\naccept = "k"\nundo = "ctrl+z"\n')
    keys = load_config(checkout / "scout.toml").keys
    assert (keys["accept"], keys["undo"]) == ("y", "ctrl+z")


@pytest.mark.parametrize(
    "text, problem",
    [
        (
            'api_url = "https://ghe.example/api/v3"\n[trust]\nhosts = ["http://me@127.0.0.1:5000"]\n',
            ", line 3: trust.hosts = ['http://***@127.0.0.1:5000'] is not allowed: Value error, "
            "'http://***@127.0.0.1:5000': a user name or password in a URL (USER@HOST) is refused",
        ),
        ("\n[trsut]\nhosts = []\n", ", line 2: unknown key 'trsut'"),
        ('[keys]\naccept = "not a key!"\n', ": keys.accept = 'not a key!' is not allowed"),
        ("[trust]\nhosts = [\n", ": not valid TOML: "),
    ],
)
def test_a_bad_user_config_is_named_with_its_line(
    tmp_path, monkeypatch, sample_world, text, problem
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home"))
    path = user_config(tmp_path / "home", text)
    assert path == user_config_path()
    with pytest.raises(ConfigError) as error:
        load_config(None)
    assert str(error.value).startswith(f"{path}{problem}")
    done = scout(
        "collect",
        "--offline",
        "--repo",
        sample_world.repo,
        "--cache-dir",
        tmp_path / "cache",
        "--state-dir",
        tmp_path / "state",
        env={"XDG_CONFIG_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and str(path) in done.stderr


def test_the_api_url_is_the_flags_then_the_environments_then_the_users_config(
    tmp_path, monkeypatch, sample_world
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home"))
    user_config(tmp_path / "home", 'api_url = "https://ghe.example/api/v3"\n')

    def endpoints(**options):
        session = Session(
            SessionOptions(
                repo=sample_world.repo,
                config=sample_world.config,
                cache_dir=tmp_path / "cache",
                state_dir=tmp_path / "state",
                **options,
            )
        )
        return session.api_url, session.web_url

    assert endpoints() == ("https://ghe.example/api/v3", "https://ghe.example")
    monkeypatch.setenv("SCOUT_GITHUB_API_URL", "http://127.0.0.1:5000")
    assert endpoints() == ("http://127.0.0.1:5000", "http://127.0.0.1:5000")
    assert endpoints(api_url="https://api.github.com") == (
        "https://api.github.com",
        "https://github.com",
    )


def test_the_publish_target_says_what_chose_the_api(tmp_path, monkeypatch, sample_world):
    """The confirmation names the board by the scout.toml that says it, and the API by what
    chose it — never the scout.toml for an API the flag or the environment chose."""

    def target(**options):
        return Session(
            SessionOptions(
                repo=sample_world.repo,
                config=sample_world.config,
                cache_dir=tmp_path / "cache",
                state_dir=tmp_path / "state",
                **options,
            )
        ).publish_target()

    config = sample_world.config
    assert target() == (
        f"demo/minititan#2856 and the board pytorch/161 (from {config}) on "
        f"https://api.github.com (from {config}), links to https://github.com"
    )
    assert target(api_url="http://127.0.0.1:5000").endswith(
        "on http://127.0.0.1:5000 (from --api-url), links to http://127.0.0.1:5000"
    )
    monkeypatch.setenv("SCOUT_GITHUB_API_URL", "http://127.0.0.1:5001")
    assert "on http://127.0.0.1:5001 (from $SCOUT_GITHUB_API_URL)" in target()


def test_a_demo_left_behind_reaches_no_real_github(tmp_path):
    """After `scout demo`, its scout.toml is what "review them again" uses: with the network
    on and a token at hand, publishing meets a closed loopback port, never api.github.com."""
    base = tmp_path / "demo"
    assert scout("demo", "--dir", base, timeout=300).returncode == 0
    done = scout(
        "publish",
        "--dry-run",
        "--repo",
        base / "repo",
        "--config",
        base / "scout.toml",
        "--cache-dir",
        base / "cache",
        "--state-dir",
        base / "state",
        env={"GITHUB_TOKEN": "ghp_" + "a" * 36},
        timeout=120,
    )
    assert "api.github.com" not in done.stdout + done.stderr
    assert f"on http://127.0.0.1:9 (from {base / 'scout.toml'})" in done.stdout


def test_a_file_beside_the_checkout_named_through_dotdot_is_the_users_own(tmp_path, fresh_world):
    """`--config ../scout.toml` from inside the checkout names a file beside it (TRUE: the
    user's own, its hosts used); `--config scout.toml` inside it is the checkout's (NEAR-MISS:
    refused), though both lead to the same text."""
    text = fresh_world.config.read_text().replace(
        "[project]\n", '[project]\napi_url = "http://127.0.0.1:9"\n'
    )
    beside = fresh_world.repo.parent / "mine.toml"
    beside.write_text(text)
    (fresh_world.repo / "inside.toml").write_text(text)
    folder = fresh_world.repo / "torchtitan"
    assert load_config(folder / ".." / ".." / "mine.toml").project.api_url == "http://127.0.0.1:9"
    with pytest.raises(ConfigError, match="a host you have not trusted"):
        load_config(folder / ".." / "inside.toml")


def test_an_untrusted_wheel_index_is_not_told_to_use_api_url(tmp_path, fresh_world):
    """--api-url trusts an API host, never an index: the advice for an index names [trust]
    only (NEAR-MISS: an untrusted api_url still names --api-url, above)."""
    text = fresh_world.config.read_text()
    assert "[torch]\n" in text
    path = fresh_world.repo / "scout.toml"
    path.write_text(
        text.replace("[torch]\n", '[torch]\nnightly_index = "http://127.0.0.1:9/whl"\n')
    )
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    said = str(refused.value)
    assert "[torch] nightly_index names http://127.0.0.1:9" in said
    assert said.endswith(f'add [trust] hosts = ["http://127.0.0.1:9"] to {user_config_path()}')
