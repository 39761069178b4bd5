"""PyTorch nightlies: which commit a nightly was built from (read from its wheel), and
the regression range between two of them."""
