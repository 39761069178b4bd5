"""The token actually used, whatever its source, is what never shows."""

from __future__ import annotations

import os
import stat

from scout_tui.errors import redact
from scout_tui.github.auth import find_token


def test_a_token_from_gh_auth_is_redacted(tmp_path, monkeypatch):
    secret = "gho_FROMTHEGHCLI0123456789"
    gh = tmp_path / "gh"
    gh.write_text(f"#!/bin/sh\n[ \"$1 $2\" = 'auth token' ] && echo {secret}\n")
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GH_TOKEN", "")
    monkeypatch.setenv("GITHUB_TOKEN", "")
    assert find_token() == secret
    assert redact(f"401 for https://x-access-token:{secret}@host/") == (
        "401 for https://***@host/"  # the registered secret, and the whole user part
    )


def test_an_environment_token_wins_and_is_redacted(monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_FROMTHEENVIRONMENT99")
    assert find_token() == "ghp_FROMTHEENVIRONMENT99"
    assert redact("token ghp_FROMTHEENVIRONMENT99 refused") == "token *** refused"
