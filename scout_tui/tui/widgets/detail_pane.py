"""The finding as Markdown: title, badges, body, suggested fix, files, links."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from scout_tui.analysis.text.markdown import bare_url, code, link, neutralize, neutralize_line
from scout_tui.model import SECTIONS, Finding
from scout_tui.tui.view import Row


def finding_markdown(row: Row) -> str:
    """Its text made safe as the report makes it (`neutralize`): what GitHub shows of the
    comment is what the pane shows, `<x>` and all, never HTML read and dropped."""
    finding: Finding = row.finding
    priority = f"[{finding.priority.value}] " if finding.priority else ""
    lines = [f"## {priority}{neutralize_line(finding.title)}", ""]
    meta = [SECTIONS[finding.section].heading, *row.badges]
    if finding.board is not None and finding.board.url:
        meta.append(link("board item", finding.board.url))
    lines += [" · ".join(meta), ""]
    entry = row.decided.entry
    if entry is not None and entry.reason:
        lines += [f"> Dropped: {neutralize_line(entry.reason)}", ""]
    if finding.status_update:
        lines += [f"*Status:* {neutralize_line(finding.status_update)}", ""]
    if finding.body:
        lines += [neutralize(finding.body), ""]
    if finding.suggested_fix:
        lines += ["**Suggested fix**", "", neutralize(finding.suggested_fix), ""]
    if finding.files:
        files = ", ".join(
            code(f"{ref.path}:{ref.line}" if ref.line else ref.path) for ref in finding.files[:20]
        )
        lines += [f"**Files:** {files}", ""]
    if finding.evidence.urls:
        urls = [
            f"<{url}>" if bare_url(url) == url else bare_url(url)
            for url in finding.evidence.urls[:20]
        ]
        lines += ["**Links**", "", *(f"- {url}" for url in urls), ""]
    lines.append(f"`{finding.fingerprint}`")
    return "\n".join(lines)


class DetailPane(VerticalScroll, can_focus=True):
    """Scrolls with the keys when focused (`tab` reaches it). Rich renders the Markdown
    into one Static: Textual's Markdown widget mounts a widget per block, which costs a
    layout on every cursor move."""

    markdown = ""

    def compose(self):
        yield Static("Select a finding.", id="detail-markdown")

    def show(self, row: Row | None, empty: str = "Select a finding.") -> None:
        markdown = finding_markdown(row) if row else empty
        if markdown == self.markdown:  # the same again (a zoom, a relabel): kept as scrolled
            return
        self.markdown = markdown
        # As GitHub shows the finding in the comment and the draft: a newline breaks the line.
        # markdown-it loads with the first finding shown, after the tree's first paint.
        from scout_tui.tui.comment_markdown import CommentMarkdown

        self.query_one(Static).update(CommentMarkdown(markdown, hyperlinks=True))
        self.scroll_home(animate=False)
