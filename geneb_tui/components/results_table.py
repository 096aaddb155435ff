"""The main table: models × score columns, value and rank per cell, heat-shaded per column;
once the app's worker has computed them, each rank's interval beside it (`#4 [2-7]`) and the
leader's tie group marked `≈` (bold).

Painting: Textual's DataTable renders every column of each visible line and crops the line to
the window afterwards; with 20-odd score columns most of a repaint went to cells off screen.
`ResultsTable` renders only the cells that reach into the window (the others are blanks of
their width, cropped away unseen), so a repaint costs the visible cells. The lines it paints
are the same as DataTable's (tests/tui/test_table_updates.py compares them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import on
from textual.widgets import DataTable

from geneb_tui.core.heat import heat_color
from geneb_tui.core.styles import SOURCE_STYLES
from geneb_tui.messages import SortRequested

if TYPE_CHECKING:
    from geneb_tui.core.table_view import TableView


class ResultsTable(DataTable):
    """Shows a `TableView`; a click on a header (or `s`) asks the app to sort by that column."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="cell", zebra_stripes=False, fixed_columns=1, **kwargs)
        self.view: TableView | None = None
        self._ranges: dict[str, tuple[float, float]] = {}
        # The horizontal window of the line being painted ((x1, x2) in scrollable-line
        # coordinates, see `_render_line`) and where each column starts in that line.
        self._window: tuple[int, int] | None = None
        self._starts: list[int] = []

    # -- painting only what is visible ---------------------------------------------------------
    def _render_line(self, y: int, x1: int, x2: int, base_style: Style):
        # DataTable caches each row's rendered cells without the window: a new window (a
        # horizontal scroll, a resize) or new column widths paint the rows again.
        fixed = sum(c.get_render_width(self) for c in self.ordered_columns[:self.fixed_columns])
        window = (x1 + fixed, x2)
        start, starts = self._row_label_column_width, []
        for column in self.ordered_columns:
            starts.append(start)
            start += column.get_render_width(self)
        if window != self._window or starts != self._starts:
            self._window, self._starts = window, starts
            self._row_render_cache.clear()
        return super()._render_line(y, x1, x2, base_style)

    def _render_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                     cursor: bool = False, hover: bool = False):
        """A cell off the window: blank (DataTable crops it away); any other: DataTable's."""
        window = self._window
        if (window is not None and column_index >= self.fixed_columns
                and self.header_height == 1 and column_index < len(self._starts)):
            start = self._starts[column_index]
            if start >= window[1] or start + width <= window[0]:
                return [[Segment(" " * width, base_style)]]
        return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)

    def show(self, view: TableView) -> None:
        old_row, old_col = self.cursor_coordinate
        self.view = view
        self.clear(columns=True)
        ranges = {}
        for c in view.score_columns:
            vals = [r.values.get(c.key) for r in view.rows if r.values.get(c.key) is not None]
            ranges[c.key] = (min(vals), max(vals)) if vals else (0.0, 0.0)
        self._ranges = ranges
        for c in view.columns:
            arrow = ""
            if c.key == view.sort_key:
                arrow = " ▼" if view.descending else " ▲"
            self.add_column(Text(c.label + arrow, style="bold" if arrow else ""), key=c.key)
        for r in view.rows:
            cells = []
            for c in view.columns:
                text = view.cell_text(r, c)
                if c.kind == "score":
                    cells.append(self._score_cell(view, r, c))
                elif c.key == "source":
                    cells.append(Text(text, style=SOURCE_STYLES.get(text, "bold")))
                elif c.key == "params":
                    cells.append(Text(text, justify="right"))
                else:
                    cells.append(Text(text))   # never markup: ids may hold [ and ]
            self.add_row(*cells, key=r.key)
        if view.rows:
            self.move_cursor(row=min(old_row, len(view.rows) - 1),
                             column=min(old_col, len(view.columns) - 1), animate=False)

    def _score_cell(self, view: TableView, row, col) -> Text:
        text = view.cell_text(row, col)
        v = row.values.get(col.key)
        if v is None:
            return Text(text, style="dim italic", justify="center")
        lo, hi = self._ranges.get(col.key, (v, v))
        iv = view.interval(row, col)
        bold = " bold" if iv is not None and iv.tied else ""
        return Text(text, style=f"#101010 on {heat_color(v, lo, hi)}{bold}", justify="right")

    def show_intervals(self, view: TableView) -> None:
        """The intervals arrived for the view shown: its score cells again, in place (the
        cursor and the scroll position stay)."""
        if view is not self.view:
            return
        for c in view.score_columns:
            if not view.has_interval(c):
                continue
            for r in view.rows:
                self.update_cell(r.key, c.key, self._score_cell(view, r, c), update_width=True)

    def cursor_column_key(self) -> str | None:
        if self.view is None or not self.view.columns:
            return None
        return self.view.columns[min(self.cursor_column, len(self.view.columns) - 1)].key

    @on(DataTable.HeaderSelected)
    def _header(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.post_message(SortRequested(str(event.column_key.value)))
