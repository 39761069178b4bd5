"""The one cutter's pieces: lists and text cut on item and line boundaries, never inside a
fence, each cut saying how much it left out."""

from __future__ import annotations

from markdown_it import MarkdownIt

from scout_tui.analysis.text.markdown import cut_line, cut_lists, cut_text, cut_to, fence


def _blocks(markdown: str) -> list[str]:
    return [t.type for t in MarkdownIt("commonmark").parse(markdown) if t.nesting != -1]


def test_a_long_list_keeps_its_first_items_and_says_how_many_more():
    items = "\n".join(f"- item {n}" for n in range(25))
    cut = cut_lists("Intro.\n\n" + items + "\n\nAfter.", 10)
    assert cut.split("\n")[2:13] == [f"- item {n}" for n in range(10)] + [
        "- … 15 more (see `scout report`)"
    ]
    assert cut.endswith("\n\nAfter.")


def test_an_item_goes_whole_with_its_lines_and_its_fence():
    items = "\n".join(
        f"- item {n}\n  detail {n}\n  ```\n  - not an item {n}\n  ```" for n in range(4)
    )
    cut = cut_lists(items, 2)
    assert "detail 1" in cut and "detail 2" not in cut
    assert cut.count("```") == 4  # both fences of the two items kept, none opened alone
    assert cut.endswith("- … 2 more (see `scout report`)")
    assert "fence" in _blocks(cut)


def test_nested_lists_are_cut_each_at_its_own_level():
    text = "- a\n" + "".join(f"  - a{n}\n" for n in range(5)) + "- b\n- c"
    cut = cut_lists(text, 2)
    assert cut.split("\n") == [
        "- a",
        "  - a0",
        "  - a1",
        "  - … 3 more (see `scout report`)",
        "- b",
        "- … 1 more (see `scout report`)",
    ]


def test_lists_at_the_limit_are_left_alone():
    text = "- a\n- b\n\n1. c\n2. d"
    assert cut_lists(text, 2) == text


def test_a_traceback_keeps_its_last_lines_each_short():
    text = "\n".join(f"line {n}" for n in range(100)) + "\nError: " + "x" * 1000
    cut = cut_text(text, 3, 50)
    assert cut.split("\n")[:2] == ["line 98", "line 99"]
    assert cut.split("\n")[2] == "Error: " + "x" * 43 + " …"


def test_cut_to_ends_on_a_line_outside_any_fence():
    text = "Intro.\n\n" + fence("\n".join(f"code {n}" for n in range(1000))) + "\n\nOutro."
    cut = cut_to(text, 2000)
    assert len(cut) <= 2000
    assert cut.startswith("Intro.") and "code 1" not in cut  # the fence goes whole or not
    assert cut.endswith("more lines (see `scout report`)")
    assert cut_to(text, len(text)) == text


def test_a_numbered_list_says_its_next_number():
    text = "\n".join(f"{n}. step {n}" for n in range(1, 6))
    assert cut_lists(text, 2).split("\n") == [
        "1. step 1",
        "2. step 2",
        "3. … 3 more (see `scout report`)",
    ]


def test_a_long_line_is_cut_at_a_space_outside_code():
    text = "word " * 10 + "`a long code span " + "x " * 40 + "` tail " + "more " * 100
    cut = cut_line(text, 80)
    assert cut.startswith("word " * 9 + "word … ")  # the span would have been split
    assert cut.endswith("more characters (see `scout report`)")
    assert "`" not in cut.split("…")[0]
    assert cut_line("short", 80) == "short"


def test_a_finding_s_long_body_is_cut_in_what_is_posted_only():
    from scout_tui.model import Finding, Section
    from scout_tui.report.render import LINE_CHARS, render_item

    body = "A first paragraph that never ends. " * 400 + "\n\n" + "Details. " * 2000
    finding = Finding(
        collector="docs",
        kind="doc_stale",
        title="Stale",
        body=body,
        section=Section.DOCS,
        fingerprint="doc_stale-0123456789ab",
    )
    whole, cut = render_item(finding), render_item(finding, 10)
    assert len(whole) > len(body) and len(cut) < 10 * LINE_CHARS * 3 + 200
    assert cut.count("more characters (see `scout report`)") == 1
    assert cut.count("more lines (see `scout report`)") == 1
    assert "<!-- scout:fp=doc_stale-0123456789ab -->" in cut
