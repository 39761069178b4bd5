"""Where the report leaves for GitHub: the plan (comment and drafts), its execution with
a journal that survives a crash, and merging a reviewer's edits."""
