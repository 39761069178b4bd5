"""Where a finding is matched with yesterday: the window of prior reports (baseline),
reading them back (parse), and reconciling today's findings with them (reconcile)."""
