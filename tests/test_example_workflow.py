"""The example GitHub Actions workflow in examples/: valid YAML, a matrix of experiments,
and every `scout` command in it one that exists, with flags it takes; the cron publish
with a GitHub App's token."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from scout_tui.cli.parser import build_parser
from scout_tui.config.profile import load_config

WORKFLOW = Path(__file__).resolve().parents[1] / "examples" / "github-actions" / "nightly-scout.yml"


def scout_commands(
    workflow: dict, values: dict[str, str], job_name: str = "scout"
) -> list[list[str]]:
    """The `scout` command lines of a job's run steps, matrix expressions replaced by values."""
    commands = []
    for step in workflow["jobs"][job_name]["steps"]:
        script = step.get("run", "").replace("\\\n", " ")
        for expression, value in values.items():
            script = script.replace("${{ " + expression + " }}", value)
        for line in script.splitlines():
            words = shlex.split(line)
            if words and words[0] == "scout":
                commands.append(words[1:])
    return commands


def test_the_example_workflow_collects_a_bundle_per_experiment() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    job = workflow["jobs"]["scout"]
    experiments = job["strategy"]["matrix"]["experiment"]
    assert len(experiments) >= 2 and job["strategy"]["fail-fast"] is False
    assert all(e["config"].endswith("scout.toml") for e in experiments)
    [upload] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert upload["with"]["path"] == "scout-${{ matrix.experiment.name }}.json.gz"
    first = experiments[0]
    commands = scout_commands(
        workflow,
        {"matrix.experiment.config": first["config"], "matrix.experiment.name": first["name"]},
    )
    assert commands, "the workflow runs scout"
    parser = build_parser()
    for words in commands:
        args, unknown = parser.parse_known_args(words)
        assert not unknown, f"scout {' '.join(words)}: unknown {unknown}"
        assert args.command == "collect" and str(args.bundle).endswith(".json.gz")
        assert args.config == Path(experiments[0]["config"])
        assert args.strict  # a partial run fails the job, visibly
    assert upload.get("if") == "always()"  # ... and its bundle is still there to review
    assert workflow["permissions"]["pull-requests"] == "read"


def test_the_example_workflow_publishes_with_a_github_app_token(tmp_path) -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    job = workflow["jobs"]["publish"]
    assert job["needs"] == "scout" and "vars.SCOUT_APP_ID" in job["if"]
    assert job["strategy"]["matrix"] == workflow["jobs"]["scout"]["strategy"]["matrix"]
    assert job["concurrency"]["cancel-in-progress"] is False  # a publish is never cut short
    [app] = [
        s for s in job["steps"] if s.get("uses", "").startswith("actions/create-github-app-token@")
    ]
    assert {"app-id", "private-key"} <= set(app["with"])
    assert "secrets." in app["with"]["private-key"]
    [publish] = [s for s in job["steps"] if "scout publish" in s.get("run", "")]
    # GH_TOKEN: the token scout takes for github.com (an enterprise host's is another).
    assert publish["env"]["GH_TOKEN"] == "${{ steps." + app["id"] + ".outputs.token }}"
    first = job["strategy"]["matrix"]["experiment"][0]
    values = {"matrix.experiment.config": first["config"], "matrix.experiment.name": first["name"]}
    [words] = scout_commands(workflow, values, "publish")
    args, unknown = build_parser().parse_known_args(words)
    assert not unknown, f"scout {' '.join(words)}: unknown {unknown}"
    assert args.command == "publish" and args.yes and not args.dry_run
    assert args.config == Path(first["config"])
    # The journal the next night reads back is the folder the cache step keeps.
    [cache] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
    kept = cache["with"]["path"].replace("${{ matrix.experiment.name }}", first["name"])
    assert args.state_dir == Path(kept)


def test_the_example_names_the_apps_bot_login_as_a_trusted_author(tmp_path) -> None:
    """The App's comments are by `<slug>[bot]`: the scout.toml lines the workflow shows load
    with scout's own configuration loader and trust that login."""
    text = WORKFLOW.read_text()
    lines = re.findall(r"^#   (\[project\]\n)#   (trusted_authors = .*)$", text, re.MULTILINE)
    [(table, authors)] = lines
    toml = tmp_path / "scout.toml"
    toml.write_text(table + authors + "\n")
    trusted = load_config(toml).project.trusted_authors
    assert any(re.fullmatch(r"[a-z0-9-]+\[bot\]", login) for login in trusted), trusted


def test_the_readme_shows_how_a_reviewer_opens_the_bundles() -> None:
    readme = (WORKFLOW.parents[2] / "README.md").read_text()
    assert "examples/github-actions/nightly-scout.yml" in readme
    assert "scout open" in readme and "gh run download" in readme
