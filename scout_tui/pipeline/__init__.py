"""One day's run from the checkout to the reconciled result (`day`), and the same over
past days (`replay`)."""
