"""Where the token goes and where links point: the API the user chose (--api-url, the
environment, their own config) or the scout.toml's, and what chose it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scout_tui.config.models import GITHUB_API, Config, origin_of
from scout_tui.config.profile import api_url_choice, load_config, load_user_config


@dataclass(frozen=True)
class Endpoints:
    """Where the token goes, and where links point."""

    api_url: str
    web_url: str
    # what chose the API: "--api-url", the environment, the user's config, or the scout.toml
    api_from: str = ""


def endpoints(config: Config, chosen: str | None, chosen_by: str = "") -> Endpoints:
    """The API the user chose, else the configuration's. Links: the configuration's web URL
    for its own API; github.com for GitHub's; HOST for GitHub Enterprise's
    `https://HOST/api/v3`; the server itself for anything else (the local server)."""
    own = config.project.api_url.rstrip("/")
    api = (chosen or own).rstrip("/")
    said = (chosen_by if chosen else "") or str(config.source)
    if api == own:
        return Endpoints(api, config.project.web_url.rstrip("/"), said)
    if origin_of(api) == origin_of(GITHUB_API):
        return Endpoints(api, "https://github.com", said)
    return Endpoints(api, api.removesuffix("/api/v3"), said)


def reviewer_config(
    path: Path | None, api_url: str | None, api_url_said: str = "--api-url"
) -> tuple[Config, Endpoints]:
    """The configuration at `path` (None: the shipped default) as this user may use it: its
    hosts checked against those they trust, and the endpoints they chose (`api_url`:
    --api-url, or what `api_url_said` names) (ConfigError)."""
    user = load_user_config()
    config = load_config(path, api_url=api_url, user=user)
    return config, endpoints(config, *api_url_choice(api_url, user, api_url_said))
