"""The main table: models × score columns, value and rank per cell, heat-shaded per column;
once the app's worker has computed them, each rank's interval beside it (`#4 [2-7]`) and the
leader's tie group marked `≈` (bold).

Painting: a `PaintedTable` (only the cells in the window rendered, plain cells without rich;
tests/tui/test_table_updates.py compares its lines with DataTable's after each interaction).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.widgets import DataTable

from geneb_tui.components.painted_table import PaintedTable
from geneb_tui.core.heat import heat_color
from geneb_tui.core.styles import SOURCE_STYLES
from geneb_tui.messages import SortRequested

if TYPE_CHECKING:
    from geneb_tui.core.table_view import TableView


class ResultsTable(PaintedTable):
    """Shows a `TableView`; a click on a header (or `s`) asks the app to sort by that column."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="cell", zebra_stripes=False, fixed_columns=1, **kwargs)
        self.view: TableView | None = None
        self._ranges: dict[str, tuple[float, float]] = {}

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
