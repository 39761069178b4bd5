"""The example GitHub Actions workflow in examples/: valid YAML, a matrix of experiments,
and every `scout` command in it one that exists, with flags it takes."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from scout_tui.cli.dispatch import build_parser

WORKFLOW = Path(__file__).resolve().parents[1] / "examples" / "github-actions" / "nightly-scout.yml"


def scout_commands(workflow: dict, values: dict[str, str]) -> list[list[str]]:
    """The `scout` command lines of the run steps, matrix expressions replaced by values."""
    commands = []
    for job in workflow["jobs"].values():
        for step in job["steps"]:
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
    commands = scout_commands(workflow, {"matrix.experiment.config": first["config"],
                                         "matrix.experiment.name": first["name"]})
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


def test_the_readme_shows_how_a_reviewer_opens_the_bundles() -> None:
    readme = (WORKFLOW.parents[2] / "README.md").read_text()
    assert "examples/github-actions/nightly-scout.yml" in readme
    assert "scout open" in readme and "gh run download" in readme
