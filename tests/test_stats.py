"""`scout stats`: the reviewers' decisions per kind, read from a state store written the way
the console writes it (`scout triage` runs the console's Review actions)."""

from __future__ import annotations

import json

import pytest

from tests.cli import scout, world_args


@pytest.fixture
def args(tmp_path, sample_world):
    args = world_args(sample_world, tmp_path)
    assert scout("collect", *args).returncode == 0
    return args


def stats(tmp_path, *more: str):
    done = scout("stats", "--state-dir", str(tmp_path / "state"), *more)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_decisions_per_kind_with_reasons_and_undo_not_counted(args, tmp_path):
    done = scout("triage", "list", *args, "--json")
    rows = {row["fingerprint"]: row for row in json.loads(done.stdout)}
    demotable = next(fp for fp, row in rows.items() if row["priority"] in ("P0", "P1"))
    by_kind: dict[str, list[str]] = {}
    for fp in rows:
        if fp != demotable:
            by_kind.setdefault(fp.rpartition("-")[0], []).append(fp)
    first = sorted(by_kind, key=lambda k: (-len(by_kind[k]), k))[0]
    a = by_kind[first][0]
    b = next(fp for k, fps in sorted(by_kind.items()) if k != first for fp in fps)

    assert scout("triage", "accept", a, *args).returncode == 0
    assert scout("triage", "drop", a, "--reason", "not ours", *args).returncode == 0
    assert scout("triage", "drop", b, "--reason", "noise", *args).returncode == 0
    assert scout("triage", "demote", demotable, *args).returncode == 0
    # Accepted, then undone: it does not count.
    other = next(fp for fp in rows if fp not in (a, b, demotable))
    assert scout("triage", "accept", other, *args).returncode == 0
    assert scout("triage", "undo", *args).returncode == 0

    data = json.loads(stats(tmp_path, "--json"))
    kinds = {k["kind"]: k for k in data["kinds"]}
    assert data["days"] == 30
    # a: accepted then dropped — it stands dropped, counted once.
    assert kinds[first]["dropped"] >= 1 and kinds[first]["drop_reasons"]["not ours"] == 1
    assert kinds[b.rpartition("-")[0]]["drop_reasons"]["noise"] == 1
    assert kinds[demotable.rpartition("-")[0]]["demoted"] == 1
    assert sum(k["accepted"] for k in kinds.values()) == 0  # a dropped after; other undone
    # a, b and the demoted one; the undone accept is not there.
    assert sum(k["reviewed"] for k in kinds.values()) == 3

    table = stats(tmp_path)
    assert table.startswith("Reviewers' decisions over the last 30 days")
    assert "3 findings reviewed" in table
    header = next(line for line in table.splitlines() if line.startswith("kind"))
    assert header.split() == [
        "kind", "reviewed", "accepted", "demoted", "promoted", "dropped", "merged", "edited"
    ]  # fmt: skip
    assert "1 × not ours" in table and "1 × noise" in table


def test_an_empty_or_missing_store_is_one_clear_line(tmp_path):
    out = stats(tmp_path, "--days", "7")
    assert out.startswith("No reviewer decisions in the last 7 days")
    data = json.loads(stats(tmp_path, "--json"))
    assert data["kinds"] == []


def test_days_must_be_a_positive_number(tmp_path):
    done = scout("stats", "--days", "0", "--state-dir", str(tmp_path))
    assert done.returncode == 2 and "number of days" in done.stderr
