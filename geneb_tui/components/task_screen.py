"""Task drill-down: one task's values across the models shown, with its difficulty marks.

Its table comes from the views' cache (`geneb_tui.core.view_cache`: painted at once when the
background precomputation has it, else computed in a worker behind a "computing…" note)."""

from __future__ import annotations

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from geneb_tui.actions import TASK_KEYS, bindings
from geneb_tui.components.once import dismiss_once
from geneb_tui.components.view_table import ViewTable
from geneb_tui.core import content_cache, view_cache
from geneb_tui.core.compare import Failed
from geneb_tui.messages import ComparisonReady


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
