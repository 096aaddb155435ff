"""The current selection, always visible above the table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from textual.widgets import Static

if TYPE_CHECKING:
    from geneb_tui.core.query import TableView


class FilterBar(Static):
    def show(self, view: TableView) -> None:
        f = view.filters
        shown = len(view.rows)
        total = view.n_rows_unfiltered
        hint = "" if f.is_default else "  [dim](x clears)[/]"
        if shown == 0:
            hint += "  [b]no results here[/b]: g lists the missing evaluations"
        self.update(f"[b]{escape(f.describe())}[/b] · {shown}/{total} rows{hint}")
