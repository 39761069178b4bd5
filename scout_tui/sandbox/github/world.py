"""What the local server knows: users and their tokens, repositories with issues, pull
requests, comments and workflow runs, and Projects v2 boards. Pydantic models, because the
world can be saved to and loaded from a JSON file (`scout serve-github --state FILE`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Account(_Model):
    login: str
    id: int
    type: Literal["User", "Organization", "Bot"] = "User"  # Bot: a GitHub App's `name[bot]`

    @property
    def node_id(self) -> str:
        prefix = {"Organization": "O_", "Bot": "BOT_"}.get(self.type, "U_")
        return prefix + f"kgDO{self.id:08d}"


class Token(_Model):
    token: str
    login: str
    # Classic tokens carry OAuth scopes (sent back in X-OAuth-Scopes); None: a fine-grained
    # token, which sends no such header.
    scopes: list[str] | None = Field(default_factory=lambda: ["repo", "project", "read:org"])
    # A GitHub App installation token: REST `GET /user` refuses it (403), GraphQL `viewer`
    # answers with the App's bot.
    installation: bool = False
    # When it stops working: GitHub then answers 401 "Bad credentials", as for a wrong one.
    expires_at: datetime | None = None


class Comment(_Model):
    id: int
    user: str
    body: str
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)


class Review(_Model):
    id: int
    user: str
    state: str = "APPROVED"
    submitted_at: datetime = Field(default_factory=now)


class Issue(_Model):
    """An issue or, with `pull`, a pull request (GitHub numbers them together)."""

    number: int
    id: int
    title: str
    body: str = ""
    user: str
    state: Literal["open", "closed"] = "open"
    labels: list[str] = []
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)
    closed_at: datetime | None = None
    comments: list[Comment] = []
    pull: bool = False
    merged_at: datetime | None = None
    draft: bool = False
    reviews: list[Review] = []
    requested_reviewers: list[str] = []
    head_sha: str = "0" * 40


class Job(_Model):
    id: int
    name: str
    status: str = "completed"
    conclusion: str | None = "success"
    started_at: datetime = Field(default_factory=now)
    completed_at: datetime | None = Field(default_factory=now)
    log: str = ""
    log_file: str | None = None  # a log too big to hold: served from this file, streamed


class Run(_Model):
    id: int
    workflow_id: int
    run_number: int
    head_branch: str = "main"
    head_sha: str = "0" * 40
    event: str = "schedule"
    status: str = "completed"
    conclusion: str | None = "success"
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)
    jobs: list[Job] = []


class Workflow(_Model):
    id: int
    name: str
    path: str
    state: str = "active"


class Repository(_Model):
    full_name: str
    id: int
    default_branch: str = "main"
    private: bool = False
    issues: list[Issue] = []
    workflows: list[Workflow] = []
    runs: list[Run] = []
    commit_authors: dict[str, str] = {}  # commit sha → login of its author on GitHub
    history: list[str] = []  # commit shas, oldest first: what `compare` counts between

    def issue(self, number: int) -> Issue | None:
        return next((i for i in self.issues if i.number == number), None)


class Option(_Model):
    id: str
    name: str


class ProjectField(_Model):
    id: str
    name: str
    data_type: str = "SINGLE_SELECT"  # GitHub's ProjectV2FieldType values
    options: list[Option] = []


class Item(_Model):
    """A board item: scout only makes draft issues."""

    id: str
    full_database_id: int
    draft_id: str
    title: str
    body: str = ""
    values: dict[str, str] = {}  # field id → single-select option id
    archived: bool = False
    created_at: datetime = Field(default_factory=now)
    creator: str | None = None  # the login that added it; None: a deleted account


class Project(_Model):
    id: str
    owner: str
    number: int
    title: str
    full_database_id: int
    fields: list[ProjectField] = []
    items: list[Item] = []
    # The option new items get, by name; None: "No Status". Never Backlog by default, like
    # the real board: scout must set it.
    default_status: str | None = None

    def field(self, name: str) -> ProjectField | None:
        return next((f for f in self.fields if f.name == name), None)


class World(_Model):
    accounts: list[Account] = []
    tokens: list[Token] = []
    repositories: list[Repository] = []
    projects: list[Project] = []
    next_id: int = 1000
    rate_limit: int = 5000

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def account(self, login: str) -> Account | None:
        return next((a for a in self.accounts if a.login.lower() == login.lower()), None)

    def repository(self, full_name: str) -> Repository | None:
        return next(
            (r for r in self.repositories if r.full_name.lower() == full_name.lower()), None
        )

    def project(self, owner: str, number: int) -> Project | None:
        return next(
            (p for p in self.projects if p.owner.lower() == owner.lower() and p.number == number),
            None,
        )

    def login_for(self, token: str) -> Token | None:
        known = next((t for t in self.tokens if t.token == token), None)
        if known is not None and known.expires_at is not None and known.expires_at <= now():
            return None
        return known

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(self.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> World:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


def board_statuses() -> list[str]:
    """The columns of the reference board (pytorch project 161)."""
    return ["Backlog", "Ready", "In Progress", "Blocked", "Need Review", "Done", "Abort"]


def new_project(world: World, owner: str, number: int, title: str) -> Project:
    """A board with the reference board's Status field."""
    pid = world.new_id()
    status = ProjectField(
        id=f"PVTSSF_{pid}",
        name="Status",
        options=[
            Option(id=f"{n:08x}"[:8], name=name)
            for n, name in enumerate(board_statuses(), 0xA1B2C3)
        ],
    )
    project = Project(
        id=f"PVT_kwDO{pid}",
        owner=owner,
        number=number,
        title=title,
        full_database_id=pid,
        fields=[ProjectField(id=f"PVTF_{pid}t", name="Title", data_type="TITLE"), status],
    )
    world.projects.append(project)
    return project
