"""Publishing from the console, as one flow: GitHub's status, the proposal (read off the
loop), the modal that asks what to publish, the publish with its progress, the preview.
Not drawn: it holds the flow and its workers; the screen decides when it may start (the
flow itself refuses a past day's run of a bundle, and any run while GitHub is offline) and
shows what it says (`Busy`) on the status line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from textual import work
from textual.message import Message
from textual.widget import Widget

from scout_tui.errors import redact
from scout_tui.history.baseline import is_past_day
from scout_tui.model import RunResult, TriageEntry
from scout_tui.session import Session
from scout_tui.tui.controllers.publish import PublishController
from scout_tui.tui.messages import GitHubStatus, Proposed, Published, PublishNote
from scout_tui.tui.proposal import dry_run_text
from scout_tui.tui.screens.preview import PreviewScreen
from scout_tui.tui.screens.publish import ConfirmPublish, PublishProgress


class PublishFlow(Widget):
    DEFAULT_CSS = "PublishFlow { display: none; }"

    @dataclass
    class Busy(Message):
        """What the flow is doing, for the status line ("" when it waits on no one)."""

        text: str

    def __init__(self, session: Session) -> None:
        super().__init__(id="publish-flow")
        self.session = session
        self.controller = PublishController(session, self.post_message)
        self.github_ok: bool | None = None  # None: not asked yet
        self.github_detail = ""  # why it is offline, or the rate limit left
        self.publishing = False  # from the confirmation until `Published`
        self._runs: dict[str, RunResult] = {}  # "all" and "reviewed": what may be published

    # -- GitHub's status ----------------------------------------------------------------------
    @work(thread=True, group="github", exit_on_error=False)
    def check_github(self) -> None:
        self.controller.check_github()

    def on_git_hub_status(self, message: GitHubStatus) -> None:
        """Kept here; the message goes on to the screen, which shows it."""
        self.github_ok = message.online
        self.github_detail = "--offline" if self.session.options.offline else message.detail

    # -- the flow -------------------------------------------------------------------------------
    def preview(self, run: RunResult) -> None:
        # What publishing would post, cut to GitHub's limit like the dry run: made in a
        # thread by the screen, which opens at once.
        self.app.push_screen(
            PreviewScreen(
                lambda: self.session.posted_markdown(run), "Report preview (as it will be posted)"
            )
        )

    def propose(
        self, run: RunResult, reviewed: RunResult, entries: Mapping[str, TriageEntry]
    ) -> bool:
        """Ask GitHub what publishing `run` (or only its `reviewed` findings) would do, then
        the reviewer. Never a past day's run of a bundle, nor without GitHub. Whether it
        asks (then `Busy("")` says when the question is up, or why there is none)."""
        if self.session.bundle is not None and is_past_day(run.date):
            self.notify(
                f"the run of {run.date} is a past day's (a replay, an old "
                "bundle): it is reviewed here, never published",
                severity="error",
                timeout=6,
            )
            return False
        if self.github_ok is False:
            self.notify(
                f"publishing needs GitHub: {self.github_detail}", severity="error", timeout=6
            )
            return False
        self._runs = {"all": run, "reviewed": reviewed}
        self.post_message(self.Busy("preparing the publish…"))
        self._propose(run, reviewed, entries)
        return True

    @work(thread=True, group="publish", exit_on_error=False)
    def _propose(
        self, run: RunResult, reviewed: RunResult, entries: Mapping[str, TriageEntry]
    ) -> None:
        try:
            self.controller.propose(run, reviewed, entries)
        except Exception as exc:  # a bug must not leave "preparing the publish…" up for good
            self.post_message(Proposed(None, f"{type(exc).__name__}: {redact(str(exc))}"))
            raise

    def on_proposed(self, message: Proposed) -> None:
        self.post_message(self.Busy(""))
        proposal = message.proposal
        if proposal is None:
            self.notify(f"cannot publish: {message.error}", severity="error", timeout=10)
            return

        def chosen(choice: str | None) -> None:
            if choice is None:
                self.notify("nothing published", timeout=2)
            elif choice == "dry":  # then back to the question, not out of the flow
                self.app.push_screen(
                    PreviewScreen(dry_run_text(proposal), "Dry run: nothing is sent"),
                    lambda _: self.app.push_screen(ConfirmPublish(proposal), chosen),
                )
            else:
                run = self._runs["reviewed" if choice == "reviewed" else "all"]
                self.app.push_screen(PublishProgress(f"Publishing {proposal.plan.summary()}…"))
                self.publishing = True
                self._publish(run)

        self.app.push_screen(ConfirmPublish(proposal), chosen)

    @work(thread=True, group="publish", exit_on_error=False)
    def _publish(self, run: RunResult) -> None:
        self.controller.publish(run)

    def on_publish_note(self, message: PublishNote) -> None:
        if isinstance(self.app.screen, PublishProgress):
            self.app.screen.add_line(message.line)

    def on_published(self, message: Published) -> None:
        self.publishing = False
        if isinstance(self.app.screen, PublishProgress):
            self.app.screen.finish(message.title, message.markdown)
        else:
            self.app.push_screen(PreviewScreen(message.markdown, message.title))
        self.post_message(self.Busy(""))
