"""The configuration as pydantic models: the team profile (`Config`, one model per
scout.toml table), the reviewer's own config (`UserConfig`), and the names and origins
they hold."""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scout_tui.model import SECTIONS, Priority, Section, Severity

CONFIG_NAME = "scout.toml"
USER_CONFIG_NAME = "config.toml"
API_URL_VARIABLE = "SCOUT_GITHUB_API_URL"
GITHUB_API = "https://api.github.com"
# The console's actions, by the ids `[keys]` binds (the console issue's table).
ACTION_IDS = (
    "accept",
    "accept_next",
    "demote",
    "promote",
    "drop",
    "mark",
    "mark_filtered",
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
_KEY_NAME = (  # Textual's names: f1-f24, named keys ("minus", "pageup"), one character
    r"(?:f(?:[1-9]|1[0-9]|2[0-4])(?=,|$)|(?!f\d+(?:,|$))[a-z][a-z0-9_]+|[A-Za-z0-9])"
)
KEY = re.compile(rf"^{_MODIFIERS}{_KEY_NAME}(?:,{_MODIFIERS}{_KEY_NAME})*$")
# The keys Textual names by a word: the ones a keyboard has, and each ASCII punctuation
# character by its Unicode name as Textual writes it ("question_mark", "minus").
_KEY_REPLACEMENTS = {
    "solidus": "slash",
    "reverse_solidus": "backslash",
    "commercial_at": "at",
    "hyphen_minus": "minus",
    "plus_sign": "plus",
    "low_line": "underscore",
}
NAMED_KEYS = frozenset(
    {
        *("up", "down", "left", "right", "home", "end", "pageup", "pagedown", "insert"),
        *("delete", "backspace", "tab", "enter", "escape", "space"),
        *(
            _KEY_REPLACEMENTS.get(name, name)
            for name in (
                unicodedata.name(c).lower().replace("-", "_").replace(" ", "_")
                for c in string.punctuation
            )
        ),
    }
)


def key_problem(keys: str) -> str | None:
    """Why `keys` ("a", "ctrl+r", "minus,plus") names no key Textual knows; None: it does."""
    if not KEY.match(keys):
        return "a key name such as 'a', 'minus', 'ctrl+r', or several with commas"
    for key in keys.split(","):
        base = key.rsplit("+", 1)[-1]
        if len(base) > 1 and not re.fullmatch(r"f\d+", base) and base not in NAMED_KEYS:
            return f"{base!r} is no key's name (e.g. 'minus', 'question_mark', 'pageup', 'f5')"
    return None


def same_key(key: str) -> str:
    """One spelling for one key: `shift+a` is what the terminal sends as `A`."""
    *modifiers, base = key.split("+")
    if modifiers == ["shift"] and len(base) == 1 and base.isalpha():
        return base.upper()
    return key


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
SurfaceCheck = Literal["fields", "signature", "returns", "properties", "methods", "attributes"]


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


class CiRunner(_Strict):
    """What a CI runner has: its GPU ("none" for a CPU runner) and that GPU's CUDA compute
    capability ("9.0"), for tests gated on hardware (`test_hardware_idle`)."""

    gpu: str
    capability: str | None = Field(default=None, pattern=r"^\d+\.\d+$")

    @property
    def has_gpu(self) -> bool:
        return self.gpu.strip().lower() not in ("", "none", "cpu")

    @property
    def compute(self) -> tuple[int, int] | None:
        if self.capability is None:
            return None
        major, minor = self.capability.split(".")
        return int(major), int(minor)


class CiConfig(_Strict):
    branch: str
    event: str
    workflows: list[str]
    tests_dir: str
    # runs-on label (or a reusable workflow's `runner` input) → its hardware. A job whose
    # runner is computed at run time is named `file.yaml:job` instead.
    runners: dict[str, CiRunner] = {}


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
    # "growth": an inventory (a standing list with no decision per item) is in the report the
    # day it has an item the last report that listed it did not; otherwise it is left out.
    # "never": kept in the run's `--json` (`left_out`), never in the report or on the board.
    report: Literal["always", "growth", "never"] = "always"

    @field_validator("section")
    @classmethod
    def _not_carried(cls, value: Section) -> Section:
        if not SECTIONS[value].placeable:
            raise ValueError(f"{value.value} is decided by reconcile, not by a rule")
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
    nightly_index: str | None = None  # where `scout bisect` installs nightlies from
    trust: TrustConfig = TrustConfig()
    keys: dict[str, str] = {}

    _urls = field_validator("api_url", "nightly_index")(_url)

    def trusted(self) -> set[Origin]:
        chosen = [_trusted_origin(entry) for entry in self.trust.hosts]
        return {*chosen, *([origin_of(self.api_url)] if self.api_url else [])}
