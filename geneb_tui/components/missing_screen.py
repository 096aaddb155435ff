"""Missing evaluations: the (model, task, regime) cells the selection lacks, and a fill run.

The fill runs `geneb-engine fill --json` as a subprocess in a worker thread; each JSON event
becomes a `FillProgress` message. Cancel sends SIGTERM: the engine keeps the fragments it
finished and never shows a partial one. When the run ends the app reloads the store.
"""

from __future__ import annotations

import subprocess

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, DataTable, Footer, Header, ProgressBar, SelectionList, Static

from geneb_tui.core import fill
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot, candidate_models, missing_cells
from geneb_tui.messages import FillFinished, FillProgress
from store.paths import StorePaths


class MissingScreen(Screen[None]):
    BINDINGS = [
        Binding("g", "run_fill", "Run fill"),
        Binding("k", "cancel_fill", "Cancel run"),
        Binding("escape", "close", "Back"),
    ]

    def __init__(self, paths: StorePaths, snapshot: StoreSnapshot, filters: Filters,
                 shown_models: list[str]) -> None:
        super().__init__()
        self.paths = paths
        self.snapshot = snapshot
        self.filters = filters
        self.candidates = candidate_models(snapshot, filters)
        self.preselected = [m for m in shown_models if m in self.candidates]
        self.cells: list[tuple[str, str, str]] = []
        self.proc: subprocess.Popen | None = None
        self.cancelled = False
        self.running = False
        self.last_command: list[str] = []
        self.events: list[fill.FillEvent] = []   # every event of the current run, in order

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="missing-note", classes="view-note")
        yield SelectionList[str](
            *((self._model_label(m), m, m in self.preselected) for m in self.candidates),
            id="missing-models")
        yield DataTable(id="missing-cells", cursor_type="row", zebra_stripes=True)
        yield ProgressBar(id="fill-progress", show_eta=False)
        yield Static("Select models (space), then g runs geneb-engine fill for the missing cells; "
                     "k cancels.", id="fill-status")
        with Horizontal(id="missing-buttons", classes="buttons"):
            yield Button("Run fill", variant="primary", id="run-fill")
            yield Button("Cancel run", variant="error", id="cancel-fill", disabled=True)
            yield Button("Back", id="close-missing")
        yield Footer()

    def _model_label(self, model: str) -> str:
        meta = self.snapshot.model_meta(model)
        return f"{meta.get('display') or model}  [dim]{model}[/]"

    def on_mount(self) -> None:
        table = self.query_one("#missing-cells", DataTable)
        table.add_columns("Model", "Task", "Category", "Regime")
        self.refresh_cells()
        self.query_one(SelectionList).focus()

    # -- the list ----------------------------------------------------------------------------
    @property
    def selected_models(self) -> list[str]:
        chosen = set(self.query_one(SelectionList).selected)
        return [m for m in self.candidates if m in chosen]

    def refresh_cells(self) -> None:
        self.cells = missing_cells(self.snapshot, self.filters, self.selected_models)
        tasks = self.snapshot.suite_tasks(self.filters.suite, self.filters.category)
        labels = dict(zip(tasks["task_id"], tasks["label"], strict=True))
        cats = dict(zip(tasks["task_id"], tasks["category"], strict=True))
        table = self.query_one("#missing-cells", DataTable)
        table.clear()
        for m, t, r in self.cells:
            table.add_row(m, labels.get(t, t), cats.get(t, ""), r)
        f = self.filters
        where = f"suite {f.suite}, regime {f.regime}" + (f", {f.category}" if f.category else "")
        if tasks.is_empty():
            note = (f"[b]{f.suite}[/b]: its tasks are not in the store yet; a run computes the "
                    f"whole suite for the selected models ({f.regime}).")
        else:
            note = (f"[b]{len(self.cells)} missing cells[/b] ({where}) for "
                    f"{len(self.selected_models)} of {len(self.candidates)} models "
                    "passing the filters.")
        self.query_one("#missing-note", Static).update(note)

    @on(SelectionList.SelectedChanged)
    def _selection_changed(self) -> None:
        self.refresh_cells()

    def snapshot_updated(self, snapshot: StoreSnapshot) -> None:
        """The app reloaded the store (after a run): recompute what is still missing."""
        self.snapshot = snapshot
        self.refresh_cells()

    def filters_updated(self, filters: Filters) -> None:
        if not self.running:
            self.filters = filters
            self.refresh_cells()

    # -- the run -----------------------------------------------------------------------------
    def fill_plan(self) -> list[str] | None:
        models = list(dict.fromkeys(m for m, _, _ in self.cells))
        tasks = list(dict.fromkeys(t for _, t, _ in self.cells))
        suite_known = not self.snapshot.suite_tasks(self.filters.suite).is_empty()
        if suite_known and not self.cells:
            return None
        if not suite_known:
            models = self.selected_models
            if not models:
                return None
            tasks = []
        return fill.fill_command(self.paths.root, self.filters.suite, models, tasks,
                                 [self.filters.regime])

    def action_run_fill(self) -> None:
        if self.running:
            return
        cmd = self.fill_plan()
        if cmd is None:
            self.query_one("#fill-status", Static).update(
                "Nothing to run: select models with missing cells first.")
            return
        self.running, self.cancelled = True, False
        self.last_command, self.events = cmd, []
        self.query_one("#run-fill", Button).disabled = True
        self.query_one("#cancel-fill", Button).disabled = False
        bar = self.query_one(ProgressBar)
        bar.update(total=None, progress=0)
        self.query_one("#fill-status", Static).update(
            "Starting: geneb-engine " + escape(" ".join(cmd[3:])))
        self._run(cmd)

    @work(thread=True, exclusive=True, group="fill")
    def _run(self, cmd: list[str]) -> None:
        try:
            proc = fill.start(cmd)
        except OSError as exc:
            self.post_message(FillFinished(-1, False, str(exc)))
            return
        self.proc = proc
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip():
                self.post_message(FillProgress(fill.parse_line(line)))
        rc = proc.wait()
        self.post_message(FillFinished(rc, self.cancelled, fill.stderr_text(proc)))

    def action_cancel_fill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.cancelled = True
            self.proc.terminate()
            self.query_one("#fill-status", Static).update(
                "Cancelling… finished cells are kept; nothing partial is written.")

    @on(FillProgress)
    def _progress(self, msg: FillProgress) -> None:
        ev = msg.event
        self.events.append(ev)
        bar = self.query_one(ProgressBar)
        status = self.query_one("#fill-status", Static)
        if ev.kind == "plan":
            total = int(ev.data.get("cells_missing", 0))
            bar.update(total=max(total, 1), progress=0 if total else 1)
            status.update(f"{ev.data.get('cells_total', '?')} cells in the plan, {total} to "
                          "compute…")
        elif ev.kind == "cell":
            bar.update(total=max(ev.total, 1), progress=ev.done)
            eta = ev.data.get("eta_s")
            eta_s = f", about {eta:.0f} s left" if isinstance(eta, int | float) else ""
            status.update(f"{ev.done}/{ev.total}: {escape(str(ev.data.get('model')))} × "
                          f"{escape(str(ev.data.get('task')))} ({ev.data.get('regime')}){eta_s}")
        elif ev.kind == "done":
            bar.update(progress=bar.total or 1)
            status.update(f"Done: {ev.data.get('computed', 0)} cells in "
                          f"{ev.data.get('seconds', 0)} s. Reloading the store…")
        elif ev.kind == "error":
            status.update(f"[b]Engine error:[/b] {escape(str(ev.data.get('message')))}")

    @on(FillFinished)
    def _finished(self, msg: FillFinished) -> None:
        self.running = False
        self.proc = None
        self.query_one("#run-fill", Button).disabled = False
        self.query_one("#cancel-fill", Button).disabled = True
        status = self.query_one("#fill-status", Static)
        if msg.cancelled:
            status.update("Cancelled. Finished cells were kept; run again to continue.")
        elif msg.returncode != 0:
            tail = msg.stderr.strip().splitlines()[-3:]
            status.update(f"[b]geneb-engine fill failed[/b] (exit {msg.returncode}): "
                          + escape(" ".join(tail)))
        self.app.action_refresh()

    def on_unmount(self) -> None:
        """Leaving the app mid-run stops the engine (it keeps what it finished)."""
        if self.proc is not None and self.proc.poll() is None:
            self.cancelled = True
            self.proc.terminate()

    # -- buttons -----------------------------------------------------------------------------
    @on(Button.Pressed, "#run-fill")
    def _run_pressed(self) -> None:
        self.action_run_fill()

    @on(Button.Pressed, "#cancel-fill")
    def _cancel_pressed(self) -> None:
        self.action_cancel_fill()

    @on(Button.Pressed, "#close-missing")
    def _close_pressed(self) -> None:
        self.action_close()

    def action_close(self) -> None:
        if self.running:
            self.notify("A fill is running: cancel it first (k), or wait.", severity="warning")
            return
        self.dismiss()
