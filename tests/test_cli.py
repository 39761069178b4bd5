from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from scout_tui.model import RunResult
from scout_tui.report.schema import SCHEMA_FILE, render

SUBCOMMANDS = ["collect", "report", "publish", "cache", "demo"]


def scout(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "scout_tui", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "GH_TOKEN": ""},
    )


def common(world, tmp_path):
    return [
        "--repo",
        str(world.repo),
        "--config",
        str(world.config),
        "--prior",
        str(world.priors),
        "--date",
        "2026-12-02",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_help_everywhere(command):
    done = scout(command, "--help")
    assert done.returncode == 0 and "usage: scout " + command in done.stdout


def test_bare_scout_shows_help():
    done = scout()
    assert done.returncode == 0
    assert all(command in done.stdout for command in SUBCOMMANDS)


def test_headless_commands_do_not_import_textual():
    code = (
        "import sys, scout_tui.cli, scout_tui.commands, scout_tui.pipeline;"
        "print('textual' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_not_a_git_folder_is_usage_error(tmp_path):
    done = scout("collect", "--repo", str(tmp_path), "--cache-dir", str(tmp_path / "c"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"scout: error: not a git repository: {tmp_path}"


def test_missing_prior_folder_and_unknown_collector(tmp_path, sample_world):
    base = ["--repo", str(sample_world.repo), "--cache-dir", str(tmp_path / "c")]
    done = scout("collect", *base, "--prior", str(tmp_path / "nope"))
    assert done.returncode == 2 and "prior reports folder not found" in done.stderr
    done = scout("collect", *base, "--only", "nonsense")
    assert done.returncode == 2 and "unknown collector nonsense" in done.stderr


def test_collect_json_is_the_documented_interface(tmp_path, sample_world):
    done = scout("collect", *common(sample_world, tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    run = RunResult.model_validate(data)  # validates against the models the schema comes from
    assert data["schema_version"] == 1
    assert run.date.isoformat() == "2026-12-02"
    assert [p.date.isoformat() for p in run.prior_reports] == ["2026-11-30", "2026-12-01"]
    assert run.since.isoformat() == "2026-12-01T00:00:00+00:00"
    states = {c.name: c.state for c in run.collectors}
    assert states["todos"] == "done" and states["ci_failures"] == "skipped"
    assert any(f.kind == "todo_blocked" for f in run.findings)
    # Progress goes to stderr, never into the JSON.
    assert "TODO unblock detection: done" in done.stderr


def test_strict_turns_skips_into_exit_1(tmp_path, sample_world):
    done = scout("collect", *common(sample_world, tmp_path), "--strict")
    assert done.returncode == 1  # the GitHub collectors are skipped
    done = scout("collect", *common(sample_world, tmp_path), "--strict", "--only", "todos")
    assert done.returncode == 0


def test_report_uses_the_cached_run_and_writes_a_file(tmp_path, sample_world):
    assert scout("collect", *common(sample_world, tmp_path)).returncode == 0
    out = tmp_path / "out" / "report.md"
    done = scout("report", *common(sample_world, tmp_path), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "TODO unblock detection" not in done.stderr  # no second collection
    text = out.read_text()
    assert text.startswith("# Nightly Scout Report — 2026-12-02\n")
    assert "## Carried Forward (from prior reports, re-investigated)" in text


def test_publish_dry_run_prints_the_plan(tmp_path, sample_world):
    done = scout("publish", *common(sample_world, tmp_path), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "Publish plan for 2026-12-02: 1 comment on #2856" in done.stdout
    assert "[skipped — no GitHub layer yet] post or update today's report comment" in done.stdout
    done = scout("publish", *common(sample_world, tmp_path))
    assert done.returncode == 1 and "--dry-run" in done.stderr


def test_cache_info_and_clear(tmp_path, sample_world):
    assert scout("collect", *common(sample_world, tmp_path)).returncode == 0
    done = scout("cache", "info", "--json", "--cache-dir", str(tmp_path / "cache"))
    assert json.loads(done.stdout)["runs"] == ["2026-12-02"]
    done = scout("cache", "clear", "--cache-dir", str(tmp_path / "cache"))
    assert done.returncode == 0 and "cleared" in done.stdout
    done = scout("cache", "info", "--json", "--cache-dir", str(tmp_path / "cache"))
    assert json.loads(done.stdout)["runs"] == []


def test_committed_schema_is_current():
    assert SCHEMA_FILE.read_text() == render(), "run: python -m scout_tui.report.schema"


def test_a_checkout_without_the_experiment_is_a_usage_error(tmp_path):
    import git

    git.Repo.init(tmp_path)
    done = scout("collect", "--repo", str(tmp_path), "--cache-dir", str(tmp_path / "c"))
    assert done.returncode == 2
    assert "has no torchtitan/experiments/graph_trainer/ — is this the right checkout?" in (
        done.stderr
    )
