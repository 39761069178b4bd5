"""What git answered at commit ids, kept in the cache dir: tomorrow's rescan at an
unchanged tree asks git only what the day changed, and says exactly what a cold run says."""

from __future__ import annotations

import sqlite3
import subprocess
import zlib
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from scout_tui.config.profile import load_config
from scout_tui.pipeline.day import RunOptions, blob_store, render_markdown, run
from scout_tui.sandbox.demo.sample import Sample
from scout_tui.source.answers import GitAnswers
from scout_tui.source.blobs import BlobStore
from scout_tui.source.tree import SourceTree
from scout_tui.store.cache import FILE_FACTS, GIT_ANSWERS, Cache
from tests.collector_run import commit_all
from tests.conftest import TODAY

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _options(world: Sample, cache: Path, day=TODAY) -> RunOptions:
    return RunOptions(
        repo=world.repo,
        config=load_config(world.config),
        as_of=day,
        prior_dir=world.priors,
        offline=True,
        today=day,
        cache=Cache(cache),
    )


def _run(options: RunOptions) -> tuple[str, int]:
    """The day's report, and how many answers it read from the file (a fresh store: as a
    new `scout collect` process would)."""
    blobs = blob_store(options)
    result = run(replace(options, blobs=blobs))
    return render_markdown(result), blobs.answers.hits


def test_the_next_days_rescan_at_an_unchanged_tree_reads_kept_answers_and_says_the_same(
    fresh_world: Sample, tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    _, asked_twice = _run(_options(fresh_world, kept))  # (a question a run asks again)
    tomorrow = TODAY + timedelta(days=1)
    rescan, read = _run(_options(fresh_world, kept, tomorrow))
    cold, cold_read = _run(_options(fresh_world, tmp_path / "cold", tomorrow))
    assert cold_read == asked_twice
    assert read > cold_read + 5  # the rescan asked git less
    assert rescan == cold  # byte for byte


def test_a_new_commit_is_asked_about_and_what_it_changed_is_seen(
    fresh_world: Sample, tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    before, _ = _run(_options(fresh_world, kept))
    added = fresh_world.repo / "torchtitan/experiments/graph_trainer/after_the_answers.py"
    added.write_text("".join(f"def step_{n}(x):\n    return x + {n}\n\n" for n in range(12)))
    commit_all(fresh_world.repo, "graph_trainer: a new module")
    after, _ = _run(_options(fresh_world, kept))
    cold, _ = _run(_options(fresh_world, tmp_path / "cold"))
    assert after == cold
    assert "after_the_answers.py" in after  # new code with no test: seen
    assert "after_the_answers.py" not in before


def test_a_token_in_a_commit_message_never_reaches_the_kept_answers(
    fresh_world: Sample, tmp_path: Path
) -> None:
    readme = fresh_world.repo / "torchtitan/experiments/graph_trainer/README.md"
    readme.write_text(readme.read_text() + "\nA note.\n")
    commit_all(fresh_world.repo, f"graph_trainer: note (pasted by mistake: {TOKEN})")
    _run(_options(fresh_world, tmp_path / "kept"))
    files = list((tmp_path / "kept").rglob(f"{GIT_ANSWERS}*"))
    assert files
    db = sqlite3.connect(next(p for p in files if p.name == GIT_ANSWERS))
    values = [zlib.decompress(value) for (value,) in db.execute("SELECT value FROM answers")]
    assert any(b"pasted by mistake" in value for value in values)  # the message was kept
    assert not any(TOKEN.encode() in value for value in values)
    assert not any(TOKEN.encode() in path.read_bytes() for path in files)


def test_a_work_tree_grep_keeps_only_heads_answer(fresh_world: Sample, tmp_path: Path) -> None:
    """The work tree is grepped as HEAD's commit plus the files that differ from it: only
    HEAD's answer is kept (the one a grep at that commit keeps), and an edit is seen."""
    answers = GitAnswers(tmp_path / GIT_ANSWERS)
    source = SourceTree(fresh_world.repo, blobs=blob_store_of(answers))
    found = source.grep_files("def ")
    assert found != []

    def kept() -> int:
        rows = sqlite3.connect(tmp_path / GIT_ANSWERS).execute("SELECT count(*) FROM answers")
        return rows.fetchone()[0]

    assert kept() == 1
    head = source.head()
    assert head is not None
    at_head = SourceTree(fresh_world.repo, at=head, blobs=blob_store_of(answers))
    assert at_head.grep_files("def ") == found
    assert kept() == 1  # the same answer
    edited = fresh_world.repo / found[0]
    edited.write_text("x = 1\n", encoding="utf-8")
    (fresh_world.repo / "new_module.py").write_text("def new(): ...\n", encoding="utf-8")
    subprocess.run(["git", "add", "new_module.py"], cwd=fresh_world.repo, check=True)
    again = SourceTree(fresh_world.repo, blobs=blob_store_of(answers)).grep_files("def ")
    assert again == sorted([*found[1:], "new_module.py"])
    assert kept() == 1


def test_a_damaged_answers_file_is_made_anew_and_the_run_goes_on(
    fresh_world: Sample, tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    good, _ = _run(_options(fresh_world, kept))
    path = next(kept.rglob(GIT_ANSWERS))
    for extra in path.parent.glob(f"{GIT_ANSWERS}-*"):
        extra.unlink()
    path.write_bytes(b"not a database at all" * 100)
    again, _ = _run(_options(fresh_world, kept))
    assert again == good
    rows = sqlite3.connect(path).execute("SELECT count(*) FROM answers").fetchone()
    assert rows[0] > 0  # written anew


def test_cache_clear_removes_the_kept_answers_and_facts(
    fresh_world: Sample, tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    _run(_options(fresh_world, kept))
    cache = Cache(kept)
    assert cache.info()["git_answers_bytes"] > 0
    assert cache.info()["file_facts_bytes"] > 0  # what each file says (source.facts)
    cache.clear()
    for name in (GIT_ANSWERS, FILE_FACTS):
        assert not list(kept.rglob(f"{name}*"))
    assert Cache(kept).info()["git_answers_bytes"] == 0
    assert Cache(kept).info()["file_facts_bytes"] == 0


def blob_store_of(answers: GitAnswers) -> BlobStore:
    return BlobStore(answers)


def test_git_is_asked_when_the_kept_answer_is_gone(fresh_world: Sample, tmp_path: Path) -> None:
    """A kept answer is a copy: the same question without it is answered by git, alike."""
    answers = GitAnswers(tmp_path / GIT_ANSWERS)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=fresh_world.repo, capture_output=True, text=True
    ).stdout.strip()
    paths = ["torchtitan/experiments/graph_trainer"]

    def log(tree: SourceTree) -> list:
        return tree.log(None, head, paths)

    first = log(SourceTree(fresh_world.repo, at=head, blobs=blob_store_of(answers)))
    assert first and answers.hits == 0
    again = log(SourceTree(fresh_world.repo, at=head, blobs=blob_store_of(answers)))
    assert answers.hits == 1 and again == first
    assert log(SourceTree(fresh_world.repo, at=head)) == first
