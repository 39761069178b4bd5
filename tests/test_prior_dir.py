"""`--prior DIR`: what is in the folder that is not a report is skipped, and said so."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from scout_tui.history.baseline import MAX_REPORT_BYTES, load_prior_dir
from scout_tui.model import Section


def report(day: str, item: str = "an item") -> str:
    return f"# Nightly Scout Report — {day}\n\n## FYI\n\n- {item}\n"


def load(folder: Path) -> tuple[list, list[str]]:
    warnings: list[str] = []
    reports = load_prior_dir(folder, warnings.append)
    for warning in warnings:
        assert "\n" not in warning
    return reports, warnings


def about(warnings: list[str], path: Path) -> list[str]:
    return [w for w in warnings if w.startswith(f"{path}: ")]


def warned(warnings: list[str], path: Path) -> str:
    (warning,) = about(warnings, path)
    return warning


def test_reports_load_oldest_first_and_hidden_files_are_ignored(tmp_path):
    (tmp_path / "2026-04-03.md").write_text(report("2026-04-03", "later"))
    (tmp_path / "2026-04-02.md").write_text("\ufeff" + report("2026-04-02", "earlier"))  # BOM
    (tmp_path / ".DS_Store").write_bytes(b"\0\1binary")
    (tmp_path / ".drafts").mkdir()
    reports, warnings = load(tmp_path)
    assert warnings == []
    assert [(r.date, r.items[0].title) for r in reports] == [
        (date(2026, 4, 2), "earlier"),
        (date(2026, 4, 3), "later"),
    ]
    assert reports[0].items[0].section is Section.FYI
    assert reports[0].source == str(tmp_path / "2026-04-02.md")


def test_entries_not_named_like_a_report_are_skipped(tmp_path):
    (tmp_path / "2026-04-02.md").write_text(report("2026-04-02"))
    names = [
        "notes.txt",
        "2026-04-03.MD",
        "report-2026-04-04.md",
        "2026-04-05.md~",
        "2026-02-30.md",
        "2026-4-6.md",
    ]
    for name in names:
        (tmp_path / name).write_text(report("2026-04-09"))
    (tmp_path / "archive").mkdir()
    (tmp_path / "2026-04-07.md").mkdir()
    reports, warnings = load(tmp_path)
    assert [r.date for r in reports] == [date(2026, 4, 2)]
    assert len(warnings) == len(names) + 2
    for name in names:
        assert "skipped" in warned(warnings, tmp_path / name)
    assert "2026-02-30 is not a date" in warned(warnings, tmp_path / "2026-02-30.md")
    assert "not named YYYY-MM-DD.md" in warned(warnings, tmp_path / "notes.txt")
    assert "a folder" in warned(warnings, tmp_path / "archive")
    assert "not a file" in warned(warnings, tmp_path / "2026-04-07.md")


def test_empty_binary_and_undecodable_files_are_skipped(tmp_path):
    (tmp_path / "2026-04-01.md").write_bytes(b"")
    (tmp_path / "2026-04-02.md").write_text(" \n\n\t\n")
    (tmp_path / "2026-04-03.md").write_bytes(report("2026-04-03").encode() + b"\0\0")
    (tmp_path / "2026-04-04.md").write_bytes(report("2026-04-04").encode("utf-16"))
    valid = report("2026-04-05").encode()
    (tmp_path / "2026-04-05.md").write_bytes(valid + b"\xff tail")
    (tmp_path / "2026-04-06.md").write_text(report("2026-04-06"))
    reports, warnings = load(tmp_path)
    assert [r.date for r in reports] == [date(2026, 4, 6)]
    assert "empty" in warned(warnings, tmp_path / "2026-04-01.md")
    assert "empty" in warned(warnings, tmp_path / "2026-04-02.md")
    assert "binary" in warned(warnings, tmp_path / "2026-04-03.md")
    assert "binary" in warned(warnings, tmp_path / "2026-04-04.md")  # UTF-16 has NUL bytes
    undecodable = f"not UTF-8 text (byte 0xff at {len(valid)})"
    assert undecodable in warned(warnings, tmp_path / "2026-04-05.md")
    assert len(warnings) == 5


def test_files_over_two_mebibytes_are_refused_before_being_read(tmp_path):
    fits = report("2026-04-01")
    (tmp_path / "2026-04-01.md").write_text(fits + "x" * (MAX_REPORT_BYTES - len(fits.encode())))
    over = tmp_path / "2026-04-02.md"
    over.write_text(report("2026-04-02") + "x" * MAX_REPORT_BYTES)
    huge = tmp_path / "2026-04-03.md"
    with huge.open("wb") as handle:
        handle.truncate(5 * 2**30)  # sparse zeros: read, they would be called binary instead
    reports, warnings = load(tmp_path)
    assert [r.date for r in reports] == [date(2026, 4, 1)]
    assert (tmp_path / "2026-04-01.md").stat().st_size == MAX_REPORT_BYTES
    assert "2.0 MiB is over the 2 MiB" in warned(warnings, over)
    assert "5120.0 MiB is over the 2 MiB" in warned(warnings, huge)
    assert len(warnings) == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_without_read_permission_is_skipped(tmp_path):
    locked = tmp_path / "2026-04-02.md"
    locked.write_text(report("2026-04-02"))
    locked.chmod(0)
    (tmp_path / "2026-04-03.md").write_text(report("2026-04-03"))
    reports, warnings = load(tmp_path)
    assert [r.date for r in reports] == [date(2026, 4, 3)]
    assert "cannot be read: Permission denied" in warned(warnings, locked)


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
def test_a_file_that_fails_to_read_is_skipped(tmp_path):
    # A regular file that even root cannot read from its start: the kernel says EIO.
    broken = tmp_path / "2026-04-02.md"
    broken.symlink_to("/proc/self/mem")
    dangling = tmp_path / "2026-04-04.md"
    dangling.symlink_to(tmp_path / "gone.md")
    (tmp_path / "2026-04-03.md").write_text(report("2026-04-03"))
    reports, warnings = load(tmp_path)
    assert [r.date for r in reports] == [date(2026, 4, 3)]
    assert "cannot be read: Input/output error" in warned(warnings, broken)
    assert "not a file" in warned(warnings, dangling)


def test_the_title_date_wins_and_one_report_per_date_is_kept(tmp_path):
    (tmp_path / "2026-04-01.md").write_text(report("2026-04-05", "first claim"))
    (tmp_path / "2026-04-02.md").write_text(report("2026-04-03", "misnamed"))
    (tmp_path / "2026-04-03.md").write_text(report("2026-04-03", "own file"))
    (tmp_path / "2026-04-04.md").write_text(report("2026-04-05", "second claim"))
    (tmp_path / "2026-04-06.md").write_text("# Nightly Scout Report\n\n## FYI\n\n- undated\n")
    (tmp_path / "2026-04-07.md").write_text("# Notes\n\n## FYI\n\n- not ours\n")
    reports, warnings = load(tmp_path)
    assert [(r.date, r.items[0].title) for r in reports] == [
        (date(2026, 4, 3), "own file"),  # its name is its date
        (date(2026, 4, 5), "first claim"),  # neither is named so: the first by name
        (date(2026, 4, 6), "undated"),
        (date(2026, 4, 7), "not ours"),
    ]
    misnamed = about(warnings, tmp_path / "2026-04-02.md")
    assert misnamed[0].endswith(
        "its title says 2026-04-03, its name 2026-04-02; the title's date wins"
    )
    assert len(about(warnings, tmp_path / "2026-04-01.md")) == 1  # its title says 2026-04-05
    dropped = [w for w in warnings if "a second report" in w]
    assert dropped == [
        f"{tmp_path / '2026-04-02.md'}: skipped, a second report of 2026-04-03; "
        f"kept {tmp_path / '2026-04-03.md'}",
        f"{tmp_path / '2026-04-04.md'}: skipped, a second report of 2026-04-05; "
        f"kept {tmp_path / '2026-04-01.md'}",
    ]
    assert "no valid date; read as the report of 2026-04-06" in warned(
        warnings, tmp_path / "2026-04-06.md"
    )
    assert "no '# Nightly Scout Report' title" in warned(warnings, tmp_path / "2026-04-07.md")


def test_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="prior reports folder not found"):
        load_prior_dir(tmp_path / "nope", print)
    (tmp_path / "file.md").write_text(report("2026-04-02"))
    with pytest.raises(FileNotFoundError, match="is a file: it takes the folder"):
        load_prior_dir(tmp_path / "file.md", print)


def test_an_offline_run_says_priors_were_not_read_not_that_none_exist(tmp_path, fresh_world):
    """Offline, no --prior: the report says the prior reports were skipped and why, never
    "First report: no prior report" (TRUE). An empty --prior folder is a first report
    (NEAR-MISS: there really is none)."""
    from tests.cli import scout, world_args

    args = world_args(fresh_world, tmp_path, prior=False)
    done = scout("collect", "--offline", *args)
    assert done.returncode == 0, done.stderr
    said = scout("report", "--offline", *args).stdout
    assert "First report" not in said
    assert (
        "_Prior reports: skipped — offline (or use --prior DIR). Every finding is shown as "
        "new, whatever earlier reports said._"
    ) in said
    empty = tmp_path / "none-yet"
    empty.mkdir()
    first = [*world_args(fresh_world, tmp_path / "first", prior=False), "--prior", str(empty)]
    assert scout("collect", "--offline", *first).returncode == 0
    said = scout("report", "--offline", *first).stdout
    assert "First report: no prior report to compare with" in said
    assert "Prior reports: skipped" not in said
