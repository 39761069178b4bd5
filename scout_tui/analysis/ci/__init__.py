"""Analysis of CI: logs and their failures, workflows and the tests they select, repro
commands."""
