from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading

import git
import pytest

from scout_tui.model import SCHEMA_VERSION, RunResult
from scout_tui.report.schema import SCHEMA_FILE, render
from scout_tui.sandbox.demo.sample import build_sample
from tests.cli import DAY, scout, world_args

SUBCOMMANDS = [
    "collect",
    "report",
    "publish",
    "triage",
    "cache",
    "demo",
    "ci-log",
    "repro",
    "torch-commit",
    "help",
    "completion",
]


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_help_everywhere(command):
    done = scout(command, "--help")
    assert done.returncode == 0 and "usage: scout " + command in done.stdout


def test_help_names_the_console_and_every_command():
    done = scout("--help")
    assert done.returncode == 0
    assert "the triage console opens" in done.stdout
    assert all(command in done.stdout for command in SUBCOMMANDS)
    # Examples, the environment it reads, and what its exit codes mean.
    for section in ("examples:", "environment:", "exit codes:"):
        assert f"\n{section}\n" in done.stdout
    for variable in ("GH_TOKEN", "SCOUT_STATE_DIR", "SCOUT_GITHUB_API_URL", "NO_COLOR"):
        assert variable in done.stdout
    assert "130   interrupted" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= 80  # a terminal's width
    # What each code is said to mean is what it does: a publish offline is bad usage (2).
    codes = " ".join(done.stdout.split("\nexit codes:\n", 1)[1].split())
    refused = scout("--offline", "publish", "--yes")
    assert refused.returncode == 2 and "2 bad usage or configuration (and publish offline" in codes
    assert "refused publish" not in codes


@pytest.mark.parametrize("topic", [["publish"], ["triage", "undo"], []])
def test_scout_help_cmd_is_cmd_help(topic):
    done = scout("help", *topic)
    assert done.returncode == 0
    assert done.stdout == scout(*topic, "--help").stdout


def test_scout_help_of_no_such_command_is_bad_usage():
    done = scout("help", "publsh")
    assert done.returncode == 2 and "invalid choice: 'publsh'" in done.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_code_for_each_shell_completes_commands_and_options(shell, tmp_path):
    done = scout("completion", shell)
    assert done.returncode == 0 and "scout" in done.stdout and "_ARGCOMPLETE" in done.stdout
    if shell != "bash" or not shutil.which("bash"):
        return
    # What the shell asks through the completion code: the words for a partial line.
    script = tmp_path / "complete.sh"
    script.write_text(
        done.stdout
        + '\nCOMP_LINE="scout publish --dr"; COMP_POINT=${#COMP_LINE}\n'
        + "COMP_WORDS=(scout publish --dr); COMP_CWORD=2\n"
        + "_python_argcomplete scout\n"
        + 'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scout").write_text(f'#!/bin/sh\nexec {sys.executable} -m scout_tui "$@"\n')
    (bin_dir / "scout").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    shown = subprocess.run(
        ["bash", str(script)], capture_output=True, text=True, env=env, timeout=60
    )
    assert "--dry-run" in shown.stdout.split(), shown.stderr


def test_headless_commands_do_not_import_textual():
    code = (
        "import sys, scout_tui.cli.dispatch, scout_tui.cli.run, scout_tui.cli.triage, "
        "scout_tui.cli.ci, scout_tui.session; print('textual' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_not_a_git_folder_is_usage_error(tmp_path):
    done = scout("collect", "--repo", tmp_path, "--cache-dir", tmp_path / "c")
    assert done.returncode == 2
    assert done.stderr.strip() == f"scout: error: not a git repository: {tmp_path}"
    done = scout("report", "--repo", tmp_path / "nonexistent", "--cache-dir", tmp_path / "c")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"scout: error: --repo {tmp_path / 'nonexistent'}: no such folder"


def test_missing_prior_folder_and_unknown_collector(tmp_path, sample_world):
    base = ["--repo", str(sample_world.repo), "--cache-dir", str(tmp_path / "c")]
    done = scout("collect", *base, "--prior", tmp_path / "nope")
    assert done.returncode == 2 and "prior reports folder not found" in done.stderr
    done = scout("collect", *base, "--only", "nonsense")
    assert done.returncode == 2 and "unknown collector nonsense" in done.stderr


def test_collect_json_is_the_documented_interface(tmp_path, sample_world):
    done = scout("collect", *world_args(sample_world, tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    run = RunResult.model_validate(data)  # validates against the models the schema comes from
    assert data["schema_version"] == SCHEMA_VERSION == 2
    assert run.date.isoformat() == DAY
    assert [p.date.isoformat() for p in run.prior_reports] == ["2026-11-30", "2026-12-01"]
    assert run.since.isoformat() == "2026-12-01T00:00:00+00:00"
    assert run.checkout is not None and run.checkout.path == str(sample_world.repo.resolve())
    assert run.experiment == "torchtitan/experiments/graph_trainer"
    assert run.collected_at is not None and run.complete
    assert run.head == git.Repo(sample_world.repo).head.commit.hexsha
    states = {c.name: c.state for c in run.collectors}
    assert states["todos"] == "done" and states["ci_failures"] == "skipped"
    assert any(f.kind == "todo_blocked" for f in run.findings)
    # Progress goes to stderr, never into the JSON.
    assert "TODO unblock detection: done" in done.stderr


def test_strict_names_each_problem_but_not_what_was_asked_for(tmp_path, sample_world):
    done = scout("collect", *world_args(sample_world, tmp_path), "--strict")
    assert done.returncode == 1  # the GitHub collectors cannot run: no token
    named = [line for line in done.stderr.splitlines() if line.startswith("scout: strict:")]
    assert named == [
        "scout: strict: CI failure monitoring (ci_failures) skipped — no GitHub token (set "
        "GH_TOKEN or GITHUB_TOKEN, or `gh auth login`)",
        "scout: strict: Open work tracking (open_work) skipped — no GitHub token (set GH_TOKEN "
        "or GITHUB_TOKEN, or `gh auth login`)",
    ]
    # Skipped because the user said --offline: not a problem.
    done = scout("collect", *world_args(sample_world, tmp_path), "--strict", "--offline")
    assert done.returncode == 0, done.stderr
    done = scout("collect", *world_args(sample_world, tmp_path), "--strict", "--only", "todos")
    assert done.returncode == 0


def test_report_uses_the_cached_run_and_writes_a_file(tmp_path, sample_world):
    assert scout("collect", *world_args(sample_world, tmp_path)).returncode == 0
    done = scout("report", *world_args(sample_world, tmp_path), "-o", tmp_path / "out" / "r.md")
    assert done.returncode == 2  # a mistyped folder is said, not made
    assert done.stderr.strip().endswith(f"no such folder {tmp_path / 'out'}")
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "report.md"
    done = scout("report", *world_args(sample_world, tmp_path), "-o", out)
    assert done.returncode == 0, done.stderr
    assert "TODO unblock detection" not in done.stderr  # no second collection
    text = out.read_text()
    assert text.startswith(f"# Nightly Scout Report — {DAY}\n")
    assert "## Carried Forward (from prior reports, re-investigated)" in text
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_run_belongs_to_its_checkout(tmp_path):
    """Same profile, same day, two checkouts: each reports its own run."""
    a = build_sample(tmp_path / "a", __import__("datetime").date(2026, 12, 2))
    b = tmp_path / "b"
    git.Repo(a.repo).git.worktree("add", str(b), "HEAD~2")  # a second worktree, older
    cache = [
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / "state"),
        "--config",
        str(a.config),
        "--date",
        DAY,
        "--offline",
    ]
    assert scout("collect", "--repo", a.repo, *cache).returncode == 0
    done_b = scout("report", "--repo", b, *cache, "--json")
    assert done_b.returncode == 0, done_b.stderr
    assert "TODO unblock detection: done" in done_b.stderr  # B had no run: it collected
    run_b = RunResult.model_validate_json(done_b.stdout)
    run_a = RunResult.model_validate_json(
        scout("report", "--repo", a.repo, *cache, "--json").stdout
    )
    assert run_b.checkout.path == str(b.resolve()) and run_a.checkout.path == str(a.repo.resolve())
    assert run_b.checkout.id != run_a.checkout.id
    assert run_b.head != run_a.head


def test_a_stale_cached_run_is_used_with_a_warning(tmp_path, fresh_world):
    from tests.collector_run import commit_all
    from tests.conftest import TODAY

    args = world_args(fresh_world, tmp_path)  # as of TODAY: its last commit is scanned
    assert scout("collect", *args).returncode == 0
    (fresh_world.repo / "NEW.md").write_text("new\n")
    commit_all(
        fresh_world.repo,
        "a commit after the collection, that day",
        f"{TODAY.isoformat()}T23:00:00+00:00",
    )
    done = scout("report", *args)
    assert done.returncode == 0
    assert "using the cached run, which is what was reviewed" in done.stderr
    assert "TODO unblock detection" not in done.stderr
    done = scout("report", *args, "--recollect")
    assert "TODO unblock detection: done" in done.stderr and "cached run scanned" not in (
        done.stderr
    )


def test_an_only_run_never_replaces_the_days_run(tmp_path, sample_world):
    args = world_args(sample_world, tmp_path)
    assert scout("collect", *args).returncode == 0
    assert scout("collect", *args, "--only", "docs").returncode == 0
    done = scout("report", *args, "--json")
    run = RunResult.model_validate_json(done.stdout)
    assert run.only is None and len(run.collectors) == 9
    assert "Docs freshness" not in done.stderr  # from the cache, not collected again
    done = scout("report", *args, "--only", "docs", "--json")
    assert RunResult.model_validate_json(done.stdout).only == ["docs"]
    assert "Docs freshness" not in done.stderr  # the --only run was cached apart


def test_report_honours_prior(tmp_path, sample_world):
    args = world_args(sample_world, tmp_path, prior=False)
    assert scout("collect", *args).returncode == 0
    done = scout("report", *args, "--prior", sample_world.priors, "--json")
    assert done.returncode == 0
    assert "collecting again" in done.stderr
    run = RunResult.model_validate_json(done.stdout)
    assert [p.date.isoformat() for p in run.prior_reports] == ["2026-11-30", "2026-12-01"]


def test_date_before_the_first_commit_is_a_usage_error(tmp_path, sample_world):
    args = world_args(sample_world, tmp_path, day="2020-01-01")
    done = scout("collect", *args)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "scout: error: --date 2020-01-01 is before the first "
        "commit of torchtitan/experiments/graph_trainer/ "
        "(2026-11-26, UTC)"
    )


def test_scout_toml_is_found_from_the_checkout_root(tmp_path, fresh_world):
    (fresh_world.repo / "scout.toml").write_text("[project]\ntracking_issue = 4242\n")
    subfolder = fresh_world.repo / "torchtitan"
    done = scout(
        "publish",
        "--repo",
        subfolder,
        "--date",
        DAY,
        "--offline",
        "--dry-run",
        "--cache-dir",
        tmp_path / "c",
        "--state-dir",
        tmp_path / "s",
    )
    assert done.returncode == 0, done.stderr
    assert "1 comment on #4242" in done.stdout


# -- -o ------------------------------------------------------------------------------------
def test_output_through_a_symlink_writes_its_target(tmp_path, sample_world):
    target = tmp_path / "real.md"
    target.write_text("old\n")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    done = scout("report", *world_args(sample_world, tmp_path), "-o", link)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and target.read_text().startswith("# Nightly Scout Report")


def test_output_into_a_fifo_writes_into_it(tmp_path, sample_world):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    done = scout("report", *world_args(sample_world, tmp_path), "-o", fifo)
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a FIFO, not replaced by a file
    assert received[0].startswith(b"# Nightly Scout Report")


def test_output_to_a_device_and_to_stdout(tmp_path, sample_world):
    done = scout("report", *world_args(sample_world, tmp_path), "-o", "/dev/null")
    assert done.returncode == 0 and done.stdout == ""
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    done = scout("report", *world_args(sample_world, tmp_path), "-o", "-")
    assert done.stdout.startswith("# Nightly Scout Report")


def test_output_to_a_directory_is_a_usage_error_that_leaves_nothing(tmp_path, sample_world):
    folder = tmp_path / "out"
    folder.mkdir()
    done = scout("collect", *world_args(sample_world, tmp_path), "--json", "-o", folder)
    assert done.returncode == 2
    assert done.stderr.strip() == f"scout: error: -o {folder}: is a directory"
    assert list(folder.iterdir()) == []
    assert "TODO unblock detection" not in done.stderr  # refused before collecting
    assert not (tmp_path / "cache").exists()


# -- cache -----------------------------------------------------------------------------------
def test_cache_info_and_clear(tmp_path, sample_world):
    assert scout("collect", *world_args(sample_world, tmp_path)).returncode == 0
    done = scout("cache", "info", "--json", "--cache-dir", tmp_path / "cache")
    assert json.loads(done.stdout)["runs"] == [DAY]
    # Which checkout each run is of, and where the decisions are (not in the cache).
    state = tmp_path / "state"
    text = scout(
        "cache", "info", "--cache-dir", tmp_path / "cache", env={"SCOUT_STATE_DIR": str(state)}
    )
    assert f"{DAY} torchtitan/experiments/graph_trainer in {sample_world.repo}:" in text.stdout
    assert text.stdout.rstrip().endswith(
        f"state store (decisions, publish journal; never cleared): {state / 'state.sqlite3'}"
        " (none yet)"
    )
    done = scout("cache", "clear", "--cache-dir", tmp_path / "cache")
    assert done.returncode == 0 and "cleared" in done.stdout
    done = scout("cache", "info", "--json", "--cache-dir", tmp_path / "cache")
    assert json.loads(done.stdout)["runs"] == []


def test_cache_commands_on_no_cache_create_nothing(tmp_path):
    missing = tmp_path / "no-cache"
    done = scout("cache", "clear", "--cache-dir", missing)
    assert done.returncode == 0
    assert done.stdout.strip() == f"no cache at {missing / 'v2'}; nothing to clear"
    done = scout("cache", "info", "--cache-dir", missing)
    assert done.returncode == 0 and "no cache at" in done.stdout
    assert not missing.exists()


def test_committed_schema_is_current():
    assert SCHEMA_FILE.read_text() == render(), "run: python -m scout_tui.report.schema"


def test_a_checkout_without_the_experiment_is_a_usage_error(tmp_path):
    git.Repo.init(tmp_path)
    done = scout("collect", "--repo", tmp_path, "--cache-dir", tmp_path / "c")
    assert done.returncode == 2
    assert "has no torchtitan/experiments/graph_trainer/ — is this the right checkout?" in (
        done.stderr
    )


def test_a_changed_configuration_collects_again(tmp_path, sample_world):
    args = world_args(sample_world, tmp_path)
    assert scout("collect", *args).returncode == 0
    changed = tmp_path / "scout.toml"
    changed.write_text(
        sample_world.config.read_text() + '\n[rules.pass_untested]\npriority = "P2"\n'
    )
    args[args.index("--config") + 1] = str(changed)
    done = scout("report", *args, "--json")
    assert "the configuration changed since the cached run: collecting again" in done.stderr
    run = RunResult.model_validate_json(done.stdout)
    assert {f.priority.value for f in run.findings if f.kind == "pass_untested"} == {"P2"}


def test_triage_lists_and_decides_on_the_cached_run_even_when_the_configuration_changed(
    tmp_path, sample_world
):
    """`scout triage` never collects over the day's run (a listing is read-only): with
    another configuration it uses the cached run as it is, and says so."""
    args = world_args(sample_world, tmp_path)
    assert scout("collect", *args).returncode == 0
    before = scout("triage", *args, "list", "--json")
    changed = tmp_path / "scout.toml"
    changed.write_text(
        sample_world.config.read_text() + '\n[rules.pass_untested]\npriority = "P2"\n'
    )
    args[args.index("--config") + 1] = str(changed)
    done = scout("triage", *args, "list", "--json")
    assert done.returncode == 0, done.stderr
    assert (
        "the configuration changed since the cached run: using the cached run as it is"
        in done.stderr
    )
    assert "collecting again" not in done.stderr
    assert json.loads(done.stdout) == json.loads(before.stdout)


def test_a_partial_run_says_so_in_its_report(tmp_path, sample_world):
    done = scout("report", *world_args(sample_world, tmp_path), "--only", "todos")
    assert "_Partial report: only TODO unblock detection ran._" in done.stdout


def test_bad_usage_is_one_line_naming_the_commands_help():
    for argv, command in (
        (["report", "--bogus"], "report"),
        (["collect", "--date", "x"], "collect"),
        (["triage", "drop", "abc"], "triage drop"),
    ):
        done = scout(*argv)
        assert done.returncode == 2
        [line] = done.stderr.splitlines()
        assert line.startswith("scout: error: ")
        assert line.endswith(f"(see `scout {command} --help`)")


def test_fail_on_a_new_p0_alerts_cron_and_a_dropped_one_does_not(tmp_path, sample_world):
    """`collect --fail-on new:P0` exits 1 naming the new P0s; a P0 the reviewer dropped
    alerts nobody; `new:P2` never misses what `new:P0` catches; bad WHICH:PRIORITY is 2."""
    args = world_args(sample_world, tmp_path)
    listed = json.loads(scout("triage", "list", "--json", "--offline", *args).stdout)
    p0 = [r for r in listed if r["priority"] == "P0" and r["status"] == "new"]
    assert p0, "the sample has a new P0"
    done = scout("collect", "--offline", "--fail-on", "new:P0", *args)
    assert done.returncode == 1
    said = [line for line in done.stderr.splitlines() if line.startswith("scout: fail-on")]
    assert said == [
        f"scout: fail-on new:P0: {len(p0)} finding(s) — "
        + "; ".join(f"[P0] {r['title']}" for r in p0)
    ]
    for row in p0:
        assert (
            scout("triage", "drop", row["fingerprint"], "--reason", "known", *args).returncode == 0
        )
    again = scout("collect", "--offline", "--fail-on", "new:P0", *args)
    assert again.returncode == 0, again.stderr
    wider = scout("collect", "--offline", "--fail-on", "new:P2", *args)
    assert wider.returncode == (
        1 if any(r["priority"] in ("P1", "P2") and r["status"] == "new" for r in listed) else 0
    )
    bad = scout("collect", "--offline", "--fail-on", "new:P7", *args)
    assert bad.returncode == 2 and "is not WHICH:PRIORITY" in bad.stderr


def test_a_command_that_must_collect_first_says_for_which_checkout_and_where(
    tmp_path, sample_world
):
    """No run of the day in this cache: the command says it collects one, naming the
    checkout and the cache (a person who reviewed elsewhere sees why nothing is decided);
    the next command uses the cached run and says nothing of it."""
    args = world_args(sample_world, tmp_path)
    first = scout("triage", "list", "--offline", *args)
    assert first.returncode == 0, first.stderr
    assert (
        f"scout: warning: no run of {DAY} for {sample_world.repo} in {tmp_path / 'cache'}"
        in first.stderr
    )
    again = scout("triage", "list", "--offline", *args)
    assert "no run of" not in again.stderr


def test_scout_debug_gives_the_traceback_of_a_usage_error_too(tmp_path):
    """SCOUT_DEBUG=1: every error's traceback before its line (bad usage included), with a
    token scrubbed from both as from the line."""
    token = "ghp_" + "A1b2C3d4" * 5
    done = scout("--repo", tmp_path / token, "report", env={"SCOUT_DEBUG": "1"})
    assert done.returncode == 2
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1].startswith("scout: error: --repo ")
    assert token not in done.stderr
    quiet = scout("--repo", tmp_path / "nowhere", "report")
    assert quiet.returncode == 2 and "Traceback" not in quiet.stderr
