"""Which token to use for an API host, as gh does: for GitHub's own API, GH_TOKEN,
GITHUB_TOKEN, then `gh auth token`; for any other host (GitHub Enterprise, the local
server), GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN, then `gh auth token --hostname HOST`.
A github.com token never goes to another host.

Whatever the source, the token found is registered for redaction, so no error message,
log line or report can carry it."""

from __future__ import annotations

import os
import shutil
import subprocess
from urllib.parse import urlsplit

from scout_tui.config.models import GITHUB_API, origin_of
from scout_tui.errors import (  # the names live with the redaction they feed
    ENTERPRISE_TOKEN_VARIABLES,
    SECRET_VARIABLES,
    TOKEN_VARIABLES,
    register_secret,
)


def register_environment_tokens() -> None:
    """Every token the environment holds is a secret, whichever one scout uses."""
    for name in SECRET_VARIABLES:
        register_secret(os.environ.get(name, "").strip())


def is_github(api_url: str) -> bool:
    return origin_of(api_url) == origin_of(GITHUB_API)


def gh_hostname(api_url: str) -> str:
    """The host as gh names it (`gh auth login --hostname HOST`)."""
    return "github.com" if is_github(api_url) else urlsplit(api_url).netloc


def token_variable(api_url: str) -> str:
    """The variable that hands a process the token for `api_url`."""
    return (TOKEN_VARIABLES if is_github(api_url) else ENTERPRISE_TOKEN_VARIABLES)[0]


def missing_token(api_url: str) -> str:
    """Why there is no token for `api_url`, and how to give one."""
    if is_github(api_url):
        return "no GitHub token (set GH_TOKEN or GITHUB_TOKEN, or `gh auth login`)"
    host = gh_hostname(api_url)
    return (
        f"no token for {host} (set GH_ENTERPRISE_TOKEN or GITHUB_ENTERPRISE_TOKEN, or "
        f"`gh auth login --hostname {host}`; GH_TOKEN is for github.com only)"
    )


def find_token(api_url: str = GITHUB_API) -> str | None:
    """The token for `api_url`, or None when there is none."""
    github = is_github(api_url)
    register_environment_tokens()
    token = None
    for name in TOKEN_VARIABLES if github else ENTERPRISE_TOKEN_VARIABLES:
        if os.environ.get(name, "").strip():
            token = os.environ[name].strip()
            break
    else:
        if shutil.which("gh"):
            # Named even for github.com: gh's default host may be another ($GH_HOST).
            try:
                done = subprocess.run(
                    ["gh", "auth", "token", "--hostname", gh_hostname(api_url)],
                    capture_output=True,
                    text=True,
                    timeout=5,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired):
                return None
            if done.returncode == 0 and done.stdout.strip():
                token = done.stdout.strip()
    register_secret(token)
    return token
