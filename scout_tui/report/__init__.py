"""The report as Markdown: rendering findings into sections, the board items' markers,
and the JSON schema of a run."""
