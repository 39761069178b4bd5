"""Whether a name is mentioned in a text as a whole word: asked many times over big texts
(tests, workflows, docs), so a text's words are found once."""

from __future__ import annotations

import functools
import re


class Words:
    """The identifiers of a text, for many "is this name mentioned?" questions."""

    def __init__(self, *texts: str) -> None:
        """The words of `texts` (files, say) joined by newlines: each text's words are
        found once, and a file unchanged since the last run is not read again."""
        self.text = "\n".join(texts)
        self.words: frozenset[str] = frozenset().union(*map(_words, texts))

    def __or__(self, other: Words) -> Words:
        joined = Words()
        joined.text, joined.words = self.text + "\n" + other.text, self.words | other.words
        return joined

    def __contains__(self, name: str) -> bool:
        if re.fullmatch(r"\w+", name):
            return name in self.words
        return mentions(self.text, name)


@functools.lru_cache(maxsize=1024)
def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", text))


def mentions(text: str, name: str) -> bool:
    """`name` in `text` as a whole word (str.find, not a regex: this runs over big texts)."""
    start = 0
    while (index := text.find(name, start)) >= 0:
        end = index + len(name)
        before = text[index - 1] if index else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = index + 1
    return False
