"""Markdown rendered as GitHub shows a comment or a draft. Its own module: rich.markdown
(markdown-it) loads with the first preview, not with the console."""

from __future__ import annotations

from rich.markdown import Markdown


class CommentMarkdown(Markdown):
    """Markdown as GitHub shows a comment or a draft: a single newline breaks the line
    (CommonMark would join the lines; GitHub's comments do not)."""

    def __init__(self, markup: str) -> None:
        super().__init__(markup)
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"
