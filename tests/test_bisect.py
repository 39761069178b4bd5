"""`scout bisect` end to end: a local PEP 503/691 index serving stand-in torch nightlies,
real environments built with pip and with uv, the repro run in each, the first bad nightly
found in 1 + ceil(log2 n) runs; install failures, hangs and other errors are could-not-test
and stepped around; the same command run again resumes from the kept results."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import jsonschema
import pytest

from scout_tui.cli.bisect import BISECT_SCHEMA_FILE, render_schema
from scout_tui.sandbox.demo.file_server import FileServer, Served
from scout_tui.sandbox.nightlies import (
    FAILURE,
    REPRO,
    TRAIN,
    nightly_builds,
    places,
    stand_in_checkout,
    stand_in_wheel,
)

pytestmark = pytest.mark.slow


@contextmanager
def nightly_index(folder: Path, builds, json_pages: bool = False):
    served = Served(json=json_pages)
    for build in builds:
        path = stand_in_wheel(folder, build)
        served.files[path.name] = path
    with FileServer(served) as url:
        yield url, served


checkout = stand_in_checkout


def scout(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scout_tui", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
    )


def bisect_args(repo: Path, cache: Path, url: str, good: str, bad: str, *more: str) -> list[str]:
    where = places(repo, cache, cache.parent / "state", url)
    return ["bisect", "--good", good, "--bad", bad, "--command", REPRO, *where, "--json", *more]


def without_uv() -> dict[str, str]:
    """PATH without uv: the venv + pip path."""
    uv = shutil.which("uv")
    if uv is None:
        return {}
    folders = os.environ["PATH"].split(os.pathsep)
    return {"PATH": os.pathsep.join(f for f in folders if Path(f) != Path(uv).parent)}


def with_uv() -> dict[str, str]:
    """PATH with the test extra's uv first (the suite may run with no venv activated)."""
    from uv import find_uv_bin  # the test extra's: both installers are tested

    folder = str(Path(find_uv_bin()).parent)
    return {"PATH": os.pathsep.join([folder, os.environ.get("PATH", "")])}


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_the_first_bad_nightly_in_one_plus_log2_n_runs(tmp_path, tool) -> None:
    env = without_uv() if tool == "pip" else with_uv()
    builds = nightly_builds(first_day=1, count=7, first_bad=4)  # good: day 1, n = 6
    repo = checkout(tmp_path / "repo")
    with nightly_index(tmp_path / "wheels", builds, json_pages=tool == "uv") as (url, _):
        done = scout(
            *bisect_args(repo, tmp_path / "cache", url, builds[0].version, builds[-1].version),
            env=env,
        )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    n = len(builds) - 1
    assert found["first_bad"] == {"version": builds[4].version, "commit": builds[4].commit}
    assert found["last_good"] == {"version": builds[3].version, "commit": builds[3].commit}
    assert len(found["runs"]) <= 1 + math.ceil(math.log2(n))
    assert found["runs"][0]["nightly"] == builds[-1].version  # reproduced at the bad end first
    assert found["could_not_test"] == []
    assert found["compare_url"].endswith(f"{builds[3].commit}...{builds[4].commit}")
    assert f"building an environment for torch {builds[-1].version} with {tool}" in done.stderr
    jsonschema.validate(found, json.loads(BISECT_SCHEMA_FILE.read_text()))
    log = Path(found["runs"][0]["log"]).read_text()
    assert FAILURE.split(":")[0] in log
    # At most --keep-envs environments stay, listed with their size, removed by a clear.
    info = json.loads(
        scout("cache", "info", "--cache-dir", str(tmp_path / "cache"), "--json").stdout
    )
    kept = info["bisect_environments"]
    assert 1 <= len(kept) <= 2 and all(env["bytes"] > 10_000 for env in kept)
    assert scout("cache", "clear", "--cache-dir", str(tmp_path / "cache")).returncode == 0
    assert not (tmp_path / "cache" / "bisect").exists()


def test_untestable_nightlies_are_stepped_around_and_named(tmp_path) -> None:
    """An install failure, a hang (past --timeout) and a different error are could-not-test:
    none is taken for the failure, each costs one run more, each is named."""
    behaviours = {3: "uninstallable", 4: "other-error", 5: "hang"}
    builds = nightly_builds(first_day=1, count=9, first_bad=6, behaviours=behaviours)
    repo = checkout(tmp_path / "repo")
    with nightly_index(tmp_path / "wheels", builds) as (url, _):
        args = bisect_args(repo, tmp_path / "cache", url, builds[0].version, builds[-1].version)
        done = scout(*args, "--timeout", "5", env=without_uv())
    found = json.loads(done.stdout)
    untestable = {item["nightly"]: item["why"] for item in found["could_not_test"]}
    assert found["first_bad"]["version"] == builds[6].version, done.stderr
    assert found["last_good"]["version"] == builds[2].version or builds[5].version in untestable
    assert done.returncode in (0, 1)
    if done.returncode == 1:  # only untestable nightlies are left between the bounds
        assert found["decision"] == "narrowed"
    for why in untestable.values():
        assert why.startswith(("the install failed", "a different error", "timed out"))
    n = len(builds) - 1
    assert len(found["runs"]) <= 1 + math.ceil(math.log2(n)) + len(untestable)


def test_a_second_run_resumes_from_the_kept_results(tmp_path) -> None:
    builds = nightly_builds(first_day=1, count=5, first_bad=2)
    repo = checkout(tmp_path / "repo")
    with nightly_index(tmp_path / "wheels", builds) as (url, served):
        args = bisect_args(repo, tmp_path / "cache", url, builds[0].version, builds[-1].version)
        first = scout(*args, env=without_uv())
        asked = len(served.requests)
        again = scout(*args, env=without_uv())
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    assert json.loads(again.stdout)["first_bad"] == json.loads(first.stdout)["first_bad"]
    assert "kept from an earlier run" in again.stderr
    assert "building an environment" not in again.stderr
    assert served.requests[asked:] == ["/simple/torch/"]  # the index listed, nothing installed


def test_it_does_not_reproduce_here(tmp_path) -> None:
    builds = nightly_builds(first_day=1, count=4, first_bad=99)  # every nightly passes
    repo = checkout(tmp_path / "repo")
    with nightly_index(tmp_path / "wheels", builds) as (url, _):
        args = bisect_args(repo, tmp_path / "cache", url, builds[0].version, builds[-1].version)
        done = scout(*args, env=without_uv())
    assert done.returncode == 1
    found = json.loads(done.stdout)
    assert found["decision"] == "does not reproduce"
    assert len(found["runs"]) == 1


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"--good": "yesterday"}, "neither a nightly version"),
        ({"--bad": "2.13.0"}, "not a nightly"),
        ({"--command": "rm -rf build"}, "not a repro scout runs"),
        ({"--runs": "0"}, "positive"),
    ],
)
def test_bad_usage_is_exit_2_before_anything_is_installed(tmp_path, change, said) -> None:
    flags = {"--good": "2026-06-01", "--bad": "2026-06-05", "--command": "pytest t.py::test"}
    flags |= change
    words = [word for pair in flags.items() for word in pair]
    done = scout("bisect", *words, "--repo", str(tmp_path), "--cache-dir", str(tmp_path / "c"))
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert not (tmp_path / "c").exists()


def running(marker: str) -> list[int]:
    """Processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


def test_ctrl_c_leaves_no_process_and_the_same_command_resumes(tmp_path) -> None:
    import signal
    import time

    builds = nightly_builds(first_day=1, count=6, first_bad=3, behaviours={2: "hang"})
    repo = checkout(tmp_path / "repo")
    with nightly_index(tmp_path / "wheels", builds) as (url, _):
        args = bisect_args(repo, tmp_path / "cache", url, builds[0].version, builds[-1].version)
        started = subprocess.Popen(
            [sys.executable, "-m", "scout_tui", *args, "--timeout", "600"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **without_uv()},
        )
        said = []
        assert started.stderr is not None
        for text in started.stderr:  # until the hanging nightly's repro runs
            said.append(text)
            if f"torch {builds[2].version}: running" in text:
                break
        for _ in range(100):
            if running(str(repo / "train.py")) or running("train.py"):
                break
            time.sleep(0.05)
        started.send_signal(signal.SIGINT)
        rest = started.communicate(timeout=60)[1]
        assert started.returncode == 130, "".join(said) + rest
        time.sleep(0.5)
        assert running(str(tmp_path / "cache")) == []  # no repro left on the box
        again = scout(*args, "--timeout", "5", env=without_uv())
    assert f"torch {builds[-1].version}: fail (kept from an earlier run" in again.stderr
    found = json.loads(again.stdout)
    assert found["first_bad"]["version"] == builds[3].version, again.stderr
    assert [item["nightly"] for item in found["could_not_test"]] == [builds[2].version]


def test_one_run_at_a_time_on_a_box(tmp_path) -> None:
    """A bisect, or a repro run, while another holds the box's GPUs is refused at once,
    naming the holder; the lock goes with its holder however it ends."""
    from scout_tui.repro.lock import BoxLock

    repo = checkout(tmp_path / "repo")
    state = tmp_path / "state"
    args = bisect_args(
        repo, tmp_path / "cache", "http://127.0.0.1:9/simple", "2026-06-01", "2026-06-03"
    )
    with BoxLock(state, "scout bisect 2026-05-01..2026-05-09: pytest t.py::test"):
        done = scout(*args)
        assert done.returncode == 1
        assert (
            "another run holds this box's GPUs (scout bisect 2026-05-01..2026-05-09" in done.stderr
        )
        repro = scout(
            "repro",
            "--command",
            "torchrun train.py",
            "--run",
            "--repo",
            str(repo),
            "--state-dir",
            str(state),
        )
        assert repro.returncode == 1 and "one repro or bisect at a time" in repro.stderr
    done = scout(*args)  # released: it goes on (to the index, which is not there)
    assert "another run" not in done.stderr and "cannot reach" in done.stderr


def cached_ci_failure(
    repo: Path, cache: Path, good: str, bad: str, *, intermittent: bool, ci_error: str = ""
):
    """The day's run of `repo` in `cache`, holding a CI failure finding with a regression
    range (its nightlies with a build label, as the index names them) and two tests' repros."""
    from datetime import UTC, datetime

    from scout_tui.model import Evidence, Finding, Priority, RegressionRow, RunResult, Section
    from scout_tui.model import fingerprint as fp
    from scout_tui.session import Session, SessionOptions

    session = Session(SessionOptions(repo=repo, cache_dir=cache, offline=True))
    assert session.checkout is not None
    failure = Finding(
        collector="ci_failures",
        kind="ci_failure",
        section=Section.CI_FAILURES,
        priority=Priority.P0,
        title="`integration.yaml` failing on torch " + bad,
        fingerprint=fp("ci_failure", "integration.yaml"),
        evidence=Evidence(
            failing_tests=["llama3_compile", "flux"],
            regression=[
                RegressionRow(nightly=f"{good}+cu130", status="pass"),
                RegressionRow(nightly=f"{bad}+cu130", status="fail"),
            ],
            repro="torchrun --nproc_per_node=1 train.py",
            repros={
                "llama3_compile": "torchrun --nproc_per_node=1 train.py",
                "flux": "torchrun --nproc_per_node=1 flux.py",
            },
            test_classes={"llama3_compile": "intermittent" if intermittent else "new failure"},
            test_errors={"llama3_compile": ci_error} if ci_error else {},
        ),
    )
    now = datetime.now(UTC)
    run = RunResult(
        date=session.day,
        since=now,
        repo=str(repo),
        checkout=session.checkout,
        experiment=session.experiment,
        collected_at=now,
        findings=[failure],
    )
    session.cache.put_run(run)


def test_the_days_ci_failure_gives_the_range_the_repro_and_the_runs(tmp_path) -> None:
    """With no --good/--bad/--command: the day's CI failure's regression range and its first
    test's repro; an intermittent failure runs each nightly 3 times, and says so."""
    builds = nightly_builds(first_day=1, count=5, first_bad=2)
    repo = checkout(tmp_path / "repo")
    cache = tmp_path / "cache"
    cached_ci_failure(repo, cache, builds[0].version, builds[-1].version, intermittent=True)
    with nightly_index(tmp_path / "wheels", builds) as (url, _):
        args = ["bisect", "--index-url", url, "--repo", str(repo), "--cache-dir", str(cache)]
        args += ["--state-dir", str(tmp_path / "state"), "--json"]
        done = scout(*args, env=without_uv())
        other = scout(*args, "--test", "nope", env=without_uv())
    assert done.returncode == 0, done.stderr
    assert f"from {builds[0].version} (passed in CI) to {builds[-1].version}" in done.stderr
    assert "each nightly is run 3 times" in done.stderr
    assert "(run 3 of 3)" in done.stderr  # a passing nightly, run three times
    assert json.loads(done.stdout)["first_bad"]["version"] == builds[2].version
    assert other.returncode == 2 and "no CI failure with a regression range" in other.stderr
    nothing = scout("bisect", "--repo", str(tmp_path / "repo"), "--cache-dir", str(tmp_path / "c2"))
    assert nothing.returncode == 2 and "collect the day's run first" in nothing.stderr


def test_repro_runs_in_a_nightlys_environment(tmp_path) -> None:
    """`scout repro --run --nightly V` (a version or a day): the repro in that nightly's
    environment, the one bisect kept reused — how a maintainer checks a fix."""
    builds = nightly_builds(first_day=1, count=3, first_bad=2)
    repo = checkout(tmp_path / "repo")
    cache, state = tmp_path / "cache", tmp_path / "state"
    with nightly_index(tmp_path / "wheels", builds) as (url, _):

        def repro(nightly: str) -> subprocess.CompletedProcess:
            where = places(repo, cache, state, url)
            run = ["repro", "--command", REPRO, "--run", "--nightly", nightly, *where]
            return scout(*run, env=with_uv())

        good, bad = repro(builds[1].version), repro("2026-06-03")
        again = repro(builds[1].version)
    assert good.returncode == 0 and "loss 2" in good.stdout, good.stderr
    assert bad.returncode != 0 and FAILURE.split(":")[0] in bad.stdout + bad.stderr
    assert "building an environment" not in again.stderr  # kept, reused
    refused = scout("repro", "--command", "torchrun train.py", "--nightly", "2026-06-01")
    assert refused.returncode == 2 and "give --run too" in refused.stderr


def test_the_commits_between_are_counted_by_githubs_compare(tmp_path) -> None:
    """Online: `commits_between` from GitHub's compare API (the real client over HTTP to
    the local GitHub); offline: null, with the reason."""
    from scout_tui.sandbox.github.http import LocalGitHub
    from scout_tui.sandbox.github.world import Account, Repository, Token, World

    builds = nightly_builds(first_day=1, count=4, first_bad=2)
    history = [builds[0].commit, "a" * 40, builds[1].commit, *("b" * 39 + c for c in "cde")]
    history += [builds[2].commit, builds[3].commit]  # 4 commits after the last good one
    world = World(
        accounts=[Account(login="maintainer", id=1), Account(login="pytorch", id=2)],
        tokens=[Token(token="tok-bisect", login="maintainer")],
        repositories=[Repository(full_name="pytorch/pytorch", id=3, history=history)],
    )
    repo = checkout(tmp_path / "repo")
    with (
        nightly_index(tmp_path / "wheels", builds) as (url, _),
        LocalGitHub(world) as github,
    ):
        args = bisect_args(repo, tmp_path / "cache", url, builds[0].version, builds[-1].version)
        online = scout(
            *args, "--api-url", github.url, env={"GH_ENTERPRISE_TOKEN": "tok-bisect", **with_uv()}
        )
        offline = scout(*args, "--offline", env=with_uv())
    found = json.loads(online.stdout)
    assert found["last_good"]["commit"] == builds[1].commit, online.stderr
    assert found["commits_between"] == 4, (found["commits_between_why"], online.stderr)
    assert found["commits_between_why"] is None
    assert any("/compare/" in entry.path for entry in github.log)
    found = json.loads(offline.stdout)
    assert found["commits_between"] is None and found["commits_between_why"] == "skipped — offline"


def test_a_checkout_does_not_choose_where_torch_comes_from(tmp_path) -> None:
    """A checkout's uv.toml, and a requirements file naming indexes, are not read as
    where to install from: the other index is never asked (run from inside the checkout,
    where uv would find its uv.toml)."""
    builds = nightly_builds(first_day=1, count=3, first_bad=2)
    evil_builds = nightly_builds(first_day=1, count=3, first_bad=99)  # would pass everywhere
    repo = checkout(tmp_path / "repo")
    with (
        nightly_index(tmp_path / "wheels", builds) as (url, _),
        nightly_index(tmp_path / "evil", evil_builds, json_pages=True) as (evil, asked),
    ):
        (repo / "uv.toml").write_text(f'[pip]\nextra-index-url = ["{evil}"]\n')
        (repo / "requirements.txt").write_text(f"--extra-index-url {evil}\n-i {evil}\n")
        for n, env in enumerate((with_uv(), without_uv())):
            cache = tmp_path / f"cache-{n}"
            args = bisect_args(repo, cache, url, builds[0].version, builds[-1].version)
            done = subprocess.run(
                [sys.executable, "-m", "scout_tui", *args],
                capture_output=True,
                text=True,
                env={**os.environ, **env},
                cwd=repo,
                timeout=600,
            )
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["first_bad"]["version"] == builds[2].version
    assert asked.requests == []


def test_a_repro_leaves_nothing_running_and_its_end_decides(tmp_path) -> None:
    """A repro that starts a background child holding its output and then fails: the
    failure counts at once (not a timeout), and the child is stopped with the run."""
    builds = nightly_builds(first_day=1, count=3, first_bad=2)
    repo = checkout(tmp_path / "repo")
    marker = f"sleep-{os.getpid()}-{tmp_path.name}"
    (repo / "train.py").write_text(
        "import subprocess, sys\n"
        f"subprocess.Popen(['bash', '-c', 'exec -a {marker} sleep 300'])\n" + TRAIN
    )
    with nightly_index(tmp_path / "wheels", builds) as (url, _):
        args = bisect_args(repo, tmp_path / "cache", url, builds[0].version, builds[-1].version)
        done = scout(*args, "--timeout", "60", env=with_uv())
    found = json.loads(done.stdout)
    assert found["first_bad"]["version"] == builds[2].version, done.stderr
    assert found["could_not_test"] == []  # the failure counted, not taken for a timeout
    assert {run["result"] for run in found["runs"]} <= {"pass", "fail"}
    assert running(marker) == []


def test_results_are_not_reused_over_an_uncommitted_edit(tmp_path) -> None:
    builds = nightly_builds(first_day=1, count=3, first_bad=2)
    repo = checkout(tmp_path / "repo")
    with nightly_index(tmp_path / "wheels", builds) as (url, _):
        args = bisect_args(repo, tmp_path / "cache", url, builds[0].version, builds[-1].version)
        first = scout(*args, env=with_uv())
        (repo / "train.py").write_text("print('patched: no torch at all')\n")
        again = scout(*args, env=with_uv())
    assert first.returncode == 0, first.stderr
    assert "kept from an earlier run" not in again.stderr
    assert json.loads(again.stdout)["decision"] == "does not reproduce"


def test_names_made_from_an_index_stay_short_and_say_no_password() -> None:
    from scout_tui.nightlies.envs import safe_name
    from scout_tui.nightlies.index import shown

    absurd = "2." + ".".join("0" * 3 for _ in range(200)) + ".dev20260602"
    assert len(safe_name(absurd)) <= 48 and safe_name(absurd) != safe_name(absurd + "1")
    assert safe_name("2.13.0.dev20260602+cu130") == "2.13.0.dev20260602+cu130"
    assert shown("https://me:ghp_secret@pypi.example/simple") == "https://pypi.example/simple"
    assert (
        shown("https://download.pytorch.org/whl/nightly")
        == "https://download.pytorch.org/whl/nightly"
    )


@pytest.mark.parametrize(
    ("ci_error", "reproduced"),
    [
        (f"RuntimeError: {FAILURE.replace('layer 3', 'layer 5')}", True),  # numbers vary
        ("ValueError: the batch has 0 tokens", False),
    ],
)
def test_the_bad_end_must_fail_with_cis_root_cause(tmp_path, ci_error, reproduced) -> None:
    """From the day's CI failure: the bad end's failure counts only when its normalised
    root cause is CI's; another error there is no reproduction (exit 1, said why)."""
    builds = nightly_builds(first_day=1, count=4, first_bad=2)
    repo = checkout(tmp_path / "repo")
    cache = tmp_path / "cache"
    cached_ci_failure(
        repo, cache, builds[0].version, builds[-1].version, intermittent=False, ci_error=ci_error
    )
    with nightly_index(tmp_path / "wheels", builds) as (url, _):
        args = ["bisect", *places(repo, cache, tmp_path / "state", url), "--json"]
        done = scout(*args, env=with_uv())
    found = json.loads(done.stdout)
    assert "CI's root cause, which the bad end must show" in done.stderr
    if reproduced:
        assert done.returncode == 0, done.stderr
        assert found["first_bad"]["version"] == builds[2].version
    else:
        assert done.returncode == 1
        assert found["decision"] == "the bad end could not be tested"
        assert found["could_not_test"][0]["why"].startswith("a different error")
        assert len(found["runs"]) == 1


def test_the_committed_schema_is_the_documents() -> None:
    assert BISECT_SCHEMA_FILE.read_text() == render_schema(), (
        "schema/bisect.schema.json is stale: run `python -m scout_tui.cli.bisect`"
    )
