"""The export modal: asks for a path, returns it (writing happens in a worker)."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

from geneb_tui.actions import EXPORT_KEYS, bindings
from geneb_tui.components.once import dismiss_once
from geneb_tui.components.typed_input import TypedInput


@dismiss_once
class ExportScreen(ModalScreen[Path | None]):
    BINDINGS = bindings(EXPORT_KEYS)

    TABLE = ("the table as shown at full precision, model ids, each score's rank among the "
             "rows shown and in the store, and the selection")

    def __init__(self, default: Path, n_rows: int, n_cols: int, what: str = TABLE) -> None:
        super().__init__()
        self.default = default
        self.n_rows, self.n_cols = n_rows, n_cols
        self.what = what    # what the file holds (plain text)

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog", classes="dialog"):
            yield Label(f"[b]Export to CSV[/b] — {self.n_rows} rows × {self.n_cols} columns: "
                        f"{escape(self.what)}", id="export-title")
            yield TypedInput(str(self.default), id="export-path",
                             placeholder="path/to/file.csv")
            yield Label("", id="export-error")
            with Horizontal(classes="buttons"):
                yield Button("Export", variant="primary", id="export-ok")
                yield Button("Cancel", id="export-cancel")

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self._ok(event.value)          # the value Enter was pressed on

    @on(Button.Pressed, "#export-ok")
    def _pressed(self) -> None:
        self._ok(self.query_one("#export-path", Input).value)

    def _ok(self, text: str) -> None:
        text = text.strip()
        if not text:
            self.query_one("#export-error", Label).update("Give a file path.")
            return
        path = Path(text).expanduser()
        if path.is_dir():
            self.query_one("#export-error", Label).update(
                f"{path} is a folder; add a file name, e.g. {path / 'geneb.csv'}")
            return
        self.dismiss(path)

    @on(Button.Pressed, "#export-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
