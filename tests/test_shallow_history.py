"""A clone with `--depth 1` (what actions/checkout gives by default) has no history: scout
says so once and claims no age or "since" that rests on the missing part."""

from __future__ import annotations

import json
import subprocess

from tests.cli import DAY, scout


def test_a_shallow_clone_is_said_and_claims_nothing_about_the_history_it_lacks(
    tmp_path, sample_world
):
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{sample_world.repo}", str(shallow)],
        check=True,
    )
    args = [
        "--repo",
        str(shallow),
        "--config",
        str(sample_world.config),
        "--date",
        DAY,
        "--offline",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / "state"),
    ]
    done = scout("collect", *args, "--json")
    assert done.returncode == 0, done.stderr
    assert "shallow clone: the history is cut at 1 commit(s)" in done.stderr
    assert done.stderr.count("warning: shallow clone") == 1
    run = json.loads(done.stdout)
    states = {state["name"]: state for state in run["collectors"]}
    assert states["upstream_delta"]["state"] == "skipped"
    assert "shallow clone" in states["upstream_delta"]["reason"]
    text = "\n".join(f"{f['title']}\n{f['body']}" for f in run["findings"])
    assert "registered since" not in text  # the configs are not new: the history is cut
    assert "age unknown (shallow clone)" in text and " 0 days old" not in text
    assert "new since" not in text and "written since" not in text.lower()
    # The full clone of the same commit says what the shallow one could not.
    full = scout("collect", *args[:1], str(sample_world.repo), *args[2:], "--json")
    assert full.returncode == 0 and "shallow" not in full.stderr
    full_text = "\n".join(f["body"] for f in json.loads(full.stdout)["findings"])
    assert "days old" in full_text and "age unknown" not in full_text
