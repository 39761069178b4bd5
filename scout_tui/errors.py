"""What can go wrong, as the user is told it: exit codes, the errors that carry them, and the
secrets no message may contain. The bottom layer: everything may import it."""

from __future__ import annotations

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


_SECRETS: set[str] = set()
_SIGINT = {"received": False}


def note_sigint() -> None:
    _SIGINT["received"] = True


def sigint_received() -> bool:
    """True once Ctrl-C was pressed in this process, even when a library swallowed the
    KeyboardInterrupt (pydantic-core can turn one raised inside validation into a
    validation error): nothing may then be taken for bad data and thrown away."""
    return _SIGINT["received"]


def register_secret(secret: str | None) -> None:
    """A token in use: from now on `redact` hides it, whatever its source."""
    if secret and len(secret) >= 4:
        _SECRETS.add(secret)


def redact(text: str) -> str:
    for secret in _SECRETS:
        text = text.replace(secret, "***")
    return text
