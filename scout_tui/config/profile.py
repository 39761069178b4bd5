"""scout.toml: read and merged over the shipped default into `models.Config`; the user's own
config file (hosts they trust, their API URL and keys); which hosts a file may name.

A bad file gets one message that names the key, the bad value and what is allowed (and the
line, where TOML gives it).
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import ValidationError

from scout_tui.config.models import (
    ACTION_IDS,
    API_URL_VARIABLE,
    CONFIG_NAME,
    USER_CONFIG_NAME,
    Config,
    ConfigError,
    Origin,
    Surface,
    UserConfig,
    key_problem,
    origin_of,
    same_key,
)
from scout_tui.errors import clean, redact


def _shipped_text() -> str:
    return resources.files("scout_tui").joinpath(CONFIG_NAME).read_text(encoding="utf-8")


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line of a key (or a table's header) in the TOML text, for the error."""
    names = [str(part) for part in loc if isinstance(part, str)]
    if not names:
        return None
    table, key = names[:-1], names[-1]
    lines = text.splitlines()
    start = 0
    if table:
        start = _header_line(lines, table) or 0
    key_re = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
    for number in range(start, len(lines)):
        if key_re.match(lines[number]):
            return number + 1
    header = _header_line(lines, names)
    return header + 1 if header is not None else None


def _header_line(lines: list[str], names: list[str]) -> int | None:
    header = re.compile(r"^\s*\[+\s*" + r"\s*\.\s*".join(map(re.escape, names)) + r"\s*\]+")
    return next((number for number, line in enumerate(lines) if header.match(line)), None)


def _describe(error: Mapping[str, Any], text: str, source: str) -> str:
    loc = tuple(error["loc"])
    key = ".".join(str(part) for part in loc)
    value = error.get("input")
    line = _line_of(text, loc)
    where = f"{source}, line {line}" if line else source
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown key {key!r}"
    if error["type"] == "missing":
        return f"{where}: missing key {key!r}"
    allowed = error["msg"]
    if error["type"] == "enum" or error["type"] == "literal_error":
        allowed = "one of " + error["ctx"]["expected"]
    return redact(f"{where}: {key} = {value!r} is not allowed: {allowed}")


@functools.cache
def shipped_rule_kinds() -> frozenset[str]:
    """The kinds the shipped [rules] name (a test checks each is a kind scout makes)."""
    return frozenset(tomllib.loads(_shipped_text())["rules"])


def user_config_path() -> Path:
    return Path(platformdirs.user_config_dir("scout-tui", appauthor=False)) / USER_CONFIG_NAME


def _user_config_text() -> str:
    try:
        return user_config_path().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def load_user_config() -> UserConfig:
    """The user's config file, under the platform's config dir; none is empty."""
    path = user_config_path()
    if not path.is_file():
        return UserConfig()
    text, data = _read_toml(path)
    try:
        user = UserConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_first_problem(exc, text, str(path))) from None
    _check_keys(user.keys, str(path))
    return user


def _read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a UTF-8 text file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for key, value in _strings(data):
        if clean(value) != value:  # TOML's \u escapes can carry escape sequences
            raise ConfigError(f"{path}: {key} holds control or bidi characters: {value!r}")
    return text, data


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every string in parsed TOML, with its dotted key."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from _strings(item, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{key}[{index}]")


def api_url_choice(
    flag: str | None, user: UserConfig, flag_said: str = "--api-url"
) -> tuple[str | None, str]:
    """The API URL the user chose (--api-url, then the environment, then their config),
    and which of them said it ("" for none: the scout.toml's is used)."""
    for chosen, said in (
        (flag, flag_said),
        (os.environ.get(API_URL_VARIABLE), f"${API_URL_VARIABLE}"),
        (user.api_url, f"your config, {user_config_path()}"),
    ):
        if chosen:
            return chosen_api_url(chosen, user), said
    return None, ""


def chosen_api_url(flag: str | None, user: UserConfig) -> str | None:
    """The API URL the user chose: --api-url, then the environment, then their config."""
    chosen = flag or os.environ.get(API_URL_VARIABLE) or user.api_url or None
    if chosen is not None:
        try:
            origin_of(chosen)
        except ValueError as exc:
            raise ConfigError(
                f"GitHub API URL {redact(repr(chosen))}: {exc} (e.g. https://api.github.com "
                "or https://HOST/api/v3)"
            ) from None
        if origin_of(chosen).host == "github.com":  # the web's address, where the API is not
            raise ConfigError(
                f"GitHub API URL {redact(repr(chosen))} is GitHub's web address; "
                "its API is https://api.github.com"
            )
    return chosen


def load_config(
    path: Path | None = None, *, api_url: str | None = None, user: UserConfig | None = None
) -> Config:
    """The shipped default, with `path` (if any) merged over it and the user's [keys] over
    both. A `path` inside a git checkout is the checkout's: it may name only the shipped
    hosts, those the user trusts, and that of the API URL they chose (`api_url`: --api-url)."""
    user = user if user is not None else load_user_config()
    base = tomllib.loads(_shipped_text())
    if path is None:
        inherited: list[str] = []
        text, data, source = _shipped_text(), base, "<shipped default>"
    else:
        text, own = _read_toml(path)
        source = str(path)
        base, inherited = _for_another_experiment(base, own)
        data = _merge(base, own)
    layers = [("<shipped default>", _shipped_text(), tomllib.loads(_shipped_text())["keys"])]
    if path is not None:
        layers.append((source, text, own.get("keys", {}) if isinstance(own, dict) else {}))
    if user.keys:
        data = {**data, "keys": {**data["keys"], **user.keys}}
        layers.append((str(user_config_path()), _user_config_text(), user.keys))
    config = _validate(data, text, source)
    _check_key_clashes(layers)
    if path is not None and in_checkout(path):
        chosen = chosen_api_url(api_url, user)
        trusted = user.trusted() | ({origin_of(chosen)} if chosen else set())
        _check_hosts(own, text, source, trusted)
    return config.model_copy(update={"inherited": inherited}) if inherited else config


def in_checkout(path: Path) -> bool:
    """Whether `path` lives inside a git checkout (whose files anyone who can push wrote),
    where it is named or where it leads (a committed symlink to a file anyone can write)."""
    # Named: `..` taken lexically (`repo/../scout.toml` is beside the checkout, not in it).
    places = (Path(os.path.normpath(path.absolute())), path.resolve())
    return any((folder / ".git").exists() for place in places for folder in place.parents)


# The keys of scout.toml that send the token, or the reviewer, somewhere.
_HOST_KEYS = (
    ("project", "api_url"),
    ("project", "web_url"),
    ("torch", "nightly_index"),
    ("torch", "compare_url"),
)


def untrusted_hosts(
    urls: Mapping[tuple[str, str], str], trusted: Iterable[Origin]
) -> list[tuple[tuple[str, str], Origin]]:
    """The (key, origin) of each URL whose origin is neither the one the shipped profile
    gives that key (download.pytorch.org is no API host) nor trusted."""
    shipped, trusted = shipped_origins(), set(trusted)
    found = [(key, origin_of(url)) for key, url in urls.items()]
    return [
        (key, origin)
        for key, origin in found
        if origin != shipped.get(key) and origin not in trusted
    ]


@functools.cache
def shipped_origins() -> dict[tuple[str, str], Origin]:
    shipped = tomllib.loads(_shipped_text())
    return {(table, key): origin_of(shipped[table][key]) for table, key in _HOST_KEYS}


def _check_hosts(own: dict[str, Any], text: str, source: str, trusted: set[Origin]) -> None:
    urls = {
        (table, key): own[table][key]
        for table, key in _HOST_KEYS
        if isinstance(own.get(table), dict) and key in own[table]
    }
    refused = untrusted_hosts(urls, trusted)
    if not refused:
        return
    (table, key), origin = refused[0]
    line = _line_of(text, (table, key))
    where = f"{source}, line {line}" if line else source
    # --api-url trusts the host it names for the API (and its web pages); never an index.
    flag = " or pass --api-url with that host" if table == "project" else ""
    raise ConfigError(
        f"{where}: [{table}] {key} names {origin}, a host you have not trusted (a checkout's "
        "scout.toml may name only GitHub's and PyTorch's hosts and those you trust): to trust "
        f'it, add [trust] hosts = ["{origin}"] to {user_config_path()}{"," if flag else ""}'
        f"{flag}"
    )


# The shipped profile's settings that are about its own experiment, not the repository: a
# scout.toml for another experiment does not inherit them (the shipped converter, patches or
# surfaces would be reported against code the other experiment never touches).
_EXPERIMENT_SPECIFIC = (
    ("upstream", "surfaces"),
    ("freshness", "monkey_patches"),
    ("freshness", "private_apis"),
    ("freshness", "duplicate_pairs"),
    ("freshness", "config_converter"),
    ("ci", "workflows"),
)


def _for_another_experiment(
    base: dict[str, Any], user: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The shipped profile to merge under a scout.toml that names another experiment: its
    experiment-specific settings emptied unless the user's file sets them, and what the
    user still inherits that belongs to the shipped experiment, as one-line notes."""
    shipped = str(base["project"]["experiment"]).rstrip("/")
    experiment = str(user.get("project", {}).get("experiment", shipped)).rstrip("/")
    if experiment == shipped:
        return base, []
    base = {
        table: dict(values) if isinstance(values, dict) else values
        for table, values in base.items()
    }
    notes = []
    for table, key in _EXPERIMENT_SPECIFIC:
        if key in user.get(table, {}):
            continue
        base[table][key] = "" if isinstance(base[table][key], str) else []
        if key == "workflows":
            notes.append(
                f"[ci] workflows: not set, and the shipped ones run {shipped}: CI "
                "coverage and failures are not checked; list this experiment's "
                "workflows"
            )
    if "files" not in user.get("docs", {}):
        base["docs"]["files"] = ["README.md"]  # the shipped CLAUDE.md and AGENTS.md are its own
    root_configs = base["docs"]["root_configs"]
    if "root_configs" not in user.get("docs", {}):
        base["docs"]["root_configs"] = [c for c in root_configs if not c.startswith(shipped + "/")]
    for key in ("tracking_issue",):
        if key not in user.get("project", {}):
            notes.append(
                f"[project] {key} = {base['project'][key]} is the shipped profile's, "
                f"kept for {shipped}: prior reports are read from, and reports "
                "published to, that issue; set this experiment's own"
            )
    if "number" not in user.get("board", {}):
        notes.append(
            f"[board] number = {base['board']['number']} is the shipped profile's "
            f"board, kept for {shipped}: set this experiment's own before "
            "publishing"
        )
    return base, notes


def _first_problem(exc: ValidationError, text: str, source: str) -> str:
    messages = [_describe(error, text, source) for error in exc.errors()]
    more = f" (and {len(messages) - 1} more problem(s))" if len(messages) > 1 else ""
    return messages[0] + more


def _validate(data: dict[str, Any], text: str, source: str) -> Config:
    try:
        config = Config.model_validate({**data, "source": source})
    except ValidationError as exc:
        raise ConfigError(_first_problem(exc, text, source)) from None
    _check_keys(config.keys, config.source)
    _check_paths(config, text)
    return config


# Every path scout.toml names is read inside the checkout: (table, key, whether it is
# relative to the experiment). `path::Name` targets count by their path. `[torch] root` is
# the installed torch's, outside by design, and never quoted.
_PATH_KEYS = (
    ("project", "experiment", False),
    ("upstream", "core_paths", False),
    ("upstream", "new_api_dirs", False),
    ("upstream", "models_dir", False),
    ("upstream", "surfaces", False),
    ("ci", "workflows", False),
    ("ci", "tests_dir", True),
    ("coverage", "core_integration_tests", False),
    ("coverage", "experiment_integration_tests", True),
    ("coverage", "pass_files", True),
    ("coverage", "config_registries", True),
    ("freshness", "monkey_patches", False),
    ("freshness", "duplicate_pairs", False),
    ("freshness", "config_converter", False),
    ("freshness", "base_config", False),
    ("docs", "files", True),
    ("docs", "root_configs", False),
)


def _check_paths(config: Config, text: str) -> None:
    """An absolute path, `~`, or `..` leading out of the checkout is refused: scout.toml
    may come with the checkout, and it must not make scout read (and quote) other files."""
    experiment = config.project.experiment
    for table, key, under_experiment in _PATH_KEYS:
        value = getattr(getattr(config, table), key)
        for item in _path_values(value):
            path = item.partition("::")[0]
            if not path or _inside_checkout(path, experiment if under_experiment else ""):
                continue
            line = _line_of(text, (table, key))
            where = f"{config.source}, line {line}" if line else config.source
            base = "the experiment's folder" if under_experiment else "the checkout's top"
            raise ConfigError(
                f"{where}: {table}.{key} = {item!r} is not allowed: a path inside the "
                f"checkout, relative to {base} (not absolute, no `~`, no `..` leading out)"
            )


def _path_values(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Surface):
        return [value.target]
    if isinstance(value, list | tuple):
        return [path for item in value for path in _path_values(item)]
    return []


def _inside_checkout(path: str, base: str) -> bool:
    if path.startswith(("/", "~", "\\")) or re.match(r"^[A-Za-z]:", path):
        return False
    joined = posixpath.normpath(posixpath.join(base, path))
    return joined != ".." and not joined.startswith(("../", "/"))


def _check_keys(keys: Mapping[str, str], source: str) -> None:
    """Each action id is one scout knows and each key one Textual can name."""
    for action, key in keys.items():
        if action not in ACTION_IDS:
            raise ConfigError(
                f"{source}: unknown key binding keys.{action}: the actions "
                f"are {', '.join(ACTION_IDS)}"
            )
        problem = key_problem(key)
        if problem is not None:
            raise ConfigError(f"{source}: keys.{action} = {key!r} is not allowed: {problem}")


# Keys the console moves and is left with: rebinding one would strand the reviewer.
RESERVED_KEYS = {
    **dict.fromkeys(
        ("up", "down", "left", "right", "home", "end", "pageup", "pagedown"), "moving the cursor"
    ),
    "enter": "opening and closing a node",
    "tab": "moving between panes",
    "shift+tab": "moving between panes",
    "escape": "closing a modal, a zoom or the filter",
    "ctrl+c": "quit",
    "ctrl+q": "quit",
    "ctrl+p": "the command palette",
}


def _check_key_clashes(layers: list[tuple[str, str, Mapping[str, str]]]) -> None:
    """No key does two actions once the layers (source, its text, its [keys]; the last
    wins) are merged. A clash names the binding that made it — the one set last, in the
    file and on the line it was set — not the default it collides with."""
    merged: dict[str, tuple[str, int]] = {}  # action → its key's layer, its order
    keys: dict[str, str] = {}
    for n, (_, _, layer) in enumerate(layers):
        for action, key in layer.items():
            keys[action] = key
            merged[action] = (str(n), len(merged))
    holder: dict[str, str] = {}
    for action in sorted(keys, key=lambda a: (int(merged[a][0]), merged[a][1])):
        for key in map(same_key, keys[action].split(",")):
            other, reserved = holder.get(key), RESERVED_KEYS.get(key)
            if (other is not None and other != action) or reserved:
                source, text, _ = layers[int(merged[action][0])]
                line = _key_line(text, action)
                where = f"{source}:{line}" if line else source
                why = (
                    f"the console's own key for {reserved} (choose another key)"
                    if reserved
                    else f"already the key of {other} (rebind {other} too, or choose another key)"
                )
                raise ConfigError(
                    f"{where}: keys.{action} = {keys[action]!r} is not allowed: {key!r} is {why}"
                )
            holder[key] = action


def _key_line(text: str, action: str) -> int | None:
    """The line of `action = …` in the file's [keys] table."""
    in_keys = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            in_keys = stripped.replace(" ", "") == "[keys]"
        elif in_keys and re.match(rf"^{re.escape(action)}\s*=", stripped):
            return number
    return None


def find_config(repo: Path) -> Path | None:
    """The checkout's own scout.toml, if it has one."""
    candidate = repo / CONFIG_NAME
    return candidate if candidate.is_file() else None
