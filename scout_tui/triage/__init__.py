"""Where a person decides: what an accept, demote, merge or drop makes of a finding (pure,
`decisions`), and the decisions with their undo history as the state file keeps them
(`store`)."""
