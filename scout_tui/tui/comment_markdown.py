"""Markdown rendered as GitHub shows a comment or a draft, for every pane that shows a
finding's or the report's Markdown: the detail pane, the preview."""

from __future__ import annotations

from rich.markdown import Markdown


class CommentMarkdown(Markdown):
    """Markdown as GitHub shows a comment or a draft: a single newline breaks the line
    (CommonMark would join the lines; GitHub's comments do not)."""

    def __init__(self, markup: str, hyperlinks: bool = True) -> None:
        super().__init__(markup, hyperlinks=hyperlinks)
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"
