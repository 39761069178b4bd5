"""What the analyses read in each file, kept by blob id in the cache dir: tomorrow's rescan
at an unchanged tree parses only what no kept fact answers, and says exactly what a cold
run says; a changed file is read afresh."""

from __future__ import annotations

import ast
import re
import sqlite3
import subprocess
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

import pytest

from scout_tui.analysis.python import pyast
from scout_tui.collect.config_types import ConfigClass
from scout_tui.model import Priority, Section
from scout_tui.pipeline.day import RunOptions, blob_store, render_markdown, run
from scout_tui.sandbox.demo.sample import Sample
from scout_tui.source import facts as facts_module
from scout_tui.source.answers import GitAnswers
from scout_tui.source.blobs import BlobStore
from scout_tui.source.facts import FileFacts, NotPlain, decode, encode
from scout_tui.source.tree import SourceTree
from scout_tui.store.cache import FILE_FACTS
from tests.conftest import TODAY
from tests.test_git_answers import _options as dated_options


def _options(world: Sample, cache: Path, day=TODAY, dated: bool = True) -> RunOptions:
    """A run of `day` (dated: as it was; else the work tree, as a morning's run)."""
    options = dated_options(world, cache, day)
    return options if dated else replace(options, as_of=None)


def _run(options: RunOptions, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """The day's report, and how many files it parsed (a fresh store, as a new `scout
    collect` process has)."""
    parsed: list[str] = []
    real = pyast.parse

    def counted(text: str, filename: str = "<unknown>") -> ast.Module:
        parsed.append(filename)
        return real(text, filename)

    with monkeypatch.context() as patch:
        patch.setattr(pyast, "parse", counted)
        report = render_markdown(run(replace(options, blobs=blob_store(options))))
    return report, len(parsed)


@pytest.mark.parametrize("dated", [True, False], ids=["a dated run", "the work tree"])
def test_the_next_days_rescan_parses_what_no_kept_fact_answers_and_says_the_same(
    fresh_world: Sample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dated: bool
) -> None:
    kept = tmp_path / "kept"
    _run(_options(fresh_world, kept, dated=dated), monkeypatch)
    tomorrow = TODAY + timedelta(days=1)
    rescan, rescan_parsed = _run(_options(fresh_world, kept, tomorrow, dated), monkeypatch)
    cold, cold_parsed = _run(_options(fresh_world, tmp_path / "cold", tomorrow, dated), monkeypatch)
    assert rescan == cold  # byte for byte
    assert cold_parsed > 10
    # What still parses: modules an analysis looks into directly, or whose answers hold a
    # tree's nodes (kept in memory only).
    assert rescan_parsed < cold_parsed, (rescan_parsed, cold_parsed)


def test_a_changed_file_is_read_afresh(
    fresh_world: Sample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = tmp_path / "kept"
    before, _ = _run(_options(fresh_world, kept, dated=False), monkeypatch)
    module = next(
        path
        for path in sorted((fresh_world.repo / "torchtitan/experiments").rglob("*.py"))
        if "test" not in path.name and path.name != "__init__.py"
    )
    module.write_text(
        module.read_text(encoding="utf-8") + "\n\ndef scout_probe_nobody_calls():\n    pass\n",
        encoding="utf-8",
    )
    rescan, _ = _run(_options(fresh_world, kept, dated=False), monkeypatch)
    cold, _ = _run(_options(fresh_world, tmp_path / "cold", dated=False), monkeypatch)
    assert rescan == cold
    assert "scout_probe_nobody_calls" in rescan and "scout_probe_nobody_calls" not in before


@dataclass(frozen=True)
class Point:  # not scout's own: not plain data
    x: int


def test_plain_values_come_back_as_they_went() -> None:
    values = [
        None,
        [1, "a", 2.5, True],
        ("tuple", ("nested",)),
        frozenset({"a", "b"}),
        {"set"},
        {("tuple", "key"): [frozenset({1})]},
        pyast.Import("torch", "nn", None, 3),
        ConfigClass("Job", ("Base",), (("steps", "int"),), (("steps", 4),), False),
        [Section.ACTION_ITEMS, Priority.P1],
    ]
    for value in values:
        back = decode(encode(value))
        assert back == value and type(back) is type(value)


@pytest.mark.parametrize(
    "value", [ast.parse("x = 1"), Path("/etc"), object(), {1: ast.Pass()}, Point(1)]
)
def test_what_is_not_plain_data_is_kept_in_memory_only(value: object) -> None:
    with pytest.raises(NotPlain):
        encode(value)


@pytest.mark.parametrize(
    "data",
    [
        {"c": "os:system", "v": []},  # not scout's
        {"c": "builtins:object", "v": []},
        {"c": "scout_tui.never_imported:Thing", "v": []},  # a fact never imports a module
        {"c": "tests.test_file_facts:Point", "v": [1]},  # not scout's
        {"c": "scout_tui.analysis.python.pyast:Import", "v": ["torch"]},  # fields short
        {"e": "scout_tui.collect.config_types:ConfigClass", "v": "x"},  # not an enum
        {"x": 1},
    ],
)
def test_data_that_is_not_a_kept_value_is_refused(data: dict) -> None:
    with pytest.raises((ValueError, TypeError)):
        decode(data)


def test_facts_outlive_the_process_and_not_a_change_of_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / FILE_FACTS
    first = FileFacts(path)
    assert first.get("b1", "k") is pyast.MISSING
    first.put("b1", "k", ("a", frozenset({"b"})))
    first.put("b1", "tree", ast.parse("x = 1"))  # not plain: not kept
    first.flush()
    again = FileFacts(path)
    assert again.get("b1", "k") == ("a", frozenset({"b"}))
    assert again.get("b1", "tree") is pyast.MISSING
    # Another process's facts of the same blob are merged, not overwritten.
    other = FileFacts(path)
    other.put("b1", "other", 1)
    other.flush()
    assert FileFacts(path).get("b1", "k") == ("a", frozenset({"b"}))
    # Scout's analysis code changed (or Python did): every fact is found afresh.
    monkeypatch.setattr(facts_module, "_DIGEST", ["another-version"])
    assert FileFacts(path).get("b1", "k") is pyast.MISSING


def test_a_damaged_facts_file_is_made_anew_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / FILE_FACTS
    path.write_bytes(b"not a database" * 100)
    facts = FileFacts(path)
    assert facts.get("b1", "k") is pyast.MISSING
    facts.put("b1", "k", 1)
    facts.flush()
    assert FileFacts(path).get("b1", "k") == 1
    with sqlite3.connect(path) as db:  # a damaged row: found again
        db.execute("UPDATE facts SET value = '{not json'")
    assert FileFacts(path).get("b1", "k") is pyast.MISSING


def test_a_huge_integer_literal_is_not_kept_and_breaks_nothing(tmp_path: Path) -> None:
    with pytest.raises(NotPlain):
        encode({"seed": int("f" * 4000, 16)})
    facts = FileFacts(tmp_path / FILE_FACTS)
    facts.put("b1", "seed", int("f" * 4000, 16))
    facts.put("b1", "k", 1)
    facts.flush()
    assert FileFacts(tmp_path / FILE_FACTS).get("b1", "k") == 1


def test_a_token_in_a_kept_value_never_reaches_the_file(tmp_path: Path) -> None:
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    facts = FileFacts(tmp_path / FILE_FACTS)
    facts.put("b1", "paths", [f"pkg/{token}.py"])
    facts.flush()
    assert token.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_a_module_whose_parse_was_interrupted_parses_when_looked_into_again() -> None:
    calls: list[int] = []

    def load() -> ast.Module:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return ast.parse("x = 1")

    module = pyast.kept_module("b1", FileFacts(None), load)
    with pytest.raises(KeyboardInterrupt):
        _ = module.body
    assert [type(node).__name__ for node in module.body] == ["Assign"]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.parametrize(
    "change",
    [
        "none",
        "edited",
        "deleted",
        "staged",
        "untracked",
        "skip-worktree",
        "assume-unchanged",
        "filter",
        "autocrlf",
        "odd names",
    ],
)
def test_a_work_tree_grep_says_what_git_grep_of_the_work_tree_says(
    tmp_path: Path, change: str
) -> None:
    """Read as HEAD's commit (kept by its id) plus the files that differ from it, grepped
    as they are: the same lines as a grep of the work tree, whatever the checkout holds."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.py").write_text("def probe():\n    pass\n", encoding="utf-8")
    (repo / "b.py").write_text("x = probe\n", encoding="utf-8")
    (repo / "c.md").write_text("no word here\n", encoding="utf-8")
    odd = ["café.py", "*.py", ":b.py", ":!a.py", "new\nline.py", "tab\tname.py"]
    if change == "odd names":  # quoted by git, read as patterns, or split as lines
        for name in odd:
            (repo / name).write_text("probe = 1\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    if change == "odd names":
        for name in odd[:3]:
            (repo / name).write_text("edited = 2\n", encoding="utf-8")
        for name in odd[3:]:
            (repo / name).unlink()
    if change == "edited":
        (repo / "b.py").write_text("x = 1\n", encoding="utf-8")
        (repo / "c.md").write_text("the probe, now\n", encoding="utf-8")
    elif change == "deleted":
        (repo / "b.py").unlink()
    elif change in ("staged", "untracked"):
        (repo / "d.py").write_text("probe()\n", encoding="utf-8")
        if change == "staged":
            _git(repo, "add", "d.py")
    elif change in ("skip-worktree", "assume-unchanged"):
        _git(repo, "update-index", f"--{change}", "b.py")
        (repo / "b.py").write_text("y = 2\n", encoding="utf-8")
    elif change == "filter":
        _git(repo, "config", "filter.lfs.smudge", "git-lfs smudge -- %f")
    elif change == "autocrlf":
        _git(repo, "config", "core.autocrlf", "true")
    work_tree = subprocess.run(
        ["git", "-C", str(repo), "grep", "-z", "-n", "-w", "probe"], capture_output=True, text=True
    ).stdout
    expected = sorted(
        (path, line) for path, line, _ in re.findall(r"([^\0]*)\0(\d+)\0(.*)\n", work_tree)
    )
    for _ in range(2):  # the second run reads the kept answer at HEAD
        source = SourceTree(repo, blobs=BlobStore(GitAnswers(tmp_path / "answers.sqlite")))
        hits = source.grep_words(["probe"])
        assert sorted((hit.path, str(hit.line)) for hit in hits) == expected
        python = sorted({path for path, _ in expected if path.endswith(".py")})
        assert source.grep_files("probe") == python
        assert sorted({hit.path for hit in source.grep_words(["probe"], ("*.py",))}) == python
    at, changed, _ = source._grep_plan()
    assert bool(at) == (change not in ("filter", "autocrlf"))
    assert bool(changed) == (
        change in ("edited", "deleted", "staged", "assume-unchanged", "odd names")
    )
