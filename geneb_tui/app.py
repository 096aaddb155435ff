"""The geneb-tui application: owns the selection and the store snapshot, wires workers to widgets.

Threading rule (as harlequin): every store read or file write runs in a
`@work(thread=True, exclusive=True)` worker that posts a message; `@on` handlers own the state
and update widgets. Each request carries a token; a late result of a superseded request is
dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.screen import Screen
from textual.widgets import Footer, Header, Input

from geneb_tui.actions import ACTIONS, bindings
from geneb_tui.components.empty_store_screen import EmptyStoreScreen
from geneb_tui.components.export_screen import ExportScreen
from geneb_tui.components.filter_bar import FilterBar
from geneb_tui.components.filter_screen import FilterScreen
from geneb_tui.components.help_screen import HelpScreen
from geneb_tui.components.results_table import ResultsTable
from geneb_tui.core.filters import METRICS, REGIMES, Filters
from geneb_tui.messages import (
    ExportFinished,
    SnapshotLoaded,
    SortRequested,
    StoreLoadFailed,
    ViewBuilt,
)
from store.csv_out import write_csv
from store.paths import StorePaths

if TYPE_CHECKING:
    # polars, duckdb and pyarrow load in the first worker, so the first frame does not wait.
    from geneb_tui.core.query import StoreSnapshot, TableView


def _cycle(values, current, step: int = 1):
    values = list(values)
    if current not in values:
        return values[0]
    return values[(values.index(current) + step) % len(values)]


class GenebApp(App[None]):
    """`GenebApp(paths)`: the dashboard over one store."""

    CSS_PATH = Path(__file__).with_name("geneb.tcss")
    TITLE = "GENEB"
    BINDINGS = bindings()

    def __init__(self, paths: StorePaths, *, filters: Filters | None = None) -> None:
        super().__init__()
        self.paths = paths
        self.filters = filters or Filters()
        self.sort_key: str | None = None
        self.descending = True
        self.snapshot: StoreSnapshot | None = None
        self._damage_shown: set[str] = set()   # damaged files already reported (once each)
        self.view: TableView | None = None
        self._store_token = 0
        self._view_token = 0
        self.sub_title = str(paths.root)

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield FilterBar("reading the store…", id="filter-bar")
        yield Input(placeholder="/ search models by name (Esc: back to the table)",
                    id="search", compact=True)
        yield ResultsTable(id="results")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(ResultsTable).focus()
        # paint the first frame, then read the store (its imports run in the worker)
        self.call_after_refresh(self.action_refresh)

    # -- command palette: every action of the registry ----------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for a in ACTIONS:
            if a.action in ("quit", "help"):
                continue  # Textual's own palette entries already cover these
            yield SystemCommand(a.title, a.help, lambda a=a: self.run_action(a.action))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """On the empty-store screen only reload, help, palette and quit make sense."""
        if isinstance(self.screen, EmptyStoreScreen) and action not in (
                "refresh", "help", "quit", "command_palette"):
            return False
        return True

    # -- store reads (workers) ----------------------------------------------------------------
    def action_refresh(self) -> None:
        self._store_token += 1
        self._load_store(self._store_token)

    @work(thread=True, exclusive=True, group="store")
    def _load_store(self, token: int) -> None:
        try:
            from geneb_tui.core.query import StoreSnapshot

            snap = StoreSnapshot.load(self.paths)
        except Exception as exc:  # shown to the user, never a traceback over the UI
            self.post_message(StoreLoadFailed(f"{type(exc).__name__}: {exc}", token))
            return
        self.post_message(SnapshotLoaded(snap, token))

    @on(SnapshotLoaded)
    def _snapshot_loaded(self, msg: SnapshotLoaded) -> None:
        if msg.token != self._store_token:
            return  # superseded
        first = self.snapshot is None
        self.snapshot = msg.snapshot
        for problem in set(msg.snapshot.damage) - self._damage_shown:
            self._damage_shown.add(problem)
            self.notify(escape(problem), title="Damaged store file", severity="warning",
                        timeout=15)
        if msg.snapshot.version is not None:
            self.sub_title = f"{self.paths.root} · results as of version {msg.snapshot.version}"
        for screen in self.screen_stack:
            updated = getattr(screen, "snapshot_updated", None)
            if updated is not None:
                updated(msg.snapshot)
        empty_shown = isinstance(self.screen, EmptyStoreScreen)
        if msg.snapshot.is_empty:
            if not empty_shown:
                self.push_screen(EmptyStoreScreen(self.paths.root))
            self.refresh_bindings()
            return
        if empty_shown:
            self.pop_screen()
        self.refresh_bindings()
        if self.filters.suite not in msg.snapshot.suites():
            self.filters = self.filters.with_(suite="geneb-v1", category=None)
        if first:
            suite = msg.snapshot.suite_to_open(self.filters.suite)
            if suite != self.filters.suite:
                self.filters = self.filters.with_(suite=suite, category=None)
        self.rebuild()

    @on(StoreLoadFailed)
    def _store_failed(self, msg: StoreLoadFailed) -> None:
        if msg.token == self._store_token:
            self.notify(f"Could not read the store {self.paths.root}: {msg.error}",
                        severity="error", timeout=10)

    def rebuild(self) -> None:
        """Recompute the table for the current selection (off the UI thread)."""
        if self.snapshot is None:
            return
        self._view_token += 1
        self._build_view(self.snapshot, self.filters, self.sort_key, self.descending,
                         self._view_token)

    @work(thread=True, exclusive=True, group="view")
    def _build_view(self, snap: StoreSnapshot, filters: Filters, sort_key: str | None,
                    descending: bool, token: int) -> None:
        from geneb_tui.core.query import build_view

        self.post_message(ViewBuilt(build_view(snap, filters, sort_key, descending), token))

    @on(ViewBuilt)
    def _view_built(self, msg: ViewBuilt) -> None:
        if msg.token != self._view_token:
            return  # a newer selection is on its way
        self.view = msg.view
        self.sort_key, self.descending = msg.view.sort_key, msg.view.descending
        self.query_one(ResultsTable).show(msg.view)
        self.query_one(FilterBar).show(msg.view)

    # -- selection ----------------------------------------------------------------------------
    def set_filters(self, filters: Filters | None) -> None:
        if filters is None or filters == self.filters:
            return
        if filters.category != self.filters.category or filters.suite != self.filters.suite:
            self.sort_key = None  # the columns change: sort by the first score column
        self.filters = filters
        for screen in self.screen_stack:
            follow = getattr(screen, "filters_updated", None)
            if follow is not None:
                follow(filters)
        search = self.query_one("#search", Input)
        if search.value != filters.search:
            with search.prevent(Input.Changed):
                search.value = filters.search
        self.rebuild()

    def action_filters(self) -> None:
        if self.snapshot is None:
            return
        from geneb_tui.core.query import FilterChoices

        choices = FilterChoices.of(self.snapshot, self.filters.suite)
        self.push_screen(FilterScreen(self.filters, choices), self.set_filters)

    def action_clear_filters(self) -> None:
        self.set_filters(self.filters.cleared())

    def action_cycle_regime(self) -> None:
        self.set_filters(self.filters.with_(regime=_cycle(REGIMES, self.filters.regime)))

    def action_cycle_metric(self) -> None:
        self.set_filters(self.filters.with_(metric=_cycle(METRICS, self.filters.metric)))

    def _step_category(self, step: int) -> None:
        if self.snapshot is None:
            return
        cats = [None, *self.snapshot.categories(self.filters.suite)]
        self.set_filters(self.filters.with_(category=_cycle(cats, self.filters.category, step)))

    def action_cycle_category(self) -> None:
        self._step_category(1)

    def action_prev_category(self) -> None:
        self._step_category(-1)

    def action_cycle_suite(self) -> None:
        if self.snapshot is not None:
            suite = _cycle(self.snapshot.suites(), self.filters.suite)
            self.set_filters(self.filters.with_(suite=suite, category=None))

    def action_search(self) -> None:
        self.query_one("#search", Input).focus()

    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        self.set_filters(self.filters.with_(search=event.value.strip()))

    @on(Input.Submitted, "#search")
    def _search_done(self) -> None:
        self.query_one(ResultsTable).focus()

    def on_key(self, event) -> None:
        search = self.query_one("#search", Input)
        if event.key == "escape" and self.focused is search and self.screen is self.screen_stack[0]:
            self.query_one(ResultsTable).focus()
            event.stop()

    # -- sorting ------------------------------------------------------------------------------
    def sort_by(self, key: str) -> None:
        if key == self.sort_key:
            self.descending = not self.descending
        else:
            # numbers: best first; names: A→Z
            self.sort_key, self.descending = key, key not in (
                "display", "source", "architecture", "tokenization", "pretraining_data")
        self.rebuild()

    @on(SortRequested)
    def _sort_requested(self, msg: SortRequested) -> None:
        self.sort_by(msg.column_key)

    def action_sort_column(self) -> None:
        key = self.query_one(ResultsTable).cursor_column_key()
        if key:
            self.sort_by(key)

    # -- screens ------------------------------------------------------------------------------
    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_compare(self) -> None:
        if self.snapshot is None:
            return
        from geneb_tui.components.compare_screen import CompareScreen

        self.push_screen(CompareScreen(self.paths, self.snapshot, self.filters))

    def action_missing(self) -> None:
        if self.snapshot is None:
            return
        from geneb_tui.components.missing_screen import MissingScreen

        shown = [] if self.view is None else list(dict.fromkeys(r.model for r in self.view.rows))
        self.push_screen(MissingScreen(self.paths, self.snapshot, self.filters, shown))

    # -- export -------------------------------------------------------------------------------
    def default_export_path(self) -> Path:
        f = self.filters
        name = f"geneb-{f.suite}-{f.regime}-{f.metric}"
        if f.category:
            name += "-" + "".join(ch if ch.isalnum() else "_" for ch in f.category)
        return Path.cwd() / f"{name}.csv"

    def action_export(self) -> None:
        view = self.view
        if view is None:
            return
        n_cols = len(view.export_header())

        def chosen(path: Path | None) -> None:
            if path is not None:
                self._export(view, path)

        self.push_screen(ExportScreen(self.default_export_path(), len(view.rows), n_cols), chosen)

    @work(thread=True, exclusive=True, group="export")
    def _export(self, view: TableView, path: Path) -> None:
        try:
            n = write_csv(path, view.export_header(), view.export_rows())
        except OSError as exc:
            self.post_message(ExportFinished(path, 0, str(exc)))
            return
        self.post_message(ExportFinished(path, n))

    @on(ExportFinished)
    def _export_finished(self, msg: ExportFinished) -> None:
        if msg.error:
            self.notify(f"Export failed: {escape(msg.error)}", severity="error", timeout=10)
        else:
            self.notify(f"Wrote {msg.rows} rows to {escape(str(msg.path))}")
