"""The console's modal screens, one per module."""
