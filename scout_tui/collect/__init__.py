"""Where a finding is born: the collectors, what they share, and the runner that runs them.

A collector reads the checkout (through `source`), GitHub (through `github`) and the
nightlies; it may use `analysis` and `store.cache`; it never decides what was seen
yesterday (`history`) or what a person decided (`triage`)."""
