"""A finding's lists stay lists in the report; a long one is cut, its marker keeps every item."""

from __future__ import annotations


def _finding(body: str, count: int):
    from scout_tui.model import Finding, Section

    return Finding(
        collector="coverage",
        kind="tests_disabled",
        title="Tests off",
        body=body,
        section=Section.FYI,
        items=[f"t{n}" for n in range(count)],
        fingerprint="tests_disabled-0123456789ab",
    )


def _nested_items(markdown: str) -> list[list[str]]:
    """Per top-level list item, the text of the items of the list nested in it."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(markdown)
    found, depth, current = [], 0, None
    for n, token in enumerate(tokens):
        if token.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
            if depth == 2:
                current = []
                found.append(current)
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif token.type == "list_item_open" and depth == 2 and current is not None:
            current.append(tokens[n + 2].content)  # list_item, paragraph, inline
    return found


def test_a_list_in_a_body_stays_a_list_and_a_long_one_is_cut():
    from datetime import date

    from scout_tui.history.parse import parse_report
    from scout_tui.report.render import Layout, render_report

    names = [f"`t{n}`" for n in range(15)]
    finding = _finding("Tests switched off:\n" + "\n".join(f"- {n}" for n in names), 15)
    day = date(2026, 12, 2)
    whole = render_report(day, [finding])
    assert "— Tests switched off: <!--" in whole  # the paragraph before the list, kept
    assert " - `t0` - " not in whole
    assert _nested_items(whole) == [names]
    cut = render_report(day, [finding], layout=Layout(list_items=10))
    [shown] = _nested_items(cut)
    assert shown[:10] == names[:10]
    assert shown[10] == "… 5 more (see `scout report --json` or the console)"
    [item] = parse_report(cut).items  # the marker still names every item
    assert len(item.item_digests) == 15
    # A body that starts with a list starts it on its own lines.
    starts = render_report(day, [_finding("- `a`\n- `b`", 2)])
    assert _nested_items(starts) == [["`a`", "`b`"]]
