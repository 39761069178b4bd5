"""The report's Markdown, read by a real CommonMark parser (markdown-it-py).

Seeded random findings full of what breaks Markdown (backtick runs of every length at
line starts, mid-line and in code spans, tildes, raw HTML, mentions, pipes, tables, CR
and CRLF) go through the renderer; the parser must then see exactly the list items, code
blocks and HTML we meant, and the prior-report parser must read the same items back.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from scout_tui.analysis.text.markdown import code, fence, neutralize, neutralize_line
from scout_tui.history.parse import parse_report
from scout_tui.model import (
    SECTIONS,
    Evidence,
    FileRef,
    Finding,
    Priority,
    Section,
    Status,
    fingerprint,
)
from scout_tui.report.render import render_report

COMMONMARK = MarkdownIt("commonmark")
GITHUB = MarkdownIt("commonmark").enable(["table", "strikethrough"])  # GitHub's extras
PARSERS = [pytest.param(COMMONMARK, id="commonmark"), pytest.param(GITHUB, id="tables")]
DAY = date(2026, 4, 2)
REPORT_MARKER = re.compile(r"<!-- scout:report date=\d{4}-\d{2}-\d{2} -->")
MARKER = re.compile(r"<!-- scout:fp=([\w.:-]+)(?: items=[0-9a-f.]*)?(?: first=[\d-]+)? -->")
MENTION = re.compile(r"(?<![A-Za-z0-9])@[A-Za-z0-9]")  # stricter than GitHub's own rule
REAL_TODO = "TODO(x): Delete this shim once ``_split_block_mask`` captures ..."

WORDS = ["alpha", "beta", "torch.compile", "a@b.com", "3.14", "x1", "ok", "done."]
HTML = [
    "<div>",
    "</div>",
    "<!-- x -->",
    "<script>alert(1)</script>",
    "<img src=x onerror=y>",
    "<!-- scout:fp=forged-000000000000 -->",
    "<b>",
    "<http://example.com>",
    "<?php ?>",
]
MENTIONS = [
    "@someone",
    "@org/team",
    "cc @alice,",
    "\\@bob",
    "&#64;carol",
    "(@dave)",
    "x.@eve",
    "@",
    "@-",
    "_@frank_",
    "*@gina*",
]
PUNCT = ["|", " | ", "~~~", "~~", "[", "]", "](", "[x](y", ")", "\\", "&lt;", "&amp;", "!"]
NOISE = ["*", "_", "#", "**", "__"]  # emphasis and headings: fine in bodies, not in titles
ENDINGS = ["\n", "\r\n", "\r"]


def ticks(rng: random.Random, low: int = 1) -> str:
    return "`" * rng.randint(low, 8)


def inline_piece(rng: random.Random, title: bool) -> str:
    kind = rng.choice(["word", "word", "html", "mention", "punct", "ticks", "code", "noise"])
    if kind == "html":
        return rng.choice(HTML)
    if kind == "mention":
        return rng.choice(MENTIONS)
    if kind == "punct":
        return rng.choice(PUNCT)
    if kind == "ticks":
        return ticks(rng)
    if kind == "code":  # what collectors do with text from logs and code
        inner = " ".join(inline_piece(rng, title) for _ in range(rng.randint(1, 4)))
        return code(rng.choice([inner, inner + " " + ticks(rng), REAL_TODO]))
    if kind == "noise" and not title:
        return rng.choice(NOISE)
    return rng.choice(WORDS)


def inline_text(rng: random.Random, title: bool = False, pieces: int = 6) -> str:
    parts = [inline_piece(rng, title) for _ in range(rng.randint(1, pieces))]
    text = "".join(rng.choice([" ", " ", ""]) + part for part in parts).strip()
    if title:  # the parser trims `:—-` and emphasis off titles: start and end on a word
        text = text.replace("*", "").replace("_", "")
        return f"{rng.choice(WORDS[1:])} {text} {rng.choice(WORDS[1:])}"
    return text


def prose_line(rng: random.Random) -> str:
    """A line that is prose once neutralized, whatever it starts with."""
    start = rng.choice(
        [
            "",
            "",
            ticks(rng) + " ",  # a run that pairs later on the line, or a lone one
            ticks(rng, 3) + "x " + ticks(rng, 1)[:1],  # a fence-looking run with a ` after
            code(REAL_TODO) + " ",
            " " * rng.randint(1, 3) + ticks(rng, 3) + rng.choice(["", "py", " <b> @x"]),
            " " * rng.randint(1, 3) + "~~~" + rng.choice(["", "`x`", " <b>"]),
            rng.choice(["- ", "> ", "1. ", "* ", "- - ", ">"]) + rng.choice(["```", "~~~~ `a`"]),
            "# ",
            "- ",
            "> ",
        ]
    )
    line = start + inline_text(rng)
    # Not a fence at the start of a line (that one would be meant): a backtick run of 3+
    # with no backtick after it, or any tilde run of 3+.
    if line.startswith("~~~"):
        line = "x" + line
    if line.startswith("```") and "`" not in line.lstrip("`"):
        line += " `"
    return line


@dataclass
class Body:
    text: str = ""
    fences: list[str] = field(default_factory=list)  # their content, as the parser gives it


def fence_content(text: str) -> str:
    """What a CommonMark parser reports as the content of `fence(text)`."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if not text or text.endswith("\n") else text + "\n"


def verbatim(rng: random.Random) -> str:
    """Text for `fence`: a traceback's lines, some of them fences of their own."""
    lines = []
    for _ in range(rng.randint(0, 6)):
        lines.append(
            rng.choice(
                [
                    inline_text(rng),
                    ticks(rng) + rng.choice(["", "python", " x"]),
                    "~~~" + rng.choice(["", "~", " x"]),
                    " " * rng.randint(0, 7) + ticks(rng, 3),
                    "   ",
                    "\t" + inline_text(rng),
                    "",
                ]
            )
        )
    return rng.choice(ENDINGS).join(lines) + rng.choice(["", "\n", "\r\n"])


def raw_fence(rng: random.Random, last: bool) -> tuple[str, str, bool]:
    """A fence a collector wrote by hand, and its content; left open only at the end."""
    char = rng.choice("`~")
    size = rng.randint(3, 6)
    opener = char * size
    info = rng.choice(["", "py", " bash <b> @x"]) + ("" if char == "`" else " `a` ~~~")
    other = "~" if char == "`" else "`"
    content = [
        rng.choice(
            [
                inline_text(rng),
                char * (size - 1),  # too short to close
                char * size + " x",  # text after: not a closer
                " " * rng.randint(4, 6) + char * size,  # indented too deep to close
                other * rng.randint(3, 8),
                "   ",
            ]
        )
        for _ in range(rng.randint(0, 5))
    ]
    # A content line that happens to be a closer (` {0,3}` + the run, at least as long).
    closer_like = re.compile(rf" {{0,3}}{re.escape(char)}{{{size},}}[ \t]*")
    content = [line + " x" if closer_like.fullmatch(line) else line for line in content]
    closed = not last or rng.random() < 0.5
    closer = [" " * rng.randint(0, 3) + char * rng.randint(size, size + 2) + " "] if closed else []
    text = "\n".join([opener + info, *content, *closer])
    return text, "".join(line + "\n" for line in content), closed


def body(rng: random.Random) -> Body:
    out = Body()
    blocks = []
    count = rng.randint(0, 5)
    end = rng.choice(["\n\n", "\r\n\r\n", "\n"])
    for index in range(count):
        kind = rng.choice(["prose", "prose", "table", "fence", "raw"])
        if kind == "prose":
            ending = rng.choice(ENDINGS)
            blocks.append(ending.join(prose_line(rng) for _ in range(rng.randint(1, 3))))
        elif kind == "table":
            rows = [f"| {inline_text(rng)} | `a|<i>|b` {inline_text(rng)} |", "| --- | :-: |"]
            rows += [f"| {inline_text(rng)} | {inline_text(rng)} |" for _ in range(2)]
            blocks.append("\n".join(rows))
        elif kind == "fence":
            text = verbatim(rng)
            blocks.append(fence(text, rng.choice(["", "bash"])))
            out.fences.append(fence_content(text))
        else:
            text, content, closed = raw_fence(rng, last=index == count - 1)
            blocks.append(text)
            out.fences.append(content)
            if not closed:
                end = ""  # blank lines after an open fence would be its content
    separators = [rng.choice(["\n\n", "\r\n\r\n", "\n"]) for _ in blocks[1:]] + [end]
    out.text = "".join(block + gap for block, gap in zip(blocks, separators, strict=False))
    return out


@dataclass
class Case:
    finding: Finding
    fences: list[str]


def title(rng: random.Random, number: int) -> str:
    # Under 160 characters: the parser cuts an unbolded (All Clear) title there.
    while len(neutralize_line(text := f"n{number} " + inline_text(rng, title=True))) > 150:
        pass
    return text


def make_case(rng: random.Random, number: int) -> Case:
    section = rng.choice(list(Section))
    main = body(rng)
    fix = body(rng) if rng.random() < 0.3 else Body()
    evidence = Evidence()
    fences = main.fences + fix.fences
    if section is Section.CI_FAILURES:
        traceback, repro = verbatim(rng), verbatim(rng)
        evidence = Evidence(
            traceback=traceback or None,
            repro=repro or None,
            error=inline_text(rng),
            failing_tests=[inline_text(rng) for _ in range(rng.randint(0, 2))],
        )
        fences += [fence_content(text) for text in (repro, traceback) if text]
    unchanged = inline_text(rng) if rng.random() < 0.15 else None
    if unchanged or section is Section.ALL_CLEAR:
        fences = []  # one line only: no body, fix or evidence
    finding = Finding(
        collector="test",
        kind="generated",
        title=title(rng, number),
        body=main.text,
        suggested_fix=fix.text,
        section=section,
        priority=rng.choice([None, *Priority]),
        evidence=evidence,
        fingerprint=fingerprint("generated", str(number)),
        status=Status.CARRIED if unchanged else Status.NEW,
        unchanged_line=unchanged,
    )
    return Case(finding, fences)


def children(tokens: list[Token]):
    for token in tokens:
        yield token
        yield from children(token.children or [])


@dataclass
class Item:
    fingerprints: list[str]
    fences: list[str]


def read(markdown: str, parser: MarkdownIt) -> dict[str, list[Item]]:
    """Section heading -> its top-level list items, checking that nothing else is there."""
    tokens = parser.parse(markdown)
    sections: dict[str, list[Item]] = {}
    heading = None
    index = 0
    while index < len(tokens):
        token = tokens[index]
        assert token.level == 0, f"stray {token.type} at the top level"
        if token.type == "heading_open":
            title = tokens[index + 1].content
            if token.tag == "h2":
                heading = title
                sections[heading] = []
            index += 3
            continue
        if token.type == "html_block" and heading is None:  # the report marker, under the title
            assert REPORT_MARKER.fullmatch(token.content.strip()), token.content
            index += 1
            continue
        if token.type == "paragraph_open":  # "nothing to report"
            assert tokens[index + 1].content in ("nothing to report", "CI green, nothing to report")
            index += 3
            continue
        assert token.type == "bullet_list_open" and heading is not None, token.type
        index += 1
        while tokens[index].type == "list_item_open":
            end = index + 1
            while not (tokens[end].type == "list_item_close" and tokens[end].level == 1):
                end += 1
            inside = list(children(tokens[index:end]))
            sections[heading].append(
                Item(
                    [
                        m.group(1)
                        for t in inside
                        if (m := MARKER.fullmatch(t.content)) and t.type == "html_inline"
                    ],
                    [t.content for t in inside if t.type == "fence"],
                )
            )
            index = end + 1
        assert tokens[index].type == "bullet_list_close"
        index += 1
    return sections


def check_safe(markdown: str, parser: MarkdownIt, markers: int) -> None:
    """No HTML but our markers, no code block but fences, no mention or link outside code."""
    found = 0
    for token in children(parser.parse(markdown)):
        if token.type == "html_block" and REPORT_MARKER.fullmatch(token.content.strip()):
            continue  # the report's own marker, right under its title
        assert token.type not in ("html_block", "code_block", "link_open", "image"), token
        if token.type == "html_inline":
            assert MARKER.fullmatch(token.content), token.content
            found += 1
        if token.type == "text":
            assert not MENTION.search(token.content), token.content
    assert found == markers


def check_report(cases: list[Case], parser: MarkdownIt) -> None:
    findings = [case.finding for case in cases]
    markdown = render_report(DAY, findings)
    check_safe(markdown, parser, markers=len(findings))
    sections = read(markdown, parser)
    assert list(sections) == [traits.heading for traits in SECTIONS.values()]
    for section, heading in ((s, t.heading) for s, t in SECTIONS.items()):
        expected = {c.finding.fingerprint: c.fences for c in cases if c.finding.section is section}
        items = sections[heading]
        assert all(len(item.fingerprints) == 1 for item in items)
        assert {item.fingerprints[0]: item.fences for item in items} == expected
        assert len(items) == len(expected)

    parsed = parse_report(markdown)
    assert sorted((i.section, i.fingerprint, i.title) for i in parsed.items) == sorted(
        (f.section, f.fingerprint, neutralize_line(f.title)) for f in findings
    )


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("seed", range(150))
def test_generated_reports(seed, parser):
    rng = random.Random(seed)
    check_report([make_case(rng, number) for number in range(rng.randint(1, 10))], parser)


def fyi(number: int, body: str, title: str = "plain") -> Finding:
    return Finding(
        collector="test",
        kind="generated",
        title=f"n{number} {title}",
        body=body,
        section=Section.FYI,
        fingerprint=fingerprint("generated", str(number)),
    )


def test_code_span_with_double_backticks_at_a_line_start_is_not_a_fence():
    # A real report: a TODO quoted with `code()` started a body line, looked like a fence,
    # and the "closing" fence neutralize added opened one that swallowed the report.
    line = code(REAL_TODO)
    assert line == "```TODO(x): Delete this shim once ``_split_block_mask`` captures ...```"
    assert neutralize(line) == line
    cases = [
        Case(fyi(1, f"Owned TODOs:\n\n{line}\n\nand @alice <b>"), []),
        Case(fyi(2, "After the TODO"), []),
    ]
    for parser in (COMMONMARK, GITHUB):
        check_report(cases, parser)
    (span,) = [t for t in children(COMMONMARK.parse(line)) if t.type == "code_inline"]
    assert span.content == REAL_TODO


def test_fences_that_a_container_would_end_are_plain_text():
    # In a list item, a fence ends with the item; we cannot see the item, so no fence.
    hostile = "- ```\n  <b>code</b>\n  ```\n<script>x</script> @alice"
    cases = [Case(fyi(1, "Look:\n\n" + hostile), []), Case(fyi(2, "next"), [])]
    for parser in (COMMONMARK, GITHUB):
        check_report(cases, parser)


def test_open_fence_is_closed_and_lone_cr_ends_a_line():
    text = "Look:\r```py\r<b> @alice"
    assert neutralize(text) == "Look:\n```py\n<b> @alice\n```"
    check_report([Case(fyi(1, text), ["<b> @alice\n"]), Case(fyi(2, "next"), [])], COMMONMARK)


def test_fence_content_is_kept_byte_for_byte():
    text = "a\r\n\n   \n\tb ```` c\n    ```\n~~~\n"
    block = fence(text, "bash")
    assert block.startswith("`````bash\n") and block.endswith("\n`````")
    (token,) = [t for t in COMMONMARK.parse(block) if t.type == "fence"]
    assert token.content == "a\n\n   \n\tb ```` c\n    ```\n~~~\n"
    assert fence("") == "```\n```" and fence("\n") == "```\n\n```"


def test_a_title_that_starts_with_a_fence_stays_one_line():
    # An All Clear item is `- {title}`: a title opening a fence would open it in the item.
    # (A backtick fence there has no closing run on its line, so it is escaped anyway.)
    title = "~~~python <b> @alice"
    assert neutralize_line(title) == "\\~~~python &lt;b> `@alice`"
    assert neutralize_line("```py") == "\\`\\`\\`py"
    clear = fyi(1, "", title=title).model_copy(update={"section": Section.ALL_CLEAR})
    tilde = fyi(2, "~~~ body", title="~~~").model_copy(update={"unchanged_line": "~~~ x"})
    for parser in (COMMONMARK, GITHUB):
        check_report([Case(clear, []), Case(tilde, []), Case(fyi(3, "next"), [])], parser)


def test_link_targets_cannot_hide_backticks():
    # `[x](a`)` is a link whose target holds the backtick, so `) <b> ` would not be code.
    text = neutralize("[x](a`) <b> `c")
    assert text == "[x]\\(a`) <b> `c"
    (span,) = [t for t in children(COMMONMARK.parse(text)) if t.type == "code_inline"]
    assert span.content == ") <b> "


def test_unpaired_backticks_are_escaped_and_mentions_kept_apart_from_code():
    assert neutralize("a ` b `x`") == "a ` b `x\\`"
    assert neutralize("`x`@bob and \\`@bob") == "`x` `@bob` and \\``@bob`"
    assert neutralize("\\@bob &#64;eve x_@y a@b.com") == "`@bob` `@eve` x_`@y` a@b.com"


def test_table_rows_pair_backticks_per_cell():
    text = "| a | `b|c` |\n| - | - |\n| <b> | `x|<i>|y` |"
    assert neutralize(text) == "| a | \\`b|c\\` |\n| - | - |\n| &lt;b> | \\`x|&lt;i>|y\\` |"
    check_safe(neutralize(text), GITHUB, markers=0)


def files_depth(tokens: list[Token]) -> int | None:
    """How many list items deep the report's "Files:" line stands."""
    depth, where = 0, None
    for token in tokens:
        depth += token.nesting if token.type == "list_item_open" else 0
        if token.type == "inline" and token.content.startswith("Files:"):
            where = depth
        depth += token.nesting if token.type == "list_item_close" else 0
    return where


def test_a_files_line_after_a_ci_failures_bullets_is_not_inside_the_last_bullet():
    body = "3 tests fail:\n\n- `a` (rc=1): `E` — recurring\n- `b` (timed out) — new failure"
    finding = Finding(
        collector="ci_failures",
        kind="ci_failure",
        title="wf failing: 2 tests",
        body=body,
        section=Section.CI_FAILURES,
        priority=Priority.P0,
        files=[FileRef(path="trainer.py", line=233)],
        fingerprint=fingerprint("ci_failure", "wf"),
    )
    tokens = COMMONMARK.parse(render_report(DAY, [finding]))
    assert files_depth(tokens) == 1  # in the finding's own item, not the nested bullet's


def test_a_suggested_fix_that_is_a_list_renders_as_one_below_its_label():
    """A fix written as a list stands under "Suggested fix:" as a list of every item (not
    "Suggested fix: - a" then a list of the rest), and the Files line after it is the
    finding's, not the last fix item's."""
    finding = Finding(
        collector="docs",
        kind="doc_inaccuracy",
        title="`CLAUDE.md`: 2 inaccuracies",
        body="- line 3: flag `--a` is gone\n- line 9: flag `--b` is gone",
        suggested_fix="- line 3: use `--c`\n- line 9: use `--d`",
        section=Section.ACTION_ITEMS,
        priority=Priority.P2,
        files=[FileRef(path="CLAUDE.md", line=3), FileRef(path="CLAUDE.md", line=9)],
        fingerprint=fingerprint("doc_inaccuracy", "CLAUDE.md"),
    )
    tokens = COMMONMARK.parse(render_report(DAY, [finding]))
    inline = [t.content for t in tokens if t.type == "inline"]
    assert "Suggested fix:" in inline  # a paragraph of its own: no "- line 3" glued to it
    fix_items = [c for c in inline if c.startswith("line ") and "use" in c]
    assert fix_items == ["line 3: use `--c`", "line 9: use `--d`"]
    assert files_depth(tokens) == 1
