"""What can go wrong, as the user is told it: exit codes, the errors that carry them, and the
secrets no text may contain. The bottom layer: everything may import it.

Text that enters scout (files, git output, API answers, logs, bundles) goes through `scrub`
where it is read, so nothing scout stores, shows or publishes carries a token or a control
character that would steer a terminal (`ESC ]52;` writes the clipboard) or hide text."""

from __future__ import annotations

import re
from typing import IO, Any

# Where a GitHub token may come from: redacted wherever text enters, never passed on to a
# repro (code from the nightly index and the checkout runs there).
TOKEN_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN")
ENTERPRISE_TOKEN_VARIABLES = ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
SECRET_VARIABLES = TOKEN_VARIABLES + ENTERPRISE_TOKEN_VARIABLES

EXIT_OK = 0
EXIT_FAILURE = 1  # anything else; with --strict, a skipped or failed collector
EXIT_USAGE = 2  # bad usage or configuration
EXIT_INTERRUPTED = 130  # Ctrl-C or a cancel signal, as a shell reports SIGINT


class UsageError(Exception):
    """Bad usage or configuration: the message is meant for the user as is (exit code 2)."""


class ScoutError(Exception):
    """A failure the user can act on, said in one line (exit code 1)."""


class Cancelled(Exception):
    """The caller asked the run to stop; raised inside long steps so they stop promptly."""


_SECRETS: list[str] = []  # longest first: a secret inside another is not left half-shown
_SIGINT = {"received": False}


def note_sigint() -> None:
    _SIGINT["received"] = True


def sigint_received() -> bool:
    """True once Ctrl-C was pressed in this process, even when a library swallowed the
    KeyboardInterrupt (pydantic-core can turn one raised inside validation into a
    validation error): nothing may then be taken for bad data and thrown away."""
    return _SIGINT["received"]


REDACTED = "***"
# What GitHub's tokens look like (classic and OAuth/App ones, fine-grained ones): hidden
# even when scout never held them, as a log may print another token than the one in use.
_TOKEN_SHAPES = r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}"
_TOKEN = re.compile(_TOKEN_SHAPES)
_TOKEN_BYTES = re.compile(_TOKEN_SHAPES.encode())
# The user name and password of a URL (`https://USER:PASSWORD@host`): a credential whatever
# the host, e.g. a CI log's clone URL or an --api-url typed with one.
_USERINFO = r"(?<=://)[^\s/?#@'\"<>]+@"
_URL_USERINFO = re.compile(_USERINFO)
_URL_USERINFO_BYTES = re.compile(_USERINFO.encode())
_USERINFO_END = re.compile(rb"[\s/?#@'\"<>]")
_LONGEST_USERINFO = 256  # a longer one split across two chunks is not held back whole
# C0 and C1 controls but tab and newline; bidi overrides and zero-width characters.
_HIDDEN_CHARS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[{_HIDDEN_CHARS}]")
_SHOWN_ESCAPED = re.compile(f"[\t\n{_HIDDEN_CHARS}]")  # where one line must show all
_LINE_END = re.compile("\r\n?")  # CR and CRLF end a line for Python and Markdown alike
_TOKEN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
_LONGEST_TOKEN = 255  # bytes held back at the end of a chunk
_LONGEST_WORD = 4096  # a run of token characters longer than this is not held back whole


def register_secret(secret: str | None) -> None:
    """A token in use: from now on `redact` hides it, whatever its source."""
    global _SECRETS
    if secret and len(secret) >= 4 and secret not in _SECRETS:
        # A new list, not an update: a thread redacting meanwhile keeps the one it holds.
        _SECRETS = sorted([*_SECRETS, secret], key=len, reverse=True)


def redact(text: str) -> str:
    """`text` without any registered secret, anything shaped like a GitHub token, or a
    URL's user name and password."""
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if "gh" in text or "github_pat_" in text:  # fast path: most text holds neither
        text = _TOKEN.sub(REDACTED, text)
    if "@" in text and "://" in text:
        text = _URL_USERINFO.sub(REDACTED + "@", text)
    return text


def clean(text: str) -> str:
    """`text` without control characters (tab and newline stay; CR and CRLF become LF) and
    without the bidi and zero-width characters that make text read other than it is."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub("", _LINE_END.sub("\n", text))


def visible(text: str) -> str:
    """`text` on one line as it is: every control, bidi and zero-width character written out
    (`\\x1b`, `\\u202e`, `\\n`), where what is shown must be exactly what is used."""
    return _SHOWN_ESCAPED.sub(lambda found: ascii(found.group())[1:-1], text)


def scrub(text: str) -> str:
    """What every piece of text that enters scout goes through: cleaned, then redacted."""
    return redact(clean(text))


def scrub_data(data: Any) -> Any:
    """`scrub` over every string of decoded JSON (keys too), the structure kept."""
    if isinstance(data, str):
        return scrub(data)
    if isinstance(data, list):
        return [scrub_data(item) for item in data]
    if isinstance(data, dict):
        return {scrub_data(key): scrub_data(value) for key, value in data.items()}
    return data


def redact_bytes(data: bytes) -> bytes:
    for secret in _SECRETS:
        encoded = secret.encode()
        if encoded in data:
            data = data.replace(encoded, REDACTED.encode())
    if b"gh" in data or b"github_pat_" in data:
        data = _TOKEN_BYTES.sub(REDACTED.encode(), data)
    if b"@" in data and b"://" in data:
        data = _URL_USERINFO_BYTES.sub(REDACTED.encode() + b"@", data)
    return data


class RedactingWriter:
    """Writes a byte stream to `into` redacted, whatever the chunks: what could be part of
    a secret that the next chunk completes is held back, raw, until it comes (or `close`)."""

    def __init__(self, into: IO[bytes]) -> None:
        self._into = into
        self._held = b""
        self.written = 0

    def write(self, chunk: bytes) -> int:
        data = self._held + chunk
        cut = _safe_cut(data)
        self._emit(redact_bytes(data[:cut]))
        self._held = data[cut:]
        return len(chunk)

    def close(self) -> None:
        """Writes what is held (the stream ended); `into` stays open."""
        self._emit(redact_bytes(self._held))
        self._held = b""

    def _emit(self, data: bytes) -> None:
        if data:
            self._into.write(data)
            self.written += len(data)


def _safe_cut(data: bytes) -> int:
    """Where `data` may be cut with no secret or token-shaped word across the cut."""
    secrets = [secret.encode() for secret in _SECRETS]
    cut = max(0, len(data) - max([_LONGEST_TOKEN, *map(len, secrets)]))
    head = data[:cut]
    word = len(head) - len(head.rstrip(_TOKEN_CHARS))  # a word running into the held part
    if word <= _LONGEST_WORD:
        cut -= word
    scheme = head.rfind(b"://", max(0, cut - _LONGEST_USERINFO))
    if scheme >= 0 and _USERINFO_END.search(head, scheme + 3) is None:
        cut = scheme  # a URL whose user name and password may end in the held part
    elif head.endswith((b":", b":/")):
        cut -= 2 if head.endswith(b":/") else 1  # a "://" the held part may complete
    for secret in secrets:  # a secret running into the held part starts it
        start = data.find(secret, max(0, cut - len(secret) + 1), cut + len(secret) - 1)
        if 0 <= start < cut:
            cut = start
    return cut
