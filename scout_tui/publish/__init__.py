"""Where the report leaves for GitHub: the plan (comment and drafts), its execution with a
journal that survives a crash (`journal`), merging a reviewer's edits, and the one rule that
matches a finding with a board item (in `report.board`, which the run uses too)."""
