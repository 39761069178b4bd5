"""A CI log of any size, scrolled line by line: the Line API renders only the rows in view,
fetched by number from a `LogIndex` (a sparse index of the file, see its module).

The scan and the searches run in thread workers that never touch a widget: they post the
small messages below, which the widget handles and which bubble up to its screen.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from dataclasses import dataclass

from rich.segment import Segment
from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from scout_tui.analysis.ci.logindex import LogIndex, is_experiment_line

CACHED_STRIPS = 1024  # rendered rows kept: a few screens, scrolled back and forth
PROGRESS_STEP = 0.01  # the scan reports at most every 1%
# GitHub Actions puts one on every line: dimmed, so the line's own words stand out.
STAMPS_WIDTH = 100
TIMESTAMP = re.compile(r"^\ufeff?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z ")
ROOT_MARK, FAILURE_MARK = "▶", "✗"


class LogView(ScrollView, can_focus=True):
    """The lines of a `LogIndex`, with a line-number gutter. The experiment's lines are
    bold yellow, failures are marked in the gutter, the root-cause line and the line the
    last jump landed on (a failure, a search match) are highlighted."""

    BINDING_GROUP_TITLE = "Log"
    BINDINGS = [
        Binding("g", "root_cause", "Root cause", id="log_root_cause"),
        # Short words: at 80 columns the footer holds these, timestamps and how to close.
        Binding("f", "next_failure", "Failure", id="log_next_failure"),
        Binding("F", "previous_failure", "Previous failure", show=False, id="log_previous_failure"),
        Binding("n", "next_match", "Match", id="log_next_match"),
        Binding("N", "previous_match", "Previous match", show=False, id="log_previous_match"),
        Binding("home", "first_line", "First line", show=False, id="log_first_line"),
        Binding("end", "last_line", "Last line", show=False, id="log_last_line"),
        Binding("t", "toggle_timestamps", "Timestamps", id="log_timestamps"),
    ]
    COMPONENT_CLASSES = {
        "log-view--gutter",
        "log-view--failure",
        "log-view--root",
        "log-view--current",
        "log-view--experiment",
        "log-view--timestamp",
        "log-view--found",
    }
    DEFAULT_CSS = """
    LogView { background: $surface; }
    LogView > .log-view--gutter { color: $text-muted; }
    LogView > .log-view--failure { color: $error; text-style: bold; }
    LogView > .log-view--root { background: $error 30%; }
    LogView > .log-view--current { background: $accent 30%; }
    LogView > .log-view--experiment { color: yellow; text-style: bold; }
    LogView > .log-view--timestamp { color: $text-muted; }
    LogView > .log-view--found { background: $warning 60%; }
    """

    # -- messages from the thread workers ---------------------------------------------------
    @dataclass
    class ScanProgress(Message):
        fraction: float

    @dataclass
    class Scanned(Message):
        size: int
        line_count: int
        root_line: int | None

    @dataclass
    class ScanFailed(Message):
        error: str

    @dataclass
    class FailuresFound(Message):
        lines: list[int]

    @dataclass
    class Moved(Message):
        """A jump landed on `line` (a failure, a match, the root cause)."""

        line: int

    @dataclass
    class SearchFinished(Message):
        text: str
        line: int | None  # None: no match (or the search failed: see `error`)
        error: str | None = None

    def __init__(
        self,
        index: LogIndex,
        *,
        experiment: str = "",
        root_offset: int | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.index = index
        self.experiment = experiment
        self.root_offset = root_offset
        self.root_line: int | None = None
        self.failures: list[int] = []
        self.current_line: int | None = None  # where the last jump landed
        self.search_text = ""
        self.scanned = False
        self.failures_at: dict[int, int] = {}  # a failure's line → its place among them
        self._strips: OrderedDict[tuple, Strip] = OrderedDict()
        self._widest = 0  # the widest line rendered so far, gutter included
        self._width_pending = False
        self._moved = False  # the reader jumped: the scan's end no longer moves the view
        # CI's timestamps: None shows them when the view is STAMPS_WIDTH wide or more (a
        # narrow one keeps its columns for the message); `t` decides.
        self.timestamps: bool | None = None

    # -- scan ---------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self._scan(self.index, self.root_offset)

    @work(thread=True, exclusive=True, group="log-scan")
    def _scan(self, index: LogIndex, root_offset: int | None) -> None:
        worker = get_current_worker()
        reported = -PROGRESS_STEP

        def progress(fraction: float) -> None:
            nonlocal reported
            if fraction - reported >= PROGRESS_STEP:
                reported = fraction
                self.post_message(self.ScanProgress(fraction))

        try:
            if not index.scan(progress, cancelled=lambda: worker.is_cancelled):
                return
            root_line = index.line_of(root_offset) if root_offset is not None else None
        except OSError as error:
            if not worker.is_cancelled:
                self.post_message(self.ScanFailed(describe(error, index)))
            return
        self.post_message(self.Scanned(index.size, index.line_count, root_line))
        try:
            failures = index.failure_lines()
        except OSError:
            failures = []  # the lines are there: only the failure marks are missing
        if not worker.is_cancelled:
            self.post_message(self.FailuresFound(failures))

    def on_log_view_scanned(self, message: Scanned) -> None:
        self.scanned = True
        self.root_line = message.root_line
        self._widest = max(self._widest, self._gutter_width() + 1)
        self.virtual_size = Size(self._widest, message.line_count)
        self._forget_strips()
        if message.root_line is not None:
            # After the next refresh: a scan of a file in the page cache can end before
            # the view has its size, and a jump made then lands on line 1.
            self.call_after_refresh(self._go_unless_moved, message.root_line)

    def _go_unless_moved(self, line: int, tries: int = 20) -> None:
        if self._moved:
            return
        if not self.scrollable_content_region.height and tries:
            self.call_after_refresh(self._go_unless_moved, line, tries - 1)  # no size yet
            return
        self.go_to_line(line, by_reader=False)

    def on_log_view_failures_found(self, message: FailuresFound) -> None:
        self.failures = message.lines
        self.failures_at = {line: n for n, line in enumerate(message.lines)}
        self._forget_strips()
        if self.root_line is None and not self._moved:
            if message.lines:
                self.call_after_refresh(self._go_unless_moved, message.lines[0])
            else:
                self._show_end()

    # -- moving -------------------------------------------------------------------------------
    @property
    def visible_lines(self) -> range:
        top = round(self.scroll_y)
        height = self.scrollable_content_region.height
        return range(top, min(top + height, self.index.line_count))

    def go_to_line(self, line: int, *, by_reader: bool = True) -> None:
        """Show `line` (a third down the view unless it is in view already) and mark it."""
        if not self.scanned or not self.index.line_count:
            return
        line = min(max(0, line), self.index.line_count - 1)
        self._moved = self._moved or by_reader
        self.current_line = line
        self.post_message(self.Moved(line))
        if line not in self.visible_lines:
            height = self.scrollable_content_region.height
            # force: just after the scan, the scrollbars (which allow a scroll) lag behind
            self.scroll_to(y=max(0, line - height // 3), animate=False, force=True)
        self.refresh()  # the strips' cache key holds whether a line is the current one

    def _anchor(self) -> tuple[int, int]:
        """The lines the next and the previous jump start after and before: the current
        line while it is in view, else the view's first line."""
        visible = self.visible_lines
        if self.current_line is not None and self.current_line in visible:
            return self.current_line, self.current_line
        return visible.start - 1, visible.start

    def action_root_cause(self) -> None:
        if self.root_line is not None:
            self.go_to_line(self.root_line)
        elif self.failures:
            self.go_to_line(self.failures[0])
        else:
            self.notify("No root cause or failure in this log", severity="warning")

    def action_next_failure(self) -> None:
        after, _ = self._anchor()
        index = bisect_right(self.failures, after)
        if index < len(self.failures):
            self.go_to_line(self.failures[index])
        else:
            self.notify("No failure further down", severity="warning")

    def action_previous_failure(self) -> None:
        _, before = self._anchor()
        index = bisect_left(self.failures, before)
        if index > 0:
            self.go_to_line(self.failures[index - 1])
        else:
            self.notify("No failure further up", severity="warning")

    def action_first_line(self) -> None:
        """The log's start: its first line, from its first column."""
        self._moved = True
        self.scroll_to(x=0, y=0, animate=False, force=True)

    def action_last_line(self) -> None:
        self._moved = True
        self._show_end()

    def _show_end(self) -> None:
        self.scroll_to(y=self.index.line_count, animate=False, force=True)  # the last page

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_page_up(self) -> None:
        self.scroll_page_up(animate=False)

    # -- search -------------------------------------------------------------------------------
    def search(self, text: str, *, backwards: bool = False) -> None:
        """Look for `text` (case-insensitive) after the current line, or before it; the
        answer comes back as a `SearchFinished` message."""
        if not text or not self.scanned:
            return
        if text != self.search_text:
            self.search_text = text
            self._forget_strips()
        after, before = self._anchor()
        self._search(self.index, text, before if backwards else after, backwards)

    @work(thread=True, exclusive=True, group="log-search")
    def _search(self, index: LogIndex, text: str, from_line: int, backwards: bool) -> None:
        worker = get_current_worker()
        try:
            line = index.search(text, from_line, backwards, cancelled=lambda: worker.is_cancelled)
        except OSError as error:
            self.post_message(self.SearchFinished(text, None, describe(error, index)))
            return
        if not worker.is_cancelled:
            self.post_message(self.SearchFinished(text, line))

    def on_log_view_search_finished(self, message: SearchFinished) -> None:
        if message.line is not None and message.text == self.search_text:
            self.go_to_line(message.line)

    def action_next_match(self) -> None:
        if self.search_text:
            self.search(self.search_text)

    def action_previous_match(self) -> None:
        if self.search_text:
            self.search(self.search_text, backwards=True)

    # -- rendering ----------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._forget_strips()

    def _forget_strips(self) -> None:
        self._strips.clear()
        self.refresh()

    def _gutter_width(self) -> int:
        return 1 + len(str(max(1, self.index.line_count))) + 1  # mark, number, space

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        width = self.scrollable_content_region.width
        if not self.scanned or line >= self.index.line_count:
            return Strip.blank(width, self.rich_style)
        stamps = self._stamps_shown(width)
        key = (line, width, scroll_x, line == self.current_line, stamps)
        strip = self._strips.get(key)
        if strip is not None:
            self._strips.move_to_end(key)
            return strip
        strip = self._strip_of(line, width, scroll_x, stamps)
        self._strips[key] = strip
        while len(self._strips) > CACHED_STRIPS:
            self._strips.popitem(last=False)
        return strip

    def _stamps_shown(self, width: int) -> bool:
        return self.timestamps if self.timestamps is not None else width >= STAMPS_WIDTH

    def action_toggle_timestamps(self) -> None:
        self.timestamps = not self._stamps_shown(self.scrollable_content_region.width)
        self.scroll_to(x=0, animate=False, force=True)  # the lines' starts moved: from there
        self.refresh()

    def _strip_of(self, line: int, width: int, scroll_x: int, stamps: bool = True) -> Strip:
        base = self.rich_style
        try:
            texts = self.index.lines(line, 1)
            text = texts[0] if texts else ""
        except OSError as error:  # the file went away under the viewer
            text = f"cannot read this line: {describe(error, self.index)}"
        gutter_width = self._gutter_width()
        if line == self.root_line:
            mark, mark_style = ROOT_MARK, self.get_component_rich_style("log-view--failure")
        elif line in self.failures_at:
            mark, mark_style = FAILURE_MARK, self.get_component_rich_style("log-view--failure")
        else:
            mark, mark_style = " ", base
        number = f"{line + 1:>{gutter_width - 2}} "
        gutter = Strip(
            [
                Segment(mark, mark_style),
                Segment(number, self.get_component_rich_style("log-view--gutter")),
            ],
            gutter_width,
        )

        stamp = TIMESTAMP.match(text)
        if stamp and not stamps:
            text, stamp = text[stamp.end() :], None
        body = Text(text, style=base, no_wrap=True, end="")
        if stamp:
            body.stylize(self.get_component_rich_style("log-view--timestamp"), 0, stamp.end())
        if is_experiment_line(text, self.experiment):
            body.stylize(self.get_component_rich_style("log-view--experiment"))
        if self.search_text:
            body.highlight_words(
                [self.search_text],
                self.get_component_rich_style("log-view--found", partial=True),
                case_sensitive=False,
            )
        pad = base
        for component, applies in (
            ("log-view--root", line == self.root_line),
            ("log-view--current", line == self.current_line),
        ):
            if applies:
                highlight = self.get_component_rich_style(component, partial=True)
                body.stylize_before(highlight)
                pad += highlight
        rendered = Strip(body.render(self.app.console), body.cell_len)
        self._note_width(gutter_width + rendered.cell_length)
        rendered = rendered.crop_extend(scroll_x, scroll_x + width - gutter_width, pad)
        return Strip.join([gutter, rendered]).simplify()

    def _note_width(self, width: int) -> None:
        """Grow the virtual width to the widest line seen, after this frame is drawn."""
        if width > self._widest:
            self._widest = width
            if not self._width_pending:
                self._width_pending = True
                self.call_after_refresh(self._apply_width)

    def _apply_width(self) -> None:
        self._width_pending = False
        self.virtual_size = Size(self._widest, self.index.line_count)


def describe(error: OSError, index: LogIndex) -> str:
    """`cannot read PATH: No such file or directory`, for one line of the screen."""
    return f"cannot read {index.path}: {error.strerror or error}"
