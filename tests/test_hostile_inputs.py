"""Big and hostile inputs in the checkout stay linear and local: a file of TODOs, a module
`ast` cannot take, a symlink out of the repository, a scout.toml path out of the checkout."""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import pytest

from scout_tui.analysis.python import pyast
from scout_tui.sandbox.demo.files import EXP
from scout_tui.sandbox.demo.sample import Sample, build_repo
from scout_tui.source.objects import MAX_FILE_BYTES
from tests.cli import scout, world_args
from tests.collector_run import commit_all
from tests.conftest import TODAY


def _collect(world: Sample, tmp_path: Path, *extra: str) -> dict:
    done = scout("collect", *world_args(world, tmp_path), "--offline", "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_twenty_thousand_todos_in_one_file_are_one_pass(tmp_path: Path):
    """The quadratic scan took hours here; a linear one takes seconds (no timing asserted:
    the timeout only stops a runaway)."""
    count = 20_000
    repo = tmp_path / "repo"
    build_repo(repo, TODAY, history=False)
    docstring = [f"TODO: document {n}" for n in range(count)]
    comments = [f"    x{n} = {n}  # TODO: note {n}" for n in range(count)]
    (repo / EXP / "many.py").write_text(
        '"""' + "\n".join(docstring) + '"""\n\n\ndef f():\n' + "\n".join(comments) + "\n"
    )
    commit_all(repo, "many TODOs")
    done = scout(
        "collect",
        "--repo",
        repo,
        "--offline",
        "--json",
        "--only",
        "todos",
        "--date",
        TODAY.isoformat(),
        "--cache-dir",
        tmp_path / "cache",
        "--state-dir",
        tmp_path / "state",
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert [c["state"] for c in run["collectors"]] == ["done"]
    # Kept for the console and --json, never reported (the shipped rules): in `left_out`.
    listed = [f for f in run["findings"] + run["left_out"] if f["kind"] == "todo_unclassified"]
    # No prior report: the first one, whose "new" is since the start of its day.
    assert listed[0]["title"].endswith(
        f": {2 * count} new today (first report: no baseline before the day's start)"
    )


HOSTILE_MODULES = {
    # The parser itself gives up (RecursionError), or refuses (SyntaxError). NUL bytes never
    # reach it: control characters are stripped where text enters scout.
    "deep_sum.py": "x = " + "1+" * 100_000 + "1\n",
    "deep_calls.py": "x = " + "f(" * 1000 + ")" * 1000 + "\n",
    "broken.py": "def broken(:\n    pass\n",
    # Parses, but the recursive walks over it (`ast.unparse` of a call's function, of a
    # test's decorator) would exhaust the stack.
    "deep_attribute.py": "x = a" + ".b" * 600 + ".build_mesh()\n",
    "tests/test_deep.py": "@a" + ".b" * 600 + ".mark\ndef test_x():\n    pass\n",
}


def test_a_module_ast_cannot_take_is_skipped_with_a_warning_and_every_collector_goes_on(
    fresh_world: Sample, tmp_path: Path
):
    experiment = fresh_world.repo / EXP
    for name, text in HOSTILE_MODULES.items():
        (experiment / name).write_text(text)
    commit_all(fresh_world.repo, "hostile modules")
    run = _collect(fresh_world, tmp_path)
    states = {c["name"]: (c["state"], c["reason"]) for c in run["collectors"]}
    assert all(state in ("done", "skipped") for state, _ in states.values()), states
    assert {name for name, (state, _) in states.items() if state == "skipped"} == {
        "ci_failures",
        "open_work",  # offline, as asked
    }
    warned = {w["subject"]: w["message"] for w in run["config_warnings"]}
    for name in HOSTILE_MODULES:
        path = f"{EXP}/{name}"
        assert path in warned, sorted(warned)
        assert warned[path].startswith(f"{path}: skipped — ")
    assert "nested too deeply for Python's parser" in warned[f"{EXP}/deep_sum.py"]
    assert f"nested more than {pyast.MAX_DEPTH} levels" in warned[f"{EXP}/tests/test_deep.py"]
    # said once each, though several collectors (and processes) met each file
    assert len(run["config_warnings"]) == len(
        {(w["subject"], w["message"]) for w in run["config_warnings"]}
    )


def test_the_depth_limit_leaves_room_for_the_recursive_walks():
    """A tree at the limit is read by `ast.unparse` even a third of the way into Python's
    stack (where a collector's walk starts); one level more is refused."""
    expression = "x = " + "1+" * (pyast.MAX_DEPTH - 4) + "1"
    tree = pyast.parse(expression)
    assert pyast.parse_expression(expression[4:]) is not None

    def unparsed_at(frames: int) -> str:
        return unparsed_at(frames - 1) if frames else ast.unparse(tree)

    assert unparsed_at(sys.getrecursionlimit() // 3).startswith("x = 1 + 1")
    with pytest.raises(pyast.Unparsable, match="levels deep"):
        pyast.parse("x = " + "1+" * (pyast.MAX_DEPTH + 1) + "1")


def test_a_symlink_out_of_the_repository_is_never_read(fresh_world: Sample, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = "OUTSIDE-SECRET-7f3a9c"
    (outside / "secret.py").write_text(f"# TODO: {secret} waits on pytorch/pytorch#4242\n")
    (outside / "README.md").write_text(f"Run `{secret}.py` with `--{secret}`.\n")
    experiment = fresh_world.repo / EXP
    (experiment / "leak.py").symlink_to(outside / "secret.py")
    (experiment / "leak_relative.py").symlink_to(os.path.relpath(outside / "secret.py", experiment))
    (experiment / "README.md").unlink()
    (experiment / "README.md").symlink_to(outside / "README.md")
    (experiment / "vendored").symlink_to(outside, target_is_directory=True)
    # Inside the checkout's folder, but git's own: a remote URL there may hold a token.
    with (fresh_world.repo / ".git" / "config").open("a") as config:
        config.write(f"# TODO: {secret} waits on pytorch/pytorch#4244\n")
    (experiment / "git_config.py").symlink_to(
        os.path.relpath(fresh_world.repo / ".git/config", experiment)
    )
    # A link that stays inside the repository is read as its real file.
    inside = "INSIDE-NOTE-51c2e0"
    (fresh_world.repo / "notes").mkdir()
    (fresh_world.repo / "notes" / "real.py").write_text(
        f"# TODO: {inside} waits on pytorch/pytorch#4243\n"
    )
    (experiment / "linked.py").symlink_to(
        os.path.relpath(fresh_world.repo / "notes/real.py", experiment)
    )
    commit_all(fresh_world.repo, "links")
    done = scout("collect", *world_args(fresh_world, tmp_path), "--offline", "--json")
    assert done.returncode == 0, done.stderr
    report = scout("report", *world_args(fresh_world, tmp_path), "--offline")
    assert report.returncode == 0, report.stderr
    for text in (done.stdout, done.stderr, report.stdout, report.stderr):
        assert secret not in text
    assert inside in done.stdout and inside in report.stdout
    warned = [w["message"] for w in json.loads(done.stdout)["config_warnings"]]
    assert f"{EXP}/README.md is a symlink out of the repository: not read." in "\n".join(warned)


@pytest.mark.parametrize(
    ("toml", "key", "value"),
    [
        ('[project]\nexperiment = "/etc"\n', "project.experiment", "/etc"),
        (
            '[docs]\nfiles = ["README.md", "../../../../etc/passwd"]\n',
            "docs.files",
            "../../../../etc/passwd",
        ),
        (
            '[upstream]\ncore_paths = ["torchtitan/", "../outside/"]\n',
            "upstream.core_paths",
            "../outside/",
        ),
        (
            '[freshness]\nbase_config = "/home/me/x.py::Config"\n',
            "freshness.base_config",
            "/home/me/x.py::Config",
        ),
        ('[ci]\ntests_dir = "../../../../tmp"\n', "ci.tests_dir", "../../../../tmp"),
    ],
)
def test_a_scout_toml_path_out_of_the_checkout_is_refused(
    sample_world: Sample, tmp_path: Path, toml: str, key: str, value: str
):
    config = tmp_path / "scout.toml"
    config.write_text(toml)
    args = world_args(sample_world, tmp_path)
    args[args.index("--config") + 1] = str(config)
    done = scout("collect", *args, "--offline", "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    error = done.stderr.strip()
    assert "\n" not in error and f"{key} = {value!r} is not allowed" in error, error


def test_paths_that_stay_inside_and_globs_still_load(tmp_path: Path):
    from scout_tui.config.profile import load_config

    config = tmp_path / "scout.toml"
    config.write_text(
        '[docs]\nfiles = ["README.md", "../graph_trainer/AGENTS.md", "docs/./x.md"]\n'
        '[coverage]\npass_files = ["passes.py", "*_pass*.py"]\n'
    )
    loaded = load_config(config)
    assert loaded.docs.files[1] == "../graph_trainer/AGENTS.md"


def test_a_file_too_big_or_not_a_file_is_not_read(fresh_world: Sample, tmp_path: Path):
    """A 17 MiB module, in the work tree and in history, is skipped with a warning naming
    it; a FIFO where a doc should be is not opened (reading one would wait forever)."""
    big = "torchtitan/trainer.py"  # a core path and a configured surface: read both ways
    line = "x = 1  # TODO: a line of a very big module\n"
    repeats = (MAX_FILE_BYTES + len(line)) // len(line) + 1
    (fresh_world.repo / big).write_text(line * repeats)
    commit_all(fresh_world.repo, "a big module")
    readme = fresh_world.repo / EXP / "README.md"
    readme.unlink()
    os.mkfifo(readme)
    done = scout("collect", *world_args(fresh_world, tmp_path), "--offline", "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    states = {c["name"]: c["state"] for c in run["collectors"]}
    assert set(states.values()) <= {"done", "skipped"}, states
    warned = {w["subject"]: w["message"] for w in run["config_warnings"]}
    assert warned[big] == (
        f"{big}: skipped — {len(line) * repeats:,} bytes, over the "
        f"{MAX_FILE_BYTES // 2**20} MiB scout reads; the other files were "
        "read."
    )
    assert len(done.stdout) < MAX_FILE_BYTES // 8  # quoted at most in a diff's first lines


def test_a_huge_diff_is_cut_as_git_would_print_it(tmp_path: Path):
    """Read up to the cut and no further: the same text as git's whole output cut there."""
    import git

    from scout_tui.source.history import DIFF_LIMIT
    from scout_tui.source.tree import SourceTree

    repo = build_repo(tmp_path / "repo", TODAY, history=False)
    (tmp_path / "repo" / "huge.py").write_text("".join(f"x{n} = {n}\n" for n in range(200_000)))
    (tmp_path / "repo" / "small.py").write_text("y = 1\n")
    commit_all(tmp_path / "repo", "huge")
    source = SourceTree(tmp_path / "repo")
    whole = repo.git.diff("HEAD^", "HEAD", "--", "huge.py")
    assert len(whole) > DIFF_LIMIT * 4
    assert source.diff_range("HEAD^", "HEAD", ["huge.py"]) == (
        whole[:DIFF_LIMIT] + f"\n... (diff cut at {DIFF_LIMIT} characters)\n"
    )
    assert source.diff_range("HEAD^", "HEAD", ["small.py"]) == repo.git.diff(
        "HEAD^", "HEAD", "--", "small.py"
    )
    with pytest.raises(git.GitCommandError):
        source.diff_range("no-such-commit", "HEAD", ["small.py"])


def test_a_file_scout_could_not_read_is_neither_gone_nor_fixed(fresh_world: Sample, tmp_path):
    """An upstream file one hostile line made unparsable: the surfaces and patches in it are
    not re-checked today — no "disappeared" P0, no "Resolved" line for yesterday's items."""
    args = [*world_args(fresh_world, tmp_path), "--offline"]
    yesterday = scout("report", *args)
    assert yesterday.returncode == 0, yesterday.stderr
    assert "FlexAttention.forward" in yesterday.stdout  # its surface and patch were reported
    priors = tmp_path / "priors"
    priors.mkdir()
    (priors / f"{TODAY.isoformat()}.md").write_text(yesterday.stdout)
    attention = fresh_world.repo / "torchtitan/models/common/attention.py"
    attention.write_text(attention.read_text() + "x = " + "[" * 170 + "]" * 170 + "\n")
    commit_all(fresh_world.repo, "one deep line", "2026-12-03T08:00:00+00:00")
    args[args.index("--prior") + 1] = str(priors)
    args[args.index("--date") + 1] = "2026-12-03"
    today = scout("report", *args)
    assert today.returncode == 0, today.stderr
    assert "attention.py: skipped — nested more than" in today.stderr
    assert "disappeared" not in today.stdout and "no longer exists" not in today.stdout
    flex = [
        line
        for line in today.stdout.splitlines()
        if "FlexAttention.forward" in line and line.startswith("- ")
    ]
    assert flex and not [line for line in flex if "Resolved" in line], flex
    assert all("not re-checked" in today.stdout.split(line, 1)[1][:600] for line in flex)
