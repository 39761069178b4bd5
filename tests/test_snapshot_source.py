"""A SourceTree `at` a commit: the day's tree read from git, never the work tree; dated runs
scan the day's last first-parent commit; blobs parsed once across runs."""

from __future__ import annotations

import hashlib
import os
import subprocess
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from git.cmd import Git as GitCommand

from scout_tui.analysis.python import pyast
from scout_tui.config.profile import load_config
from scout_tui.errors import UsageError
from scout_tui.history.baseline import check_date
from scout_tui.model import fingerprint
from scout_tui.pipeline.day import PAST_TORCH, RunOptions, prepare, run
from scout_tui.sandbox.demo.files import EXP
from scout_tui.source import objects as source_module
from scout_tui.source.blobs import BlobStore
from scout_tui.source.tree import SourceTree

from .cli import scout, world_args
from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY


def git(repo: Path, *args: str, when: str | None = None, author: str | None = None) -> str:
    """`git args` in `repo`; a commit dated `when` (committer), `author` (author; default
    `when`)."""
    env = dict(os.environ)
    if when:
        env |= {"GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": author or when}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "T")
    git(path, "config", "user.email", "t@example.com")
    return path


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")


def commit(repo: Path, message: str, when: str, author: str | None = None) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, when=when, author=author)
    return git(repo, "rev-parse", "HEAD")


def state(repo: Path) -> tuple[str, str, str, dict[str, str]]:
    """What a scan must never change: status, HEAD, the index's content, every file."""
    files = {}
    for path in sorted(repo.rglob("*")):
        if ".git" not in path.relative_to(repo).parts and path.is_file():
            files[str(path.relative_to(repo))] = hashlib.sha1(path.read_bytes()).hexdigest()
    return (
        git(repo, "status", "--porcelain", "--untracked-files=all"),
        git(repo, "rev-parse", "HEAD"),
        git(repo, "ls-files", "-s"),
        files,
    )


# -- the work-tree methods, at a commit ------------------------------------------------


@pytest.fixture
def tricky(tmp_path: Path) -> Path:
    """A repository whose HEAD holds what the work-tree methods must be careful with:
    hidden folders, a name with a control character, symlinks in, out, into `.git`,
    dangling and in a loop, a linked folder, a submodule, a file too big, one unparsable."""
    repo = new_repo(tmp_path / "repo")
    outside = tmp_path / "secret.py"
    outside.write_text("TOKEN = 'outside'\n")
    write(
        repo,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def a():\n    return 'needle'\n",
            "exp/x.py": "X = 1\n",
            "exp/sub/z.py": "def z(): ...\n",
            "exp/.hidden/h.py": "H = 1\n",
            "exp/run.sh": "echo\n",
            "exp/bad\x1b[31m.py": "B = 1\n",
            "exp/big.py": "#" * 300,
            "exp/broken.py": "def (:\n",
            "README.md": "needle\n",
            "lib/__init__.py": "",
        },
    )
    links = {
        "exp/alias.py": "x.py",
        "exp/linked": "../pkg",
        "exp/out.py": str(outside),
        "exp/up.py": "../../secret.py",
        "exp/git.py": "../.git/config",
        "exp/dangling.py": "nothing.py",
        "exp/loop_a.py": "loop_b.py",
        "exp/loop_b.py": "loop_a.py",
        "top": "pkg",
        "inside_abs.py": str(repo / "exp/x.py"),
    }
    for name, target in links.items():
        os.symlink(target, repo / name)
    git(repo, "add", "-A")
    # A submodule as git records one (a commit id in the tree); its folder is not checked out.
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},vendor/sub")
    git(repo, "commit", "-q", "-m", "tricky", when="2026-11-20T10:00:00Z")
    (repo / "vendor/sub").mkdir(parents=True)  # as a clone leaves a submodule not checked out
    return repo


PATHS = [
    "",
    ".",
    "exp",
    "exp/",
    "./exp/x.py",
    "exp/x.py",
    "exp/alias.py",
    "exp/linked",
    "exp/linked/a.py",
    "exp/out.py",
    "exp/up.py",
    "exp/git.py",
    "exp/dangling.py",
    "exp/loop_a.py",
    "top/a.py",
    "top",
    "inside_abs.py",
    "vendor",
    "nope.py",
    "exp/sub/../x.py",
    "exp/linked/../x.py",
    "exp/big.py",
    "exp/broken.py",
    "pkg/a.py/x",
]


def surface(tree: SourceTree) -> dict[str, object]:
    """Everything the work-tree methods say about the tricky repository."""
    said: dict[str, object] = {
        "root_packages": tree.root_packages(),
        "grep": tree.grep_files("needle"),
    }
    for directory in ("", "exp", "exp/", "exp/linked", "top", "nope", "exp/out.py", "vendor"):
        for pattern in ("*.py", "*.sh", "x.py", "*.y*ml"):
            said[f"glob {directory!r} {pattern}"] = tree.glob(directory, pattern)
    for path in PATHS:
        said[f"exists {path}"] = tree.exists(path)
        said[f"outside {path}"] = tree.leads_outside(path)
        said[f"real {path}"] = tree.real_path(path)
        said[f"read {path}"] = tree.read(path)
        said[f"lines {path}"] = tree.lines(path)
        said[f"parse {path}"] = pyast_dump(tree, path)
    said["skipped"] = sorted(tree.untold_skipped())
    return said


def pyast_dump(tree: SourceTree, path: str) -> str | None:
    import ast

    module = tree.parse(path)
    return ast.dump(module) if module is not None else None


def test_a_commit_answers_as_its_clean_checkout_does(tricky, monkeypatch):
    """At HEAD, with nothing uncommitted, every work-tree method says what the work tree
    says — symlinks, hidden and hostile names, too big and unparsable files included."""
    monkeypatch.setattr(source_module, "MAX_FILE_BYTES", 200)
    work = surface(SourceTree(tricky))
    at = surface(SourceTree(tricky, at=git(tricky, "rev-parse", "HEAD")))
    assert at == work
    # What was compared is what it should be, not two empty answers.
    assert at["glob 'exp' *.py"] == [
        "exp/alias.py",
        "exp/big.py",
        "exp/broken.py",
        "exp/sub/z.py",
        "exp/x.py",
    ]
    assert at["glob 'top' *.py"] == ["top/__init__.py", "top/a.py"]
    assert at["root_packages"] == {"pkg", "lib", "top"}
    assert at["grep"] == ["pkg/a.py"]
    assert at["read exp/alias.py"] == "X = 1\n" and at["read inside_abs.py"] == "X = 1\n"
    assert at["real exp/linked/a.py"] == "pkg/a.py" and at["real ."] == "."
    for name in ("out.py", "up.py", "git.py", "loop_a.py"):
        assert at[f"read exp/{name}"] is None and at[f"outside exp/{name}"] is True
    assert at["exists exp/dangling.py"] is False and at["outside exp/dangling.py"] is False
    assert at["exists vendor"] is True
    assert [path for path, _ in at["skipped"]] == ["exp/big.py", "exp/broken.py"]  # type: ignore[union-attr]
    # Past the top, or in .git: the work tree looks at the disk there, a commit has nothing.
    commit_tree = SourceTree(tricky, at="HEAD")
    # A submodule is another repository's files: absent from the commit (its folder is not).
    assert SourceTree(tricky).exists("vendor/sub") and not commit_tree.exists("vendor/sub")
    for path in ("../secret.py", ".git/config", ".git"):
        assert not commit_tree.exists(path) and commit_tree.read(path) is None
        assert commit_tree.real_path(path) is None and not commit_tree.leads_outside(path)


def test_a_commit_is_read_as_it_was_not_as_the_work_tree_is(tmp_path):
    repo = new_repo(tmp_path / "repo")
    write(repo, {"exp/keep.py": "KEEP = 1\n", "exp/old.py": "OLD = 'needle'\n"})
    first = commit(repo, "first", "2026-11-20T10:00:00Z")
    (repo / "exp/old.py").unlink()
    write(repo, {"exp/keep.py": "KEEP = 2\n"})
    second = commit(repo, "second", "2026-11-21T10:00:00Z")
    # Uncommitted: an edit, a new file, a deletion; none of them is any commit's.
    write(repo, {"exp/keep.py": "KEEP = 3  # needle\n", "exp/untracked.py": "NEW = 'needle'\n"})
    before = state(repo)

    earlier, later, work = (
        SourceTree(repo, at=first),
        SourceTree(repo, at=second),
        SourceTree(repo),
    )
    assert earlier.read("exp/old.py") == "OLD = 'needle'\n"  # deleted later: there then
    assert earlier.glob("exp") == ["exp/keep.py", "exp/old.py"]
    assert earlier.grep_files("needle") == ["exp/old.py"]
    assert earlier.read("exp/keep.py") == "KEEP = 1\n"
    assert later.read("exp/old.py") is None and not later.exists("exp/old.py")
    assert later.read("exp/keep.py") == "KEEP = 2\n"
    assert later.glob("exp") == ["exp/keep.py"]
    assert later.grep_files("needle") == []
    assert not later.exists("exp/untracked.py") and later.read("exp/untracked.py") is None
    assert later.head() == second and earlier.head() == first
    # The work tree, as it is: what a dated run must not see is there to be seen.
    assert work.read("exp/keep.py") == "KEEP = 3  # needle\n"
    assert work.glob("exp") == ["exp/keep.py", "exp/untracked.py"]
    assert state(repo) == before


def test_history_methods_of_a_tree_at_a_commit_start_there(tmp_path):
    """ "HEAD" means the scanned commit: since when a thing holds, where history begins."""
    repo = new_repo(tmp_path / "repo")
    write(repo, {"a.py": "FLAG = True\n"})
    first = commit(repo, "first", "2026-11-20T10:00:00Z")
    write(repo, {"a.py": "FLAG = False\n"})
    commit(repo, "second", "2026-11-22T10:00:00Z")
    at_first = SourceTree(repo, at=first)
    found = at_first.since_when("a.py", lambda text: "True" in text)
    assert found is not None and found.sha == first
    assert SourceTree(repo).since_when("a.py", lambda text: "True" in text) is None
    assert at_first.commit_before(datetime(2026, 12, 1, tzinfo=UTC)) == first


# -- the day's commit -----------------------------------------------------------------


def test_the_days_commit_is_the_first_parent_chains_by_committer_date(tmp_path):
    """Of a day, the commit the branch was at: a merged branch's own later commits are not
    it, and the committer's date counts, not the author's."""
    repo = new_repo(tmp_path / "repo")
    write(repo, {"f.py": "0\n"})
    base = commit(repo, "base", "2026-11-27T10:00:00Z")
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, {"side.py": "1\n"})
    commit(repo, "side, before the main one", "2026-11-28T09:00:00Z")
    write(repo, {"side.py": "2\n"})
    side_late = commit(repo, "side, the newest of the day", "2026-11-30T22:00:00Z")
    git(repo, "checkout", "-q", "main")
    write(repo, {"f.py": "1\n"})
    # Authored after the day (a rebase), committed on it: the day's.
    days = commit(repo, "main", "2026-11-30T08:00:00Z", author="2026-12-05T08:00:00Z")
    write(repo, {"f.py": "2\n"})
    # Authored on the day, committed after it: not the day's.
    commit(repo, "main, committed later", "2026-12-01T05:00:00Z", author="2026-11-30T09:00:00Z")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", when="2026-12-01T06:00:00Z")
    tree = SourceTree(repo)
    end_of_day = datetime(2026, 12, 1, tzinfo=UTC)
    assert tree.commit_before(end_of_day) == days
    # Not what a walk of every parent by date gives (the side branch's newest commit).
    assert git(repo, "rev-list", "-1", f"--before={end_of_day.isoformat()}", "HEAD") == side_late
    assert tree.commit_before(datetime(2026, 11, 29, tzinfo=UTC)) == base
    assert tree.commit_before(datetime(2026, 11, 27, tzinfo=UTC)) is None


def test_a_day_before_the_branchs_first_commit_is_refused(tmp_path):
    """A history merged in from elsewhere can be older than the branch: its days have no
    commit of the branch to scan, and `check_date`, the one check of a --date, says so."""
    repo = new_repo(tmp_path / "repo")
    write(repo, {"main.py": "M = 1\n"})
    commit(repo, "the branch begins", "2026-11-25T10:00:00Z")
    git(repo, "checkout", "-q", "--orphan", "imported")
    git(repo, "rm", "-rq", "--cached", ".")
    write(repo, {"exp/e.py": "E = 1\n"})
    git(repo, "add", "exp")
    git(repo, "commit", "-q", "-m", "elsewhere", when="2026-11-20T10:00:00Z")
    git(repo, "checkout", "-q", "-f", "main")
    git(
        repo,
        "merge",
        "-q",
        "--allow-unrelated-histories",
        "-m",
        "import",
        "imported",
        when="2026-11-26T10:00:00Z",
    )
    source = SourceTree(repo)
    check_date(date(2026, 11, 25), source, "exp")
    with pytest.raises(UsageError, match="before the first commit of this branch"):
        check_date(date(2026, 11, 22), source, "exp")  # exp/ is older, the branch is not


def test_a_dated_run_scans_the_days_first_parent_commit(fresh_world):
    """Through the pipeline: `head` and the scanned tree are the day's commit on HEAD's
    first-parent chain; the baseline commit follows the same rule."""
    repo = fresh_world.repo
    main_head = git(repo, "rev-parse", "HEAD")  # the sample's last commit, 2026-12-02 00:05
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, {f"{EXP}/side_early.py": "S = 0\n"})
    side_early = commit(repo, "side, late on the 2nd", "2026-12-02T23:30:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", when="2026-12-03T01:00:00Z")
    write(repo, {f"{EXP}/days.py": "D = 1\n"})
    days = commit(repo, "the day's", "2026-12-03T02:00:00Z", author="2026-12-09T00:00:00Z")
    git(repo, "checkout", "-q", "side")
    write(repo, {f"{EXP}/side.py": "S = 1\n"})
    side = commit(repo, "side", "2026-12-03T05:00:00Z")
    git(repo, "checkout", "-q", "main")
    write(repo, {f"{EXP}/later.py": "L = 1\n"})
    commit(repo, "later", "2026-12-04T01:00:00Z", author="2026-12-03T03:00:00Z")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", when="2026-12-04T02:00:00Z")
    ctx = prepare(
        RunOptions(
            repo=repo, config=load_config(fresh_world.config), as_of=date(2026, 12, 3), offline=True
        )
    ).ctx
    assert ctx.head_commit == days and ctx.source.at == days
    # The baseline (a day earlier) is the branch's too: not the side branch's commit of 23:30.
    assert ctx.baseline_commit == main_head
    # What every parent walked by date would have given, for both.
    assert git(repo, "rev-list", "-1", "--before=2026-12-04T00:00:00Z", "HEAD") == side
    assert git(repo, "rev-list", "-1", "--before=2026-12-03T00:00:00Z", days) == side_early
    listed = ctx.source.glob(EXP)
    assert {f"{EXP}/days.py", f"{EXP}/side_early.py"} <= set(listed)  # merged before the day's
    assert not {f"{EXP}/later.py", f"{EXP}/side.py"} & set(listed)


# -- dated runs never read or touch the work tree -------------------------------------


def uncommitted_todos(repo: Path) -> None:
    """A TODO edited into a committed file and one in a new file, neither committed."""
    trainer = repo / EXP / "trainer.py"
    trainer.write_text(trainer.read_text() + "\n# TODO: uncommitted edit\n")
    (repo / EXP / "untracked_todo.py").write_text("# TODO: untracked file\n")


def test_a_dated_run_sees_nothing_uncommitted_and_changes_nothing(fresh_world, tmp_path):
    repo = fresh_world.repo
    uncommitted_todos(repo)
    before = state(repo)
    done = scout("collect", *world_args(fresh_world, tmp_path), "--offline", "--json")
    assert done.returncode == 0, done.stderr
    assert "uncommitted edit" not in done.stdout and "untracked_todo" not in done.stdout
    assert '"head": "' + git(repo, "rev-parse", "HEAD") in done.stdout  # HEAD is the day's
    assert state(repo) == before
    # Undated, the work tree is scanned as it is: the same TODOs are found.
    undated = run(
        RunOptions(repo=repo, config=load_config(fresh_world.config), offline=True, only=["todos"])
    )
    said = "\n".join(f.body + f.title for f in [*undated.findings, *undated.left_out])
    assert "uncommitted edit" in said and "untracked_todo" in said
    assert state(repo) == before


def test_forked_processes_scan_the_same_commit(fresh_world):
    repo = fresh_world.repo
    uncommitted_todos(repo)
    results = [
        run(
            RunOptions(
                repo=repo,
                config=load_config(fresh_world.config),
                as_of=TODAY,
                prior_dir=fresh_world.priors,
                offline=True,
                processes=processes,
            )
        )
        for processes in (1, 2)
    ]
    one, two = ([(f.fingerprint, f.title, f.body) for f in result.findings] for result in results)
    assert one == two and len(one) > 10
    assert [c.state for c in results[0].collectors] == [c.state for c in results[1].collectors]
    assert not any("uncommitted edit" in body or "untracked_todo" in body for _, _, body in two)


# -- blobs shared across runs ----------------------------------------------------------


@pytest.fixture
def parses(monkeypatch) -> dict[str, int]:
    """How many times each path was parsed, counted where SourceTree parses."""
    counted: dict[str, int] = {}
    real = pyast.parse

    def counting(text: str, filename: str = "<unknown>"):
        counted[filename] = counted.get(filename, 0) + 1
        return real(text, filename)

    monkeypatch.setattr(pyast, "parse", counting)
    return counted


def test_a_shared_store_parses_a_blob_once_across_trees(tmp_path, parses):
    repo = new_repo(tmp_path / "repo")
    write(repo, {"same.py": "S = 1\n", "changed.py": "C = 1\n", "broken.py": "def (:\n"})
    first = commit(repo, "first", "2026-11-20T10:00:00Z")
    write(repo, {"changed.py": "C = 2\n"})
    second = commit(repo, "second", "2026-11-21T10:00:00Z")
    store = BlobStore()
    trees = [SourceTree(repo, at=first, blobs=store), SourceTree(repo, at=second, blobs=store)]
    for tree in trees:
        for path in ("same.py", "changed.py", "broken.py"):
            tree.parse(path)
    assert parses == {"same.py": 1, "changed.py": 2, "broken.py": 1}
    assert trees[0].parse("same.py") is trees[1].parse("same.py")
    # Parsed once, but each run still says the file was skipped, and why.
    for tree in trees:
        assert tree.untold_skipped() == [("broken.py", "not valid Python (invalid syntax, line 1)")]
    # History reads share it too: the first commit's blob, asked for by path.
    assert trees[1].parse_at(first, "same.py") is trees[0].parse("same.py")
    assert parses["same.py"] == 1
    # Without a shared store each tree parses for itself: the count is of real parses.
    SourceTree(repo, at=first).parse("same.py")
    assert parses["same.py"] == 2


def test_consecutive_dated_runs_with_one_store_parse_unchanged_files_once(fresh_world, parses):
    config = load_config(fresh_world.config)
    days = (date(2026, 12, 1), TODAY)

    def two_days(stores: list[BlobStore]) -> dict[str, int]:
        parses.clear()
        for day, store in zip(days, stores, strict=True):
            run(
                RunOptions(
                    repo=fresh_world.repo,
                    config=config,
                    as_of=day,
                    offline=True,
                    only=["freshness"],
                    blobs=store,
                )
            )
        return dict(parses)

    shared = two_days([BlobStore()] * 2)
    apart = two_days([BlobStore(), BlobStore()])
    heads = [
        git(
            fresh_world.repo,
            "rev-list",
            "-1",
            "--first-parent",
            f"--before={day.isoformat()}T23:59:59Z",
            "HEAD",
        )
        for day in days
    ]
    changed = set(git(fresh_world.repo, "diff", "--name-only", *heads).splitlines())
    unchanged = [path for path in apart if path not in changed]
    assert unchanged and all(apart[path] == 2 for path in unchanged)  # each run parsed them
    assert all(shared[path] == 1 for path in unchanged)  # the shared store: once


# -- the installed torch is today's -------------------------------------------------------


def test_a_past_day_does_not_use_todays_torch(fresh_world, monkeypatch):
    """As of today the stand-in torch answers; as of a past day its checks say skipped and
    leave those findings unchecked (neither found nor resolved), inventing nothing."""
    monkeypatch.setenv("SCOUT_TODAY", TODAY.isoformat())
    today = {c: run_collector(fresh_world, c, TODAY) for c in ("freshness", "todos")}
    assert by_kind(today["freshness"])["private_api_public_alt"]
    assert by_kind(today["todos"])["todo_api_available"]
    monkeypatch.setenv("SCOUT_TODAY", "2026-12-03")
    past = {c: run_collector(fresh_world, c, TODAY) for c in ("freshness", "todos")}
    freshness, todos = by_kind(past["freshness"]), by_kind(past["todos"])
    assert "private_api_public_alt" not in freshness and "todo_api_available" not in todos
    (private,) = freshness["private_api"]
    assert f"Public alternatives not checked: skipped — {PAST_TORCH}." in private.body
    assert any(
        f"Named APIs not checked: skipped — {PAST_TORCH}." in f.body
        for f in todos["todo_unclassified"]
    )
    (state,) = past["freshness"].collectors
    assert state.state == "done" and fingerprint("private_api_public_alt", EXP) in state.unchecked
    (api,) = by_kind(today["todos"])["todo_api_available"]
    (state,) = past["todos"].collectors
    assert state.state == "done" and api.fingerprint in state.unchecked


def test_work_committed_on_the_day_is_what_a_dated_run_sees(fresh_world):
    (fresh_world.repo / EXP / "fresh_todo.py").write_text("# TODO: committed today\n")
    commit_all(fresh_world.repo, "a TODO")
    result = run_collector(fresh_world, "todos", TODAY)
    assert any("fresh_todo.py" in f.body for f in [*result.findings, *result.left_out])


# -- history walks carried from one commit to the next -------------------------------------


@pytest.fixture
def branchy(tmp_path: Path) -> tuple[Path, list[str]]:
    """A history with what carried answers get wrong when done naively: a def removed and
    brought back, a rename, a side branch merged with changes of its own, a file untouched
    for several commits, a commit touching nothing the walks read."""
    repo = new_repo(tmp_path / "repo")
    commits = []
    write(
        repo,
        {
            "a.py": "def keep():\n    pass\n",
            "b.py": "def gone():\n    pass\n",
            "quiet.py": "class Quiet:\n    pass\n",
        },
    )
    commits.append(commit(repo, "one", "2026-11-01T10:00:00Z"))
    write(repo, {"b.py": "X = 1\n"})  # `gone` removed
    commits.append(commit(repo, "two", "2026-11-02T10:00:00Z"))
    write(repo, {"notes.txt": "nothing the walks read\n"})
    commits.append(commit(repo, "three", "2026-11-03T10:00:00Z"))
    git(repo, "checkout", "-q", "-b", "side", commits[1])
    write(repo, {"b.py": "X = 1\n\ndef gone():\n    return 2\n"})  # brought back on a branch
    commit(repo, "side", "2026-11-03T12:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", when="2026-11-04T10:00:00Z")
    commits.append(git(repo, "rev-parse", "HEAD"))
    git(repo, "mv", "a.py", "moved.py")
    commits.append(commit(repo, "rename", "2026-11-05T10:00:00Z"))
    return repo, commits


def walk_answers(tree: SourceTree, head: str) -> dict[str, object]:
    return {
        "pickaxe gone": tree.pickaxe("def gone", "b.py", head),
        "pickaxe everywhere": tree.pickaxe("def keep", ".", head),
        "first commit of b.py": tree.first_commit_date("b.py"),
        "first commit": tree.first_commit_date(),
        "fate of a.py": tree.path_fate("a.py", head),
        "history of b.py": tree.log(None, head, ["b.py"]),
        "blame": tree.blame_many(["b.py", "quiet.py", "moved.py"], head),
        "names": tree.defined_names(head),
    }


def test_history_walks_carried_across_commits_answer_as_fresh_ones_do(branchy):
    """Every order of asking (forward, back to an older commit, skipping ahead) gives, from a
    shared store, what a tree with a store of its own finds."""
    repo, commits = branchy
    for order in (commits, commits[::-1], [commits[0], commits[3], commits[1], commits[4]]):
        store = BlobStore()
        for head in order:
            shared = walk_answers(SourceTree(repo, at=head, blobs=store), head)
            assert shared == walk_answers(SourceTree(repo, at=head), head), head


def test_a_walk_is_not_run_again_where_no_commit_touched_its_paths(branchy, monkeypatch):
    repo, commits = branchy
    store = BlobStore()
    walk_answers(SourceTree(repo, at=commits[1], blobs=store), commits[1])
    calls: list[tuple[str, ...]] = []
    real = GitCommand._call_process

    def recording(self, method, *args, **kwargs):
        calls.append((method, *map(str, args)))
        return real(self, method, *args, **kwargs)

    monkeypatch.setattr(GitCommand, "_call_process", recording)
    # Commit three touched only notes.txt: the walks of files carry over as they are; the
    # walks of the whole tree cover that one commit, not the history again.
    walk_answers(SourceTree(repo, at=commits[2], blobs=store), commits[2])
    searched = [call for call in calls if call[0] in ("log", "grep") and "-m" not in call]
    assert searched and all(f"{commits[1]}..{commits[2]}" in call for call in searched)
    assert not any("b.py" in call or "a.py" in call for call in searched)
    # The merge touched b.py: its walks cover the merged commits only, not all history.
    calls.clear()
    answers = walk_answers(SourceTree(repo, at=commits[3], blobs=store), commits[3])
    pickaxes = [call for call in calls if call[:2] == ("log", "-S")]
    assert pickaxes and all(f"{commits[2]}..{commits[3]}" in call for call in pickaxes)
    assert answers["pickaxe gone"].summary == "side"  # found in the merged branch


def report_of(day: str, head: str) -> str:
    return f"# Nightly Scout Report — {day}\n<!-- scout:run head={head} -->\n\n## All Clear\n"


def test_the_window_starts_where_the_last_report_looked(fresh_world, tmp_path):
    """A commit made on the 2nd after midnight was in the 2nd's report (it scanned the day's
    last commit): on the 3rd the baseline is that commit, not midnight's. A report head that
    would widen the window, that this clone lacks, or that is off the branch is not used."""
    repo = fresh_world.repo
    midnight = git(repo, "rev-parse", "HEAD")  # the sample's last commit, 2026-12-02 00:05
    write(repo, {f"{EXP}/evening.py": "E = 1\n"})
    evening = commit(repo, "evening of the 2nd", "2026-12-02T20:00:00Z")
    write(repo, {f"{EXP}/third.py": "T = 1\n"})
    third = commit(repo, "on the 3rd", "2026-12-03T09:00:00Z")
    git(repo, "checkout", "-q", "-b", "gone", midnight)
    write(repo, {f"{EXP}/rewritten.py": "R = 1\n"})
    off_branch = commit(repo, "a branch force-pushed away", "2026-12-02T21:00:00Z")
    git(repo, "checkout", "-q", "main")
    first = git(repo, "rev-list", "--max-parents=0", "HEAD")
    prior = tmp_path / "prior"
    prior.mkdir()

    def baseline(head: str) -> str | None:
        (prior / "2026-12-02.md").write_text(report_of("2026-12-02", head), encoding="utf-8")
        options = RunOptions(
            repo=repo,
            config=load_config(fresh_world.config),
            as_of=date(2026, 12, 3),
            offline=True,
            prior_dir=prior,
        )
        ctx = prepare(options).ctx
        assert ctx.head_commit == third
        return ctx.baseline_commit

    # Without a report head: the last commit before the prior report's day began.
    day = git(repo, "rev-list", "-1", "--first-parent", "--before=2026-12-02T00:00:00Z", "HEAD")
    assert day not in (midnight, evening)
    assert baseline(evening) == evening  # the true case: the 2nd's evening is not news again
    assert baseline(midnight) == midnight
    assert baseline(first) == day  # older than the day's baseline: never a wider window
    assert baseline("0" * 40) == day  # not in this clone
    assert baseline(off_branch) == day  # not an ancestor of today's commit


def test_what_the_listed_trees_answer_is_what_git_answers(branchy):
    """Changed files and a commit's Python files, from the trees a replay listed already:
    the answers git's own diff and ls-tree give."""
    repo, commits = branchy
    write(repo, {"pkg/deep/x.py": "X = 1\n", "pkg/notes.md": "n\n"})
    commits.append(commit(repo, "a package", "2026-11-06T10:00:00Z"))
    store = BlobStore()
    for head in commits:
        SourceTree(repo, at=head, blobs=store)  # each lists its tree into the store
    listed = SourceTree(repo, at=commits[-1], blobs=store)
    fresh = SourceTree(repo)  # no tree listed: git is asked
    for base in commits:
        assert listed.changed_between(base, commits[-1]) == fresh.changed_between(base, commits[-1])
        for directory in ("pkg", "pkg/", ".", ""):
            assert listed.python_files_at(base, directory) == sorted(
                fresh.python_files_at(base, directory or ".")
            )
