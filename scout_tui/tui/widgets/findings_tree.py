"""The Section → Priority → Finding tree, with counts and badges, and the triage keys.

The tree holds the run's rows (every finding as decided, shown or filtered out), shows,
moves and marks, and relabels alone the findings a decision changed; a triage key runs the
screen's action, which applies it to `targets()` (the marked findings, else the cursor's)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Span, Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from scout_tui.model import PRIORITIZED, SECTIONS, Finding, Priority, Section, TriageEntry
from scout_tui.tui.keys import binding
from scout_tui.tui.legible import legible
from scout_tui.tui.screens.modal import resend, typed
from scout_tui.tui.view import (
    PRIORITY_ORDER,
    Filter,
    Group,
    Row,
    SectionView,
    reviewed_count,
    rows_of,
    sections,
)

TRIAGE_ACTIONS = (
    "accept",
    "accept_next",
    "demote",
    "promote",
    "drop",
    "merge",
    "edit",
    "edit_external",
)
BADGE_STYLES = {
    "new": "bold green",
    "dropped": "red",
    "accepted": "cyan",
    "demoted": "yellow",
    "promoted": "magenta",
    "edited": "blue",
}
PRIORITY_STYLES = {Priority.P0: "bold red", Priority.P1: "yellow", Priority.P2: "cyan"}


@dataclass(frozen=True)
class NodeData:
    section: Section
    fingerprint: str | None = None  # None: a section or priority node
    priority: Priority | None = None  # a priority node's


# What the reviewer did, at a glance and without colour: accepted (as is or changed) ✓,
# merged ⇢, dropped ✗; ● is a mark.
STATE_GLYPHS = {"dropped": "✗", "merged": "⇢"}
# Nodes added before the first paint: more lines than any terminal shows; the rest (up to
# thousands) once that frame is drawn.
FIRST_SCREEN = 200
BADGE_COLUMN = (10, 24)  # the badge column's narrowest and widest
NARROWEST_TITLE = 16  # below this, the badges give way to the title
SHORTEST_BADGE = 5  # cells a cut badge needs to say something ("sinc…")


def finding_label(
    row: Row, marked: bool, grouped: bool = False, width: int | None = None, column: int = 0
) -> Text:
    """A finding's line: its state, priority (unless its priority node says it), title and
    badges. With `width` (the cells the line may take), the title is cut with "…" and the
    badges stand in the last `column` cells (`badge_column` of the tree's width: the same
    for every line, whatever its depth)."""
    finding = row.finding
    glyph = STATE_GLYPHS.get(row.decided.label, "✓" if row.reviewed else " ")
    style = "bold magenta" if marked else ("red" if glyph == "✗" else "green")
    # A mark beside the decision's glyph, never over it: a marked drop still shows ✗.
    parts: list[tuple[str, str]] = [(f"●{glyph}" if marked else f"{glyph} ", style)]
    if finding.priority is not None and not grouped:
        parts.append((f"[{finding.priority.value}] ", PRIORITY_STYLES[finding.priority]))
    struck = row.decided.label in ("dropped", "merged")
    title = " ".join(finding.title.replace("`", "").split())
    title_style = "dim strike" if struck else ""
    if width is None:
        parts.append((title, title_style))
        parts += [(f" {badge}", _badge_style(badge)) for badge in row.badges]
        return _assembled(parts)
    room = width - sum(cell_len(piece) for piece, _ in parts)
    if room - column - 1 < NARROWEST_TITLE:
        column = 0
    title_room = room - column - (1 if column else 0)
    parts.append((_fitted(title, title_room), title_style))
    if column:
        parts.append((" ", ""))
        left = column
        for n, badge in enumerate(row.badges):
            piece = _fitted(("" if n == 0 else " ") + badge, left, pad=False)
            if not piece:
                break
            parts.append((piece, _badge_style(badge)))
            left -= cell_len(piece)
    return _assembled(parts)


def leaf_label(row: Row) -> Text:
    """What a finding's node holds as its label: its title alone. The line itself is drawn
    by `render_label` at the tree's width when it shows; 5,000 full labels built up front
    would cost the first paint for lines nobody sees yet."""
    return Text(" ".join(row.finding.title.replace("`", "").split()), end="")


def badge_column(width: int, widest: int) -> int:
    """The badge column's width in a tree `width` cells wide whose widest badges take
    `widest` cells: what they need, up to a third of the tree (at least BADGE_COLUMN[0])
    and what the deepest line (two guides and `✓ [P1] `) leaves past NARROWEST_TITLE for
    its title; 0 when that room is too little to say anything. Whether there is a column
    depends on the width alone: a decision's badge never makes every badge vanish."""
    room = width - 4 - 7 - 1 - NARROWEST_TITLE
    if widest <= 0 or room < SHORTEST_BADGE:
        return 0
    cap = max(BADGE_COLUMN[0], min(BADGE_COLUMN[1], width // 3))
    return min(widest, cap, room)


def _line(row: Row) -> tuple[object, ...]:
    """All that a finding's line in the tree shows, and where."""
    finding = row.finding
    return (
        row.fingerprint,
        finding.section,
        finding.priority,
        finding.title,
        row.badges,
        row.reviewed,
    )


def _grouped(view: SectionView, group: Group) -> bool:
    """Whether the group's findings sit under a priority header of their own."""
    return group.priority is not None and view.section in PRIORITIZED and len(view.groups) > 1


def badges_cells(row: Row) -> int:
    return cell_len(" ".join(row.badges))


def _badge_style(badge: str) -> str:
    return BADGE_STYLES.get(badge.split()[0], "dim")


def _fitted(text: str, width: int, pad: bool = True) -> str:
    """`text` in `width` cells: cut with "…", or padded with spaces when `pad`."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width) if pad else text


def _assembled(parts: list[tuple[str, str]]) -> Text:
    """One Text from styled pieces, its spans computed at once (5,000 labels are built
    at every rebuild: Text.append per piece costs three times as much)."""
    spans, offset = [], 0
    for piece, style in parts:
        if style:
            spans.append(Span(offset, offset + len(piece), style))
        offset += len(piece)
    return Text("".join(piece for piece, _ in parts), spans=spans, end="")


def section_label(section: Section, reviewed: int, count: int) -> Text:
    label = Text(SECTIONS[section].short, style="bold")
    label.append(f" {count}", style="dim")
    if section is not Section.ALL_CLEAR:
        label.append(f"  {reviewed}/{count} reviewed", style="dim")
    return label


# How long after a dialog's key that found nothing to act on the keys typed with it (its
# answer, up to an enter) are skipped: a burst, not the reviewer's next deliberate key.
SKIP_TYPED_ANSWER = 0.3


class FindingsTree(Tree[NodeData]):
    BINDING_GROUP_TITLE = "Triage"
    BINDINGS = [
        *(binding(action, on="screen") for action in (*TRIAGE_ACTIONS, "undo", "redo")),
        binding("mark"),
        binding("mark_filtered"),
        binding("next_unreviewed"),
        Binding("enter", "toggle_node", "Open/close", show=False),
    ]
    _held: list[events.Key] | None = None  # keys waiting for a dialog that comes later
    _skip_until = 0.0  # (monotonic) keys typed for a dialog that did not open, skipped

    @dataclass
    class FindingHighlighted(Message):
        fingerprint: str | None

    @dataclass
    class MarksChanged(Message):
        marked: int

    _adding = False  # show() adds thousands of nodes: one invalidation, not one each
    _resizing = False  # a resize: drawn anew, not listed again

    def __init__(self, **kwargs) -> None:
        super().__init__("Findings", **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self.marked: set[str] = set()
        self._cursor_chosen = False  # a key or a click moved it: rebuilds keep it where it is
        self.filed: frozenset[str] = frozenset()  # drafts filed by publishes from here
        self._finding_rows: dict[str, Row] = {}
        self._grouped: dict[str, bool] = {}
        self._section_counts: dict[Section, list[int]] = {}  # reviewed, shown
        self._dirty_sections: set[Section] = set()
        self._finding_nodes: dict[str, TreeNode[NodeData]] = {}
        self._rest: Iterator[bool] | None = None  # nodes the first paint left for later
        self._widest_badges = 0  # cells the widest badges of a line take
        self._collapsed: set[str] = {Section.ALL_CLEAR.value}
        self.rows: list[Row] = []  # every finding of the run, shown or filtered out
        self._row_index: dict[str, int] = {}
        self._titles: dict[str, str] = {}
        self.reviewed = self.total = 0  # over every row: "N of M reviewed"

    # -- Tree's hooks, made cheap for thousands of nodes ---------------------------------------
    def _invalidate(self) -> None:
        if self._resizing:  # drawn anew at the new size; the lines listed stay as they are
            self._resizing = False
            self._line_cache.clear()
            self.refresh()
        elif not self._adding:
            super()._invalidate()

    def _on_resize(self, event: events.Resize) -> None:
        # Tree's own handler, after this one, lists every line again (5,000 nodes: 40 ms
        # for a filter box opened): a size changes how lines are drawn, not which there are.
        self._resizing = True

    def notify_style_update(self) -> None:
        """A style change (focus recolours the border) changes how lines look, never which
        lines there are: Tree's own rebuilds the list of every line (5,000 nodes, 40 ms a
        tab)."""
        super(Tree, self).notify_style_update()
        self._line_cache.clear()  # the drawn lines; the list of lines stays
        self.refresh()

    def process_label(self, label: str | Text) -> Text:
        # Our labels are one-line Texts already: Tree's own splits and copies each, twice.
        if isinstance(label, Text) and "\n" not in label.plain:
            return label
        return super().process_label(label)

    def render_label(self, node: TreeNode[NodeData], base_style: Style, style: Style) -> Text:
        # A finding's line is laid out for the width it has, when it is drawn: only the
        # lines on screen are, and a resize redraws them (Tree keys its cache on width).
        data = node.data
        row = self._finding_rows.get(data.fingerprint) if data and data.fingerprint else None
        if row is None:  # a header: cut with "…" where the tree ends, never mid-word bare
            label = super().render_label(node, base_style, style)
            room = self.scrollable_content_region.width - self._indent(node)
            if label.cell_len > room and label.plain.endswith(" reviewed"):
                label.right_crop(len(" reviewed"))  # "0/2" says it where "reviewed" won't fit
            if label.cell_len > room > 1:
                label.truncate(room, overflow="ellipsis")
            return label
        fingerprint = row.fingerprint
        width = self.scrollable_content_region.width
        label = finding_label(
            row,
            fingerprint in self.marked,
            self._grouped.get(fingerprint, False),
            width - self._indent(node),
            badge_column(width, self._widest_badges),
        )
        label.stylize(style)
        return legible(label, self.app.no_color)

    def _indent(self, node: TreeNode[NodeData]) -> int:
        """The cells the guides take left of a node's label (the root is not shown)."""
        depth, parent = 0, node.parent
        while parent is not None and parent is not self.root:
            depth, parent = depth + 1, parent.parent
        return depth * max(2, self.guide_depth)

    def get_label_width(self, node: TreeNode[NodeData]) -> int:
        # What render_label would measure, without rendering: the label and the toggle icon.
        icon = (
            (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
            if node.allow_expand
            else ""
        )
        return len(icon) + node._label.cell_len

    # -- building ---------------------------------------------------------------------------
    def show_findings(
        self, findings: list[Finding], entries: dict[str, TriageEntry], keep: Filter | None
    ) -> None:
        """The run's findings as decided; those `keep` matches (every one when None) shown."""
        self.rows = rows_of(findings, entries, filed=self.filed)
        self._row_index = {row.fingerprint: n for n, row in enumerate(self.rows)}
        self._titles = {row.fingerprint: row.finding.title for row in self.rows}
        self.show(sections(self.rows, keep))
        self.reviewed, self.total = reviewed_count(self.rows)

    def take_findings(
        self, findings: list[Finding], entries: dict[str, TriageEntry], keep: Filter | None
    ) -> bool:
        """The shown findings again, whole (a glance's rows by the whole run's): the rows
        replaced under the same nodes when every line reads the same, as a rebuild of 5,000
        nodes is what the moment after the first paint must not cost. False: a line
        differs (or a filter is on), `show_findings` must rebuild."""
        self.finish_building()
        rows = rows_of(findings, entries, filed=self.filed)
        if keep or [_line(row) for row in rows] != [_line(row) for row in self.rows]:
            return False
        self.rows = rows
        by_fingerprint = {row.fingerprint: row for row in rows}
        self._finding_rows = {fp: by_fingerprint[fp] for fp in self._finding_rows}
        return True

    def relabel(
        self,
        changed: set[str],
        entries: dict[str, TriageEntry],
        before: dict[str, TriageEntry],
    ) -> set[str] | None:
        """Findings whose decision changed but not their place: relabelled alone (a rebuild
        of 5,000 nodes is what a keypress must not cost). The findings relabelled (a merge's
        target too); None: `show_findings` again. Every row must be shown (no filter)."""
        self.finish_building()
        if not changed:
            return changed
        index = self._row_index
        if not changed <= index.keys():
            return None
        changed = set(changed)
        # A merge changes its target's badge too.
        for fp in list(changed):
            for entry in (entries.get(fp), before.get(fp)):
                if entry is not None and entry.merged_into in index:
                    changed.add(entry.merged_into)
        fresh = rows_of(
            [self.rows[index[fp]].decided.original for fp in changed],
            entries,
            self._titles,
            self.filed,
        )
        moved = [
            row
            for row in fresh
            if (row.finding.section, row.finding.priority)
            != (
                self.rows[index[row.fingerprint]].finding.section,
                self.rows[index[row.fingerprint]].finding.priority,
            )
        ]
        # A finding demoted or promoted moves alone, when the groups it leaves and joins
        # are there before and after; else (a group appears or empties) the tree is rebuilt.
        if len(moved) > 1 or (moved and not self._movable(moved[0])):
            return None
        # A new title is a new place among its group's (by title): rebuilt.
        if any(
            row.finding.title != self.rows[index[row.fingerprint]].finding.title for row in fresh
        ):
            return None
        for row in fresh:
            old_row = self.rows[index[row.fingerprint]]
            if row.finding.section is not Section.ALL_CLEAR:
                self.reviewed += int(row.reviewed) - int(old_row.reviewed)
            self.rows[index[row.fingerprint]] = row
            if any(row is m for m in moved):
                self._move(row, old_row)
            else:
                self.refresh_row(row)
        self.refresh_counts()
        return changed

    def _titles_now(self, fingerprint: str) -> str:
        return self.rows[self._row_index[fingerprint]].finding.title

    def _group_node(
        self, section: Section, priority: Priority | None, create: bool = False
    ) -> TreeNode[NodeData] | None:
        """Where a finding of `section` and `priority` hangs: its priority node, or its
        section's node when the section shows one group of that priority; None: nowhere yet.
        `create`: a section shown by priority gets the missing priority's node, in order."""
        home = next(
            (n for n in self.root.children if n.data is not None and n.data.section is section),
            None,
        )
        if home is None:
            return None
        groups = [c for c in home.children if c.data is not None and c.data.fingerprint is None]
        if groups:
            found = next((g for g in groups if g.data and g.data.priority is priority), None)
            if found is not None or priority is None or not create:
                return found
            return self._new_group(home, priority)
        leaves = [self._finding_rows.get(c.data.fingerprint or "") for c in home.children if c.data]
        one = {row.finding.priority for row in leaves if row is not None}
        return home if one == {priority} or section not in PRIORITIZED else None

    def _new_group(self, home: TreeNode[NodeData], priority: Priority) -> TreeNode[NodeData]:
        """A priority node under the section `home`, before the first group (or line) that
        ranks after it: where a rebuild would put it."""

        def rank(child: TreeNode[NodeData]) -> int:
            data = child.data
            if data is not None and data.fingerprint is not None:
                row = self._finding_rows.get(data.fingerprint)
                return PRIORITY_ORDER.index(row.finding.priority if row else None)
            return PRIORITY_ORDER.index(data.priority if data else None)

        place = PRIORITY_ORDER.index(priority)
        before = next((c for c in home.children if rank(c) > place), None)
        assert home.data is not None
        return home.add(
            Text(priority.value, style=PRIORITY_STYLES[priority]),
            NodeData(home.data.section, priority=priority),
            before=before,
            expand=True,
        )

    def _movable(self, row: Row) -> bool:
        node = self._finding_nodes.get(row.fingerprint)
        parent = node.parent if node is not None else None
        section, priority = row.finding.section, row.finding.priority
        target = self._group_node(section, priority)
        # It stays in its section, shown by priority (it leaves a priority node): the new
        # priority's node can be added.
        can_add = (
            target is None
            and priority is not None
            and section in PRIORITIZED
            and parent is not None
            and parent.data is not None
            and parent.data.section is section
            and parent.data.fingerprint is None
            and parent.data.priority is not None
        )
        return (
            node is not None
            and parent is not None
            and (target is not None or can_add)
            and target is not parent
            and (len(parent.children) > 1 or self._still_by_priority(row, parent))
        )

    def _still_by_priority(self, row: Row, left: TreeNode[NodeData]) -> bool:
        """Whether the priority node `row` leaves empty can go while its section stays shown
        by priority (two priorities or more still): a rebuild would show just that."""
        data = left.data
        if data is None or data.fingerprint is not None or data.priority is None:
            return False
        section = row.finding.section
        priorities = {
            other.finding.priority
            for fp, other in self._finding_rows.items()
            if other.finding.section is section and fp != row.fingerprint
        }
        return section is data.section and len(priorities | {row.finding.priority}) > 1

    def _move(self, row: Row, old_row: Row) -> None:
        """One finding to its new group, in the run's order there; counts follow."""
        node = self._finding_nodes[row.fingerprint]
        parent = node.parent
        self._adding = True
        try:
            target = self._group_node(row.finding.section, row.finding.priority, create=True)
        finally:
            self._adding = False
        assert parent is not None and target is not None
        under_cursor = self.cursor_node is node
        # Where a rebuild puts it: by title, as the report lists them (ties in run order).
        place = (row.finding.title, self._row_index[row.fingerprint])
        before = next(
            (
                child
                for child in target.children
                if child.data is not None
                and (fp := child.data.fingerprint) is not None
                and (self._finding_rows[fp].finding.title, self._row_index[fp]) > place
            ),
            None,
        )
        grouped = (
            target.data is not None
            and target.data.fingerprint is None
            and (target.parent is not self.root)
        )
        self._adding = True
        try:
            node.remove()
            if not parent.children and parent.parent is not None:  # its priority's last
                parent.remove()
            moved = target.add_leaf(
                leaf_label(row),
                NodeData(row.finding.section, row.fingerprint),
                before=before,
            )
        finally:
            self._adding = False
        self._invalidate()
        self._finding_nodes[row.fingerprint] = moved
        self._finding_rows[row.fingerprint] = row
        self._widen_badges(row)
        self._grouped[row.fingerprint] = grouped
        for group in (parent, target):
            data = group.data
            if (
                group.children
                and data is not None
                and data.priority is not None
                and group.parent is not self.root
            ):
                head = Text(data.priority.value, style=PRIORITY_STYLES[data.priority])
                head.append(f" {len(group.children)}", style="dim")
                group.set_label(head)
        for section, row_now, sign in (
            (old_row.finding.section, old_row, -1),
            (row.finding.section, row, +1),
        ):
            count = self._section_counts[section]
            count[1] += sign
            if row_now.reviewed and section is not Section.ALL_CLEAR:
                count[0] += sign
            self._dirty_sections.add(section)
        if under_cursor:  # followed now: the next key moves on from where it went
            self._place_cursor(moved, -1)

    def show(self, views: list[SectionView]) -> None:
        """Rebuild from the grouped rows, keeping the cursor's finding, the open sections
        and the marks."""
        keep = self.cursor_fingerprint
        line = self.cursor_line
        cursor = self.cursor_node
        # Where the cursor goes if its finding is no longer shown (an edit or a decision
        # took it out of the filter): the finding after it, else the one before.
        order = _leaves(self.root) if keep is not None else []
        at = order.index(keep) if keep in order else 0
        nearest = order[at + 1 :] + order[:at][::-1]
        # A section or priority header under the cursor stays under it when still shown.
        header = (
            (cursor.data.section, cursor.data.priority, cursor.parent is self.root)
            if cursor is not None and cursor.data is not None and keep is None
            else None
        )
        for node in self.root.children:
            if node.data is not None and node.data.fingerprint is None:
                (self._collapsed.discard if node.is_expanded else self._collapsed.add)(
                    node.data.section.value
                )
        first_paint = not self._finding_rows
        self._rest = None  # a first paint's nodes still to add: of the tree now cleared
        self.clear()
        self._adding = True
        try:
            self._add_views(views, first_paint)
        finally:
            self._adding = False
        self._invalidate()
        self.marked &= set(self._row_index)  # a filter hides marks, never drops them
        target = self._finding_nodes.get(keep) if keep else None
        if target is None and keep is not None:
            target = next(
                (self._finding_nodes[fp] for fp in nearest if fp in self._finding_nodes), None
            )
        if target is None and header is not None:
            target = self._header(*header)
        if target is None and self._finding_nodes and (keep is not None or line <= 0):
            # First paint, or the cursor's finding filtered out: the first finding shown
            # (not whatever header now stands on its line). Just rebuilt, the nodes are
            # listed in the tree's order.
            target = next(iter(self._finding_nodes.values()))
        if not self._cursor_chosen and self._finding_nodes:
            # Findings still streaming in, the reviewer not yet at the keys: the cursor stays
            # on the first finding, not on whichever came first.
            target = next(iter(self._finding_nodes.values()))
        # Placed now, not after the frame: a key read before it would act on no finding, or
        # on one the placing then moves away from.
        self._place_cursor(target, line)

    def _add_views(self, views: list[SectionView], first_paint: bool) -> None:
        """Every row's bookkeeping, and the nodes: on the first paint only those of the
        first screen (FIRST_SCREEN lines), the rest once that frame is drawn."""
        self._finding_rows, self._finding_nodes, self._grouped = {}, {}, {}
        self._widest_badges = 0
        self._section_counts, self._dirty_sections = {}, set()
        for view in views:
            rows = view.rows
            self._section_counts[view.section] = [sum(1 for r in rows if r.reviewed), len(rows)]
            for group in view.groups:
                grouped = _grouped(view, group)
                for row in group.rows:
                    self._finding_rows[row.fingerprint] = row
                    self._widest_badges = max(self._widest_badges, badges_cells(row))
                    self._grouped[row.fingerprint] = grouped
        nodes = self._grow(views)
        for _ in itertools.islice(nodes, FIRST_SCREEN if first_paint else None):
            pass
        if next(nodes, False):  # more than a screen: the rest once the frame is drawn
            self._rest = nodes
            self.call_after_refresh(self.finish_building)

    def _grow(self, views: list[SectionView]) -> Iterator[bool]:
        """The nodes of `views`, in tree order; a step per finding's node."""
        for view in views:
            reviewed, shown = self._section_counts[view.section]
            section = self.root.add(
                section_label(view.section, reviewed, shown),
                NodeData(view.section),
                expand=view.section.value not in self._collapsed,
            )
            for group in view.groups:
                parent = section
                if _grouped(view, group):
                    assert group.priority is not None
                    head = Text(group.priority.value, style=PRIORITY_STYLES[group.priority])
                    head.append(f" {len(group.rows)}", style="dim")
                    parent = section.add(
                        head, NodeData(view.section, priority=group.priority), expand=True
                    )
                for row in group.rows:
                    self._finding_nodes[row.fingerprint] = parent.add_leaf(
                        leaf_label(row),
                        NodeData(view.section, row.fingerprint),
                    )
                    yield True

    def finish_building(self) -> None:
        """The nodes the first paint left for later, added now (at once when anything
        needs every node first: a move, a mark of all, the next unreviewed)."""
        rest, self._rest = self._rest, None
        if rest is None:
            return
        self._adding = True
        try:
            for _ in rest:
                pass
        finally:
            self._adding = False
        self._invalidate()

    def select_section(self, section: Section) -> bool:
        """The cursor on `section`'s header; False when the tree does not show it."""
        header = self._header(section, None, top=True)
        if header is not None:
            self.move_cursor(header)
        return header is not None

    def _header(
        self, section: Section, priority: Priority | None, top: bool
    ) -> TreeNode[NodeData] | None:
        home = next(
            (n for n in self.root.children if n.data is not None and n.data.section is section),
            None,
        )
        if home is None or top:
            return home
        return next(
            (
                c
                for c in home.children
                if c.data is not None and c.data.fingerprint is None and c.data.priority is priority
            ),
            home,
        )

    def _place_cursor(self, target: TreeNode[NodeData] | None, line: int) -> None:
        self._tree_lines  # noqa: B018 — lines laid out now, so that nodes know their line
        if target is not None:
            self.move_cursor(target)
        elif self.last_line >= 0:
            self.move_cursor_to_line(max(0, min(line, self.last_line)))
        if not self.size.height:  # before the first layout, scrolled as if 0 lines high
            self.call_after_refresh(self._from_the_top)
        # The same line after a rebuild is no highlight event: say what is under it.
        self.post_message(self.FindingHighlighted(self.cursor_fingerprint))

    def _from_the_top(self) -> None:
        """The cursor's line shown with the headers above it when it fits on the first
        screen (placed before the layout, the tree was scrolled to put it at the top)."""
        if 0 <= self.cursor_line < self.scrollable_content_region.height:
            self.scroll_to(y=0, animate=False)

    def refresh_row(self, row: Row) -> None:
        """A finding's badges changed but not its place: relabel it alone (and its
        section's "N/M reviewed", by the difference)."""
        node = self._finding_nodes.get(row.fingerprint)
        if node is not None:
            old = self._finding_rows.get(row.fingerprint)
            if old is not None and old.reviewed != row.reviewed:
                count = self._section_counts[row.finding.section]
                count[0] += 1 if row.reviewed else -1
                self._dirty_sections.add(row.finding.section)
            self._finding_rows[row.fingerprint] = row
            node.set_label(leaf_label(row))  # drawn by render_label; this redraws the line
            self._widen_badges(row)

    def _widen_badges(self, row: Row) -> None:
        """A line whose badges are wider than any before widens the column on every line
        (a column that could narrow stays as it is until the next rebuild)."""
        if badges_cells(row) > self._widest_badges:
            self._widest_badges = badges_cells(row)
            self._invalidate()

    def refresh_counts(self) -> None:
        """The sections' "N/M reviewed" after refresh_row calls."""
        for node in self.root.children:
            if node.data is not None and node.data.section in self._dirty_sections:
                node.set_label(
                    section_label(node.data.section, *self._section_counts[node.data.section])
                )
        self._dirty_sections.clear()

    def select_fingerprint(self, fingerprint: str) -> bool:
        node = self._finding_nodes.get(fingerprint)
        if node is None:
            return False
        self._cursor_chosen = True
        parent = node.parent
        while parent is not None:
            if not parent.is_expanded:  # expand() rebuilds every line, open or not
                parent.expand()
            parent = parent.parent
        # Now, not after a refresh: the next key of a burst (`n x`) acts where this one went.
        self._tree_lines  # noqa: B018 — lines laid out now, so that the node knows its line
        self.move_cursor(node)
        return True

    # -- what the cursor is on ---------------------------------------------------------------
    @property
    def cursor_fingerprint(self) -> str | None:
        node = self.cursor_node
        return node.data.fingerprint if node is not None and node.data is not None else None

    def targets(self) -> list[str]:
        """The marked findings (those shown in tree order, then those a filter hides), else
        the cursor's."""
        self.finish_building()
        if self.marked:
            shown = [fp for fp in self._finding_nodes if fp in self.marked]
            hidden = [fp for fp in self._row_index if fp in self.marked and fp not in shown]
            return shown + hidden
        cursor = self.cursor_fingerprint
        return [cursor] if cursor else []

    def row(self, fingerprint: str) -> Row | None:
        return self._finding_rows.get(fingerprint)

    @property
    def cursor_finding(self) -> Finding | None:
        """The finding under the cursor, as shown (with the reviewer's edits)."""
        fingerprint = self.cursor_fingerprint
        row = self.row(fingerprint) if fingerprint else None
        return row.finding if row else None

    def targets_of(self, findings: list[Finding], all_clear: bool = False) -> list[Finding]:
        """Of `findings` (as found, not as edited), the marked ones, else the cursor's; an
        All Clear line only when `all_clear`."""
        by_fp = {f.fingerprint: f for f in findings}
        return [
            by_fp[fp]
            for fp in self.targets()
            if fp in by_fp and (by_fp[fp].section is not Section.ALL_CLEAR or all_clear)
        ]

    def placeholder(self, collecting: bool, filtered: bool) -> str:
        """What the panes say when no finding is under the cursor."""
        if collecting and not self.rows:
            return "Collecting…"
        if not self.rows:
            return "No findings."
        if filtered and not self._finding_nodes:
            return "No finding matches the filter (escape clears it)."
        return "Select a finding."

    def skip_typed_answer(self) -> None:
        """A key that opens a dialog found nothing to act on: the keys typed with it, up to
        an enter or escape (`x dup enter` on a header), were the dialog's, not commands."""
        self._skip_until = time.monotonic() + SKIP_TYPED_ANSWER

    def _skipped(self, key: str) -> bool:
        if time.monotonic() > self._skip_until:
            return False
        if key in ("enter", "escape"):
            self._skip_until = 0.0
        return True

    async def _on_click(self, event: events.Click) -> None:
        self._cursor_chosen = True

    def hold_keys(self) -> None:
        """Keys typed after one whose dialog comes later (publish asks GitHub first) wait
        for it, in order, instead of acting on the tree meanwhile."""
        if self._held is None:
            self._held = []

    @property
    def holding_keys(self) -> bool:
        return self._held is not None

    def hold(self, key: events.Key) -> None:
        """A key read while keys are held: after them, in order."""
        assert self._held is not None
        self._held.append(key)

    def release_keys(self) -> None:
        """The keys held, in order, to where the focus is now (the dialog, or the tree)."""
        held, self._held = self._held, None
        if self.app.focused is self:
            for key in held or []:
                self._forward_event(typed(self.app, key.key, key.character))
        else:  # a dialog's: through the app, before any key read meanwhile
            resend(self.app, held or [])

    async def _on_key(self, event: events.Key) -> None:
        """Keys typed ahead (a burst over SSH: `/cuda`, `x` and a reason) are all handed to
        the tree before the first one's action moves the focus. Each key's binding is found
        here, in turn, so that the next key sees what this one did; a key that comes after
        focus went elsewhere (the filter, a modal) goes there, never to a triage key."""
        self._cursor_chosen = True  # the reviewer is at the keys: the cursor is theirs
        if self._held is not None or self._skipped(event.key):
            event.stop()
            event.prevent_default()
            if self._held is not None:
                self._held.append(event)
            return
        if self.app.focused is not self:
            event.stop()
            event.prevent_default()
            self._hand_on(typed(self.app, event.key, event.character))
            return
        if await self.app._check_bindings(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _hand_on(self, key: events.Key) -> None:
        """`key` to where the focus went, as the terminal's next key: the app routes it
        (its bindings, a dialog's hold, the focused input); a modal just pushed has no
        focus yet: once it has."""
        if self.app.focused is None:
            self.app.call_after_refresh(self._hand_on, key)
        else:
            resend(self.app, [key])

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[NodeData]) -> None:
        event.stop()
        data = event.node.data
        self.post_message(self.FindingHighlighted(data.fingerprint if data else None))

    # -- actions -----------------------------------------------------------------------------
    def action_mark(self) -> None:
        """The cursor's finding, or on a section or priority every finding under it."""
        self.finish_building()
        node = self.cursor_node
        if node is None or node.data is None:
            return
        if node.data.fingerprint is not None:
            self._toggle_marks([node.data.fingerprint])
            self.action_cursor_down()
        else:  # past what it marked: `space space` on two headers marks both
            self._toggle_marks(_leaves(node))
            last = node
            while last.is_expanded and last.children:
                last = last.children[-1]
            self._tree_lines  # noqa: B018 — lines laid out now: the next key acts from there
            if last.line < self.last_line:
                self.move_cursor_to_line(last.line + 1)

    def action_mark_filtered(self) -> None:
        self.finish_building()
        self._toggle_marks(list(self._finding_nodes))

    def _toggle_marks(self, fingerprints: list[str]) -> None:
        """Mark them all, or unmark them all when every one is marked already."""
        # All Clear lines are nothing to decide: a section's mark leaves them out.
        chosen = [
            fp
            for fp in fingerprints
            if fp in self._finding_rows
            and self._finding_rows[fp].finding.section is not Section.ALL_CLEAR
        ]
        if not chosen:
            return
        if set(chosen) <= self.marked:
            self.marked -= set(chosen)
        else:
            self.marked |= set(chosen)
        if len(chosen) == 1:
            self.refresh_row(self._finding_rows[chosen[0]])
        else:  # lines are drawn from the marks as they show: one redraw, not 5,000 labels
            self._line_cache.clear()
            self.refresh()
        self.post_message(self.MarksChanged(len(self.marked)))  # the status line counts them

    def clear_marks(self) -> None:
        """No mark left, on screen too (a refused decision changes no line: its marks'
        glyphs would stay while the status line said none is marked)."""
        if self.marked:
            self.marked.clear()
            self._line_cache.clear()
            self.refresh()
        self.post_message(self.MarksChanged(0))

    def action_next_unreviewed(self) -> None:
        """The next unreviewed finding below the cursor (on a header: the first under it, or
        after it), wrapping around."""
        found = self.next_unreviewed()
        if found is None:
            self.notify("every finding is reviewed")
        else:
            self.select_fingerprint(found)

    def next_unreviewed(self, skip: frozenset[str] = frozenset()) -> str | None:
        """What `action_next_unreviewed` goes to, `skip` left out (those being decided)."""
        self.finish_building()
        order = _leaves(self.root)  # tree order (a moved finding's node sits where it went)
        if not order:
            return None
        node, cursor = self.cursor_node, self.cursor_fingerprint
        if cursor in self._finding_nodes:
            start = order.index(cursor) + 1
        elif node is not None and node.data is not None and (under := _leaves(node)):
            start = order.index(under[0])
        else:  # a header with nothing under it: what comes after it in the tree
            after = node.line if node is not None else -1
            start = next(
                (n for n, fp in enumerate(order) if self._finding_nodes[fp].line > after), 0
            )
        for fp in order[start:] + order[:start]:
            row = self._finding_rows[fp]
            if fp in skip:
                continue
            if not row.reviewed and row.finding.section is not Section.ALL_CLEAR:
                return fp
        return None

    # The triage keys: each asks the app, naming the findings it applies to.


def _leaves(node: TreeNode[NodeData]) -> list[str]:
    """The findings under a section or priority node, in tree order."""
    found: list[str] = []
    for child in node.children:
        if child.data is not None and child.data.fingerprint is not None:
            found.append(child.data.fingerprint)
        else:
            found += _leaves(child)
    return found
