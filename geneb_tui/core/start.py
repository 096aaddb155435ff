"""The selection geneb-tui opens on: its main table is the one the first-view cache holds
(`geneb_tui.core.first_view`), so the dashboard and the refresh after a command that changed
the store (`first_view.refresh`) build it from this one place."""

from __future__ import annotations

from typing import NamedTuple

from geneb_tui.core.filters import Filters


class Start(NamedTuple):
    filters: Filters = Filters()
    sort_key: str | None = None   # None: the first score column
    descending: bool = True
    rank_scope: str = "store"     # geneb_tui.core.table_view.RANK_SCOPES
