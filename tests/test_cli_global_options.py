"""The global options (--repo --config --date --prior --offline --cache-dir --state-dir
--api-url) work on either side of the command, as in git or gh, or are refused with exit 2
naming them: never dropped in silence."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import git
import pytest

from scout_tui.cli.parser import build_parser
from scout_tui.model import RunResult
from scout_tui.sandbox.github.http import LocalGitHub
from tests.cli import DAY, scout, world_args
from tests.github_world import TOKEN, world_for

# option → (what is typed after it, where the command finds it, the value it finds)
GIVEN = {
    "--repo": (["elsewhere"], "repo", Path("elsewhere")),
    "--config": (["team.toml"], "config", Path("team.toml")),
    "--date": (["2026-12-01"], "as_of", date(2026, 12, 1)),
    "--prior": (["reports"], "prior", Path("reports")),
    "--offline": ([], "offline", True),
    "--cache-dir": (["cache"], "cache_dir", Path("cache")),
    "--state-dir": (["state"], "state_dir", Path("state")),
    "--api-url": (["https://ghe.example/api/v3"], "api_url", "https://ghe.example/api/v3"),
}
OTHER_VALUE = {
    "--repo": "other",
    "--config": "other.toml",
    "--date": "2026-12-02",
    "--prior": "other",
    "--cache-dir": "other",
    "--state-dir": "other",
    "--api-url": "https://api.github.com",
}  # --offline has no value to disagree on
EVERY = set(GIVEN)
FP = "todo_blocked-0123456789ab"

# command words → (the rest it needs to parse, the global options it takes)
COMMANDS: dict[tuple[str, ...], tuple[list[str], set[str]]] = {
    (): ([], EVERY),  # bare `scout`: the console
    ("collect",): ([], EVERY),
    ("report",): ([], EVERY),
    ("publish",): ([], EVERY),
    ("triage", "list"): ([], EVERY),
    ("triage", "accept"): ([FP], EVERY),
    ("triage", "drop"): ([FP, "--reason", "not ours"], EVERY),
    ("triage", "demote"): ([FP], EVERY),
    ("triage", "promote"): ([FP], EVERY),
    ("triage", "merge"): ([FP, "--into", FP], EVERY),
    ("triage", "edit"): ([FP, "--title", "t"], EVERY),
    ("triage", "undo"): ([], EVERY),
    ("triage", "redo"): ([], EVERY),
    ("open",): (["run.json"], EVERY - {"--date", "--prior"}),
    ("cache",): (["info"], {"--cache-dir"}),
    ("ci-log",): (["ci.log"], {"--repo", "--config", "--offline", "--cache-dir"}),
    ("repro",): (
        ["--command", "pytest tests/test_a.py::test_b"],
        {"--repo", "--cache-dir", "--state-dir"},
    ),
    ("bisect",): (
        ["--good", "2026-06-01", "--bad", "2026-06-02", "--command", "pytest t.py::test"],
        {"--repo", "--cache-dir", "--state-dir", "--offline", "--api-url"},
    ),
    ("torch-commit",): (["2.13.0.dev20260819+cu130"], {"--repo", "--config", "--cache-dir"}),
    ("serve-github",): ([], set()),
    ("demo",): ([], {"--date"}),
}


def typed(
    command: tuple[str, ...],
    option: str,
    side: str,
    value: list[str] | None = None,
) -> list[str]:
    """The command line with the option before the command, after it, or (triage) between
    `triage` and its action."""
    words = [option, *(GIVEN[option][0] if value is None else value)]
    rest = COMMANDS[command][0]
    if side == "before":
        return [*words, *command, *rest]
    if side == "between":
        return [command[0], *words, *command[1:], *rest]
    return [*command, *rest, *words]


def sides(command: tuple[str, ...]) -> list[str]:
    if not command:
        return ["before"]
    return ["before", "between", "after"] if command[0] == "triage" else ["before", "after"]


def name(command: tuple[str, ...]) -> str:
    return " ".join(["scout", *command])


def cases(taken: bool) -> list:
    return [
        pytest.param(command, option, side, id=f"{name(command)}:{option}:{side}")
        for command, (_, takes) in COMMANDS.items()
        for option in GIVEN
        if (option in takes) == taken
        for side in sides(command)
    ]


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line `scout argv` exits 2 with, said while parsing."""
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("scout: error: ")
    return line


@pytest.mark.parametrize(("command", "option", "side"), cases(taken=True))
def test_an_option_arrives_from_either_side(command, option, side):
    args, unknown = build_parser().parse_known_args(typed(command, option, side))
    _, dest, value = GIVEN[option]
    if command == ("open",) and option in ("--repo", "--config"):
        value = [value]  # several: one for each bundle's repository
    assert unknown == [] and getattr(args, dest) == value
    assert args.command == (command[0] if command else None)


@pytest.mark.parametrize(("command", "option", "side"), cases(taken=False))
def test_an_option_the_command_does_not_take_is_refused(command, option, side, capsys):
    assert refused(typed(command, option, side), capsys) == (
        f"scout: error: {option} does not apply to `{name(command)}` (see `{name(command)} --help`)"
    )


def test_abbreviations_never_reach_a_hidden_option():
    assert build_parser().parse_args(["serve-github", "--p", "5"]).port == 5  # not --prior


# Each command with each single-valued global option it takes (`open` takes several).
SINGLE_VALUED = [
    pytest.param(c, o, id=f"{name(c)}:{o}")
    for c, (_, takes) in COMMANDS.items()
    if c
    for o in sorted(takes)
    if o in OTHER_VALUE and not (c == ("open",) and o in ("--repo", "--config"))
]


@pytest.mark.parametrize(("command", "option"), SINGLE_VALUED)
def test_both_sides_must_agree(command, option, capsys):
    before = [option, *GIVEN[option][0]]
    same = [*before, *typed(command, option, "after")]
    args, unknown = build_parser().parse_known_args(same)
    assert unknown == [] and getattr(args, GIVEN[option][1]) == GIVEN[option][2]
    different = [*before, *typed(command, option, "after", [OTHER_VALUE[option]])]
    line = refused(different, capsys)
    assert f"{option} given twice with different values" in line
    assert OTHER_VALUE[option] in line


@pytest.mark.parametrize(("command", "option"), SINGLE_VALUED)
def test_one_side_given_two_values_is_refused_too(command, option, capsys):
    """`report --date A --date B` is refused as `--date A report --date B` is (TRUE); the
    same value twice is taken (NEAR-MISS)."""
    after = typed(command, option, "after")
    twice = [*after, option, *GIVEN[option][0]]
    args, unknown = build_parser().parse_known_args(twice)
    assert unknown == [] and getattr(args, GIVEN[option][1]) == GIVEN[option][2]
    line = refused([*after, option, OTHER_VALUE[option]], capsys)
    assert f"{option} given twice with different values" in line


def test_open_takes_a_configuration_for_each_bundle_from_either_side():
    args = build_parser().parse_args(
        [
            "--config",
            "a.toml",
            "open",
            "x.json",
            "y.json",
            "--config",
            "b.toml",
            "--config",
            "a.toml",
        ]
    )
    assert args.config == [Path("a.toml"), Path("b.toml")] and args.repo is None
    assert args.file == [Path("x.json"), Path("y.json")]


def test_defaults_when_no_side_gives_an_option():
    args = build_parser().parse_args(["collect"])
    assert (
        args.repo,
        args.config,
        args.as_of,
        args.prior,
        args.offline,
        args.cache_dir,
        args.state_dir,
        args.api_url,
    ) == (Path("."), None, None, None, False, None, None, None)
    assert build_parser().parse_args(["open", "run.json"]).repo is None  # no checkout given


@pytest.mark.parametrize(
    "argv",
    [
        ["open", "b.json", "--repo", "r", "--config", "c"],
        ["--repo", "r", "open", "b.json", "--config", "c"],
        ["--config", "c", "open", "b.json", "--repo", "r"],
    ],
)
def test_open_takes_a_checkout_or_a_configuration_not_both(argv, capsys):
    line = refused(argv, capsys)
    assert "--repo" in line and "--config" in line


@pytest.mark.parametrize("command", [pytest.param(c, id=name(c)) for c in COMMANDS])
def test_the_usage_line_names_what_the_command_takes(command, capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([*command, "--help"])
    assert exited.value.code == 0
    usage = capsys.readouterr().out.split("\n\n")[0]
    assert usage.startswith(f"usage: {name(command)} ")
    shown = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", usage)) & EVERY
    assert shown == COMMANDS[command][1]


# -- one real run per command: an option typed before it takes effect -----------------------
def broken_config(tmp_path: Path) -> Path:
    path = tmp_path / "broken.toml"
    path.write_text("[project\n")
    return path


def test_collect(tmp_path, sample_world):
    done = scout(*world_args(sample_world, tmp_path), "collect", "--only", "todos", "--json")
    assert done.returncode == 0, done.stderr
    run_ = RunResult.model_validate_json(done.stdout)
    assert run_.date.isoformat() == DAY
    assert run_.checkout is not None and run_.checkout.path == str(sample_world.repo.resolve())
    assert [p.date.isoformat() for p in run_.prior_reports] == ["2026-11-30", "2026-12-01"]
    assert (tmp_path / "cache").is_dir()


def test_report(tmp_path, sample_world):
    done = scout(*world_args(sample_world, tmp_path), "--offline", "report", "--only", "todos")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"# Nightly Scout Report — {DAY}\n")


def test_publish_offline_posts_nothing(tmp_path, sample_world):
    with LocalGitHub(world_for(sample_world)) as server:
        done = scout(
            "--offline",
            "publish",
            "--yes",
            *world_args(sample_world, tmp_path),
            "--api-url",
            server.url,
            env={"GH_TOKEN": TOKEN, "GH_ENTERPRISE_TOKEN": TOKEN},
        )
        assert done.returncode == 2
        assert done.stderr.strip() == (
            "scout: error: publishing needs GitHub: offline (--dry-run shows the plan)"
        )
        assert server.log == []


def test_triage(tmp_path, sample_world):
    done = scout(*world_args(sample_world, tmp_path), "--offline", "triage", "list", "--json")
    assert done.returncode == 0, done.stderr
    assert any(row["fingerprint"].startswith("todo_blocked-") for row in json.loads(done.stdout))


def test_open(tmp_path, sample_world):
    run_file = tmp_path / "run.json"
    made = scout(
        "collect", *world_args(sample_world, tmp_path), "--only", "todos", "--json", "-o", run_file
    )
    assert made.returncode == 0, made.stderr
    config = broken_config(tmp_path)
    done = scout("--config", config, "open", run_file)
    assert done.returncode == 2 and f"{config}: not valid TOML" in done.stderr


def test_cache(tmp_path):
    done = scout("--cache-dir", tmp_path / "mine", "cache", "info")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"no cache at {tmp_path / 'mine' / 'v2'}"


def test_ci_log(tmp_path):
    log = tmp_path / "ci.log"
    log.write_text("PASSED\n")
    config = broken_config(tmp_path)
    done = scout("--config", config, "ci-log", log)
    assert done.returncode == 2 and f"{config}: not valid TOML" in done.stderr


def test_repro(tmp_path):
    script = tmp_path / "run_train.sh"
    script.write_text('#!/bin/sh\necho "ran in $(pwd)"\n')
    script.chmod(0o755)
    done = scout("--repo", tmp_path, "repro", "--command", "NGPU=1 ./run_train.sh", "--run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ran in {tmp_path}"


def test_torch_commit(tmp_path):
    config = broken_config(tmp_path)
    done = scout("--config", config, "torch-commit", "2.13.0.dev20260819+cu130")
    assert done.returncode == 2 and f"{config}: not valid TOML" in done.stderr


def test_serve_github_refuses_what_it_does_not_take():
    done = scout("--date", DAY, "serve-github", timeout=60)  # would serve until killed
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (
        "scout: error: --date does not apply to `scout "
        "serve-github` (see `scout serve-github --help`)"
    )


def test_demo(tmp_path):
    done = scout("--date", "2026-12-01", "demo", "--dir", tmp_path / "demo", "--json")
    assert done.returncode == 0, done.stderr
    assert RunResult.model_validate_json(done.stdout).date == date(2026, 12, 1)


def test_demo_inside_a_checkout_is_refused_before_anything_is_made(tmp_path):
    """Inside a git checkout the demo's scout.toml would be the checkout's, which may not
    name the local GitHub the demo serves: one line, naming the way out, and no folder."""
    git.Repo.init(tmp_path / "project")
    done = scout("demo", "--dir", tmp_path / "project" / "demo", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "inside a git checkout" in done.stderr and "outside any checkout" in done.stderr
    assert "[trust]" not in done.stderr  # not advice to trust the demo's hosts
    assert not (tmp_path / "project" / "demo").exists()


def test_a_headless_demo_leaves_no_temporary_folder(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "scout_tui", "--date", "2026-12-01", "demo", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(temp)},
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "removed when the demo ends" in done.stderr
    assert list(temp.iterdir()) == []


def test_demo_never_writes_over_a_folder_of_someone_s_files(tmp_path):
    """`--dir` with files no demo made: refused, nothing touched (TRUE); the folder an
    earlier demo made is made anew (NEAR-MISS)."""
    mine = tmp_path / "mine"
    (mine / "repo").mkdir(parents=True)
    (mine / "scout.toml").write_text("MY OWN CONFIG\n")
    (mine / "repo" / "notes.txt").write_text("mine\n")
    done = scout("demo", "--dir", mine, "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert "holds files no earlier `scout demo` made" in done.stderr
    assert (mine / "scout.toml").read_text() == "MY OWN CONFIG\n"
    assert sorted(p.name for p in mine.rglob("*")) == ["notes.txt", "repo", "scout.toml"]
    again = tmp_path / "demo"
    for _ in range(2):
        done = scout("--date", "2026-12-01", "demo", "--dir", again, "--json")
        assert done.returncode == 0, done.stderr
