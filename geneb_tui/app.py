"""The geneb-tui application: owns the selection and the store snapshot, wires workers to widgets.

`GenebApp` holds the state, the store worker, the main table and its rank intervals, the idle
work and the export; its selection keys and sort are `geneb_tui.selection.SelectionKeys`, the
screens it opens and keeps installed `geneb_tui.screens.ScreenKeys` (parts of the one app, each
a module named for what it holds).

Threading rule (as harlequin): every store read or file write runs in a
`@work(thread=True, exclusive=True)` worker that posts a message; `@on` handlers own the state
and update widgets. Each request carries a token; a late result of a superseded request is
dropped.

Start-up: the store worker first reads the first-view cache (`geneb_tui.core.first_view`, the
standard library only) and, on a hit, the table is painted from it; then it imports the store
stack and loads the snapshot, whose view replaces the cached one and is cached for the next
start. Until the snapshot is there, the keys that need it only say that the store is being read.

Interactions: each view built is kept per request (filters, sort, rank scope) until the
snapshot changes, so a selection seen before is shown without a worker; a sort of the rows shown
only reorders them; the filter dialog's choices are computed by the store worker. The views,
the filter dialog and the help are kept installed between openings (`KEPT`) and, in a pause
once the views' content is cached, made and mounted off screen, so that opening one only
lays it out and paints it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Header

from geneb_tui.actions import ACTIONS, bindings, palette_title
from geneb_tui.components import compat  # noqa: F401  (guards a Textual crash; see there)
from geneb_tui.components.empty_store_screen import EmptyStoreScreen
from geneb_tui.components.export_screen import ExportScreen
from geneb_tui.components.filter_bar import FilterBar
from geneb_tui.components.footer import KeysFooter
from geneb_tui.components.palette import Palette
from geneb_tui.components.results_table import ResultsTable
from geneb_tui.components.typed_input import TypedInput
from geneb_tui.core import idle_gc
from geneb_tui.core.content_cache import cache_of, table_key
from geneb_tui.core.fill import FillChoices
from geneb_tui.core.filters import Filters
from geneb_tui.core.first_view import cache_start_view, read_first_view, view_key, write_first_view
from geneb_tui.core.kinds import not_shown
from geneb_tui.core.start import Start
from geneb_tui.messages import (
    ExportFinished,
    IntervalsReady,
    SnapshotLoaded,
    StoreLoadFailed,
    ViewBuilt,
    ViewFailed,
)
from geneb_tui.screens import KEPT, ScreenKeys
from geneb_tui.selection import (
    SelectionKeys,
    next_metric,
    next_regime,
    other_scope,
    step_category,
)
from store.csv_out import write_csv
from store.paths import StorePaths

IDLE_S = 1.0
"""Seconds of a pause before the app does its idle work, which on two cores would compete with
the UI thread: after a selection's table and rank intervals are shown, the views' content for it
is computed in the background (`geneb_tui.core.view_cache.precompute`); after the last input
event, Python's garbage collection runs (`geneb_tui.core.idle_gc`)."""
SHUTDOWN_WAIT_S = 5.0   # the longest the app's shutdown waits for a screen mounting off screen

if TYPE_CHECKING:
    # polars, duckdb and pyarrow load in the first worker, so the first frame does not wait.
    from geneb_tui.core.intervals import Intervals
    from geneb_tui.core.query import StoreSnapshot, TableView


REGISTRY = frozenset(a.action for a in ACTIONS)
# Actions that work on the main table only (their widgets live there).
MAIN_ONLY = frozenset({"search", "sort_column", "export", "compare", "missing", "rank_scope",
                       "significance", "recommend", "cycle_kind", "context_curve"})
# Selection changes: the main table, and the screens that follow it (comparison views, missing
# evaluations).
SELECTION = frozenset({"filters", "clear_filters", "cycle_regime", "cycle_metric",
                       "cycle_category", "prev_category", "cycle_suite"})
ANYWHERE = frozenset({"refresh", "help", "quit"})
# The keys of the main table's actions that need the snapshot (while the cached first view is
# shown they tell the user the store is still being read).
NEEDS_SNAPSHOT_KEYS = frozenset(k for a in ACTIONS if a.action not in ANYWHERE
                                for k in a.key.split(","))


@dataclass
class FirstViewRead(Message):
    """The first-view cache was read (store worker, first load): the key the view shown at
    start-up will be cached under, and the cached view when the key matched."""

    key: dict
    view: TableView | None
    version: int | None
    token: int


class GenebApp(SelectionKeys, ScreenKeys, App[None]):
    """`GenebApp(paths)`: the dashboard over one store. Its selection keys and sort are in
    `geneb_tui.selection`, the screens it opens and keeps in `geneb_tui.screens`."""

    CSS_PATH = Path(__file__).with_name("geneb.tcss")
    TITLE = "GENEB"
    BINDINGS = bindings()

    def __init__(self, paths: StorePaths, *, filters: Filters | None = None) -> None:
        super().__init__()
        self.paths = paths
        self._start = Start(filters or Filters())
        self.filters, self.sort_key, self.descending, self.rank_scope = self._start
        self.snapshot: StoreSnapshot | None = None
        self._damage_shown: set[str] = set()   # damaged files already reported (once each)
        self._catalog_error_shown: str | None = None   # the models.toml problem last reported
        self.view: TableView | None = None
        # What the missing-evaluations screen remembers while the dashboard runs.
        self.fill_choices = FillChoices()
        self._precompute_timer: Timer | None = None   # the views' background precomputation
        self._collect_timer: Timer | None = None      # garbage collection in a pause (idle_gc)
        self._last_input = 0.0                        # time.monotonic() of the last input event
        # Screens kept installed between openings, by name (`_kept_screen`), and the snapshot
        # and filters whose views' content the background precomputation has cached.
        self._kept: dict[str, Screen] = {}
        self._views_cached: tuple[StoreSnapshot, Filters] | None = None
        self._prepared = asyncio.Event()   # clear while a kept screen mounts off screen
        self._prepared.set()
        self.internal_errors: list[str] = []   # a worker that failed (shown, and kept for tests)
        self._store_token = 0
        self._view_token = 0
        self._shown_token: int | None = None   # the token of the view shown
        # From the first load, the first-view cache's key (of `_start`) and the token of the
        # first view built (the one cached for the next start).
        self._first_view_key: dict | None = None
        self._first_view_token: int | None = None
        self._rebuild_pending = False
        # The main tables built on this snapshot are kept in its view cache (`geneb_tui.core.
        # view_cache`) by request (filters, sort, rank scope): a selection seen before, or one
        # key away from the one shown and built in a pause (`_neighbours`), is shown without a
        # worker.
        # The main table's rank intervals: computed in a worker after the table is shown, kept
        # per snapshot and entries (a sort or a category change reuses them).
        self._snapshot_serial = 0
        self._intervals: dict[tuple, Intervals] = {}
        self._intervals_running: tuple | None = None
        self.sub_title = str(paths.root)

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield FilterBar("reading the store…", id="filter-bar")
        yield TypedInput(placeholder="/ search models by name (Esc: back to the table)",
                         id="search", compact=True)
        yield ResultsTable(id="results")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one(ResultsTable).focus()
        # paint the first frame, then read the store (its imports run in the worker)
        self.call_after_refresh(self.action_refresh)

    # -- where each action applies, the command palette, the keys --------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for a in ACTIONS:
            if a.action in ("quit", "help") or not self.allowed(a.action, screen):
                continue  # Textual's own palette entries already cover quit and help
            yield SystemCommand(palette_title(a), a.help,
                                lambda a=a: self._run_if_allowed(a.action))

    def action_command_palette(self) -> None:
        if self.use_command_palette and not Palette.is_open(self):
            self.push_screen(Palette(id="--command-palette"))

    async def _run_if_allowed(self, action: str) -> None:
        """A palette entry's callback (Textual awaits what `call_later` runs)."""
        if self.allowed(action, self.screen):
            await self.run_action(action)

    def allowed(self, action: str, screen: Screen) -> bool:
        """Which of the dashboard's actions make sense on `screen` (the footer, the bindings
        and the palette follow this): everything on the main table; selection changes where a
        screen follows the selection; reload, help and quit everywhere; on the empty-store
        screen only reload, help and quit."""
        if action not in REGISTRY or action in ANYWHERE:
            return True
        if isinstance(screen, EmptyStoreScreen) or self.snapshot is None:
            return False
        if screen is self.screen_stack[0]:
            return True
        if isinstance(screen, ModalScreen) or action in MAIN_ONLY:
            return False
        return action in SELECTION and hasattr(screen, "filters_updated")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.allowed(action, self.screen)

    def on_key(self, event) -> None:
        if (self.snapshot is None and self.view is not None and event.key in NEEDS_SNAPSHOT_KEYS
                and self._main_on_top()):
            self.notify("Still reading the store (the table is the one shown last time); "
                        "this key works in a moment", timeout=2)
            return
        search = self._main_search()
        if event.key == "escape" and self.focused is search and self._main_on_top():
            self.query_one(ResultsTable).focus()
            event.stop()

    # -- store reads (workers) ----------------------------------------------------------------
    def action_refresh(self) -> None:
        self.load_kind(self.filters.kind if self.snapshot is not None else None)

    def load_kind(self, kind: str | None) -> None:
        """Read the store's results of task `kind` (None: the kind it opens on, its first)."""
        self._store_token += 1
        self._load_store(self._store_token, kind)

    @work(thread=True, exclusive=True, group="store")
    def _load_store(self, token: int, kind: str | None) -> None:
        first = self.snapshot is None
        key = view_key(self.paths, *self._start)   # before the read: a later commit misses
        if first:   # the cached first view, before any import
            view, version = read_first_view(self.paths, key) or (None, None)
            self.post_message(FirstViewRead(key, view, version, token))
        try:
            from geneb_tui.core.query import StoreSnapshot  # lazy: polars, duckdb, pyarrow

            snap = StoreSnapshot.load(self.paths, kind)
        except Exception as exc:  # shown to the user, never a traceback over the UI
            self.post_message(StoreLoadFailed(f"{type(exc).__name__}: {exc}", token))
            return
        self.post_message(SnapshotLoaded(snap, token))
        for suite in snap.suites():   # the filter dialog's choices, off the UI thread
            snap.filter_choices(suite)
        if not first and not snap.is_empty and snap.kind == snap.kinds[0]:
            # a reload (Ctrl+R, after a run) of the kind the dashboard opens on: cached for the
            # next start, whatever is shown now (a cache folder it cannot write: none)
            cache_start_view(self.paths, snap, key, self._start)

    @on(FirstViewRead)
    def _first_view_read(self, msg: FirstViewRead) -> None:
        if msg.token != self._store_token or self.snapshot is not None:
            return
        self._first_view_key = msg.key
        if msg.view is None:
            return
        self.view = msg.view
        self.query_one(ResultsTable).show(msg.view)
        self.query_one(FilterBar).show(msg.view)
        if msg.version is not None:
            self.sub_title = f"{self.paths.root} · results as of version {msg.version}"

    @on(SnapshotLoaded)
    def _snapshot_loaded(self, msg: SnapshotLoaded) -> None:
        if msg.token != self._store_token:
            return  # superseded
        first = self.snapshot is None
        self.snapshot = msg.snapshot
        self._snapshot_serial += 1
        self._intervals.clear()
        self._intervals_running = None
        for problem in set(msg.snapshot.damage) - self._damage_shown:
            self._damage_shown.add(problem)
            self.notify(escape(problem), title="Damaged store file", severity="warning",
                        timeout=15)
        for note in sorted(set(msg.snapshot.notes) - self._damage_shown):   # once each too
            self._damage_shown.add(note)
            self.notify(escape(note), title="What is current", timeout=15)
        error = msg.snapshot.catalog_error
        if error and error != self._catalog_error_shown:
            self.notify(escape(f"{error}; its models are left out (fix it, then Ctrl+R)"),
                        severity="warning", timeout=15)
        self._catalog_error_shown = error
        if msg.snapshot.version is not None:
            self.sub_title = f"{self.paths.root} · results as of version {msg.snapshot.version}"
        # the selection that fits the new snapshot (another kind: its metric), handed to the
        # screens with it: a view recomputed over one kind's results with another's metric
        # failed (found by the monkey on a store of geneb-kinds)
        filters = msg.snapshot.filters_for(self.filters, opening=first)
        for screen in self.screen_stack:
            updated = getattr(screen, "snapshot_updated", None)
            if updated is not None:
                updated(msg.snapshot, filters)
        self._views_cached = None
        for name, screen in list(self._kept.items()):   # a closed view of the last snapshot
            if getattr(screen, "snapshot", msg.snapshot) is not msg.snapshot:
                self._forget(name)
        empty_shown = any(isinstance(s, EmptyStoreScreen) for s in self.screen_stack)
        if msg.snapshot.is_empty:
            if not empty_shown:
                self.push_screen(EmptyStoreScreen(self.paths.root))
            self.refresh_bindings()
            return
        while empty_shown and len(self.screen_stack) > 1:   # the empty screen and any above it
            top = self.screen
            self.pop_screen()
            empty_shown = not isinstance(top, EmptyStoreScreen)
        self.refresh_bindings()
        self.filters = filters
        self.rebuild()
        if first and self._first_view_key is not None:
            self._first_view_token = self._view_token

    @on(StoreLoadFailed)
    def _store_failed(self, msg: StoreLoadFailed) -> None:
        if msg.token == self._store_token:
            self.notify(f"Could not read the store {self.paths.root}: {msg.error}",
                        severity="error", timeout=10)

    def rebuild(self) -> None:
        """Recompute the table for the current selection (off the UI thread). Keys pressed in
        a burst (a held key) start one build, for the last selection."""
        if self.snapshot is None:
            return
        self._view_token += 1
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_later(self._start_build)

    def _start_build(self) -> None:
        self._rebuild_pending = False
        if self.snapshot is None:
            return
        request = self._request()
        built = cache_of(self.snapshot).peek(table_key(request))
        if built is not None:
            self._show_view(built, self._view_token)
            return
        self._build_view(self.snapshot, request, self._view_token)

    @work(thread=True, exclusive=True, group="view")
    def _build_view(self, snap: StoreSnapshot, request: tuple, token: int) -> None:
        from geneb_tui.core.view_cache import main_table  # lazy: polars, after the first frame

        try:
            view = main_table(snap, request)
        except Exception as exc:  # shown to the user, never a traceback over the UI
            self.post_message(ViewFailed(f"{type(exc).__name__}: {exc}", request[0], token))
            return
        # kept under what it shows too (a sort key of None asks for the first score column)
        shown = (view.filters, view.sort_key, view.descending, view.rank_scope)
        cache_of(snap).get(table_key(shown), lambda: view)
        self.post_message(ViewBuilt(view, token))

    @on(ViewFailed)
    def _view_failed(self, msg: ViewFailed) -> None:
        self.report_internal_error(f"Could not build the table for {msg.filters.describe()}",
                                   msg.error)

    def report_internal_error(self, what: str, error: str) -> None:
        """A bug met in a worker: told to the user (with what to report), kept for tests."""
        self.internal_errors.append(f"{what}: {error}")
        self.notify(f"{escape(what)}: {escape(error)}", title="Internal error (please report)",
                    severity="error", timeout=15)

    @on(ViewBuilt)
    def _view_built(self, msg: ViewBuilt) -> None:
        if msg.token != self._view_token:
            return  # a newer selection is on its way
        self._show_view(msg.view, msg.token)

    def _show_view(self, view: TableView, token: int) -> None:
        self.view, self._shown_token = view, token
        self.sort_key, self.descending = view.sort_key, view.descending
        view.intervals = self._intervals.get(self._intervals_key(view))
        self.query_one(ResultsTable).show(view)
        self.query_one(FilterBar).show(view)
        if view.intervals is None:
            self.call_after_refresh(self._start_intervals)   # the plain table paints first
        else:   # the intervals known already (a category, a sort): the views' content next
            self._precompute_when_idle(view)
        if token == self._first_view_token and self._first_view_key is not None:
            self._write_first_view(self._first_view_key, view, self.snapshot.version)
            self._first_view_token = None

    @work(thread=True, exclusive=True, group="first-view")
    def _write_first_view(self, key: dict, view: TableView, version: int | None) -> None:
        write_first_view(self.paths, key, view, version)   # a cache folder it cannot write: none

    # -- rank intervals of the main table (a worker, after the table is shown) ---------------
    def _intervals_key(self, view: TableView) -> tuple:
        """(snapshot, entries): the intervals are drawn over the entries the cells rank among:
        the store's for the suite, regime and metric (`n`: "store"), or the rows shown
        ("shown", when a filter hides some); every scope at once, so the category is left out
        of the key."""
        f = view.filters.with_(category=None)
        if not (view.rank_scope == "shown" and f.filters_models):
            f = f.without_model_filters()
        return (self._snapshot_serial, f)

    def _start_intervals(self) -> None:
        view, snap = self.view, self.snapshot
        if view is None or snap is None or view.intervals is not None or not view.rows:
            return
        key = self._intervals_key(view)
        if key in self._intervals:
            self._show_intervals(view, self._intervals[key])
        elif key != self._intervals_running:
            self._intervals_running = key
            self._compute_intervals(snap, key[1], key)

    @work(thread=True, exclusive=True, group="intervals")
    def _compute_intervals(self, snap: StoreSnapshot, filters: Filters, key: tuple) -> None:
        # lazy: polars, duckdb, pyarrow
        from geneb_tui.core.significance import store_seed_rows, table_intervals

        try:
            intervals = table_intervals(snap, filters, seed_rows=store_seed_rows(snap))
        except Exception as exc:  # a bug: told, never a traceback over the UI
            self.post_message(IntervalsReady(None, key, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(IntervalsReady(intervals, key))

    @on(IntervalsReady)
    def _intervals_ready(self, msg: IntervalsReady) -> None:
        if msg.key == self._intervals_running:
            self._intervals_running = None
        if msg.key[0] != self._snapshot_serial:
            return  # computed on a snapshot since replaced
        if msg.error is not None or msg.intervals is None:
            self.report_internal_error("Could not compute the rank intervals",
                                       msg.error or "no result")
            return
        if len(self._intervals) >= 16:
            self._intervals.pop(next(iter(self._intervals)))
        self._intervals[msg.key] = msg.intervals
        view = self.view
        if view is not None and view.intervals is None and self._intervals_key(view) == msg.key:
            self._show_intervals(view, msg.intervals)
        elif view is not None and view.intervals is None:
            self._start_intervals()   # the selection moved on meanwhile: its own intervals

    def _show_intervals(self, view: TableView, intervals: Intervals) -> None:
        view.intervals = intervals
        self.query_one(ResultsTable).show_intervals(view)
        self._precompute_when_idle(view)
        self._collect_when_idle()

    def _views_ready(self, snap: StoreSnapshot | None, filters: Filters) -> bool:
        """Whether the precomputation has cached the views' content for this selection (the
        snapshot by identity: its dataclass equality would compare its frames)."""
        cached = self._views_cached
        return cached is not None and cached[0] is snap and cached[1] == filters

    def _precompute_when_idle(self, view: TableView) -> None:
        """The main tables one key away and the views' content for the selection of `view`
        (shown with its rank intervals), IDLE_S later (`_precompute_views`), unless they are
        cached already."""
        snap, filters = self.snapshot, view.filters
        tables = self._neighbours_to_build()
        views = not self._views_ready(snap, filters)
        if not (tables or views):
            return
        if self._precompute_timer is not None:
            self._precompute_timer.stop()

        def start() -> None:   # two workers: polars runs the tables' queries off the GIL
            if tables and self._main_on_top():
                self._precompute_tables(snap, self._request(), tables)
            if views:
                self._precompute_views(snap, filters)

        self._precompute_timer = self.set_timer(IDLE_S, start)

    def _neighbours_to_build(self) -> list[tuple]:
        cache = cache_of(self.snapshot)
        return [r for r in self._neighbours() if cache.peek(table_key(r)) is None]

    def _neighbours(self) -> list[tuple]:
        """The main-table requests one key away from the selection shown: the next regime
        (r), metric (m), category (c) and the previous one, the other rank scope (n)."""
        f, snap = self.filters, self.snapshot
        return [*(self._request(filters=g) for g in (
                    next_regime(f), next_metric(f), step_category(f, snap, 1),
                    step_category(f, snap, -1))),
                self._request(rank_scope=other_scope(self.rank_scope))]

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent) and not event.is_forwarded:
            self._collect_when_idle()
        await super().on_event(event)

    def _collect_when_idle(self) -> None:
        """Garbage collection once IDLE_S has passed without input (`idle_gc`). Called on every
        input event, mouse moves included, so it only notes the time; the one pending timer
        waits again for what is left of the pause when it fires early."""
        self._last_input = time.monotonic()
        if self._collect_timer is None:
            self._collect_timer = self.set_timer(IDLE_S, self._collect_if_idle)

    def _collect_if_idle(self) -> None:
        left = self._last_input + IDLE_S - time.monotonic()
        if left > 0:
            self._collect_timer = self.set_timer(left, self._collect_if_idle)
            return
        self._collect_timer = None
        idle_gc.collect_now()
        self.call_later(self._prepare_screens)
        view = self.view   # back on the table after a view: its tables one key away
        if (view is not None and view.intervals is not None and self._main_on_top()
                and not any(w.group == "tables" and w.is_running for w in self.workers)
                and (tables := self._neighbours_to_build())):
            self._precompute_tables(self.snapshot, self._request(), tables)

    @work(thread=True, exclusive=True, group="tables")
    def _precompute_tables(self, snap: StoreSnapshot, shown: tuple, tables: list[tuple]) -> None:
        """The main tables one key away from the request `shown`, after the table and its
        rank intervals (stops when the selection moves on): `view_cache.precompute_tables`."""
        from geneb_tui.core.view_cache import precompute_tables  # lazy: polars

        precompute_tables(snap, tables, current=lambda: self.snapshot is snap
                          and self._request() == shown and self._main_on_top())

    def _main_on_top(self) -> bool:
        """Whether the main table is the screen shown (with a view on top, the tables one key
        away wait for the next pause on the table); False once the app has closed its
        screens (a worker may ask at shutdown)."""
        stack = self.screen_stack
        return bool(stack) and stack[-1] is stack[0]

    @work(thread=True, exclusive=True, group="views")
    def _precompute_views(self, snap: StoreSnapshot, filters: Filters) -> None:
        """The views' content for this selection, after the table and its rank intervals
        (lowest priority; stops when the selection moves on): `geneb_tui.core.view_cache`."""
        from geneb_tui.core.view_cache import precompute  # lazy: polars

        def views_cached() -> None:   # the views' own content; the task drill-downs next
            self._views_cached = (snap, filters)
            self.call_later(self._prepare_screens)

        try:
            precompute(snap, filters, self.fill_choices,
                       current=lambda: self.snapshot is snap and self.filters == filters,
                       views_done=lambda: self.call_from_thread(views_cached))
        except Exception:  # noqa: BLE001 - a view computes its own content when opened and
            return         # says there what failed; a background guess never stops the app

    # -- kept screens prepared off screen in a pause (`geneb_tui.screens`) --------------------
    async def _prepare_screens(self, names: tuple[str, ...] = KEPT) -> None:
        """In a pause on the main table, once the views' content for the selection is cached:
        the first of `names` not kept (or no longer fitting) made and mounted off screen (what
        Textual's push does first: compose, styles, a view's content painted from the cache),
        or the first kept one whose filters are not the selection's reopened for it there, so
        that opening it costs what showing it again does; the next one after any input that
        came meanwhile. An input since the pause began leaves the rest to the next pause.

        Runs as the app's message (`call_later`) and awaits the mount, so no key, reload or
        quit is handled while a screen mounts: a screen removed half-mounted fails in its own
        and Textual's mount handlers (found by a test that ended as a screen was prepared)."""
        if (not self._views_ready(self.snapshot, self.filters)
                or time.monotonic() - self._last_input < IDLE_S
                or self.screen is not self.screen_stack[0]):
            return
        names = tuple(n for n in names if not_shown(n, self.snapshot.kind) is None)
        for i, name in enumerate(names):
            fits, make = self._screen_kind(name)
            kept = self._kept.get(name)
            if kept is None or not fits(kept):
                self._prepared.clear()
                try:   # Textual's first step of a push
                    await self._get_screen(self._keep_new(name, make))[1]
                finally:
                    self._prepared.set()
            elif getattr(kept, "filters", self.filters) != self.filters:
                kept.reopen(self.filters)
            else:
                continue
            self.call_later(self._prepare_screens, names[i + 1:])
            return

    async def _shutdown(self) -> None:
        """Textual's shutdown, once a screen being prepared has mounted (a test's pilot shuts
        the app down from outside its messages; SHUTDOWN_WAIT_S bounds the wait)."""
        try:
            await asyncio.wait_for(self._prepared.wait(), SHUTDOWN_WAIT_S)
        except TimeoutError:
            pass
        await super()._shutdown()

    # -- export -------------------------------------------------------------------------------
    def default_export_path(self) -> Path:
        return Path.cwd() / self.filters.export_name()

    def action_export(self) -> None:
        view = self.view
        if view is None or self.screen is not self.screen_stack[0]:
            return
        n_cols = len(view.export_header())

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.export_csv(path, lambda: (view.export_header(), view.export_rows()))

        self.push_screen(ExportScreen(self.default_export_path(), len(view.rows), n_cols), chosen)

    @work(thread=True, exclusive=True, group="export")
    def export_csv(self, path: Path,
                   table: Callable[[], tuple[Sequence[str], Iterable[Sequence]]]) -> None:
        """Write `table()` (header, rows: built here, off the UI thread) to `path` and tell
        the user (`ExportFinished`): the main table's export and the Recommend view's."""
        try:
            n = write_csv(path, *table())
        except (OSError, ValueError) as exc:
            self.post_message(ExportFinished(path, 0, str(exc)))
            return
        self.post_message(ExportFinished(path, n))

    @on(ExportFinished)
    def _export_finished(self, msg: ExportFinished) -> None:
        if msg.error:
            self.notify(f"Export failed: {escape(msg.error)}", severity="error", timeout=10)
        else:
            self.notify(f"Wrote {msg.rows} rows to {escape(str(msg.path))}")
