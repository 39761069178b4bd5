"""The team profile (`scout.toml`) and the reviewer's own config: read, checked, and
given to every stage as one frozen value."""
