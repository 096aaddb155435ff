"""Score against context (key `l`): a plotext curve per model over its entries at several
context policies, with the points' values and intervals below (`geneb_tui.core.context`).

The curve follows the selection (regime, metric, model filters; the category's scope, else
macro) and is computed off the UI thread through the views' cache (`view_cache.context_view`,
once per snapshot and filters); it is not precomputed in a pause (its bootstrap runs only
when the view is asked for). Where no model has two context policies the note says what to
run."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.widgets import Header, Static

from geneb_tui.actions import CONTEXT_KEYS, bindings
from geneb_tui.components.context_plot import ContextPlot
from geneb_tui.components.footer import KeysFooter
from geneb_tui.components.once import dismiss_once
from geneb_tui.components.removed import unless_removed
from geneb_tui.components.selection_screen import SelectionScreen
from geneb_tui.components.view_table import ViewTable
from geneb_tui.core import content_cache, view_cache
from geneb_tui.core.compare import Failed
from geneb_tui.core.context import ContextCurves
from geneb_tui.messages import ComparisonReady


@dismiss_once
class ContextScreen(SelectionScreen):
    BINDINGS = bindings(CONTEXT_KEYS)
    AUTO_FOCUS = "#context-table"

    def __init__(self, snapshot, filters) -> None:
        super().__init__(snapshot, filters)
        self._token = 0
        self.curves: ContextCurves | None = None   # what is shown (None: computing)

    def compose(self) -> ComposeResult:
        yield Header()
        # store text (model names, the suite) shown as it is: no markup
        yield Static("computing…", id="context-note", classes="view-note", markup=False)
        yield ContextPlot(id="context-plot")
        yield ViewTable(id="context-table", classes="view-table")
        yield KeysFooter()

    def recompute(self) -> None:
        self._token += 1
        cached = content_cache.cache_of(self.snapshot).peek(
            content_cache.context_key(self.filters))
        if cached is not None:
            self._show(cached)
            return
        self.curves = None
        self.query_one("#context-note", Static).update("computing…")
        self.query_one(ContextPlot).show_nothing()
        self.query_one(ViewTable).show_nothing()
        self._compute(self.snapshot, self.filters, self._token)

    @work(thread=True, exclusive=True, group="context")
    def _compute(self, snap, filters, token: int) -> None:
        self.post_message(ComparisonReady("context", view_cache.context_view(snap, filters),
                                          token))

    @on(ComparisonReady)
    @unless_removed
    def _ready(self, msg: ComparisonReady) -> None:
        msg.stop()
        if msg.token == self._token:
            self._show(msg.payload)

    def _show(self, payload) -> None:
        note = self.query_one("#context-note", Static)
        if isinstance(payload, Failed):
            note.update(f"Could not compute the curve: {payload.note}")
            self.app.report_internal_error("Score against context", payload.note)
            return
        self.curves = payload
        note.update(payload.note)
        plot = self.query_one(ContextPlot)
        plot.show(payload) if payload.points else plot.show_nothing()
        plot.display = bool(payload.points)
        self.query_one(ViewTable).show(payload.table())

    def action_close(self) -> None:
        self.dismiss()
