"""Task drill-down: one task's values across the models shown, with its difficulty marks."""

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
        self._compute()

    @work(thread=True, exclusive=True, group="task")
    def _compute(self) -> None:
        from geneb_tui.core.compare import Failed, task_values

        try:
            table = task_values(self.snapshot, self.filters, self.task_id)
        except Exception as exc:  # a bug: told, never a traceback over the UI
            table = Failed(f"{type(exc).__name__}: {exc}")
        self.post_message(ComparisonReady("task", table, 0))

    @on(ComparisonReady)
    def _ready(self, msg: ComparisonReady) -> None:
        from geneb_tui.core.compare import Failed

        msg.stop()
        if isinstance(msg.payload, Failed):
            self.query_one("#task-note", Static).update(escape(msg.payload.note))
            self.app.report_internal_error(f"Task {self.task_id}", msg.payload.note)
            return
        self.query_one("#task-note", Static).update(msg.payload.note)
        self.query_one(ViewTable).show(msg.payload)
