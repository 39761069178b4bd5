"""Where a person decides: what an accept, demote, merge or drop makes of a finding."""
