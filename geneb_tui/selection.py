"""The dashboard's selection: the keys that change it (the filter dialog, clear, regime, metric,
category, suite, the model search, the rank scope, the sort) and the main table's request it
makes (`SelectionKeys._request`), a part of `geneb_tui.app.GenebApp`.

A new selection is followed by every screen on the stack that has `filters_updated` (the
comparison views, the missing evaluations) and rebuilds the main table (`GenebApp.rebuild`); a
sort of the rows shown only reorders them. What the selection keys change is also what the app
builds ahead in a pause (`next_regime`, `next_metric`, `step_category`, `other_scope`:
`GenebApp._neighbours`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from textual import on
from textual.app import App
from textual.widgets import Input

from geneb_tui.components.results_table import ResultsTable
from geneb_tui.core.cycle import cycled
from geneb_tui.core.filters import Filters
from geneb_tui.messages import SortRequested
from store.vocab.kinds import METRICS_OF, TaskKind
from store.vocab.protocol import REGIMES

if TYPE_CHECKING:
    from geneb_tui.core.query import StoreSnapshot


def next_regime(f: Filters) -> Filters:
    return f.with_(regime=cycled(REGIMES, f.regime))


def next_metric(f: Filters) -> Filters:
    """The next metric of the kind shown (`store.vocab.kinds.METRICS_OF`)."""
    return f.with_(metric=cycled(METRICS_OF[TaskKind(f.kind)], f.metric))


def step_category(f: Filters, snap: StoreSnapshot, step: int) -> Filters:
    return f.with_(category=cycled([None, *snap.categories(f.suite)], f.category, step))


def other_scope(scope: str) -> str:
    return "shown" if scope == "store" else "store"


class SelectionKeys(App[None]):
    """`GenebApp`'s selection keys and sort (its state, `filters`, `sort_key`, `descending`,
    `rank_scope`, and the snapshot and table they act on, live in `GenebApp`)."""

    def _request(self, **change) -> tuple:
        """The main table's request (filters, sort key, descending, rank scope) for the
        selection shown, or for it with `change` (`filters`, `rank_scope`) applied as the keys
        apply it (`set_filters`: a new category or suite sorts by the first score column)."""
        filters = change.get("filters", self.filters)
        return (filters, self._sort_after(filters), self.descending,
                change.get("rank_scope", self.rank_scope))

    def _sort_after(self, filters: Filters) -> str | None:
        """The sort key once `filters` are set: None (the first score column) when the columns
        change (another category or suite)."""
        same = (filters.category, filters.suite) == (self.filters.category, self.filters.suite)
        return self.sort_key if same else None

    # -- selection ----------------------------------------------------------------------------
    def set_filters(self, filters: Filters | None) -> None:
        if filters is None or filters == self.filters or self.snapshot is None:
            return
        self.sort_key = self._sort_after(filters)
        self.filters = filters
        for screen in self.screen_stack:
            follow = getattr(screen, "filters_updated", None)
            if follow is not None:
                follow(filters)
        search = self._main_search()
        if search.value != filters.search:
            with search.prevent(Input.Changed):
                search.value = filters.search
        self.rebuild()

    def action_filters(self) -> None:
        if self.snapshot is not None:
            self.push_screen(self._kept_screen("filters"), self.set_filters)

    def action_clear_filters(self) -> None:
        self.set_filters(self.filters.cleared())

    def action_cycle_regime(self) -> None:
        self.set_filters(next_regime(self.filters))

    def action_cycle_metric(self) -> None:
        self.set_filters(next_metric(self.filters))

    def action_cycle_category(self) -> None:
        if self.snapshot is not None:
            self.set_filters(step_category(self.filters, self.snapshot, 1))

    def action_prev_category(self) -> None:
        if self.snapshot is not None:
            self.set_filters(step_category(self.filters, self.snapshot, -1))

    def action_cycle_kind(self) -> None:
        """The next task kind the store holds results of: its snapshot read (a kind's own
        tasks, models, protocol and metrics: `StoreSnapshot.load`), its primary metric."""
        snap = self.snapshot
        if snap is None:
            return
        if len(snap.kinds) < 2:
            self.notify(f"This store holds {snap.kind} results only", timeout=3)
            return
        kind = cycled(snap.kinds, snap.kind)
        self.sort_key = None   # another kind's columns: sorted by its first score column
        self.notify(f"Reading the {kind} results…", timeout=2)
        self.load_kind(kind)

    def action_cycle_suite(self) -> None:
        if self.snapshot is not None:
            suite = cycled(self.snapshot.suites(), self.filters.suite)
            self.set_filters(self.filters.with_(suite=suite, category=None))

    def action_search(self) -> None:
        if self._main_on_top():
            self._main_search().focus()

    def action_rank_scope(self) -> None:
        self.rank_scope = other_scope(self.rank_scope)
        self.notify("Ranks among the rows shown" if self.rank_scope == "shown" else
                    "Ranks among all entries in the store", timeout=3)
        self.rebuild()

    def _main_search(self) -> Input:
        """The main screen's search box. (The filter dialog's "Model name" field has the same
        id, the `Filters` field it sets, and applies only with the dialog.)"""
        return self.screen_stack[0].query_one("#search", Input)

    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        if event.input is self._main_search():
            self.set_filters(self.filters.with_(search=event.value.strip()))

    @on(Input.Submitted, "#search")
    def _search_done(self, event: Input.Submitted) -> None:
        if event.input is self._main_search():
            self.screen_stack[0].query_one(ResultsTable).focus()

    # -- sorting ------------------------------------------------------------------------------
    def sort_by(self, key: str) -> None:
        if key == self.sort_key:
            self.descending = not self.descending
        else:
            # numbers: best first; names: A→Z
            self.sort_key, self.descending = key, key not in (
                "display", "source", "architecture", "tokenization", "pretraining_data",
                "licence")
        view = self.view
        if (view is not None and self.snapshot is not None and not self._rebuild_pending
                and self._shown_token == self._view_token
                and any(c.key == self.sort_key for c in view.columns)):
            # the rows shown are current: only their order changes (no rebuild, no worker)
            from geneb_tui.core.query import sort_rows  # lazy: polars, duckdb, pyarrow

            self._view_token += 1
            rows = sort_rows(view, self.sort_key, self.descending)
            self._show_view(replace(view, rows=rows, sort_key=self.sort_key,
                                    descending=self.descending), self._view_token)
            return
        self.rebuild()

    @on(SortRequested)
    def _sort_requested(self, msg: SortRequested) -> None:
        self.sort_by(msg.column_key)

    def action_sort_column(self) -> None:
        key = self.query_one(ResultsTable).cursor_column_key()
        if key:
            self.sort_by(key)
