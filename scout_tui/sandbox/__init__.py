"""Not the product: the demo's sample world and the local GitHub-compatible server that
the demo and the tests run against."""
