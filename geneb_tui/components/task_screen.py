"""Task drill-down: one task's values across the models shown, with its difficulty marks."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from geneb_tui.components.view_table import ViewTable
from geneb_tui.messages import ComparisonReady


class TaskScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

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
        from geneb_tui.core.compare import task_values

        table = task_values(self.snapshot, self.filters, self.task_id)
        self.post_message(ComparisonReady("task", table, 0))

    @on(ComparisonReady)
    def _ready(self, msg: ComparisonReady) -> None:
        msg.stop()
        self.query_one("#task-note", Static).update(msg.payload.note)
        self.query_one(ViewTable).show(msg.payload)
