"""Task drill-down: one task's values across the models shown, with its difficulty marks.

Its table comes from the views' cache (`geneb_tui.core.view_cache`: painted at once when the
background precomputation has it, else computed in a worker behind a "computing…" note). A
task of another kind than classification also shows the plot of the model under the cursor's
test values (`geneb_tui.core.kind_plots.drill_plot`, read in a worker): a regression task's
predicted against true values, a variant task's ROC curve."""

from __future__ import annotations

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from geneb_tui.actions import TASK_KEYS, bindings
from geneb_tui.components.kind_plot import KindPlot
from geneb_tui.components.once import dismiss_once
from geneb_tui.components.view_table import ViewTable
from geneb_tui.core import content_cache, view_cache
from geneb_tui.core.compare import Failed
from geneb_tui.core.kind_plots import drill_plot
from geneb_tui.messages import ComparisonReady
from store.vocab.kinds import CLASSIFICATION


@dismiss_once
class TaskScreen(ModalScreen[None]):
    BINDINGS = bindings(TASK_KEYS)

    def __init__(self, snapshot, filters, task: str) -> None:
        super().__init__()
        self.snapshot, self.filters, self.task_id = snapshot, filters, task

    def compose(self) -> ComposeResult:
        with Vertical(id="task-dialog", classes="dialog"):
            yield Static("computing…", id="task-note", classes="view-note")
            yield ViewTable(id="task-table", classes="view-table")
            if self.snapshot.kind != CLASSIFICATION:
                yield KindPlot(id="task-plot")

    def on_mount(self) -> None:
        cached = content_cache.cache_of(self.snapshot).peek(
            content_cache.task_key(self.filters, self.task_id))
        if cached is None:
            self._compute()
        else:
            self._show(cached)

    @work(thread=True, exclusive=True, group="task")
    def _compute(self) -> None:
        table = view_cache.task_view(self.snapshot, self.filters, self.task_id)
        self.post_message(ComparisonReady("task", table, 0))

    @on(ComparisonReady)
    def _ready(self, msg: ComparisonReady) -> None:
        msg.stop()
        self._show(msg.payload)

    def _show(self, payload) -> None:
        if isinstance(payload, Failed):
            self.query_one("#task-note", Static).update(escape(payload.note))
            self.app.report_internal_error(f"Task {self.task_id}", payload.note)
            return
        self.query_one("#task-note", Static).update(payload.note)
        self.query_one(ViewTable).show(payload)
        self._plot_row(0)

    # -- the kinds' plot (`core.kind_plots`) ----------------------------------------------------
    @on(DataTable.RowHighlighted, "#task-table")
    def _row_moved(self, event: DataTable.RowHighlighted) -> None:
        self._plot_row(event.cursor_row)

    def _plot_row(self, row: int) -> None:
        """The plot of the model of table row `row` (a task of another kind only)."""
        data = self.query_one(ViewTable).data
        if self.snapshot.kind == CLASSIFICATION or data is None or not data.row_keys:
            return
        model = data.row_keys[row] if row < len(data.row_keys) else data.row_keys[0]
        if getattr(self, "plotted", None) == model:
            return
        self.plotted = model
        self.query_one("#task-plot").show_nothing()
        self._read_plot(model, str(data.rows[row][0]) if row < len(data.rows) else model)

    @work(thread=True, exclusive=True, group="task-plot")
    def _read_plot(self, model: str, label: str) -> None:
        snap = self.snapshot
        try:
            plot = drill_plot(snap.paths, snap.kind, snap.protocol_hash, model, self.task_id,
                              self.filters.regime, label)
        except Exception as exc:  # a bug: told, never a traceback over the UI
            self.app.call_from_thread(self.app.report_internal_error,
                                      f"Task {self.task_id}: plot of {model}",
                                      f"{type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self._show_plot, model, plot)

    def _show_plot(self, model: str, plot) -> None:
        if getattr(self, "plotted", None) == model:   # else the cursor moved on meanwhile
            self.query_one("#task-plot").show(plot)
