"""Comments in Python source, read from the parsed module instead of a tokenizer pass (a
tokenizer pass costs more than the parse): a `#` starts a comment unless a string literal
covers it. The tokenizer reads a module that does not parse."""

from __future__ import annotations

import ast
import bisect
import contextlib
import io
import math
import re
import tokenize

from scout_tui.analysis.python import pyast


def comment_lines(source: str, tree: ast.Module | None) -> list[tuple[int, str]]:
    """Every comment, in order: (its line, its text without `#`, stripped)."""
    if tree is None or not _lines_as_parsed(source):
        return _tokenized(source)
    comments = Comments(source, tree)
    found = []
    for number, text in enumerate(comments.lines, 1):
        if "#" in text and (said := comments.comment(number)) is not None:
            found.append((number, said))
    return found


def comment_blocks(
    source: str, tree: ast.Module | None, markers_re: re.Pattern[str]
) -> list[tuple[int, list[str]]]:
    """A block from each comment line holding a marker, with the comment lines after it up
    to the next marker (see `Comments.blocks`); without a tree, runs of comment lines."""
    if tree is not None and _lines_as_parsed(source):
        return Comments(source, tree).blocks(markers_re)
    blocks: list[tuple[int, list[str]]] = []
    last_line = -2
    for line, text in _tokenized(source):
        if blocks and line == last_line + 1:
            blocks[-1][1].append(text)
        else:
            blocks.append((line, [text]))
        last_line = line
    return blocks


def _lines_as_parsed(source: str) -> bool:
    """Whether splitting at `\n` numbers lines as the parser did: a lone `\r` ends a line
    for the parser only."""
    return source.count("\r") == source.count("\r\n")


def _tokenized(source: str) -> list[tuple[int, str]]:
    tokens: list[tokenize.TokenInfo] = []
    # Keep what was tokenized before a broken module stops the tokenizer.
    with contextlib.suppress(tokenize.TokenError, SyntaxError, IndentationError):
        tokens.extend(tokenize.generate_tokens(io.StringIO(source).readline))
    return [
        (token.start[0], token.string.lstrip("#").strip())
        for token in tokens
        if token.type == tokenize.COMMENT
    ]


class Comments:
    """Where comments are, from the parsed module instead of a tokenizer pass: a `#` starts
    a comment unless a string literal covers it. The string literals are indexed by line
    once, so a question about a line costs only the strings on that line."""

    def __init__(self, source: str, tree: ast.Module) -> None:
        self.lines = source.split("\n")
        self._comments: dict[int, str | None] = {}
        # line → the byte columns (start, end) of the string literals on it, by start; a
        # literal that begins on an earlier line starts at -1, one that goes on ends at inf.
        spans: dict[int, list[tuple[float, float]]] = {}
        for node in _outermost_strings(tree):
            first, last = node.lineno, node.end_lineno or node.lineno
            # A node over several lines may be literals joined by juxtaposition, with
            # comments between them: where a `#` is at stake, its literals are read apart.
            pieces = None
            if last > first and any("#" in self.lines[n - 1] for n in range(first, last + 1)):
                pieces = self._literals(node)
            for piece in pieces or [(first, node.col_offset, last, node.end_col_offset or 0)]:
                start_line, start_col, end_line, end_col = piece
                for line in range(start_line, end_line + 1):
                    start = start_col if line == start_line else -1
                    end = end_col if line == end_line else math.inf
                    spans.setdefault(line, []).append((start, end))
        self._spans = {line: sorted(found) for line, found in spans.items()}

    def _literals(self, node: ast.expr) -> list[tuple[int, int, int, int]] | None:
        """Each string literal of `node` (line, byte column) to (line, byte column), from
        the tokenizer over its own text; None when that cannot be read."""
        first, last = node.lineno, node.end_lineno or node.lineno
        if node.end_col_offset is None:
            return None

        def chars(line: int, byte_column: int) -> int:  # AST columns count UTF-8 bytes
            return len(
                self.lines[line - 1].encode("utf-8")[:byte_column].decode("utf-8", "replace")
            )

        first_chars = chars(first, node.col_offset)
        # Its own lines, not ast.get_source_segment's split of the whole module each time.
        spanned = self.lines[first - 1 : last]
        spanned[-1] = spanned[-1][: chars(last, node.end_col_offset)]
        spanned[0] = spanned[0][first_chars:]
        segment = "\n".join(spanned)

        def at(row: int, column: int) -> tuple[int, int]:  # the source's line, byte column
            line = first + row - 1
            chars = first_chars + column - 1 if row == 1 else column  # "(" went first
            return line, len(self.lines[line - 1][:chars].encode("utf-8"))

        found: list[tuple[int, int, int, int]] = []
        opened: tuple[int, int] | None = None  # an f-string's start (Python 3.12 and later)
        try:
            for token in tokenize.generate_tokens(io.StringIO(f"({segment})").readline):
                kind = tokenize.tok_name[token.type]
                if kind == "FSTRING_START" and opened is None:
                    opened = token.start
                elif kind == "FSTRING_END" and opened is not None:
                    found.append((*at(*opened), *at(*token.end)))
                    opened = None
                elif token.type == tokenize.STRING and opened is None:
                    found.append((*at(*token.start), *at(*token.end)))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return None
        return found or None

    def _in_string(self, line: int, byte_column: int) -> bool:
        spans = self._spans.get(line)
        if not spans:
            return False
        # Literals never overlap: only the last one starting at or before the column can
        # cover it.
        index = bisect.bisect_right(spans, (byte_column, math.inf)) - 1
        return index >= 0 and byte_column < spans[index][1]

    def comment(self, line: int) -> str | None:
        """The comment on a line (without `#`), or None."""
        if not 1 <= line <= len(self.lines):
            return None
        if line not in self._comments:
            self._comments[line] = self._find_comment(self.lines[line - 1], line)
        return self._comments[line]

    def _find_comment(self, text: str, line: int) -> str | None:
        column = text.find("#")
        byte_column, counted = 0, 0  # AST columns count UTF-8 bytes
        while column >= 0:
            byte_column += len(text[counted:column].encode("utf-8"))
            counted = column
            if not self._in_string(line, byte_column):
                return text[column:].lstrip("#").strip()
            column = text.find("#", column + 1)
        return None

    def blocks(self, markers_re: re.Pattern[str]) -> list[tuple[int, list[str]]]:
        """A block from each comment line holding a marker, with the comment lines after it
        up to the next marker (whose line is a block of its own)."""
        found = []
        for number, text in enumerate(self.lines, 1):
            if "#" not in text or not markers_re.search(text):
                continue
            first = self.comment(number)
            if first is None or not markers_re.search(first):
                continue
            block = [first]
            following = self.comment(number + 1)
            while following is not None and not markers_re.search(following):
                block.append(following)
                following = self.comment(number + len(block))
            found.append((number, block))
        return found


def _outermost_strings(tree: ast.Module) -> list[ast.expr]:
    """The string and bytes literals and f-strings, without the parts inside f-strings."""
    joined = [node for node in pyast.nodes(tree, ast.JoinedStr) if isinstance(node, ast.JoinedStr)]
    inside = {id(part) for node in joined for part in pyast.walk(node) if part is not node}
    constants = [
        node
        for node in pyast.nodes(tree, ast.Constant)
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)
    ]
    return [node for node in [*joined, *constants] if id(node) not in inside]
