"""NO_COLOR: Textual then turns every colour into a grey of its brightness, and red, the
colour of every alarm here (offline, P0, failed, dropped), becomes a dark grey on a dark
background. What was red is shown bold and reversed instead: readable without colour."""

from __future__ import annotations

from rich.style import Style
from rich.text import Span, Text

_ALARM = Style(bold=True, reverse=True)


def legible(text: Text, no_color: bool) -> Text:
    """`text` with its red pieces made bold and reversed when `no_color`; else as is."""
    if not no_color:
        return text
    text.spans = [Span(span.start, span.end, _swapped(span.style)) for span in text.spans]
    text.style = _swapped(text.style)
    return text


def _swapped(style: str | Style) -> str | Style:
    parsed = Style.parse(style) if isinstance(style, str) else style
    color = parsed.color
    if color is None or not _reddish(color.name, color.get_truecolor()):
        return style
    return parsed + Style(color="default") + _ALARM


def _reddish(name: str, rgb: tuple[int, int, int]) -> bool:
    red, green, blue = rgb
    return "red" in name or (red > 150 and green < 100 and blue < 100)
