"""Comparison views in tabs: ranks per category, rank shift, agreement, scale, few-shot, tasks.

Each view is computed off the UI thread from the snapshot with `store.analyses`, through the
views' cache (`geneb_tui.core.view_cache`: a view the background precomputation or an earlier
opening computed is painted at once, else it says "computing…" until its worker's message
arrives); a result that arrives after the options changed again is dropped. Only the first
tab's widgets are mounted, and its rows built, before the first frame; each other tab's when it
is first shown (a view computed before that waits in `_payloads`).
"""

from __future__ import annotations

from dataclasses import replace

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.widgets import Header, Static, TabbedContent, TabPane

from geneb_tui.actions import COMPARE_KEYS, bindings
from geneb_tui.components.footer import KeysFooter
from geneb_tui.components.once import dismiss_once
from geneb_tui.components.removed import unless_removed
from geneb_tui.components.scale_plot import ScalePlot
from geneb_tui.components.selection_screen import SelectionScreen
from geneb_tui.components.task_screen import TaskScreen
from geneb_tui.components.view_table import ViewTable
from geneb_tui.core import content_cache, view_cache
from geneb_tui.core.compare import VIEWS, CompareOptions, Failed
from geneb_tui.core.cycle import cycled
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot
from geneb_tui.messages import ComparisonReady
from store.vocab.protocol import REGIMES


def _pane(name: str):
    """The widgets of view `name`'s tab: its note and its table (its plot for the scale)."""
    yield Static("computing…", id=f"{name}-note", classes="view-note")
    if name == "scale":
        yield ScalePlot(id="scale-plot")
    else:
        yield ViewTable(id=f"{name}-table", classes="view-table")


@dismiss_once
class CompareScreen(SelectionScreen):
    BINDINGS = bindings(COMPARE_KEYS)
    # the first tab's view has the focus from the first frame (its cells are drawn once)
    AUTO_FOCUS = f"#{VIEWS[0][0]}-table"

    def __init__(self, snapshot: StoreSnapshot, filters: Filters) -> None:
        super().__init__(snapshot, filters)
        self.options = CompareOptions.for_filters(filters)
        self.initial = VIEWS[0][0]   # the first view opens first
        self._token = 0
        self._payloads: dict[str, object] = {}   # name -> payload of the current options

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=self.initial, id="compare-tabs"):
            for name, title in VIEWS:
                with TabPane(title, id=name):
                    if name == self.initial:
                        yield from _pane(name)
        yield KeysFooter()

    def reopen(self, filters: Filters) -> None:
        """Shown again (see `SelectionScreen.reopen`): when the selection moved on meanwhile,
        with the options a new opening would have (`CompareOptions.for_filters`)."""
        if filters != self.filters:
            self.options = CompareOptions.for_filters(filters)
        super().reopen(filters)

    def selection_changed(self, old: Filters, filters: Filters) -> None:
        """The score column follows the category; a suite without it falls back to macro."""
        if filters.category and self.options.column in ("macro", "micro"):
            self.options = replace(self.options, column=filters.category)
        elif filters.suite != old.suite and self.options.column not in ("macro", "micro"):
            self.options = replace(self.options, column="macro")   # not a column here

    # -- computing -----------------------------------------------------------------------------
    @property
    def active(self) -> str:
        return self.query_one(TabbedContent).active or self.initial

    def recompute(self) -> None:
        """Paint every view the cache holds for the current options; compute the others in a
        worker (the tab shown first)."""
        self._token += 1
        self._payloads = {}
        cache = content_cache.cache_of(self.snapshot)
        first = self.active
        todo = []
        for name in [first, *(n for n, _ in VIEWS if n != first)]:
            payload = cache.peek(content_cache.compare_key(name, self.filters, self.options))
            if payload is None:
                todo.append(name)
                self._paint(name)
            else:
                self._keep(name, payload)
        if todo:
            self._compute(todo, self.snapshot, self.filters, self.options, self._token)

    @work(thread=True, exclusive=True, group="compare")
    def _compute(self, names, snap, filters, options, token) -> None:
        for name in names:
            payload = view_cache.compare_view(snap, name, filters, options)
            self.post_message(ComparisonReady(name, payload, token))

    @on(ComparisonReady)
    @unless_removed
    def _ready(self, msg: ComparisonReady) -> None:
        if msg.token == self._token:
            self._keep(msg.name, msg.payload)

    def _keep(self, name: str, payload) -> None:
        self._payloads[name] = payload
        if isinstance(payload, Failed):
            self.app.report_internal_error(f"Comparison view {name}", payload.note)
        self._paint(name)

    def _paint(self, name: str) -> None:
        """View `name` as its payload says, once its tab's widgets are mounted."""
        notes = self.query(f"#{name}-note")
        if not notes:
            return
        payload = self._payloads.get(name)
        note = notes.first(Static)
        if payload is None:
            note.update("computing…")
            if name == "scale":
                self.query_one(ScalePlot).show_nothing()
            else:
                self.query_one(f"#{name}-table", ViewTable).show_nothing()
        elif isinstance(payload, Failed):
            note.update(f"[b]Could not compute this view[/b]: {escape(payload.note)}")
        else:
            note.update(payload.note)
            if name == "scale":
                self.query_one(ScalePlot).show(payload)
            else:   # a hidden tab's rows are built when it is first shown
                self.query_one(f"#{name}-table", ViewTable).show(payload,
                                                                 defer=name != self.active)

    @on(TabbedContent.TabActivated)
    async def _focus_view(self, event: TabbedContent.TabActivated) -> None:
        """The tab just shown: its widgets mounted and painted, its rows built (once); arrow
        keys and Enter go to its view."""
        name, pane = event.pane.id, event.pane
        if name and not pane.children:
            await pane.mount_all(list(_pane(name)))
            if not pane.is_attached:   # the screen was closed meanwhile
                return
            self._paint(name)
        tables = self.query(f"#{name}-table") if name else ()
        if tables:
            table = tables.first(ViewTable)
            table.build()
            table.focus()

    @on(ViewTable.RowSelected, "#tasks-table")
    def _drill_down(self, event: ViewTable.RowSelected) -> None:
        data = self.query_one("#tasks-table", ViewTable).data
        if data is None or not data.row_keys:
            return

        self.app.push_screen(TaskScreen(self.snapshot, self.filters,
                                        data.row_keys[event.cursor_row]))

    # -- options -------------------------------------------------------------------------------
    def _set(self, **changes) -> None:
        self.options = replace(self.options, **changes)
        self.notify(f"regimes {self.options.regime_a} → {self.options.regime_b}, "
                    f"column {self.options.column}", timeout=2)
        self.recompute()

    def action_regime_a(self) -> None:
        self._set(regime_a=cycled(REGIMES, self.options.regime_a))

    def action_regime_b(self) -> None:
        self._set(regime_b=cycled(REGIMES, self.options.regime_b))

    def action_column(self) -> None:
        cols = ["macro", "micro", *self.snapshot.categories(self.filters.suite)]
        self._set(column=cycled(cols, self.options.column))

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name

    def action_close(self) -> None:
        self.dismiss()
