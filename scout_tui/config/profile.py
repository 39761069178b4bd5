"""scout.toml: loaded into pydantic models, merged over the shipped default; the user's own
config file (hosts they trust, their API URL and keys); which hosts a file may name.

Every value the code uses comes from here. A bad file gets one message that names the
key, the bad value and what is allowed (and the line, where TOML gives it).
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scout_tui.errors import clean
from scout_tui.model import Priority, Section, Severity

CONFIG_NAME = "scout.toml"
USER_CONFIG_NAME = "config.toml"
API_URL_VARIABLE = "SCOUT_GITHUB_API_URL"
GITHUB_API = "https://api.github.com"
# The console's actions, by the ids `[keys]` binds (the console issue's table).
ACTION_IDS = (
    "accept",
    "demote",
    "promote",
    "drop",
    "mark",
    "merge",
    "edit",
    "edit_external",
    "undo",
    "redo",
    "copy_repro",
    "run_repro",
    "open_url",
    "open_log",
    "filter",
    "preview",
    "publish",
    "rerun",
    "next_unreviewed",
    "zoom",
    "help",
    "quit",
)
_MODIFIERS = r"(?:(?:ctrl|shift|alt|meta|super|hyper)\+)*"
_KEY_NAME = (  # Textual's names: f1-f24, named keys ("minus", "page_up"), one character
    r"(?:f(?:[1-9]|1[0-9]|2[0-4])(?=,|$)|(?!f\d+(?:,|$))[a-z][a-z0-9_]+|[A-Za-z0-9])"
)
_KEY = re.compile(rf"^{_MODIFIERS}{_KEY_NAME}(?:,{_MODIFIERS}{_KEY_NAME})*$")


@dataclass(frozen=True)
class Origin:
    """Where a URL sends what it carries: compared whole, never by prefix."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        default = {"http": 80, "https": 443}[self.scheme]
        port = "" if self.port == default else f":{self.port}"
        return f"{self.scheme}://{self.host}{port}"


def origin_of(url: str) -> Origin:
    """The URL's origin; ValueError (saying why) for anything but a plain http(s) URL. A user
    name or password in it is refused: `https://api.github.com@evil` goes to `evil`."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"not a URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http(s) URL")
    if "@" in parts.netloc:
        raise ValueError("a user name or password in a URL (USER@HOST) is refused")
    return Origin(parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80))


def _trusted_origin(entry: str) -> Origin:
    """A `[trust] hosts` entry: `HOST[:PORT]` (https) or `SCHEME://HOST[:PORT]`."""
    return origin_of(entry if "://" in entry else f"https://{entry}")


def _url(value: str | None) -> str | None:
    if value is not None:
        origin_of(value)
    return value


class ConfigError(Exception):
    """A scout.toml that cannot be used; the message is meant for the user as is."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProjectConfig(_Strict):
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    experiment: str
    tracking_issue: int = Field(gt=0)
    api_url: str
    web_url: str
    # GitHub logins whose report comments count as prior reports, besides the token's own.
    trusted_authors: list[str] = []

    _urls = field_validator("api_url", "web_url")(_url)


class BoardConfig(_Strict):
    owner: str
    number: int = Field(gt=0)
    project_id: str | None = None
    status_field: str = "Status"
    backlog_option: str = "Backlog"
    title_prefix: str = "[NightlyScout]"


class GithubConfig(_Strict):
    """How scout talks to GitHub. The defaults are what GitHub asks of integrations."""

    mutation_interval: float = Field(default=1.0, ge=0, le=60)  # seconds between writes
    timeout: float = Field(default=15.0, gt=0, le=300)  # seconds per request
    retries: int = Field(default=4, ge=0, le=20)
    backoff: float = Field(default=1.0, ge=0, le=60)  # first wait; doubles each retry
    secondary_rate_wait: float = Field(default=60.0, ge=0, le=3600)
    max_rate_limit_wait: float = Field(default=300.0, ge=0, le=3600)  # longer: give up
    # A new board item or comment can be missing from a read for a while: before scout
    # concludes that something it may have made is not there, it reads again for this long
    # (CONSISTENCY_READS reads).
    consistency_wait: float = Field(default=10.0, ge=0, le=300)


class ReportConfig(_Strict):
    # Evidence lists and tracebacks longer than this are cut ("… N more") where the report
    # must fit GitHub's limits; `scout report` cuts a finding's own lists to it too (the JSON
    # and the console keep everything whole).
    max_list_items: int = Field(default=10, ge=1, le=1000)


class WindowsConfig(_Strict):
    prior_report_days: int = Field(ge=1, le=365)
    fyi_suppress_after: int = Field(ge=1, le=30)
    ci_runs: int = Field(ge=1, le=100)
    pr_review_days: int = Field(ge=0)
    merged_pr_hours: int = Field(ge=1)
    stale_issue_days: int = Field(ge=1)


class ThresholdsConfig(_Strict):
    """Where a rule draws its line, for a team to tune (implementation limits stay named
    constants in their modules)."""

    # lines a file must gain since the baseline to count as new code (`new_code_untested`)
    new_code_lines: int = Field(default=20, ge=1)
    # how alike two functions' trees must be to count as duplicated logic (0–1)
    duplicate_similarity: float = Field(default=0.8, gt=0, le=1)


# What of an upstream definition a surface compares.
SurfaceCheck = Literal["fields", "signature", "returns", "properties", "methods"]


class Surface(_Strict):
    name: str
    target: str = Field(pattern=r"^[^:]+::[A-Za-z_][\w.]*$")
    check: SurfaceCheck

    @property
    def path(self) -> str:
        return self.target.split("::", 1)[0]

    @property
    def qualname(self) -> str:
        return self.target.split("::", 1)[1]


class UpstreamConfig(_Strict):
    core_paths: list[str]
    new_api_dirs: list[str] = []
    models_dir: str = ""
    surfaces: list[Surface] = []


class TodosConfig(_Strict):
    markers: list[str] = Field(min_length=1)
    context_lines: int = Field(ge=0, le=20)
    bare_ref_repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    named_refs: dict[str, str] = {}


class TorchConfig(_Strict):
    root: str = ""
    nightly_index: str
    python_tag: str = Field(pattern=r"^cp\d+$")
    platform_tag: str
    compare_url: str

    _urls = field_validator("nightly_index")(_url)

    @field_validator("compare_url")
    @classmethod
    def _has_placeholders(cls, value: str) -> str:
        if "{old}" not in value or "{new}" not in value:
            raise ValueError("must contain {old} and {new}")
        origin_of(value)
        return value


class CiConfig(_Strict):
    branch: str
    event: str
    workflows: list[str]
    tests_dir: str


class CoverageConfig(_Strict):
    core_integration_tests: list[str] = []
    experiment_integration_tests: str = ""
    pass_files: list[str] = []
    config_registries: list[str] = []
    parallelism_flags: str = r"_degree$"
    default_parallelism: list[str] = []  # what a run that sets no degree turns on


class FreshnessConfig(_Strict):
    monkey_patches: list[str] = []
    private_apis: list[str] = []
    duplicate_pairs: list[tuple[str, str]] = []
    config_converter: str = ""
    base_config: str = ""


class OpenWorkConfig(_Strict):
    # Pull requests and issues that mention this are the experiment's ("" : the name of the
    # experiment's folder, e.g. graph_trainer).
    search: str = ""


class DocsConfig(_Strict):
    files: list[str] = []
    # Config classes whose fields are the `--section.option` flags the docs may name.
    root_configs: list[str] = []


class Rule(_Strict):
    section: Section
    priority: Priority | None = None
    severity: Severity | None = None
    board_item: bool = False
    # Carried forward with no change: one line from this template ({first_reported}).
    unchanged: str | None = None

    @field_validator("section")
    @classmethod
    def _not_carried(cls, value: Section) -> Section:
        if value is Section.CARRIED_FORWARD:
            raise ValueError("carried_forward is decided by reconcile, not by a rule")
        return value


class Config(_Strict):
    project: ProjectConfig
    board: BoardConfig
    github: GithubConfig = GithubConfig()
    report: ReportConfig = ReportConfig()
    windows: WindowsConfig
    thresholds: ThresholdsConfig = ThresholdsConfig()
    upstream: UpstreamConfig
    todos: TodosConfig
    torch: TorchConfig
    ci: CiConfig
    coverage: CoverageConfig
    freshness: FreshnessConfig
    docs: DocsConfig
    open_work: OpenWorkConfig = OpenWorkConfig()
    rules: dict[str, Rule]
    keys: dict[str, str]
    source: str = Field(default="<shipped default>", exclude=True)
    # What scout.toml left to the shipped profile although it is about the shipped
    # experiment, said as configuration warnings (see `_for_another_experiment`).
    inherited: list[str] = Field(default_factory=list, exclude=True)

    def rule(self, kind: str) -> Rule:
        try:
            return self.rules[kind]
        except KeyError:
            raise ConfigError(
                f"{self.source}: [rules] has no entry for finding kind {kind!r}"
            ) from None

    def experiment_path(self, *parts: str) -> str:
        return "/".join([self.project.experiment.rstrip("/"), *parts])


class TrustConfig(_Strict):
    # Hosts a checkout's scout.toml may name besides the shipped ones: HOST[:PORT] (https)
    # or SCHEME://HOST[:PORT].
    hosts: list[str] = []

    @field_validator("hosts")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        for entry in value:
            try:
                _trusted_origin(entry)
            except ValueError as exc:
                raise ValueError(f"{entry!r}: {exc}") from None
        return value


class UserConfig(_Strict):
    """The user's own settings, which no checkout can change: where the token may go."""

    api_url: str | None = None
    trust: TrustConfig = TrustConfig()
    keys: dict[str, str] = {}

    _urls = field_validator("api_url")(_url)

    def trusted(self) -> set[Origin]:
        chosen = [_trusted_origin(entry) for entry in self.trust.hosts]
        return {*chosen, *([origin_of(self.api_url)] if self.api_url else [])}


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
    return f"{where}: {key} = {value!r} is not allowed: {allowed}"


@functools.cache
def shipped_rule_kinds() -> frozenset[str]:
    """The kinds the shipped [rules] name (a test checks each is a kind scout makes)."""
    return frozenset(tomllib.loads(_shipped_text())["rules"])


def user_config_path() -> Path:
    return Path(platformdirs.user_config_dir("scout-tui", appauthor=False)) / USER_CONFIG_NAME


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


def chosen_api_url(flag: str | None, user: UserConfig) -> str | None:
    """The API URL the user chose: --api-url, then the environment, then their config."""
    chosen = flag or os.environ.get(API_URL_VARIABLE) or user.api_url or None
    if chosen is not None:
        try:
            origin_of(chosen)
        except ValueError as exc:
            raise ConfigError(
                f"GitHub API URL {chosen!r}: {exc} (e.g. https://api.github.com "
                "or https://HOST/api/v3)"
            ) from None
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
    if user.keys:
        data = {**data, "keys": {**data["keys"], **user.keys}}
    config = _validate(data, text, source)
    if path is not None and in_checkout(path):
        chosen = chosen_api_url(api_url, user)
        trusted = user.trusted() | ({origin_of(chosen)} if chosen else set())
        _check_hosts(own, text, source, trusted)
    return config.model_copy(update={"inherited": inherited}) if inherited else config


def in_checkout(path: Path) -> bool:
    """Whether `path` lives inside a git checkout (whose files anyone who can push wrote),
    where it is named or where it leads (a committed symlink to a file anyone can write)."""
    places = (path.absolute(), path.resolve())
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
    raise ConfigError(
        f"{where}: [{table}] {key} names {origin}, a host you have not trusted (a checkout's "
        "scout.toml may name only GitHub's and PyTorch's hosts and those you trust): to trust "
        f'it, add [trust] hosts = ["{origin}"] to {user_config_path()}, or pass --api-url '
        "with that host"
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
    seen: dict[str, str] = {}
    for action, key in keys.items():
        if action not in ACTION_IDS:
            raise ConfigError(
                f"{source}: unknown key binding keys.{action}: the actions "
                f"are {', '.join(ACTION_IDS)}"
            )
        if not _KEY.match(key):
            raise ConfigError(
                f"{source}: keys.{action} = {key!r} is not allowed: a key name such as "
                "'a', 'minus', 'ctrl+r', or several with commas"
            )
        if key in seen:
            raise ConfigError(
                f"{source}: keys.{action} = {key!r} is not allowed: "
                f"already bound to keys.{seen[key]}"
            )
        seen[key] = action


def find_config(repo: Path) -> Path | None:
    """The checkout's own scout.toml, if it has one."""
    candidate = repo / CONFIG_NAME
    return candidate if candidate.is_file() else None
