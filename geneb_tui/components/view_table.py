"""A read-only table for one comparison view (`core.compare.Table`), heat-shaded columns."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

from geneb_tui.components.painted_table import PaintedTable
from geneb_tui.core.compare import Table
from geneb_tui.core.heat import heat_color

WRAP_MIN = 24   # the narrowest a wrapped column (`Table.wrap`) gets


def _fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else ""
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


class ViewTable(PaintedTable):
    """`show(table)` sets `data` and builds the rows; `show(table, defer=True)` (a hidden tab)
    sets `data` and builds the rows on `build()`, when the tab is first shown."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", fixed_columns=1, **kwargs)
        self.data: Table | None = None
        self._built = True      # the rows shown are those of `data`

    def show_nothing(self) -> None:
        """No content (while a new selection's is computed: never the previous one's)."""
        self.data, self._built = None, True
        self.clear(columns=True)

    def show(self, table: Table, *, defer: bool = False) -> None:
        self.data, self._built = table, False
        if not defer:
            self.build()

    def build(self) -> None:
        """The rows of `data`, unless they are shown already."""
        table = self.data
        if self._built or table is None:
            return
        self._built = True
        self.clear(columns=True)
        widths = self._wrapped_width(table)
        for i, h in enumerate(table.header):
            self.add_column(h, width=widths.get(i))
        for row in table.rows:
            cells = []
            for i, v in enumerate(row):
                text = _fmt(v)
                if i in table.heat and isinstance(v, int | float) and not isinstance(v, bool):
                    lo, hi = table.heat[i]
                    x = (lo + hi - v) if i in table.low_is_good else v
                    cells.append(Text(text, style=f"#101010 on {heat_color(x, lo, hi)}",
                                      justify="right"))
                elif isinstance(v, int | float) and not isinstance(v, bool):
                    cells.append(Text(text, justify="right"))
                else:
                    cells.append(Text(text))
            self.add_row(*cells, height=None if widths else 1)

    def _wrapped_width(self, table: Table) -> dict[int, int]:
        """{column: width} of `table.wrap`: what the widget's width leaves after the other
        columns (as wide as their text) and the vertical scrollbar, at least WRAP_MIN; none
        for a table without one, or before the widget has a width."""
        if table.wrap is None or not self.size.width:
            return {}
        others = sum(max([cell_len(h)] + [cell_len(_fmt(r[i])) for r in table.rows])
                     + 2 * self.cell_padding
                     for i, h in enumerate(table.header) if i != table.wrap)
        room = (self.size.width - self.styles.scrollbar_size_vertical - others
                - 2 * self.cell_padding)
        return {table.wrap: max(WRAP_MIN, room)}

    def on_resize(self) -> None:
        """A table with a wrapped column is laid out again for its new width."""
        if self.data is not None and self.data.wrap is not None and self._built:
            self._built = False
            self.build()
