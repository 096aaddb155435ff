"""Missing evaluations: the (model, task, regime) cells the selection lacks, and a fill run.

The models passing the filters are listed in a stable order (runnable ones first, each group by
name), each with what a run needs or why it cannot run (`store.runnable`: catalog data only, no
engine import). Ticks and the run options (regimes, device, precision, batch size, trust remote
code, executor and Ray address) live in the app's `FillChoices`, so they survive closing and
reopening the screen (the app keeps the screen itself installed while the snapshot is the same:
`reopen`). The candidates, their runnability and their missing cells for the selection, the
regimes and the device come from the views' cache (`geneb_tui.core.view_cache.missing_view`):
painted when the screen opens if the background precomputation has them, else computed in a
worker behind a "computing…" note; a tick only filters them (no recomputation). What a run
takes (models, cells, tasks, regimes, options, the command) and whether it waits for the trust
toggle are `geneb_tui.core.fill_plan`'s decisions: the screen shows them and asks.

The fill runs `geneb-engine fill --json` as a subprocess in a worker thread; each JSON event
becomes a `FillProgress` message; while it runs the status shows the latest progress line, the
executor's resources and each worker's latest throughput. Cancel sends SIGTERM: the engine
keeps the fragments it finished and never shows a partial one. The final state comes from
`core.fill.outcome`: done (the engine's `done` event), failed (with the engine's one-line
message) or cancelled (only when the user cancelled before the end). When the run ends the app
reloads the store.
"""

from __future__ import annotations

import subprocess

from rich.markup import escape
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import (
    Button,
    DataTable,
    Header,
    Input,
    Label,
    ProgressBar,
    Static,
)

from geneb_tui.actions import MISSING_KEYS, bindings
from geneb_tui.components.footer import KeysFooter
from geneb_tui.components.once import dismiss_once, rearm
from geneb_tui.components.painted_table import PaintedTable
from geneb_tui.components.removed import unless_removed
from geneb_tui.components.typed_input import TypedInput
from geneb_tui.core import content_cache, fill, fill_plan, perf, view_cache
from geneb_tui.core.cycle import cycled
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot
from geneb_tui.messages import ComparisonReady, FillFinished, FillProgress
from store import runnable
from store.catalog import params_text
from store.paths import StorePaths
from store.vocab.encoder_kinds import DTYPES
from store.vocab.executors import EXECUTORS
from store.vocab.protocol import REGIMES

REGIME_CHOICES: tuple[str, ...] = ("all", *REGIMES)
MAX_CELL_ROWS = 500          # the cells list shows this many; the note gives the total
TICKED, UNTICKED, BLOCKED = "[x]", "[ ]", " - "
STATE_STYLES = {"done": "bold green", "failed": "bold red", "cancelled": "bold yellow"}


@dismiss_once
class MissingScreen(Screen[None]):
    BINDINGS = bindings(MISSING_KEYS)

    def __init__(self, paths: StorePaths, snapshot: StoreSnapshot, filters: Filters,
                 choices: fill.FillChoices | None = None) -> None:
        super().__init__()
        self.paths = paths
        self.snapshot = snapshot
        self.filters = filters
        self.choices = choices if choices is not None else fill.FillChoices()
        self.candidates: list[str] = []
        self.assessed: dict[str, runnable.Runnability] = {}
        self.missing_by_model: dict[str, int] = {}
        self._memory: int | None = None
        self._all_cells: tuple[tuple[str, str, str], ...] = ()   # every candidate's
        self._token = 0          # the content request shown (a late one is dropped)
        self._computing = False
        self.cells: list[tuple[str, str, str]] = []
        self.proc: subprocess.Popen | None = None
        self.cancelled = False
        self.running = False
        self.last_command: list[str] = []
        self.events: list[fill.FillEvent] = []   # every event of the current run, in order
        self._line = ""                           # the status's progress line (markup)
        self._executor = ""                       # the run's `executor` event, in one line
        self._rates: dict[str, str] = {}          # worker -> its latest throughput
        self.outcome: fill.FillOutcome | None = None
        self._pending_filters: Filters | None = None
        self._ready = False      # the widgets exist (on_mount ran)
        self.perf: dict[str, str] = {}   # model -> its embedding throughput (core.perf)
        self.stored: dict[str, str] = {}  # model -> its bytes in the store (core.perf)
        self.store_line = ""             # the store's bytes (core.perf)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="missing-note", classes="view-note")
        with Horizontal(id="missing-options"):
            yield Static(id="options-text")
            yield Label(" [b]b[/b] batch ")
            yield TypedInput(str(self.choices.batch_size or ""), placeholder="auto",
                             id="batch-size", compact=True, restrict=r"[0-9]*", max_length=6)
        with Horizontal(id="executor-options"):
            yield Static(id="executor-text")
            yield Label(" [b]A[/b] address ", id="address-label")
            yield TypedInput(self.choices.address, placeholder="empty: a local Ray instance",
                             id="ray-address", compact=True, restrict=r"\S*")
        yield PaintedTable(id="missing-models", cursor_type="row", zebra_stripes=True)
        yield Static(id="model-detail")
        yield PaintedTable(id="missing-cells", cursor_type="row", zebra_stripes=True)
        yield ProgressBar(id="fill-progress", show_eta=False)
        yield Static("Tick models (space), then g runs geneb-engine fill for their missing "
                     "cells; k cancels.", id="fill-status")
        with Horizontal(id="missing-buttons", classes="buttons"):
            yield Button("Run fill", variant="primary", id="run-fill", compact=True)
            yield Button("Cancel run", variant="error", id="cancel-fill", disabled=True,
                         compact=True)
            yield Button("Back", id="close-missing", compact=True)
        yield KeysFooter()

    def on_mount(self) -> None:
        models = self.query_one("#missing-models", DataTable)
        models.add_column("", key="tick")
        models.add_column("Model", key="display")
        models.add_column("Params", key="params")
        models.add_column("Missing", key="missing")
        models.add_column("Needs / why not", key="needs")
        models.add_column("ID", key="id")
        cells = self.query_one("#missing-cells", DataTable)
        cells.add_columns("Model", "Task", "Category", "Regime")
        self._ready = True
        self.query_one(ProgressBar).display = False    # shown once a run starts
        self.reassess()
        models.focus()
        self._load_perf()

    @work(thread=True, exclusive=True, group="perf")
    def _load_perf(self) -> None:
        """The models' embedding throughput (the runs table) and their bytes in the store, read
        off the UI thread; what cannot be read leaves its line out (telemetry and sizes:
        `doctor` reports a damaged store)."""
        try:
            lines = perf.perf_lines(self.paths)
        except Exception:           # noqa: BLE001 - never worth failing the screen for
            lines = {}
        suite = self.filters.suite
        try:
            stored = perf.stored_lines(self.paths, list(self.snapshot.catalog), suite,
                                       self.snapshot.suite_tasks(suite)["task_id"].to_list())
        except Exception:           # noqa: BLE001 - never worth failing the screen for
            stored = ({}, "")
        self.app.call_from_thread(self._perf_loaded, lines, stored)

    @unless_removed
    def _perf_loaded(self, lines: dict[str, str], stored: tuple[dict[str, str], str]) -> None:
        self.perf, (self.stored, self.store_line) = lines, stored
        if self._ready and self.is_attached:
            self._update_detail()

    # -- what can run ------------------------------------------------------------------------
    @property
    def regimes(self) -> tuple[str, ...]:
        return view_cache.regimes_of(self.choices.regimes)

    def reassess(self) -> None:
        """Candidates, their runnability on the chosen device, their missing cells and every
        list: from the cache at once, else from a worker."""
        self._token += 1
        args = (self.filters, self.regimes, self.choices.device, self.choices.dtype)
        cached = content_cache.cache_of(self.snapshot).peek(content_cache.missing_key(*args))
        if cached is not None:
            self._apply(cached)
            return
        self._apply(view_cache.MissingData((), {}, None, ()))   # never the previous lists
        self._computing = True
        if self._ready:
            self._update_texts()
            self._update_detail()
        self._compute(self.snapshot, *args, self._token)

    @work(thread=True, exclusive=True, group="missing")
    def _compute(self, snap: StoreSnapshot, filters: Filters, regimes: tuple[str, ...],
                 device: str, dtype: str, token: int) -> None:
        try:
            data = view_cache.missing_view(snap, filters, regimes, device, dtype)
        except Exception as exc:  # a bug: told, never a traceback over the UI
            data = f"{type(exc).__name__}: {exc}"
        self.post_message(ComparisonReady("missing", data, token))

    @on(ComparisonReady)
    @unless_removed
    def _computed(self, msg: ComparisonReady) -> None:
        msg.stop()
        if msg.token != self._token:
            return       # the selection, regimes or device changed meanwhile
        if isinstance(msg.payload, str):
            self._computing = False
            self.app.report_internal_error("Missing evaluations", msg.payload)
            return
        self._apply(msg.payload)

    def _apply(self, data: view_cache.MissingData) -> None:
        self._computing = False
        self.assessed, self._memory = data.assessed, data.memory
        self.candidates = list(data.candidates)
        self._all_cells = data.cells
        self.refresh_all()

    @property
    def ticked(self) -> list[str]:
        """Ticked runnable models shown, in the list's order (`fill_plan.ticked`)."""
        return fill_plan.ticked(self.candidates, self.choices.ticked, self.assessed)

    def refresh_all(self) -> None:
        if not self._ready:
            return
        self.missing_by_model = fill_plan.missing_counts(self.candidates, self._all_cells)
        self.cells = fill_plan.cells_of(self._all_cells, self.ticked)
        self._fill_models()
        self._fill_cells()
        self._update_texts()

    def _tick_text(self, m: str) -> Text:
        if not self.assessed[m].runnable:
            return Text(BLOCKED, style="dim")
        if m in self.choices.ticked:
            return Text(TICKED, style="bold green")
        return Text(UNTICKED)

    def _needs_text(self, m: str) -> Text:
        a = self.assessed[m]
        text = fill_plan.needs_text(a, self.choices.trust_remote_code)
        if not a.runnable:
            return Text(text, style="dim")
        return Text(text, style="bold yellow" if a.warning or a.unsure else "")

    def _fill_models(self) -> None:
        table = self.query_one("#missing-models", DataTable)
        at = table.cursor_row
        table.clear()
        known = not self.snapshot.suite_tasks(self.filters.suite).is_empty()
        for m in self.candidates:
            meta = self.snapshot.model_meta(m)
            dim = "" if self.assessed[m].runnable else "dim"
            table.add_row(self._tick_text(m), Text(str(meta.get("display") or m), style=dim),
                          Text(params_text(meta.get("params")), style=dim, justify="right"),
                          Text(str(self.missing_by_model.get(m, 0)) if known else "?",
                               style=dim, justify="right"),
                          self._needs_text(m), Text(m, style="dim"), key=m)
        if self.candidates:
            table.move_cursor(row=min(at, len(self.candidates) - 1), animate=False)
        self._update_detail()

    def _fill_cells(self) -> None:
        tasks = self.snapshot.suite_tasks(self.filters.suite)
        labels = dict(zip(tasks["task_id"], tasks["label"], strict=True))
        cats = dict(zip(tasks["task_id"], tasks["category"], strict=True))
        table = self.query_one("#missing-cells", DataTable)
        table.clear()
        for m, t, r in self.cells[:MAX_CELL_ROWS]:
            table.add_row(Text(m), Text(str(labels.get(t, t))), Text(str(cats.get(t, ""))),
                          Text(r))

    def _update_texts(self) -> None:
        f, c = self.filters, self.choices
        regimes = "all regimes" if c.regimes == "all" else f"regime {c.regimes}"
        where = f"{f.suite}, {regimes}" + (f", {f.category}" if f.category else "")
        n_run = sum(a.runnable for a in self.assessed.values())
        n_not = len(self.assessed) - n_run
        hidden = len(c.ticked - set(self.candidates))
        if self._computing:
            note = f"Computing the missing cells ({escape(where)})…"
        elif self.snapshot.suite_tasks(f.suite).is_empty():
            note = (f"[b]{escape(f.suite)}[/b]: its tasks are not in the store yet; a run "
                    f"computes the whole suite for the ticked models ({regimes}).")
        else:
            shown = (f" (first {MAX_CELL_ROWS} listed)" if len(self.cells) > MAX_CELL_ROWS
                     else "")
            note = (f"[b]{len(self.cells)} missing cells[/b]{shown} ({escape(where)}) for "
                    f"{len(self.ticked)} ticked of {n_run} runnable models"
                    + (f"; {n_not} not runnable here" if n_not else "") + ".")
        if hidden:
            note += f" {hidden} ticked model(s) hidden by the filters."
        if self.snapshot.catalog_error:
            note += (" [b]Your model files could not be read[/b]: "
                     + escape(self.snapshot.catalog_error))
        self.query_one("#missing-note", Static).update(note)
        device = c.device
        if device == "auto":
            device = f"auto={runnable.resolved_device('auto')}"
        mem = f" {runnable.format_bytes(self._memory)}" if self._memory else ""
        trust = TICKED if c.trust_remote_code else UNTICKED
        self.query_one("#options-text", Static).update(
            f"[b]r[/b] regimes [b]{escape(c.regimes)}[/b] · [b]d[/b] device "
            f"[b]{escape(device)}[/b]{mem} · [b]t[/b] trust code [b]{escape(trust)}[/b] ·")
        ray = c.executor == "ray"
        self.query_one("#executor-text", Static).update(
            f"[b]p[/b] precision [b]{escape(c.dtype)}[/b] · "
            f"[b]e[/b] executor [b]{escape(c.executor)}[/b]" + (" ·" if ray else ""))
        for widget in (self.query_one("#address-label"), self.query_one("#ray-address")):
            widget.display, widget.disabled = ray, not ray

    def _update_detail(self) -> None:
        table = self.query_one("#missing-models", DataTable)
        detail = self.query_one("#model-detail", Static)
        if not self.candidates:
            detail.update("" if self._computing else
                          "[dim]No catalog model passes the filters (x clears them).[/]")
            return
        m = self.candidates[min(table.cursor_row, len(self.candidates) - 1)]
        a, meta = self.assessed[m], self.snapshot.model_meta(m)
        source = (self.snapshot.catalog.get(m) or {}).get("hub_id") or \
            (self.snapshot.catalog.get(m) or {}).get("path") or ""
        head = f"[b]{escape(m)}[/b]" + (f" ({escape(source)})" if source else "")
        if not a.runnable:
            body = f"[b]not runnable here[/b]: {escape(a.why)}"
        else:
            body = escape(fill_plan.detail_text(a))
        note = meta.get("notes")
        if note and a.needs and a.needs in str(note):
            note = None   # the k-mer baselines' notes say what the needs column says
        speed = (f"\n[dim]embedded here: {escape(self.perf[m])}[/]" if m in self.perf else "")
        stored = (f"\n[dim]stored here: {escape(self.stored[m])}[/]" if m in self.stored
                  else "") + (f"\n[dim]{escape(self.store_line)}[/]" if self.store_line else "")
        detail.update(f"{head}: {body}" + (f" [dim]({escape(str(note))})[/]" if note else "")
                      + speed + stored)

    # -- selection ---------------------------------------------------------------------------
    def _cursor_model(self) -> str | None:
        table = self.query_one("#missing-models", DataTable)
        if not self.candidates:
            return None
        return self.candidates[min(table.cursor_row, len(self.candidates) - 1)]

    def _set_status(self, text: str) -> None:
        if not self.running:
            self.query_one("#fill-status", Static).update(text)

    def action_toggle(self) -> None:
        m = self._cursor_model()
        if m is None:
            return
        a = self.assessed[m]
        if not a.runnable:
            self._set_status(f"[b]{escape(m)}[/b] cannot run from here: {escape(a.why)}")
            return
        self.choices.ticked ^= {m}
        self.refresh_all()

    @on(DataTable.RowSelected, "#missing-models")
    def _row_selected(self) -> None:
        self.action_toggle()

    @on(DataTable.RowHighlighted, "#missing-models")
    def _row_highlighted(self) -> None:
        self._update_detail()

    def action_tick_all(self) -> None:
        self.choices.ticked |= {m for m in self.candidates if self.assessed[m].runnable}
        self.refresh_all()

    def action_tick_none(self) -> None:
        self.choices.ticked.clear()
        self.refresh_all()

    def action_next_regimes(self) -> None:
        self.choices.regimes = cycled(REGIME_CHOICES, self.choices.regimes)
        self.reassess()

    def action_next_device(self) -> None:
        self.choices.device = cycled(runnable.DEVICES, self.choices.device)
        self.reassess()

    def action_next_dtype(self) -> None:
        self.choices.dtype = cycled(DTYPES, self.choices.dtype)
        self.reassess()     # the weights' memory estimate is at the precision

    def action_toggle_trust(self) -> None:
        self.choices.trust_remote_code = not self.choices.trust_remote_code
        self.refresh_all()

    def action_batch_size(self) -> None:
        self.query_one("#batch-size", Input).focus()

    @on(Input.Changed, "#batch-size")
    def _batch_changed(self, event: Input.Changed) -> None:
        try:
            self.choices.batch_size = fill.parse_batch_size(event.value)
        except ValueError as exc:
            self._set_status(f"[b]Batch size[/b]: {escape(str(exc))}")

    @on(Input.Submitted, "#batch-size")
    def _batch_done(self) -> None:
        self.query_one("#missing-models", DataTable).focus()

    def action_next_executor(self) -> None:
        self.choices.executor = cycled(EXECUTORS, self.choices.executor)
        if self.choices.executor != "ray" and self.focused is self.query_one("#ray-address"):
            self.query_one("#missing-models", DataTable).focus()
        self._update_texts()

    def action_address(self) -> None:
        if self.choices.executor != "ray":
            self._set_status("The address is the Ray executor's: press e to choose it first.")
            return
        self.query_one("#ray-address", Input).focus()

    @on(Input.Changed, "#ray-address")
    def _address_changed(self, event: Input.Changed) -> None:
        try:
            self.choices.address = fill.parse_address(event.value)
        except ValueError:
            pass             # said on Enter and when running; half-typed addresses are normal

    @on(Input.Submitted, "#ray-address")
    def _address_done(self, event: Input.Submitted) -> None:
        try:
            fill.parse_address(event.value)
        except ValueError as exc:
            self._set_status(f"[b]Ray address[/b]: {escape(str(exc))}")
            return
        self.query_one("#missing-models", DataTable).focus()

    def snapshot_updated(self, snapshot: StoreSnapshot, filters: Filters) -> None:
        """The app reloaded the store (after a run): recompute what is still missing, for
        the selection that fits the new snapshot (kept for after a run still going)."""
        self.snapshot = snapshot
        if self.running:
            self._pending_filters = filters
        else:
            self.filters = filters
        if self._ready:
            self.reassess()

    def reopen(self, filters: Filters) -> None:
        """Show the screen again (the app keeps it installed): dismissable once more, its
        lists, cursor and last run's outcome as they were, following `filters` if the
        selection moved on while it was closed; the throughput lines read again."""
        rearm(self)
        if filters != self.filters:
            self.filters_updated(filters)
        if self._ready:
            self._load_perf()

    def filters_updated(self, filters: Filters) -> None:
        if self.running:
            self._pending_filters = filters
            return
        self.filters = filters
        if self._ready:
            self.reassess()

    # -- the run -----------------------------------------------------------------------------
    def _plan(self) -> fill_plan.FillPlan | fill_plan.Refused:
        """The run of the ticked models' missing cells, or why not (`core.fill_plan.plan`)."""
        return fill_plan.plan(
            self.paths.root, self.filters.suite,
            self.snapshot.suite_tasks(self.filters.suite)["task_id"].to_list(), self.ticked,
            self.cells, self.assessed, self.choices, self.regimes,
            self.query_one("#batch-size", Input).value,
            self.query_one("#ray-address", Input).value)

    def action_run_fill(self) -> None:
        if self.running:
            return
        run = self._plan()
        status = self.query_one("#fill-status", Static)
        if isinstance(run, fill_plan.Refused):
            status.update(escape(run.why))
            return
        cmd = list(run.command)
        self.running, self.cancelled, self.outcome = True, False, None
        self.last_command, self.events = cmd, []
        self._executor, self._rates = "", {}
        self.query_one("#run-fill", Button).disabled = True
        self.query_one("#cancel-fill", Button).disabled = False
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self._line = ("Starting: " + escape(run.shown)
                      + (f"\n[b yellow]{escape(run.warning)}[/]" if run.warning else ""))
        status.update(self._line)
        self._run(cmd)

    @work(thread=True, exclusive=True, group="fill")
    def _run(self, cmd: list[str]) -> None:
        try:
            proc = fill.start(cmd)
        except OSError as exc:
            self.post_message(FillFinished(-1, False, f"geneb-engine fill could not start: "
                                                      f"{exc}"))
            return
        self.proc = proc
        if self.cancelled:           # k pressed while it was starting
            proc.terminate()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.strip():
                    self.post_message(FillProgress(fill.parse_line(line)))
            rc = proc.wait()
        except Exception as exc:     # a broken pipe: reported as the run's failure
            self.post_message(FillFinished(-1, self.cancelled, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(FillFinished(rc, self.cancelled, fill.stderr_text(proc)))

    def action_cancel_fill(self) -> None:
        if not self.running or self.cancelled:
            return
        self.cancelled = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
        self.query_one("#fill-status", Static).update(
            "Cancelling… finished cells are kept; nothing partial is written.")

    @on(FillProgress)
    def _progress(self, msg: FillProgress) -> None:
        ev = msg.event
        self.events.append(ev)
        bar = self.query_one(ProgressBar)
        if ev.kind == "plan":
            total = int(ev.data.get("cells_missing", 0))
            bar.update(total=max(total, 1), progress=0 if total else 1)
            self._line = (f"{ev.data.get('cells_total', '?')} cells in the plan, {total} to "
                          "compute…")
        elif ev.kind == "cell":
            bar.update(total=max(ev.total, 1), progress=ev.done)
            eta = ev.data.get("eta_s")
            eta_s = f", about {eta:.0f} s left" if isinstance(eta, int | float) else ""
            how = "" if ev.data.get("computed", True) else " (computed by another process)"
            self._line = (f"{ev.done}/{ev.total}: {escape(str(ev.data.get('model')))} × "
                          f"{escape(str(ev.data.get('task')))} ({ev.data.get('regime')})"
                          f"{how}{eta_s}")
        elif ev.kind == "warning":
            self._line = f"[yellow]warning:[/] {escape(str(ev.data.get('message')))}"
        elif ev.kind == "remote_code":   # which code at which commit runs (engine.encoders.pins)
            self._line = escape(str(ev.data.get("message")))
        elif ev.kind == "done":
            bar.update(total=bar.total or 1, progress=bar.total or 1)
            self._line = "Done; reloading the store…"
        elif ev.kind == "executor":
            self._executor = fill.executor_text(ev)
        elif ev.kind == "placement":
            self._line = f"Placed {escape(fill.placement_text(ev))}"
        elif ev.kind == "embedded" and (rate := fill.worker_rate(ev)) is not None:
            self._rates[rate[0]] = rate[1]
        else:
            return               # a log line or an event this dashboard does not know
        resources = " · ".join([*filter(None, [self._executor]),
                                *(f"{w}: {r}" for w, r in self._rates.items())])
        self.query_one("#fill-status", Static).update(
            self._line + (f"\n[dim]{escape(resources)}[/]" if resources else ""))

    @on(FillFinished)
    def _finished(self, msg: FillFinished) -> None:
        self.running = False
        self.proc = None
        self.outcome = fill.outcome(self.events, msg.returncode, msg.cancelled, msg.stderr)
        self.query_one("#run-fill", Button).disabled = False
        self.query_one("#cancel-fill", Button).disabled = True
        if self.outcome.state == "done":
            bar = self.query_one(ProgressBar)
            bar.update(total=bar.total or 1, progress=bar.total or 1)
        state, message = self.outcome.state, self.outcome.message
        if state == "failed":
            message = message.removeprefix("geneb-engine fill: ")
            text = Text.assemble(("Failed: ", STATE_STYLES[state]), message)
        else:
            text = Text(message, style=STATE_STYLES[state])
        self.query_one("#fill-status", Static).update(text)
        if self._pending_filters is not None:
            self.filters, self._pending_filters = self._pending_filters, None
        self.app.action_refresh()

    def on_unmount(self) -> None:
        """Leaving the app mid-run stops the engine (it keeps what it finished)."""
        if self.proc is not None and self.proc.poll() is None:
            self.cancelled = True
            self.proc.terminate()

    # -- buttons -----------------------------------------------------------------------------
    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        {"run-fill": self.action_run_fill, "cancel-fill": self.action_cancel_fill,
         "close-missing": self.action_close}[event.button.id]()

    def action_close(self) -> None:
        if self.focused in (self.query_one("#batch-size"), self.query_one("#ray-address")):
            self.query_one("#missing-models", DataTable).focus()
            return
        if self.running:
            self.notify("A fill is running: cancel it first (k), or wait.", severity="warning")
            return
        self.dismiss()
