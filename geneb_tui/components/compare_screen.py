"""Comparison views in tabs: ranks per category, rank shift, agreement, scale, few-shot, tasks.

Each view is computed off the UI thread from the snapshot with `store.analyses`; a result that
arrives after the options changed again is dropped.
"""

from __future__ import annotations

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.widgets import Header, Static, TabbedContent, TabPane

from geneb_tui.actions import COMPARE_KEYS, bindings
from geneb_tui.components.footer import KeysFooter
from geneb_tui.components.once import dismiss_once
from geneb_tui.components.scale_plot import ScalePlot
from geneb_tui.components.selection_screen import SelectionScreen
from geneb_tui.components.view_table import ViewTable
from geneb_tui.core.compare import VIEWS, CompareOptions, Failed, compute
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot
from geneb_tui.messages import ComparisonReady
from store.protocol import REGIMES


def _next(values, current):
    values = list(values)
    return values[(values.index(current) + 1) % len(values)] if current in values else values[0]


@dismiss_once
class CompareScreen(SelectionScreen):
    BINDINGS = bindings(COMPARE_KEYS)

    def __init__(self, snapshot: StoreSnapshot, filters: Filters) -> None:
        super().__init__(snapshot, filters)
        other = "10shot" if filters.regime == "full" else "full"
        column = filters.category or "macro"
        self.options = CompareOptions(regime_a=filters.regime, regime_b=other, column=column)
        self.initial = VIEWS[0][0]   # the first view opens first
        self._token = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=self.initial, id="compare-tabs"):
            for name, title in VIEWS:
                with TabPane(title, id=name):
                    yield Static("computing…", id=f"{name}-note", classes="view-note")
                    if name == "scale":
                        yield ScalePlot(id="scale-plot")
                    else:
                        yield ViewTable(id=f"{name}-table", classes="view-table")
        yield KeysFooter()

    def selection_changed(self, old: Filters, filters: Filters) -> None:
        """The score column follows the category; a suite without it falls back to macro."""
        from dataclasses import replace

        if filters.category and self.options.column in ("macro", "micro"):
            self.options = replace(self.options, column=filters.category)
        elif filters.suite != old.suite and self.options.column not in ("macro", "micro"):
            self.options = replace(self.options, column="macro")   # not a column here

    # -- computing -----------------------------------------------------------------------------
    @property
    def active(self) -> str:
        return self.query_one(TabbedContent).active or self.initial

    def recompute(self) -> None:
        self._token += 1
        first = self.active
        order = [first, *(n for n, _ in VIEWS if n != first)]
        self._compute(order, self.snapshot, self.filters, self.options, self._token)

    @work(thread=True, exclusive=True, group="compare")
    def _compute(self, names, snap, filters, options, token) -> None:
        for name in names:
            try:
                payload = compute(name, snap, filters, options)
            except Exception as exc:  # a bug: told, never a traceback over the UI
                payload = Failed(f"{type(exc).__name__}: {exc}")
            self.post_message(ComparisonReady(name, payload, token))

    @on(ComparisonReady)
    def _ready(self, msg: ComparisonReady) -> None:
        if msg.token != self._token:
            return
        if isinstance(msg.payload, Failed):
            self.query_one(f"#{msg.name}-note", Static).update(
                f"[b]Could not compute this view[/b]: {escape(msg.payload.note)}")
            self.app.report_internal_error(f"Comparison view {msg.name}", msg.payload.note)
            return
        self.query_one(f"#{msg.name}-note", Static).update(msg.payload.note)
        if msg.name == "scale":
            self.query_one(ScalePlot).show(msg.payload)
        else:
            self.query_one(f"#{msg.name}-table", ViewTable).show(msg.payload)

    @on(TabbedContent.TabActivated)
    def _focus_view(self, event: TabbedContent.TabActivated) -> None:
        """Arrow keys and Enter go to the view of the tab just shown."""
        name = event.pane.id
        if name and name != "scale":
            self.query_one(f"#{name}-table", ViewTable).focus()

    @on(ViewTable.RowSelected, "#tasks-table")
    def _drill_down(self, event: ViewTable.RowSelected) -> None:
        data = self.query_one("#tasks-table", ViewTable).data
        if data is None or not data.row_keys:
            return
        from geneb_tui.components.task_screen import TaskScreen

        self.app.push_screen(TaskScreen(self.snapshot, self.filters,
                                        data.row_keys[event.cursor_row]))

    # -- options -------------------------------------------------------------------------------
    def _set(self, **changes) -> None:
        from dataclasses import replace

        self.options = replace(self.options, **changes)
        self.notify(f"regimes {self.options.regime_a} → {self.options.regime_b}, "
                    f"column {self.options.column}", timeout=2)
        self.recompute()

    def action_regime_a(self) -> None:
        self._set(regime_a=_next(REGIMES, self.options.regime_a))

    def action_regime_b(self) -> None:
        self._set(regime_b=_next(REGIMES, self.options.regime_b))

    def action_column(self) -> None:
        cols = ["macro", "micro", *self.snapshot.categories(self.filters.suite)]
        self._set(column=_next(cols, self.options.column))

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name

    def action_close(self) -> None:
        self.dismiss()
