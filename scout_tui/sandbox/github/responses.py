"""What a handler of the local server answers, and GitHub's page-by-page lists."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode


@dataclass
class Response:
    status: int
    body: Any = None  # JSON-able, or bytes/str for text
    headers: dict[str, str] = field(default_factory=dict)
    cost: bool = True  # counts against the rate limit


def paginate(
    items: list[Any],
    query: dict[str, list[str]],
    url: str,
    wrap: Callable[[list[Any]], Any] | None = None,
) -> Response:
    """`per_page` (≤100, default 30) and `page`, with GitHub's `Link` header."""
    per_page = min(100, max(1, int((query.get("per_page") or ["30"])[0] or 30)))
    page = max(1, int((query.get("page") or ["1"])[0] or 1))
    chunk = items[(page - 1) * per_page : page * per_page]
    last = max(1, -(-len(items) // per_page))
    links = []
    flat = {key: values[0] for key, values in query.items()}

    def at(n: int) -> str:
        return f"<{url}?{urlencode({**flat, 'per_page': per_page, 'page': n})}>"

    if page < last:
        links += [f'{at(page + 1)}; rel="next"', f'{at(last)}; rel="last"']
    if page > 1:
        links += [f'{at(1)}; rel="first"', f'{at(page - 1)}; rel="prev"']
    headers = {"Link": ", ".join(links)} if links else {}
    return Response(200, wrap(chunk) if wrap else chunk, headers)
