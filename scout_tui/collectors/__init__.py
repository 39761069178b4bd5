"""One module per scout section; importing this package registers them in report order."""

from scout_tui.collectors import github_pending, todos, upstream_delta  # noqa: F401
