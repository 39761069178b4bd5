"""scout-tui: a terminal triage console for a nightly scout."""

__version__ = "0.1.0"
