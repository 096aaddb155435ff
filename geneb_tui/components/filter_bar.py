"""The current selection, always visible above the table, and which rank the cells show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from textual.widgets import Static

if TYPE_CHECKING:
    from geneb_tui.core.table_view import TableView


def rank_note(view: TableView) -> str:
    """Which rank '#' is, when it matters (some entries of the store are not shown)."""
    if not view.is_filtered or not view.rows:
        return ""
    if view.rank_scope == "store":
        return f"# = rank among all {view.n_rows_unfiltered} in the store (n: among shown)"
    return f"# = rank among the {len(view.rows)} shown (n: among all in the store)"


class FilterBar(Static):
    def show(self, view: TableView) -> None:
        f = view.filters
        shown = len(view.rows)
        total = view.n_rows_unfiltered
        hint = "" if f.is_default else "  [dim](x clears)[/]"
        if shown == 0:
            hint += "  [b]no results here[/b]: g lists the missing evaluations"
        note = rank_note(view)
        note = f" · [i]{escape(note)}[/i]" if note else ""
        if view.flagged_left_out:
            note += f" · {view.flagged_left_out} flagged task(s) left out"
        self.update(f"[b]{escape(f.describe())}[/b] · {shown}/{total} rows{note}{hint}")
