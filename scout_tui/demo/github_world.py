"""The demo's GitHub: the tracking issue with the prior reports as comments (one by the old
LLM agent, one by scout), and the board with its Status columns and a few items people
filed by hand. Served by the local server in `scout demo` and `scout serve-github`."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from scout_tui.config import Config
from scout_tui.github.server.world import (
    Account,
    Comment,
    Issue,
    Item,
    Repository,
    Token,
    World,
    new_project,
)

DEMO_TOKEN = "demo-token"
SCOUT_USER = "scout-bot"
OLD_AGENT = "nightly-agent"


def demo_world(config: Config, priors: dict[date, str], *, token: str = DEMO_TOKEN) -> World:
    """`priors`: report date → Markdown; the oldest is the old agent's, the rest scout's."""
    world = World()
    owner, name = config.project.repo.split("/", 1)
    for login, kind in ((owner, "Organization"), (config.board.owner, "Organization"),
                        (SCOUT_USER, "User"), (OLD_AGENT, "User")):  # fmt: skip
        if world.account(login) is None:
            world.accounts.append(Account(login=login, id=world.new_id(), type=kind))
    world.tokens.append(Token(token=token, login=SCOUT_USER))
    tracking = Issue(number=config.project.tracking_issue, id=world.new_id(),
                     title="[graph_trainer] Nightly scout reports", user=OLD_AGENT,
                     body="Nightly Scout Reports are posted here as comments.")  # fmt: skip
    for position, (day, text) in enumerate(sorted(priors.items())):
        when = datetime.combine(day, time(6, 30), UTC)
        author = OLD_AGENT if position == 0 else SCOUT_USER
        tracking.comments.append(Comment(id=world.new_id(), user=author, body=text,
                                         created_at=when, updated_at=when))  # fmt: skip
    world.repositories.append(Repository(full_name=f"{owner}/{name}", id=world.new_id(),
                                         issues=[tracking]))  # fmt: skip
    board = new_project(world, config.board.owner, config.board.number,
                        "graph_trainer: nightly scout")  # fmt: skip
    status = board.field(config.board.status_field)
    assert status is not None
    by_name = {option.name: option.id for option in status.options}
    for title, column in (("Port the FSDP bucketing pass to the new pass manager", "In Progress"),
                          ("Document the graph_trainer config converter", "Done")):  # fmt: skip
        number = world.new_id()
        board.items.append(Item(
            id=f"PVTI_lADO{number}", full_database_id=number, draft_id=f"DI_lADO{number}",
            title=title, body="Filed by hand.", values={status.id: by_name[column]},
        ))  # fmt: skip
    return world
