"""Comments read from the parsed module are the comments the tokenizer finds: on modules
made to trip it (a `#` in every kind of string literal, non-ASCII before a `#`, CRLF) and
on every module of this repository and of the Python library it runs on."""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path

import pytest

from scout_tui.analysis.python.comments import _tokenized, comment_lines

TRICKY = {
    "hash in strings": 'a = "#not" + \'# no\'  # yes\nb = b"#" # bytes\n',
    "f-strings": 'x = f"{a!r:#>10} #{b}"  # after\ny = f"""\n# in\n{c}"""\n',
    "docstring": '"""Doc # not a comment\n# nor this\n"""\n# but this\n',
    "implicit concatenation": 'z = ("a#"\n     "b")  # c\n',
    "non-ASCII before": 's = "é€😀#"  # ünïcode #2\n',
    "CRLF": "a = 1  # one\r\n# two\r\nb = '#'\r\n",
    "continuation": "v = [1,  # one\n     2]  # two\n",
    "only hashes": "#\n##\n# \n",
    "comment after a dedent": "def f():\n    pass\n    # inside\n# outside\n",
    "string then hash then string": "t = '#' # x '#' y\n",
    # Literals joined across lines: one node in the tree, comments between its parts.
    "juxtaposed literals": "p = (r'a#'  # one\n     'b'  # two\n     f'{c}#')  # three\n",
    "juxtaposed with a docstring-like part": 'q = ("""x\n#y""" # z\n  "w")\n',
}


@pytest.mark.parametrize("source", TRICKY.values(), ids=TRICKY.keys())
def test_comments_of_modules_made_to_trip_it(source):
    assert comment_lines(source, ast.parse(source)) == _tokenized(source)


def _modules() -> list[Path]:
    ours = Path(__file__).resolve().parent.parent / "scout_tui"
    library = Path(sysconfig.get_paths()["stdlib"])
    return sorted(ours.rglob("*.py")) + sorted(library.glob("*.py"))


def test_comments_of_real_modules_are_the_tokenizers():
    compared = 0
    for path in _modules():
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        assert comment_lines(source, tree) == _tokenized(source), path
        compared += 1
    assert compared > 300  # the library's own modules were read
