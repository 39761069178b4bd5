"""scout.toml is written for the checkout's HEAD; a past day is scanned with it. A name
that lived elsewhere on the scanned day (its file renamed since, its class moved in from
another file) is followed back there and compared there, and a name a later commit adds
is not there yet: both said in the run's notes, not as configuration warnings. A name the
checkout's HEAD does not have either stays a warning."""

from __future__ import annotations

import subprocess

from scout_tui.model import fingerprint
from scout_tui.sandbox.demo.files import EXP

from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY

LATER = "2026-12-03T09:00:00+00:00"  # after the day scanned (TODAY), before the checkout's HEAD


def surfaces(*entries: tuple[str, str, str]) -> str:
    return "".join(
        f'\n[[upstream.surfaces]]\nname = "{name}"\ntarget = "{target}"\ncheck = "{check}"\n'
        for name, target, check in entries
    )


def test_surfaces_moved_after_the_scanned_day_are_followed_back_with_a_note(fresh_world):
    repo = fresh_world.repo
    # After the day scanned: attention.py renamed; MoE moved into a new, larger module
    # (not a rename git sees); a Gate class new. scout.toml names where they are now.
    subprocess.run(
        ["git", "mv", "torchtitan/models/common/attention.py", "torchtitan/models/attention.py"],
        cwd=repo,
        check=True,
    )
    moe = (repo / "torchtitan/models/common/moe.py").read_text()
    (repo / "torchtitan/models/common/moe.py").unlink()
    filler = "".join(f"\n\ndef helper_{n}(x):\n    return x + {n}\n" for n in range(12))
    gate = "\n\nclass Gate:\n    def forward(self, x):\n        return x\n"
    (repo / "torchtitan/models/common/layers.py").write_text(moe + filler + gate)
    commit_all(repo, "Reorganise attention and MoE", LATER)
    config = fresh_world.config
    config.write_text(
        config.read_text()
        + surfaces(
            ("Flex", "torchtitan/models/attention.py::FlexAttention.forward", "signature"),
            ("MoE", "torchtitan/models/common/layers.py::MoE.forward", "signature"),
            ("Gate", "torchtitan/models/common/layers.py::Gate.forward", "signature"),
        )
    )

    result = run_collector(fresh_world, "upstream_delta", TODAY)
    [state] = result.collectors
    assert state.state == "done", state.reason
    assert result.config_warnings == []
    notes = "\n".join(state.notes)
    assert (
        "torchtitan/models/attention.py::FlexAttention.forward is "
        "torchtitan/models/common/attention.py::FlexAttention.forward at this commit" in notes
    )
    assert "torchtitan/models/common/moe.py::MoE.forward at this commit" in notes
    assert "Reorganise attention and MoE" in notes
    assert "Gate.forward is not there yet at this commit" in notes
    found = by_kind(result)
    # Compared where it was: the window's change to FlexAttention.forward is found, under
    # the key scout.toml gives.
    [flex] = [f for f in found["surface_changed"] if f.title.startswith("Flex changed")]
    assert flex.fingerprint == fingerprint(
        "surface_changed", "torchtitan/models/attention.py::FlexAttention.forward"
    )
    assert flex.files[0].path == "torchtitan/models/common/attention.py"
    assert "scale" in " ".join(flex.items)
    (stable,) = found["surface_stable"]
    assert "MoE" in stable.items


def test_a_surface_that_never_existed_stays_a_warning(fresh_world):
    """The near miss: the checkout's HEAD lacks it too (a typo): no note, the warning."""
    repo = fresh_world.repo
    subprocess.run(
        ["git", "mv", "torchtitan/models/common/attention.py", "torchtitan/models/attention.py"],
        cwd=repo,
        check=True,
    )
    commit_all(repo, "Move attention", LATER)
    config = fresh_world.config
    config.write_text(
        config.read_text()
        + surfaces(("Inner", "torchtitan/models/attention.py::FlexInner.forward", "signature"))
    )
    result = run_collector(fresh_world, "upstream_delta", TODAY)
    [state] = result.collectors
    assert not any("FlexInner" in note for note in state.notes)
    [warning] = result.config_warnings
    assert "FlexInner.forward" in warning.subject
    assert "never" in warning.message or "does not exist" in warning.message


def test_a_doc_renamed_or_added_after_the_scanned_day_is_a_note(fresh_world):
    repo = fresh_world.repo
    subprocess.run(["git", "mv", f"{EXP}/README.md", f"{EXP}/GUIDE.md"], cwd=repo, check=True)
    (repo / EXP / "NEW.md").write_text("# New\n")
    commit_all(repo, "README is GUIDE; NEW", LATER)
    config = fresh_world.config
    config.write_text(
        config.read_text()
        + '\n[docs]\nfiles = [".claude/CLAUDE.md", "GUIDE.md", "AGENTS.md", "NEW.md", '
        '"NOTES.md"]\n'
    )
    result = run_collector(fresh_world, "docs", TODAY)
    [state] = result.collectors
    notes = "\n".join(state.notes)
    assert f"{EXP}/GUIDE.md is {EXP}/README.md at this commit" in notes
    assert f"{EXP}/NEW.md is not there yet" in notes
    # Read under its name of the day: its inaccuracy still found.
    problems = {f.files[0].path: f.items for f in by_kind(result)["doc_inaccuracy"]}
    assert problems[f"{EXP}/README.md"] == [
        "path `torchtitan/experiments/graph_trainer/old_passes.py` does not exist"
    ]
    # The near miss: NOTES.md was never anywhere — still scout.toml's to fix.
    [warning] = result.config_warnings
    assert warning.subject == "`[docs] files` NOTES.md"
