"""A modal that answers once."""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen

ResultType = TypeVar("ResultType")


class Modal(ModalScreen[ResultType]):
    def answer(self, result: ResultType) -> None:
        """Dismissed with `result`, once: keys read in the same burst as the one that
        answered (over SSH, `x reason enter x reason enter`) reach the modal after it closed
        and must not answer again — Textual would pop a screen no longer there."""
        if self.is_current:
            self.dismiss(result)
