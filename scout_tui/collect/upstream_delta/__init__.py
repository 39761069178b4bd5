"""Upstream delta review (SPEC §2.1 item 1).

Commits since the baseline on the configured core paths, and for each fragile surface a
mechanical answer to "did it change?": the surface's AST at the baseline commit against
the one at HEAD. A surface whose file no commit touched is stable without a parse.

`collector` runs it: the configured surfaces (`surfaces`), the dependencies discovered from
the experiment's code, overrides that no longer call what they override (`overrides`), and
new upstream API the experiment could use (`new_api`).
"""
