"""Analysis of prose and Markdown: docs, TODOs, and text made safe for a GitHub report."""
