"""The Significance view (`d`): which differences between the models shown are real.

Three tabs, each computed off the UI thread by `geneb_tui.core.significance` (from
`store.analyses.uncertainty` and `store.analyses.ranktests`): a critical-difference diagram
(average ranks over the tasks, Friedman's test, the Nemenyi CD and the groups that test does not
separate, and the leader's tie group by the one rule), the P(A > B) heat matrix of the models
shown, and a two-model comparison (per-task differences, wins / losses / ties, the Wilcoxon
p-value, the paired bootstrap interval of the difference, the one rule's decision;
for the task under the cursor, when both models have stored test-set predictions, the paired
bootstrap interval of their MCC difference over its test rows and McNemar's p).
It follows the main view's selection (regime, metric, category, filters); a result that arrives
after the selection changed again is dropped. The two models compared are the selection's two
best (`view_cache.default_pair`) until the user picks a pair (a / b, Enter in the matrix), then
that pair whenever the selection holds both. The view and its pair come from the views' cache
(`geneb_tui.core.view_cache`): painted at once when the background precomputation (or an
earlier opening) has them, else computed in a worker behind a "computing…" note.
"""

from __future__ import annotations

from rich.markup import escape
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane

from geneb_tui.actions import SIGNIFICANCE_KEYS, SIGNIFICANCE_TABS, bindings
from geneb_tui.components.footer import KeysFooter
from geneb_tui.components.once import dismiss_once
from geneb_tui.components.removed import unless_removed
from geneb_tui.components.selection_screen import SelectionScreen
from geneb_tui.components.view_table import ViewTable
from geneb_tui.core import content_cache, view_cache
from geneb_tui.core.compare import Failed, Table
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot
from geneb_tui.core.significance import pair_examples
from geneb_tui.messages import ComparisonReady


class MatrixTable(ViewTable):
    """The P(A > B) matrix: a cell cursor, Enter picks the (row, column) pair."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cursor_type = "cell"


@dismiss_once
class SignificanceScreen(SelectionScreen):
    VIEW = "significance"
    BINDINGS = bindings(SIGNIFICANCE_KEYS)

    def __init__(self, snapshot: StoreSnapshot, filters: Filters) -> None:
        super().__init__(snapshot, filters)
        self.sig = None                     # the last `Significance` shown
        self.pair: tuple[str, str] | None = None      # the pair shown (or being computed)
        self.picked: tuple[str, str] | None = None    # the pair the user chose (a / b, Enter)
        self.shown_pair = None              # the last `Pair` shown
        self._token = 0
        self._pair_token = 0
        self._examples_token = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=SIGNIFICANCE_TABS[0][0], id="significance-tabs"):
            for name, title in SIGNIFICANCE_TABS:
                with TabPane(title, id=name):
                    yield Static("computing…", id=f"{name}-note", classes="view-note")
                    if name == "cd":
                        with ScrollableContainer(id="cd-scroll"):
                            yield Static("", id="cd-diagram")
                    elif name == "matrix":
                        yield MatrixTable(id="matrix-table", classes="view-table")
                    else:
                        yield ViewTable(id="pair-table", classes="view-table")
        yield KeysFooter()

    # -- computing ---------------------------------------------------------------------------------
    def recompute(self) -> None:
        self._token += 1
        self._pair_token += 1          # a pair of the previous selection is dropped too
        key = content_cache.significance_key(self.filters)
        cached = content_cache.cache_of(self.snapshot).peek(key)
        if cached is not None:
            self._show(cached)
            return
        self.sig = None                # no pair of the previous selection can be picked
        self.shown_pair = None
        line = self.kind_line()
        for name, _ in SIGNIFICANCE_TABS:
            self.query_one(f"#{name}-note", Static).update(
                "computing…" if line is None else escape(line))
        self.query_one("#cd-diagram", Static).update("")   # never the previous selection's
        self.query_one("#matrix-table", MatrixTable).show_nothing()
        self.query_one("#pair-table", ViewTable).show_nothing()
        if line is None:
            self._compute(self.snapshot, self.filters, self._token)

    @work(thread=True, exclusive=True, group="significance")
    def _compute(self, snap: StoreSnapshot, filters: Filters, token: int) -> None:
        payload = view_cache.significance_view(snap, filters)
        self.post_message(ComparisonReady("significance", payload, token))

    @work(thread=True, exclusive=True, group="significance-pair")
    def _compute_pair(self, snap: StoreSnapshot, filters: Filters, sig, a: str, b: str,
                      token: int) -> None:
        payload = view_cache.pair_view(snap, filters, sig, a, b)
        self.post_message(ComparisonReady("pair", payload, token))

    @work(thread=True, exclusive=True, group="significance-examples")
    def _compute_examples(self, paths, pair, task: str, regime: str, token: int) -> None:
        try:
            line = pair_examples(paths, pair.a, pair.b, task, regime)
        except Exception as exc:  # a bug: told, never a traceback over the UI
            line = f"Per-example tests on {task}: could not compute ({type(exc).__name__}: {exc})."
        self.post_message(ComparisonReady("examples", (pair, line), token))

    @on(ComparisonReady)
    @unless_removed
    def _ready(self, msg: ComparisonReady) -> None:
        msg.stop()
        if msg.name == "significance" and msg.token == self._token:
            self._show(msg.payload)
        elif msg.name == "pair" and msg.token == self._pair_token:
            self._show_pair(msg.payload)
        elif msg.name == "examples" and msg.token == self._examples_token:
            pair, line = msg.payload
            if pair is self.shown_pair:
                self.query_one("#pair-note", Static).update(escape(pair.with_examples(line)))

    @on(DataTable.RowHighlighted, "#pair-table")
    def _pair_row(self, event: DataTable.RowHighlighted) -> None:
        self._examples_of(event.cursor_row)

    def _examples_of(self, row: int) -> None:
        """The task of the pair table's `row` (the one under the cursor): its per-example
        tests, computed off the UI thread."""
        pair = self.shown_pair
        if pair is None or not 0 <= row < len(pair.tasks):
            return
        self._examples_token += 1
        self._compute_examples(self.snapshot.paths, pair, pair.tasks[row], self.filters.regime,
                               self._examples_token)

    def _failed(self, names: tuple[str, ...], failed: Failed) -> None:
        for name in names:
            self.query_one(f"#{name}-note", Static).update(
                f"[b]Could not compute this view[/b]: {escape(failed.note)}")
        self.app.report_internal_error("Significance view", failed.note)

    def _show(self, sig) -> None:
        if isinstance(sig, Failed):
            self._failed(("cd", "matrix", "pair"), sig)
            return
        self.sig = sig
        self.query_one("#cd-note", Static).update(escape(sig.note))
        self.query_one("#cd-diagram", Static).update(
            Text("\n".join(sig.diagram), no_wrap=True, overflow="ignore"))
        matrix = self.query_one("#matrix-table", MatrixTable)
        pair_table = self.query_one("#pair-table", ViewTable)
        if not sig.ok:
            for name in ("matrix", "pair"):
                self.query_one(f"#{name}-note", Static).update(escape(sig.note))
            matrix.show(Table(["Model"], []))
            pair_table.show(Table(["Task"], []))
            self.pair = None
            self.shown_pair = None
            return
        self.query_one("#matrix-note", Static).update(escape(sig.matrix_note))
        matrix.show(sig.matrix, defer=self._hidden("matrix"))
        # the user's pair while the selection has both; else the selection's two best
        if self.picked is not None and set(self.picked) <= set(sig.entries):
            self.pair = self.picked
        else:
            self.pair = view_cache.default_pair(sig)
        self._pick(*self.pair)

    def _show_pair(self, pair) -> None:
        if isinstance(pair, Failed):
            self._failed(("pair",), pair)
            return
        self.shown_pair = pair
        self.query_one("#pair-note", Static).update(escape(pair.note))
        hidden = self._hidden("pair")
        self.query_one("#pair-table", ViewTable).show(pair.table, defer=hidden)
        if hidden:
            self._examples_of(0)   # the row the cursor will be on (no highlight while hidden)

    def _pick(self, a: str, b: str) -> None:
        if self.sig is None or not self.sig.ok:
            return
        self.pair = (a, b)
        self._pair_token += 1
        cached = content_cache.cache_of(self.snapshot).peek(
            content_cache.pair_key(self.filters, a, b))
        if cached is not None:
            self._show_pair(cached)
            return
        self.shown_pair = None
        self.query_one("#pair-note", Static).update("computing…")
        self.query_one("#pair-table", ViewTable).show_nothing()
        self._compute_pair(self.snapshot, self.filters, self.sig, a, b, self._pair_token)

    # -- choosing two models -----------------------------------------------------------------------
    def _step(self, which: int) -> None:
        sig = self.sig
        if sig is None or not sig.ok or self.pair is None:
            return
        pair = list(self.pair)
        entries = sig.entries
        i = entries.index(pair[which])
        for _ in range(len(entries)):
            i = (i + 1) % len(entries)
            if entries[i] != pair[1 - which]:
                break
        pair[which] = entries[i]
        self._choose(*pair)

    def action_model_a(self) -> None:
        self._step(0)

    def action_model_b(self) -> None:
        self._step(1)

    @on(DataTable.CellSelected, "#matrix-table")
    def _matrix_cell(self, event: DataTable.CellSelected) -> None:
        sig = self.sig
        row, col = event.coordinate.row, event.coordinate.column
        if sig is None or not sig.ok or col == 0 or row >= len(sig.entries):
            return
        a, b = sig.entries[row], sig.entries[col - 1]
        if a != b:
            self._choose(a, b)

    def _choose(self, a: str, b: str) -> None:
        """The user's pair: shown in the Two models tab, and kept when the selection changes
        (while both entries are in it) instead of the selection's two best."""
        self.picked = (a, b)
        self.query_one(TabbedContent).active = "pair"
        self._pick(a, b)

    # -- tabs ------------------------------------------------------------------------------------
    def _hidden(self, name: str) -> bool:
        """Whether a tab is not the one shown (its table's rows are built when it is)."""
        return (self.query_one(TabbedContent).active or SIGNIFICANCE_TABS[0][0]) != name

    @on(TabbedContent.TabActivated)
    def _focus_view(self, event: TabbedContent.TabActivated) -> None:
        """The tab just shown: its table's rows built (once); arrow keys (and Enter in the
        matrix) go to its view."""
        target = {"cd": "#cd-scroll", "matrix": "#matrix-table", "pair": "#pair-table"}
        name = event.pane.id
        if name in target:
            widget = self.query_one(target[name])
            if isinstance(widget, ViewTable):
                widget.build()
            widget.focus()

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name

    def action_close(self) -> None:
        self.dismiss()
