"""The state store: the user's decisions and their history, on real SQLite files."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import pytest

from scout_tui.publish.journal import Journal
from scout_tui.store.state import SCHEMA_VERSION, StateError, StateStore
from scout_tui.triage.decisions import accept, drop
from scout_tui.triage.store import DecisionStore
from tests.cli import read_only

SCOPE = "abc:exp"


def test_undo_and_redo_survive_a_restart(tmp_path):
    store = DecisionStore(StateStore(tmp_path))
    store.change(SCOPE, "accept a", ["k-a"], lambda fp, e, _: accept(fp, e))
    store.change(SCOPE, "drop b", ["k-b"], lambda fp, e, _: drop(fp, e, "noise"))
    restarted = DecisionStore(StateStore(tmp_path))  # a new process would see exactly this
    assert set(restarted.decisions(SCOPE)) == {"k-a", "k-b"}
    undone = restarted.undo(SCOPE)
    assert undone.label == "drop b"
    assert set(DecisionStore(StateStore(tmp_path)).decisions(SCOPE)) == {"k-a"}
    assert DecisionStore(StateStore(tmp_path)).redo(SCOPE).label == "drop b"
    assert DecisionStore(StateStore(tmp_path)).decisions(SCOPE)["k-b"].reason == "noise"
    # Undo twice, then a new action: the redo stack is gone, as in any editor.
    store.undo(SCOPE)
    store.undo(SCOPE)
    assert store.decisions(SCOPE) == {}
    store.change(SCOPE, "accept c", ["k-c"], lambda fp, e, _: accept(fp, e))
    assert store.redo(SCOPE) is None
    assert [a.op for a in store.history(SCOPE)] == [
        "do",
        "do",
        "undo",
        "redo",
        "undo",
        "undo",
        "do",
    ]


def test_nothing_changed_records_nothing(tmp_path):
    store = DecisionStore(StateStore(tmp_path))
    store.change(SCOPE, "accept a", ["k-a"], lambda fp, e, _: accept(fp, e))
    assert store.change(SCOPE, "accept a again", ["k-a"], lambda fp, e, _: accept(fp, e)) == []
    assert len(store.history(SCOPE)) == 1


def test_scopes_are_apart(tmp_path):
    store = DecisionStore(StateStore(tmp_path))
    store.change(SCOPE, "accept a", ["k-a"], lambda fp, e, _: accept(fp, e))
    assert store.decisions("other:exp") == {}
    assert store.undo("other:exp") is None


def test_reading_a_store_that_does_not_exist_creates_nothing(tmp_path):
    store = DecisionStore(StateStore(tmp_path / "none"))
    assert store.decisions(SCOPE) == {} and store.history(SCOPE) == []
    assert not (tmp_path / "none").exists()


def test_a_corrupt_store_is_reported_and_left_as_it_is(tmp_path):
    (tmp_path / "state.sqlite3").write_bytes(b"these are not my decisions" * 100)
    store = DecisionStore(StateStore(tmp_path))
    with pytest.raises(StateError, match=r"is unreadable .* left as it is"):
        store.decisions(SCOPE)
    with pytest.raises(StateError, match="is unreadable"):
        store.change(SCOPE, "accept", ["k"], lambda fp, e, _: accept(fp, e))
    assert (tmp_path / "state.sqlite3").read_bytes() == b"these are not my decisions" * 100


def test_concurrent_writers_lose_nothing(tmp_path):
    """Two processes (the console and a cron `scout triage`, say) writing at once."""
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from scout_tui.store.state import StateStore
        from scout_tui.triage.decisions import accept
        from scout_tui.triage.store import DecisionStore
        store = DecisionStore(StateStore(Path({str(tmp_path)!r})))
        for n in range(60):
            fp = f"k-{{sys.argv[1]}}-{{n}}"
            store.change({SCOPE!r}, "accept " + fp, [fp], lambda f, e, _: accept(f, e))
    """)
    writers = [subprocess.Popen([sys.executable, "-c", script, name]) for name in "ab"]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    store = DecisionStore(StateStore(tmp_path))
    assert len(store.decisions(SCOPE)) == 120
    assert len(store.history(SCOPE)) == 120


def test_a_read_only_store_is_read_but_refuses_writes_clearly(tmp_path):
    store = DecisionStore(StateStore(tmp_path))
    store.change(SCOPE, "drop a", ["k-a"], lambda fp, e, _: drop(fp, e, "noise"))
    script = textwrap.dedent(f"""
        from pathlib import Path
        from scout_tui.store.state import StateError, StateStore
        from scout_tui.triage.decisions import accept
        from scout_tui.triage.store import DecisionStore
        store = DecisionStore(StateStore(Path({str(tmp_path)!r})))
        print(sorted(store.decisions({SCOPE!r})))
        try:
            store.change({SCOPE!r}, "accept b", ["k-b"], lambda f, e, _: accept(f, e))
        except StateError as exc:
            print(exc)
    """)
    prefix = read_only(tmp_path)
    if prefix is None:
        pytest.skip("no user namespaces here to make a read-only mount")
    done = subprocess.run([*prefix, sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "['k-a']"
    path = tmp_path / "state.sqlite3"
    assert lines[1] == f"cannot record 'accept b': the state store {path} is read-only"


def test_the_publish_journal(tmp_path):
    journal = Journal(StateStore(tmp_path))
    assert journal.day(SCOPE, "2026-12-02") == {}
    journal.record(SCOPE, "2026-12-02", "comment", {"id": 7})
    assert Journal(StateStore(tmp_path)).day(SCOPE, "2026-12-02") == {"comment": {"id": 7}}


def test_a_partly_damaged_store_is_refused_and_not_written(tmp_path):
    store = DecisionStore(StateStore(tmp_path))
    for n in range(200):  # several pages
        store.change(
            SCOPE, f"accept {n}", [f"k-{n:03d}-" + "x" * 200], lambda fp, e, _: accept(fp, e)
        )
    path = tmp_path / "state.sqlite3"
    data = bytearray(path.read_bytes())
    data[4096:8192] = bytes(4096)  # zero page 2, as a bad sector or a crash might
    path.write_bytes(bytes(data))
    damaged = bytes(data)
    for action in (
        lambda s: s.decisions(SCOPE),
        lambda s: s.undo(SCOPE),
        lambda s: s.change(SCOPE, "x", ["k"], lambda fp, e, _: accept(fp, e)),
    ):
        with pytest.raises(StateError, match=r"is (damaged|unreadable) .* left as it is"):
            action(DecisionStore(StateStore(tmp_path)))
    assert path.read_bytes() == damaged  # left exactly as it was


_KILLED_MID_WRITE = """
import os, signal, sqlite3, sys
from pathlib import Path
from scout_tui.store.state import StateStore
store = StateStore(Path(sys.argv[1]))
db = sqlite3.connect(store.path, isolation_level=None)
db.execute("PRAGMA cache_size = 1")  # pages spill into the file before the commit
db.execute("BEGIN IMMEDIATE")
db.execute("INSERT INTO journal VALUES ('s', 'd', 'big', ?, 'now')", ("x" * 200_000,))
db.execute("DELETE FROM journal")
os.kill(os.getpid(), signal.SIGKILL)
"""


def _killed_during_a_write(folder) -> StateStore:
    """A store whose writer was killed mid-transaction: a hot `-journal` beside it."""
    store = StateStore(folder)
    Journal(store).record(SCOPE, "2026-12-02", "comment", {"id": 7})
    done = subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE, str(folder)])
    assert done.returncode == -9
    assert store.hot_journal.exists()
    return store


def test_a_write_killed_halfway_is_rolled_back_on_the_next_read(tmp_path):
    store = _killed_during_a_write(tmp_path)
    assert Journal(StateStore(tmp_path)).day(SCOPE, "2026-12-02") == {"comment": {"id": 7}}
    assert not store.hot_journal.exists()
    Journal(store).record(SCOPE, "2026-12-02", "links", {})  # and writes go on
    assert set(Journal(StateStore(tmp_path)).day(SCOPE, "2026-12-02")) == {"comment", "links"}


def test_a_write_killed_halfway_on_read_only_media_is_one_line_naming_the_journal(tmp_path):
    store = _killed_during_a_write(tmp_path)
    prefix = read_only(tmp_path)
    if prefix is None:
        pytest.skip("no user namespaces here to make a read-only mount")
    script = textwrap.dedent(f"""
        from pathlib import Path
        from scout_tui.publish.journal import Journal
        from scout_tui.store.state import StateError, StateStore
        try:
            Journal(StateStore(Path({str(tmp_path)!r}))).day({SCOPE!r}, "2026-12-02")
        except StateError as exc:
            print(exc)
    """)
    done = subprocess.run([*prefix, sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"cannot read the publish journal: the state store {store.path} has an unfinished write "
        f"({store.hot_journal}) that only a writable store can roll back: make its folder "
        "writable, or use --state-dir"
    ]


def test_the_layout_version_is_kept_and_a_newer_one_refused(tmp_path):
    decisions = DecisionStore(StateStore(tmp_path))
    decisions.change(SCOPE, "accept a", ["k-a"], lambda fp, e, _: accept(fp, e))
    path = tmp_path / "state.sqlite3"
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        db.execute("PRAGMA user_version = 99")  # as a later scout would leave it
    with pytest.raises(StateError, match=r"written by a newer scout .* upgrade scout-tui"):
        DecisionStore(StateStore(tmp_path)).decisions(SCOPE)


def test_a_store_written_before_versions_were_kept_is_brought_up_on_its_first_write(tmp_path):
    path = tmp_path / "state.sqlite3"
    decisions = DecisionStore(StateStore(tmp_path))
    decisions.change(SCOPE, "accept a", ["k-a"], lambda fp, e, _: accept(fp, e))
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 0")
    assert set(DecisionStore(StateStore(tmp_path)).decisions(SCOPE)) == {"k-a"}  # read as is
    Journal(StateStore(tmp_path)).record(SCOPE, "2026-12-02", "comment", {"id": 7})
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_each_action_says_which_session_made_it_and_the_version_follows_all(tmp_path):
    """Two sessions on one store: each history row names its session; `version` grows with
    either's decisions, undos and redos (what a console watches)."""
    console = DecisionStore(StateStore(tmp_path), "the console (pid 1)")
    shell = DecisionStore(StateStore(tmp_path), "scout triage")
    assert console.version(SCOPE) == 0
    shell.change(SCOPE, "accept a", ["k-a"], lambda fp, e, _: accept(fp, e))
    seen = console.version(SCOPE)
    assert seen > 0
    undone = console.undo(SCOPE)
    assert undone is not None and undone.origin == "scout triage"
    assert console.version(SCOPE) > seen
    assert [a.origin for a in console.history(SCOPE)] == ["scout triage", "the console (pid 1)"]


def test_a_version_1_store_gains_the_origin_column_on_its_first_write(tmp_path):
    """A store written before sessions were named: read as is (its actions by nobody scout
    can name), and brought up to version 2 by the next write without losing a row."""
    path = tmp_path / "state.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE history (id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL,"
            " at TEXT NOT NULL, op TEXT NOT NULL, target INTEGER, label TEXT NOT NULL,"
            " changes TEXT NOT NULL);"
            "CREATE TABLE decisions (scope TEXT NOT NULL, fingerprint TEXT NOT NULL,"
            " entry TEXT NOT NULL, PRIMARY KEY (scope, fingerprint));"
            "PRAGMA user_version = 1;"
        )
        db.execute(
            "INSERT INTO history (scope, at, op, target, label, changes) VALUES (?, ?, 'do',"
            " NULL, 'accept old', '[]')",
            (SCOPE, "2026-12-01T09:00:00+00:00"),
        )
    store = DecisionStore(StateStore(tmp_path), "scout triage")
    assert [(a.label, a.origin) for a in store.history(SCOPE)] == [("accept old", None)]
    store.change(SCOPE, "accept a", ["k-a"], lambda fp, e, _: accept(fp, e))
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    assert [(a.label, a.origin) for a in store.history(SCOPE)] == [
        ("accept old", None),
        ("accept a", "scout triage"),
    ]
