"""A 50 MB prior report parses, and parses right: every shape that made the parser slow.

No timing is asserted (benchmarks/parse_report.py prints figures). These inputs took the
old parser hours: a heading with a long run of spaces (cubic), a long run of spaces in an
unbolded item, after "first reported", unclosed `<!--`, a long word of URLs (quadratic);
and markers quoted in code, which are not the item's.
"""

from __future__ import annotations

from datetime import date

from scout_tui.history.parse import parse_report
from scout_tui.model import Priority, Section

MB = 1_000_000
SPACES = " " * MB


def rendered(n: int) -> str:
    return (
        f"- [ ] **[P1] Finding {n} in `module_{n}.py`** — the pass reorders "
        f"`bucket_{n}` calls <!-- scout:fp=kind-{n:012x} items=ab12cd first=2026-03-01 -->\n"
        f"  Files: `torchtitan/x_{n}.py:{n}`\n"
    )


def big_report() -> tuple[str, int]:
    """About 50 MB; also the number of ordinary rendered items in it."""
    count = 20_000
    parts = [
        "# Nightly Scout Report — 2026-04-02\n\n",
        "## Action Items" + SPACES + "(new findings)\n\n",
        *(rendered(n) for n in range(count)),
        "\n### Group" + SPACES + "(aligned)\n\n",
        # One line of 20 MB, ending in its marker.
        "- **One long line** — " + "word " * (4 * MB) + "<!-- scout:fp=long-line -->\n",
        # An item wrapped over 400,000 lines, markers quoted in code spans among them.
        "- **Wrapped** — starts here\n"
        + "  more words on a wrapped line of the item\n" * 200_000
        + "  quoted `<!-- scout:fp=forged -->` in code\n"
        + "  "
        + "`<!-- scout:fp=forged -->` " * 100_000
        + "\n"
        + "  more words on a wrapped line of the item\n" * 200_000,
        "\n## FYI\n\n",
        # A 10 MB fence whose lines look like headings, items and markers.
        "- **Huge traceback** <!-- scout:fp=fenced -->\n  ```\n"
        + "  ## Action Items\n  - [ ] **[P0] not an item** <!-- scout:fp=forged -->\n" * 150_000
        + "      ```\n  ```\n",
        # Unbolded, no dash, long runs of spaces; "first reported" before spaces.
        "- Padded" + SPACES + "item first reported" + SPACES + "on 2026-03-05\n",
        "- Unclosed " + "<!-- " * 200_000 + "comments\n",
        "- Board " + "http://a/" * 200_000 + " https://github.com/orgs/o/projects/161?pane=1\n",
        "\n## All Clear\n\n- Trainer.Config fields — stable\n",
    ]
    return "".join(parts), count


def test_fifty_megabytes_parse_right():
    text, count = big_report()
    assert len(text) > 50 * MB
    report = parse_report(text, source="big.md")
    assert report.date == date(2026, 4, 2)
    actions = [i for i in report.items if i.section is Section.ACTION_ITEMS]
    fyi = [i for i in report.items if i.section is Section.FYI]
    clear = [i for i in report.items if i.section is Section.ALL_CLEAR]
    assert len(report.items) == len(actions) + len(fyi) + len(clear)

    ordinary, long_line, wrapped = actions[:count], actions[count], actions[count + 1]
    assert len(actions) == count + 2
    assert [i.fingerprint for i in ordinary] == [f"kind-{n:012x}" for n in range(count)]
    assert [i.title for i in ordinary[:2]] == [
        "Finding 0 in `module_0.py`",
        "Finding 1 in `module_1.py`",
    ]
    assert all(i.priority is Priority.P1 and i.item_digests == ["ab12cd"] for i in ordinary)
    assert {i.first_reported for i in ordinary} == {date(2026, 3, 1)}
    assert ordinary[-1].text.endswith("Files: `torchtitan/x_19999.py:19999`")

    assert (long_line.title, long_line.fingerprint) == ("One long line", "long-line")
    assert len(long_line.text) > 20 * MB
    assert (wrapped.title, wrapped.fingerprint) == ("Wrapped", None)  # the quoted one is not
    assert wrapped.text.count("\n") == 400_002

    huge, padded, unclosed, board = fyi
    assert (huge.title, huge.fingerprint, huge.priority) == ("Huge traceback", "fenced", None)
    assert huge.text.count("not an item") == 150_000
    assert padded.title == "Padded"  # an unbolded title stops at 160 characters
    assert padded.first_reported == date(2026, 3, 5)
    assert unclosed.title.startswith("Unclosed <!-- <!--")
    assert board.board_url == "https://github.com/orgs/o/projects/161?pane=1"
    assert [(i.title, i.fingerprint) for i in clear] == [("Trainer.Config fields", None)]
