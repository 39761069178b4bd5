"""Which GitHub token to use: GH_TOKEN, GITHUB_TOKEN, then `gh auth token` where gh exists.

Whatever the source, the token found is registered for redaction, so no error message,
log line or report can carry it."""

from __future__ import annotations

import os
import shutil
import subprocess

from scout_tui.errors import register_secret

TOKEN_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN")


SECRET_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")


def register_environment_tokens() -> None:
    """Every token the environment holds is a secret, whichever one scout uses."""
    for name in SECRET_VARIABLES:
        register_secret(os.environ.get(name, "").strip())


def find_token() -> str | None:
    """The token, or None when there is none."""
    register_environment_tokens()
    token = None
    for name in TOKEN_VARIABLES:
        if os.environ.get(name, "").strip():
            token = os.environ[name].strip()
            break
    else:
        if shutil.which("gh"):
            try:
                done = subprocess.run(["gh", "auth", "token"], capture_output=True, text=True,
                                      timeout=5, check=False)  # fmt: skip
            except (OSError, subprocess.TimeoutExpired):
                return None
            if done.returncode == 0 and done.stdout.strip():
                token = done.stdout.strip()
    register_secret(token)
    return token
