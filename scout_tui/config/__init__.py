"""The team profile (`scout.toml`) and the reviewer's own config: `models` says what they
hold, `profile` reads, merges and checks them; every stage gets one frozen value."""
