"""`POST /graphql`: GitHub's Projects v2 subset (schema.graphql) executed by graphql-core
over the server's world. Objects below are thin views: graphql-core's default resolver
reads their attributes and calls their methods with the field's arguments."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from graphql import GraphQLError, GraphQLSchema, build_schema, graphql_sync

from scout_tui.sandbox.github.rest import BODY_LIMIT
from scout_tui.sandbox.github.world import Account, Item, Project, ProjectField, World

MAX_PAGE = 100
ARCHIVED = "The item is archived and cannot be updated"  # GitHub's words


@dataclass
class BoardTiming:
    """What a real board does on its own, in time: an automation that gives a new item a
    status (`automation_delay` seconds after the add; 0: on the add), and a board's item list
    that misses an item for `lag` seconds after its add (GitHub's eventual consistency; a
    lookup by id finds it)."""

    lag: float = 0.0
    automation_status: str | None = None
    automation_delay: float = 0.0
    clock: Callable[[], float] = time.monotonic
    added: dict[str, float] = field(default_factory=dict)  # item id → when added
    pending: set[str] = field(default_factory=set)  # items the automation has yet to move

    def visible(self, item: Item) -> bool:
        added = self.added.get(item.id)
        return added is None or self.clock() >= added + self.lag

    def item_added(self, world: World, item: Item) -> None:
        self.added[item.id] = self.clock()
        if self.automation_status is not None:
            self.pending.add(item.id)
            self.run_automation(world)

    def run_automation(self, world: World) -> None:
        """Move the items whose automation is due (called at every request)."""
        if not self.pending:
            return
        now = self.clock()
        for project in world.projects:
            status = project.field("Status")
            option = (
                next((o.id for o in status.options if o.name == self.automation_status), None)
                if status
                else None
            )
            for item in project.items:
                if item.id in self.pending and now >= self.added[item.id] + self.automation_delay:
                    self.pending.discard(item.id)
                    if option is not None and status is not None:
                        item.values[status.id] = option


TITLE_LIMIT = 256  # a draft issue's title, as GitHub validates it


@cache
def schema() -> GraphQLSchema:
    sdl = resources.files(__package__).joinpath("schema.graphql").read_text(encoding="utf-8")
    built = build_schema(sdl)
    for name in (
        "Actor",
        "Node",
        "ProjectV2FieldConfiguration",
        "ProjectV2ItemContent",
        "ProjectV2ItemFieldValue",
    ):
        built.type_map[name].resolve_type = lambda obj, *_: obj.typename  # type: ignore[attr-defined]
    return built


def _cursor(n: int) -> str:
    return base64.b64encode(f"cursor:{n}".encode()).decode()


def _offset(after: str | None) -> int:
    if not after:
        return 0
    try:
        return int(base64.b64decode(after).decode().split(":", 1)[1])
    except (ValueError, IndexError):
        raise GraphQLError(f"`{after}` does not appear to be a valid cursor.") from None


def _page(nodes: Sequence[Any], first: int | None, after: str | None) -> dict:
    if first is None:
        raise GraphQLError("You must provide a `first` or `last` value to properly paginate.")
    if first > MAX_PAGE:
        raise GraphQLError(
            f"Requesting {first} records exceeds the `first` limit of {MAX_PAGE} records."
        )
    start = _offset(after)
    chunk = list(nodes[start : start + first])
    end = start + len(chunk)
    return {
        "nodes": chunk,
        "totalCount": len(nodes),
        "pageInfo": {
            "hasNextPage": end < len(nodes),
            "hasPreviousPage": start > 0,
            "startCursor": _cursor(start + 1) if chunk else None,
            "endCursor": _cursor(end) if chunk else None,
        },
    }


class _Field:
    def __init__(self, field: ProjectField) -> None:
        self.id, self.name, self.dataType = field.id, field.name, field.data_type
        self._field = field
        self.typename = {
            "SINGLE_SELECT": "ProjectV2SingleSelectField",
            "ITERATION": "ProjectV2IterationField",
        }.get(field.data_type, "ProjectV2Field")

    def options(self, info: Any, names: list[str] | None = None) -> list[dict]:
        return [
            {"id": o.id, "name": o.name}
            for o in self._field.options
            if names is None or o.name in names
        ]


class _Actor:
    """Who made something: a person (User) or a GitHub App (Bot)."""

    def __init__(self, account: Account) -> None:
        self.typename = "Bot" if account.type == "Bot" else "User"
        # GitHub's GraphQL names a Bot without the `[bot]` that REST and `viewer` add.
        bot = self.typename == "Bot"
        self.login = account.login.removesuffix("[bot]") if bot else account.login
        self.id = account.node_id


def _creator(world: World, item: Item) -> _Actor | None:
    account = world.account(item.creator) if item.creator else None
    return _Actor(account) if account else None


class _Draft:
    typename = "DraftIssue"

    def __init__(self, item: Item, creator: _Actor | None) -> None:
        self.id, self.title, self.body = item.draft_id, item.title, item.body
        self.creator = creator


class _SingleSelectValue:
    typename = "ProjectV2ItemFieldSingleSelectValue"

    def __init__(self, item: Item, field: ProjectField, option_id: str) -> None:
        self.id = f"PVTFSV_{item.full_database_id}_{field.id}"
        self.optionId = option_id
        self.name = next((o.name for o in field.options if o.id == option_id), None)
        self.field = _Field(field)


class _Item:
    typename = "ProjectV2Item"

    def __init__(self, world: World, project: Project, item: Item) -> None:
        self._project, self._item = project, item
        self.id, self.fullDatabaseId = item.id, str(item.full_database_id)
        self.type, self.isArchived = "DRAFT_ISSUE", item.archived
        self.createdAt = item.created_at.isoformat().replace("+00:00", "Z")
        self.creator = _creator(world, item)
        self.content = _Draft(item, self.creator)

    def _values(self) -> list[_SingleSelectValue]:
        fields = {f.id: f for f in self._project.fields}
        return [
            _SingleSelectValue(self._item, fields[fid], oid)
            for fid, oid in self._item.values.items()
            if fid in fields
        ]

    def fieldValueByName(self, info: Any, name: str) -> _SingleSelectValue | None:
        return next((v for v in self._values() if v.field.name == name), None)

    def fieldValues(
        self, info: Any, first: int | None = None, after: str | None = None, **_: Any
    ) -> dict:
        return _page(self._values(), first, after)


class _Project:
    typename = "ProjectV2"

    def __init__(self, world: World, project: Project, base_url: str) -> None:
        self._world, self._project = world, project
        self.id, self.number, self.title = project.id, project.number, project.title
        self.closed, self.fullDatabaseId = False, str(project.full_database_id)
        self.url = f"{base_url}/orgs/{project.owner}/projects/{project.number}"

    def field(self, info: Any, name: str) -> _Field | None:
        found = self._project.field(name)
        return _Field(found) if found else None

    def fields(
        self, info: Any, first: int | None = None, after: str | None = None, **_: Any
    ) -> dict:
        return _page([_Field(f) for f in self._project.fields], first, after)

    def items(
        self, info: Any, first: int | None = None, after: str | None = None, **_: Any
    ) -> dict:
        timing = info.root_value.timing
        items = [
            _Item(self._world, self._project, i) for i in self._project.items if timing.visible(i)
        ]
        return _page(items, first, after)


class _Owner:
    def __init__(self, api: GraphQLApi, login: str, typename: str, node_id: str) -> None:
        self._api, self.login, self.typename, self.id = api, login, typename, node_id

    def projectV2(self, info: Any, number: int) -> _Project:
        project = self._api.world.project(self.login, number)
        if project is None:
            raise GraphQLError(f"Could not resolve to a ProjectV2 with the number {number}.")
        return _Project(self._api.world, project, self._api.base_url)


def _check_draft(title: str | None, body: str | None) -> None:
    if title is not None and len(title) > TITLE_LIMIT:
        raise GraphQLError(f"Title is too long (maximum is {TITLE_LIMIT} characters)")
    if body is not None and len(body) > BODY_LIMIT:
        raise GraphQLError(f"Body is too long (maximum is {BODY_LIMIT} characters)")


class GraphQLApi:
    """Runs one request against the world; the caller holds the world's lock."""

    def __init__(
        self,
        world: World,
        viewer: str,
        base_url: str,
        after_write: Callable[[], None],
        timing: BoardTiming | None = None,
    ) -> None:
        self.world, self.viewer_login, self.base_url = world, viewer, base_url
        self._after_write = after_write
        self.timing = timing or BoardTiming()

    # -- queries ------------------------------------------------------------------------
    def _owner(self, login: str, kind: str) -> _Owner | None:
        account = self.world.account(login)
        if account is None or account.type != kind:
            raise GraphQLError(f"Could not resolve to an {kind} with the login of '{login}'.")
        return _Owner(self, account.login, kind, account.node_id)

    def organization(self, info: Any, login: str) -> _Owner | None:
        return self._owner(login, "Organization")

    def user(self, info: Any, login: str) -> _Owner | None:
        return self._owner(login, "User")

    def viewer(self, info: Any) -> _Owner:
        account = self.world.account(self.viewer_login)
        assert account is not None
        return _Owner(self, account.login, "User", account.node_id)

    def node(self, info: Any, id: str) -> Any:  # GitHub's argument name
        for project in self.world.projects:
            if project.id == id:
                return _Project(self.world, project, self.base_url)
            for item in project.items:
                if item.id == id:
                    return _Item(self.world, project, item)
        return None

    # -- mutations ----------------------------------------------------------------------
    def _project_by_id(self, project_id: str) -> Project:
        project = next((p for p in self.world.projects if p.id == project_id), None)
        if project is None:
            raise GraphQLError(f"Could not resolve to a node with the global id of '{project_id}'")
        return project

    def addProjectV2DraftIssue(self, info: Any, input: dict) -> dict:
        project = self._project_by_id(input["projectId"])
        if not input["title"].strip():
            raise GraphQLError("Title can't be blank")
        _check_draft(input["title"], input.get("body"))
        number = self.world.new_id()
        item = Item(
            id=f"PVTI_lADO{number}",
            full_database_id=number,
            draft_id=f"DI_lADO{number}",
            title=input["title"],
            body=input.get("body") or "",
            creator=self.viewer_login,
        )
        status = project.field("Status")
        if project.default_status and status is not None:
            option = next((o for o in status.options if o.name == project.default_status), None)
            if option is not None:
                item.values[status.id] = option.id
        project.items.append(item)
        self.timing.item_added(self.world, item)
        self._after_write()
        return {
            "clientMutationId": input.get("clientMutationId"),
            "projectItem": _Item(self.world, project, item),
        }

    def deleteProjectV2Item(self, info: Any, input: dict) -> dict:
        project = self._project_by_id(input["projectId"])
        item = next((i for i in project.items if i.id == input["itemId"]), None)
        if item is None:
            raise GraphQLError(
                f"Could not resolve to a node with the global id of '{input['itemId']}'"
            )
        project.items.remove(item)
        self._after_write()
        return {"clientMutationId": input.get("clientMutationId"), "deletedItemId": item.id}

    def updateProjectV2ItemFieldValue(self, info: Any, input: dict) -> dict:
        project = self._project_by_id(input["projectId"])
        item = next((i for i in project.items if i.id == input["itemId"]), None)
        field = next((f for f in project.fields if f.id == input["fieldId"]), None)
        if item is None or field is None:
            missing = input["itemId"] if item is None else input["fieldId"]
            raise GraphQLError(f"Could not resolve to a node with the global id of '{missing}'")
        if item.archived:
            raise GraphQLError(ARCHIVED)
        option = (input.get("value") or {}).get("singleSelectOptionId")
        if field.data_type != "SINGLE_SELECT" or option not in {o.id for o in field.options}:
            raise GraphQLError("The single select option Id does not belong to the field")
        item.values[field.id] = option
        self._after_write()
        return {
            "clientMutationId": input.get("clientMutationId"),
            "projectV2Item": _Item(self.world, project, item),
        }

    def updateProjectV2DraftIssue(self, info: Any, input: dict) -> dict:
        for project in self.world.projects:
            for item in project.items:
                if item.draft_id == input["draftIssueId"]:
                    if item.archived:
                        raise GraphQLError(ARCHIVED)
                    _check_draft(input.get("title"), input.get("body"))
                    if input.get("title") is not None:
                        item.title = input["title"]
                    if input.get("body") is not None:
                        item.body = input["body"]
                    self._after_write()
                    return {
                        "clientMutationId": input.get("clientMutationId"),
                        "draftIssue": _Draft(item, _creator(self.world, item)),
                    }
        raise GraphQLError(
            f"Could not resolve to a node with the global id of '{input['draftIssueId']}'"
        )

    def execute(self, query: str, variables: dict | None, operation: str | None) -> dict:
        result = graphql_sync(
            schema(), query, root_value=self, variable_values=variables, operation_name=operation
        )
        out: dict = {"data": result.data}
        if result.errors:
            out["errors"] = [
                {
                    "message": e.message,
                    "type": "NOT_FOUND" if "Could not resolve" in e.message else None,
                    "path": e.path,
                    "locations": [
                        {"line": loc.line, "column": loc.column} for loc in (e.locations or [])
                    ],
                }
                for e in result.errors
            ]
        return out
