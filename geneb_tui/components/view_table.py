"""A read-only table for one comparison view (`core.compare.Table`), heat-shaded columns."""

from __future__ import annotations

from rich.text import Text

from geneb_tui.components.painted_table import PaintedTable
from geneb_tui.core.compare import Table
from geneb_tui.core.heat import heat_color


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
        for h in table.header:
            self.add_column(h)
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
            self.add_row(*cells)
