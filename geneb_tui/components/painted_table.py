"""`PaintedTable`: Textual's DataTable, painting a repaint's lines at the cost of what they show.

Every table of the dashboard is one (the main table, the comparison, Significance and task views,
the missing-evaluations screen's tables). Two things make its lines cheaper than DataTable's,
and the lines are the same (tests/tui/test_painted_table.py compares them with DataTable's own,
segment by segment, styles and mouse metadata included):

- the window: DataTable renders every column of each visible line and crops the line to the
  window afterwards; with 20-odd columns most of a repaint went to cells off screen. Here a cell
  that does not reach into the window is a blank of its width, cropped away unseen;
- the cell: DataTable renders each cell through rich (`Styled(Padding(cell))`, wrapped and
  justified to its width), some 0.3 ms per cell, 400 cells on a screen. A one-line cell of plain
  `Text` (one style, no spans, no tab or line break, fitting its column: every cell the
  dashboard makes but the odd overlong name) is painted here straight into the segments rich
  would give it; any other goes through DataTable's rendering.

One thing differs from DataTable, on purpose: a column cut at the left edge of the window (the
table scrolled right by part of a column) shows its cells without their text (their styles and
background kept), never the tail of a word ("orted" of "imported") that reads as a value.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable

_JUSTIFIED = ("default", "left", "right", "center")


class PaintedTable(DataTable):
    """A DataTable that renders only the cells in the window, plain text cells without rich."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        # The horizontal window of the line being painted ((x1, x2) in scrollable-line
        # coordinates, see `_render_line`) and where each column starts in that line.
        self._window: tuple[int, int] | None = None
        self._starts: list[int] = []

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
        """A cell off the window: blank (DataTable crops it away); a cell cut at the window's
        left edge: its lines without their text (`_textless`); a plain one-line text cell: its
        segments (`_plain_cell`); any other: DataTable's."""
        window, cut = self._window, False
        if (window is not None and column_index >= self.fixed_columns
                and self.header_height == 1 and column_index < len(self._starts)):
            start = self._starts[column_index]
            height = self._fixed_height(row_index)
            if height and (start >= window[1] or start + width <= window[0]):
                return [[Segment(" " * width, base_style)]] * height
            cut = start < window[0]
        lines = None
        if row_index >= 0 and column_index >= 0:
            lines = self._plain_cell(row_index, column_index, base_style, width, cursor, hover)
        if lines is None:
            lines = super()._render_cell(row_index, column_index, base_style, width, cursor,
                                         hover)
        return _textless(lines) if cut else lines

    def _fixed_height(self, row_index: int) -> int | None:
        """The lines of a row (the header's: -1), which each of its cells has; None for a row
        of `add_row(height=None)`, whose height DataTable measures from its cells."""
        if row_index < 0:
            return self.header_height
        row_key = self._row_locations.get_key(row_index)
        row = self.rows.get(row_key) if row_key is not None else None
        return None if row is None or row.auto_height else row.height

    def _plain_cell(self, row_index: int, column_index: int, base_style: Style, width: int,
                    cursor: bool, hover: bool):
        """The cell's one line as DataTable would render it, when it is a plain text cell of a
        one-line row (else None), under DataTable's cache key.

        DataTable renders `Styled(Padding(cell, (0, p)), pre, post)` at the cell's width and
        height 1: a blank of p cells each side in pre + post, between them the text justified
        to the inner width in pre + the text's style + post; rich pads a left ("default")
        justified text after it in pre + post, and any other justification in the text's
        style."""
        row_key = self._row_locations.get_key(row_index)
        row = self.rows.get(row_key) if row_key is not None else None
        if row is None or row.height != 1 or row.auto_height:
            return None
        column_key = self._column_locations.get_key(column_index)
        key = (row_key, column_key, base_style, cursor, hover, self._show_hover_cursor,
               self._update_count, self._pseudo_class_state)
        cached = self._cell_render_cache.get(key)
        if cached is not None:
            return cached
        cells = self._get_row_renderables(row_index).cells
        cell = cells[column_index] if column_index < len(cells) else None
        if type(cell) is not Text or cell.spans:
            return None
        plain, pad = cell.plain, self.cell_padding
        inner = width - 2 * pad
        n = cell_len(plain)
        # DataTable's console options (`App.console_options`) set no justification, so rich
        # takes the cell's own, else its "default" (a new ConsoleOptions per cell to read it
        # cost more than the rest of the cell)
        justify = cell.justify or "default"
        if (not plain or n > inner or justify not in _JUSTIFIED or "\n" in plain
                or "\t" in plain or plain[-1].isspace()):
            return None
        fixed = row_index < self.fixed_rows or column_index < self.fixed_columns
        component_style, post = self._get_styles_to_render_cell(
            False, False, fixed, hover, cursor, self.show_cursor, self._show_hover_cursor,
            self.cursor_foreground_priority == "css",
            self.cursor_background_priority == "css")
        pre = base_style + Style.from_meta({"row": row_index, "column": column_index})
        pre = pre + component_style
        console = self.app.console
        # a null style renders as none (rich adds no span for it)
        text_style = (console.get_style(cell.style, default=Style.null()) if cell.style
                      else None) or None

        def final(style: Style | None) -> Style:   # Segment.apply_style(pre, post)
            style = pre + style if pre else style
            return (style + post if style else post) if post else style

        edge = final(None)
        spare = inner - n
        if justify == "default":
            middle = [Segment(plain, final(text_style))]
            if spare:
                middle.append(Segment(" " * spare, edge))
        elif justify == "left":
            middle = [Segment(plain + " " * spare, final(text_style))]
        elif justify == "right":
            middle = [Segment(" " * spare + plain, final(text_style))]
        else:
            left = spare // 2
            middle = [Segment(" " * left + plain + " " * (spare - left), final(text_style))]
        line = [Segment(" " * pad, edge), *middle, Segment(" " * pad, edge)] if pad else middle
        self._cell_render_cache[key] = [line]
        return [line]


def _textless(lines):
    """`lines` with every character a blank of its width, each segment's style kept (a copy:
    the cell caches hold the lines with their text)."""
    return [[Segment(" " * cell_len(seg.text), seg.style) for seg in line] for line in lines]
