"""What scout keeps on disk: the cache (rebuildable), the state file (the user's own data:
this package owns the file, its connections, layout version and recovery; the tables
belong to triage and publish), and bundles (a run carried elsewhere)."""
