"""The GitHub layer: the PyGithub client with its retries and limits, the API's data
types, and tokens."""
