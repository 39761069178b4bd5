"""One module per scout section; importing this package registers them in report order."""

from scout_tui.collectors import (  # noqa: F401
    ci_failures,
    ci_tests,
    coverage,
    docs,
    freshness,
    open_work,
    todos,
    upstream_delta,
)
