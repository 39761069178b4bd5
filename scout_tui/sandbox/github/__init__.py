"""A local, GitHub-compatible server: REST and the Projects v2 GraphQL subset scout uses,
on 127.0.0.1, for the tests and `scout demo`. The real PyGithub client talks real HTTP to
it, exactly as it talks to api.github.com."""
