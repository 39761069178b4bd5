"""What scout keeps on disk: the cache (rebuildable), the state store (the user's
decisions and the publish journal), and bundles (a run carried elsewhere)."""
