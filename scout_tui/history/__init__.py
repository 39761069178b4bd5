"""Where a finding is matched with yesterday: the window of prior reports (baseline),
reading them back (parse), which prior item is which finding (match), reconciling today's
findings with them (reconcile), and judging what is gone (judge)."""
