"""Analysis of Python code: parsed modules, their definitions, and what depends on what."""
