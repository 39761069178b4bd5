"""Reading the checkout: files, history and blame as of a commit, from git, with the
results shared across days of a replay."""
