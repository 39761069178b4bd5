"""One line: the checkout and day, online or offline (and why), the run's age, the rate
limit left, "N of M reviewed", what is marked, the filter, and whether a poorer run of the
day is kept apart."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from scout_tui.tui.legible import legible


def age(then: datetime | None, now: datetime) -> str:
    if then is None:
        return "not collected"
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 90:
        return "run just now"
    if seconds < 90 * 60:
        return f"run {seconds // 60} min ago"
    if seconds < 36 * 3600:
        return f"run {seconds // 3600} h ago"
    return f"run {seconds // 86400} days ago"


class StatusLine(Static):
    where = reactive("")
    online = reactive("")
    collected_at: reactive[datetime | None] = reactive(None)
    rate = reactive("")
    reviewed = reactive("")
    marked = reactive(0)
    filter_text = reactive("")
    busy = reactive("")
    kept_apart = reactive("")
    published_at: reactive[datetime | None] = reactive(None)  # the day's report, posted

    def counts(self, reviewed: int, total: int, marked: int) -> None:
        self.reviewed = f"{reviewed} of {total} reviewed"
        self.marked = marked

    def keep_apart(self, notice: str | None) -> None:
        """A poorer run is kept apart: said once in full, and kept on the line."""
        self.kept_apart = "poorer run kept apart" if notice else ""
        if notice:
            self.notify(notice, severity="warning", timeout=10)

    def clock(self) -> datetime:
        return datetime.now(UTC)

    def render(self) -> Text:
        return legible(self._fitted(), self.app.no_color)

    def _fitted(self) -> Text:
        """The whole line when it fits; at 80 columns over SSH, the least needed goes first
        (the rate, then the end of why it is offline, then the wide separators), so that
        online or offline always shows. The note that a poorer run is kept apart stays
        longer than all but online or offline: the run's age goes before it."""
        width = self.size.width or 10_000
        text = self._line(self.rate, self.online, "  ·  ", self.kept_apart)
        if text.cell_len <= width:
            return text
        if self.kept_apart:
            short = "offline" if self.online.startswith("offline") else self.online
            for online, separator, aged in (
                (self.online, "  ·  ", True),
                (short, "  ·  ", True),
                (short, " · ", True),
                (short, " · ", False),
            ):
                text = self._line("", online, separator, self.kept_apart, aged)
                if text.cell_len <= width:
                    return text
            text = self._line(self.rate, self.online, "  ·  ")
        for separator in ("  ·  ", " · "):
            if text.cell_len <= width:
                break
            text = self._line("", self.online, separator)
            if text.cell_len > width and self.online.startswith("offline"):
                room = width - self._line("", "", separator).cell_len - len(separator)
                reason = (
                    self.online
                    if room >= len(self.online)
                    else (self.online[: max(len("offline"), room - 1)].rstrip() + "…")
                )
                text = self._line("", reason if room > len("offline") else "offline", separator)
        if text.cell_len > width:  # 60 columns: the run's age goes, then the words
            online = "offline" if self.online.startswith("offline") else self.online
            for terse in (False, True):
                text = self._line("", online, " · ", aged=False, terse=terse)
                if text.cell_len <= width:
                    break
        return text

    def _line(
        self,
        rate: str,
        online: str,
        separator: str,
        kept_apart: str = "",
        aged: bool = True,
        terse: bool = False,
    ) -> Text:
        """`terse`: the experiment's name alone, and "3/27" for "3 of 27 reviewed"."""
        where = self.where.split("·")[-1].split()[0] if terse and self.where else self.where
        reviewed = self.reviewed
        if terse and reviewed.endswith(" reviewed"):
            reviewed = reviewed.removesuffix(" reviewed").replace(" of ", "/")
        text = Text(where, style="bold")
        if self.busy:
            text.append(f"  {self.busy}", style="yellow")
        published = ""
        if self.published_at is not None:
            published = "published" if terse else f"published {self.published_at:%H:%M} UTC"
        parts = [  # what matters most first: the line is cut at the terminal's edge
            (reviewed, "bold"),
            (f"{self.marked} marked" if self.marked else "", "magenta"),
            (published, "green"),
            (f"filter: {self.filter_text}" if self.filter_text else "", "cyan"),
            (age(self.collected_at, self.clock()) if aged else "", "dim"),
            (online, "green" if online == "online" else "red"),
            (rate, "dim"),
            (kept_apart, "yellow"),
        ]
        for value, style in parts:
            if value:
                text.append(separator, style="dim")
                text.append(value, style=style)
        return text
