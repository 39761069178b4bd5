"""`publish --dry-run --json`: the plan as a document for scripts, its JSON Schema
committed in schema/plan.schema.json (`python -m scout_tui.publish.document` rewrites it;
a test fails when the model changes and the file was not regenerated)."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from scout_tui.config.models import Config
from scout_tui.publish.plan import PublishPlan
from scout_tui.report.schema import schema_of, schema_text

PLAN_FORMAT = "scout-plan/1"
PLAN_SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema" / "plan.schema.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlannedComment(_Strict):
    repo: str
    issue: int
    body: str  # exactly what would be posted, cut to GitHub's limit
    characters: int
    # today's report comment the publish would edit; null: it posts a new one (or the
    # board, and so the issue, was not read: see board_checked)
    edits: str | None = None


class PlannedDraft(_Strict):
    fingerprint: str
    title: str
    body: str


class PlannedStatus(_Strict):
    """The board's Status a new draft is set to once added."""

    fingerprint: str
    title: str
    status: str


class PlannedDraftUpdate(_Strict):
    """A dated status line added to the draft of a carried finding whose situation changed."""

    fingerprint: str
    title: str
    line: str


class PlanDocument(_Strict):
    format: str = PLAN_FORMAT
    date: date
    target: str  # where it goes and which configuration says so
    board: str  # owner/projects/N
    board_checked: bool  # False: duplicates were not looked for (`note` says why)
    note: str | None = None
    comment: PlannedComment
    drafts: list[PlannedDraft]
    duplicates: list[str]  # titles of findings already on the board: no draft
    status_sets: list[PlannedStatus]
    draft_updates: list[PlannedDraftUpdate]

    @classmethod
    def of(
        cls,
        plan: PublishPlan,
        config: Config,
        target: str,
        board_checked: bool,
        note: str | None,
        edits: str | None = None,
    ) -> PlanDocument:
        board = config.board
        return cls(
            date=plan.date,
            target=target,
            board=f"{board.owner}/projects/{board.number}",
            board_checked=board_checked,
            note=None if board_checked else note,
            comment=PlannedComment(
                repo=config.project.repo,
                issue=plan.tracking_issue,
                body=plan.report,
                characters=len(plan.report),
                edits=edits,
            ),
            drafts=[
                PlannedDraft(fingerprint=d.fingerprint, title=d.title, body=d.body)
                for d in plan.drafts
            ],
            duplicates=list(plan.duplicates),
            status_sets=[
                PlannedStatus(fingerprint=d.fingerprint, title=d.title, status=board.backlog_option)
                for d in plan.drafts
            ],
            draft_updates=[
                PlannedDraftUpdate(fingerprint=s.fingerprint, title=s.title, line=s.text)
                for s in plan.status_lines
            ],
        )


def render_schema() -> str:
    return schema_text(schema_of(PlanDocument, "plan.v1"))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else PLAN_SCHEMA_FILE
    target.write_text(render_schema(), encoding="utf-8")
    print(f"wrote {target}")
