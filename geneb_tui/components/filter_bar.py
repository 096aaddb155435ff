"""The current selection, always visible above the table."""

from __future__ import annotations

from textual.widgets import Static

from geneb_tui.core.query import TableView


class FilterBar(Static):
    def show(self, view: TableView) -> None:
        f = view.filters
        shown = len(view.rows)
        total = view.n_rows_unfiltered
        hint = "" if f.is_default else "  [dim](x clears)[/]"
        self.update(f"[b]{f.describe()}[/b] · {shown}/{total} rows{hint}")
