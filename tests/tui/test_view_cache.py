"""The views' cache (`geneb_tui.core.view_cache`): computed once, painted at once when ready, a
"computing…" state before, never a previous selection's content."""

from __future__ import annotations

import asyncio
import threading

import pytest
from conftest import settle
from textual.widgets import DataTable, TabbedContent

from geneb_tui.app import GenebApp
from geneb_tui.components.compare_screen import CompareScreen
from geneb_tui.components.missing_screen import MissingScreen
from geneb_tui.components.significance_screen import SignificanceScreen
from geneb_tui.components.task_screen import TaskScreen
from geneb_tui.components.view_table import ViewTable
from geneb_tui.core import compare, content_cache, view_cache
from geneb_tui.core.compare import CompareOptions
from geneb_tui.core.fill import FillChoices
from geneb_tui.core.query import candidate_models, missing_cells
from geneb_tui.core.significance import significance, store_seed_rows


def note(screen, name: str) -> str:
    return str(screen.query_one(f"#{name}-note").render())


class Gate:
    """Wraps a function so that it blocks until `open()` (a computation still running)."""

    def __init__(self, fn) -> None:
        self.fn, self.event, self.calls = fn, threading.Event(), 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        assert self.event.wait(60), "the gate was never opened"
        return self.fn(*args, **kwargs)

    def open(self) -> None:
        self.event.set()


async def until(pilot, cond, rounds: int = 400) -> None:
    for _ in range(rounds):
        if cond():
            return
        await pilot.pause(0.01)
    raise AssertionError("the condition never held")


# -- the cache itself ----------------------------------------------------------------------------
def test_a_key_is_computed_once_and_a_second_caller_waits_for_it():
    cache = content_cache.ViewCache()
    started, release, calls = threading.Event(), threading.Event(), []

    def compute():
        calls.append(1)
        started.set()
        release.wait(10)
        return ["payload"]

    results = []
    first = threading.Thread(target=lambda: results.append(cache.get("k", compute)))
    first.start()
    assert started.wait(10)
    assert cache.peek("k") is None                       # still running
    second = threading.Thread(target=lambda: results.append(cache.get("k", compute)))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert calls == [1] and results == [["payload"], ["payload"]]
    assert results[0] is results[1] is cache.peek("k")


def test_a_failed_computation_is_not_stored():
    cache = content_cache.ViewCache()

    def boom():
        raise ValueError("no")

    with pytest.raises(ValueError):
        cache.get("k", boom)
    assert cache.peek("k") is None
    assert cache.get("k", lambda: 3) == 3


def test_the_cache_is_per_snapshot(official_store):
    from geneb_tui.core.query import StoreSnapshot

    a, b = StoreSnapshot.load(official_store), StoreSnapshot.load(official_store)
    assert content_cache.cache_of(a) is content_cache.cache_of(a)
    assert content_cache.cache_of(a) is not content_cache.cache_of(b)



def test_a_search_shares_the_ranks_among_every_entry_with_the_unfiltered_table(official_store,
                                                                              monkeypatch):
    """The overall ranks of a filtered table are those of the table without its model filters,
    computed once per snapshot: in either order the two tables are what a snapshot with an
    empty cache builds, and the second one reads only its own rows (one `_wide` call)."""
    from geneb_tui.core import query
    from geneb_tui.core.filters import Filters
    from geneb_tui.core.query import StoreSnapshot, build_view

    def table(view):
        return [(r.model, r.values, r.ranks, r.overall) for r in view.rows], \
            view.n_rows_unfiltered

    plain = Filters(regime="10shot")
    search = plain.with_(search="dna")
    alone = {f: table(build_view(StoreSnapshot.load(official_store), f)) for f in (plain, search)}
    real, calls = query._wide, []
    monkeypatch.setattr(query, "_wide", lambda *a: calls.append(a[1]) or real(*a))
    for order in ((plain, search), (search, plain)):
        snap = StoreSnapshot.load(official_store)
        for i, f in enumerate(order):
            calls.clear()
            assert table(build_view(snap, f)) == alone[f]
            assert calls == ([f] if i else [f, plain] if f == search else [f])
    rows, n = alone[search]
    overall = {m: o for m, _, _, o in alone[plain][0]}
    assert 0 < len(rows) < n == len(alone[plain][0]) == 40
    assert all(o == overall[m] for m, _, _, o in rows)
    assert any(r != o for _, _, r, o in rows)   # ranks among the rows shown differ

def test_precompute_fills_what_each_view_shows_with_the_reference_values(official_store):
    from geneb_tui.core.filters import Filters
    from geneb_tui.core.query import StoreSnapshot

    snap = StoreSnapshot.load(official_store)
    filters = Filters(metric="acc")
    view_cache.precompute(snap, filters, FillChoices())
    cache = content_cache.cache_of(snap)
    opts = CompareOptions.for_filters(filters)
    for name, _ in compare.VIEWS:
        got = cache.peek(content_cache.compare_key(name, filters, opts))
        want = compare.compute(name, snap, filters, opts)
        if isinstance(want, compare.Table):
            assert got.header == want.header and got.rows == want.rows and got.note == want.note
        else:
            assert (got.labels, got.values, got.rho) == (want.labels, want.values, want.rho)
    sig = cache.peek(content_cache.significance_key(filters))
    ref = significance(snap, filters, seed_rows=store_seed_rows(snap))
    assert sig.entries == ref.entries and sig.matrix.rows == ref.matrix.rows
    assert cache.peek(content_cache.pair_key(filters, *view_cache.default_pair(ref))) is not None
    data = cache.peek(content_cache.missing_key(filters, view_cache.regimes_of("all"), "auto"))
    found = candidate_models(snap, filters)
    assert set(data.candidates) == set(found)
    assert set(data.cells) == set(missing_cells(snap, filters, found, view_cache.regimes_of("all")))
    tasks = cache.peek(content_cache.compare_key("tasks", filters, opts))
    first = cache.peek(content_cache.task_key(filters, tasks.row_keys[0]))
    assert first.rows == compare.task_values(snap, filters, tasks.row_keys[0]).rows


def test_precompute_stops_when_the_selection_moves_on(official_store):
    from geneb_tui.core.filters import Filters
    from geneb_tui.core.query import StoreSnapshot

    snap = StoreSnapshot.load(official_store)
    filters = Filters(metric="f1_macro")
    view_cache.precompute(snap, filters, current=lambda: False)
    opts = CompareOptions.for_filters(filters)
    key = content_cache.compare_key("leaders", filters, opts)
    assert content_cache.cache_of(snap).peek(key) is None


# -- the screens ---------------------------------------------------------------------------------
async def test_a_view_opened_before_its_data_shows_computing_then_the_same_content(
        official_store, monkeypatch):
    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        gate = Gate(compare.BUILDERS["leaders"])
        monkeypatch.setitem(compare.BUILDERS, "leaders", gate)
        await pilot.press("m")                        # a selection nothing computed yet
        await until(pilot, lambda: app.view is not None and app.view.filters.metric != "mcc")
        filters = app.filters
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and gate.calls)
        screen = app.screen
        await pilot.pause()
        assert note(screen, "leaders") == "computing…"
        assert screen.query_one("#leaders-table", ViewTable).data is None
        gate.open()
        await settle(pilot)
        want = compare.leaders(app.snapshot, filters, CompareOptions.for_filters(filters))
        first = screen.query_one("#leaders-table", ViewTable)
        assert first.data.rows == want.rows and len(want.rows) == 40
        assert note(screen, "leaders") == want.note
        shown = [[c.plain for c in first.get_row_at(i)] for i in range(first.row_count)]
        await pilot.press("escape")
        await settle(pilot)

        # opened again with the computation blocked: painted from the cache, nothing computed
        gate.event.clear()
        calls = gate.calls
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.is_mounted)
        again = app.screen.query_one("#leaders-table", ViewTable)
        assert note(app.screen, "leaders") == want.note
        assert [[c.plain for c in again.get_row_at(i)] for i in range(again.row_count)] == shown
        assert gate.calls == calls
        gate.open()
        await settle(pilot)


async def test_a_filter_change_after_the_precomputation_shows_the_new_content(official_store):
    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        old = app.filters
        await asyncio.to_thread(view_cache.precompute, app.snapshot, old, app.fill_choices)
        await pilot.press("v")
        await settle(pilot)
        screen = app.screen
        opts = CompareOptions.for_filters(old)
        old_rows = compare.shift(app.snapshot, old, opts).rows
        assert not screen.query("#shift-table")       # a tab's widgets: when first shown
        await pilot.press("2")
        await settle(pilot)
        assert screen.query_one("#shift-table", ViewTable).data.rows == old_rows
        await pilot.press("1")
        await pilot.press("m")                        # MCC -> acc, on the views' screen
        await settle(pilot)
        new = app.filters
        assert new.metric != old.metric and screen.filters == new
        want = compare.shift(app.snapshot, new, CompareOptions.for_filters(new))
        table = screen.query_one("#shift-table", ViewTable)
        assert table.data.rows == want.rows and want.rows != old_rows
        assert table.row_count == 0                   # a hidden tab: built when first shown
        await pilot.press("2")
        await pilot.pause()
        assert table.row_count == len(want.rows)
        best = table.get_row_at(0)
        assert best[1].plain == f"{want.rows[0][1]:.3f}"   # the cell painted: the new metric
        await pilot.press("4")                        # a tab built after the first frame
        await settle(pilot)
        scale = compare.scale(app.snapshot, new, CompareOptions.for_filters(new))
        assert note(screen, "scale") == scale.note

        # the Significance view, opened on the precomputed selection, then moved to another
        await pilot.press("escape", "m", "m")         # acc -> F1 -> MCC (precomputed)
        await settle(pilot)
        assert app.filters == old
        await pilot.press("d")
        await pilot.pause()
        sig = app.screen
        assert isinstance(sig, SignificanceScreen)
        assert sig.sig is content_cache.cache_of(app.snapshot).peek(
            content_cache.significance_key(old))
        await pilot.press("m")
        await settle(pilot)
        ref = significance(app.snapshot, app.filters, seed_rows=store_seed_rows(app.snapshot))
        assert sig.sig.entries == ref.entries
        assert sig.query_one("#matrix-table", ViewTable).data.rows == ref.matrix.rows
        assert (sig.shown_pair.a, sig.shown_pair.b) == view_cache.default_pair(ref)


async def test_missing_and_task_views_paint_the_precomputed_content(official_store, monkeypatch):
    import geneb_tui.core.query as query

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        filters = app.filters
        await asyncio.to_thread(view_cache.precompute, app.snapshot, filters, app.fill_choices)
        gate = Gate(query.missing_cells)
        monkeypatch.setattr(query, "missing_cells", gate)   # nothing computed on opening
        await pilot.press("g")
        await until(pilot, lambda: isinstance(app.screen, MissingScreen) and app.screen.is_mounted)
        screen = app.screen
        found = candidate_models(app.snapshot, filters)
        want = missing_cells(app.snapshot, filters, found, view_cache.regimes_of("all"))
        models = screen.query_one("#missing-models", DataTable)
        assert models.row_count == len(found) == 44   # 40 official, SpliceBERT, the k-mers
        counts = {m: sum(c[0] == m for c in want) for m in found}
        assert screen.missing_by_model == counts and gate.calls == 0
        # another regimes choice is not precomputed: computing, then its own counts
        await pilot.press("r")
        await pilot.pause()
        assert "Computing the missing cells" in str(screen.query_one("#missing-note").render())
        assert models.row_count == 0
        gate.open()
        await settle(pilot)
        regimes = view_cache.regimes_of(app.fill_choices.regimes)
        want = missing_cells(app.snapshot, filters, found, regimes)
        assert screen.missing_by_model == {m: sum(c[0] == m for c in want) for m in found}
        assert models.row_count == len(found)
        await pilot.press("escape")
        await settle(pilot)

        # the task view from the Tasks tab: painted on opening from the precomputed table
        await pilot.press("v")
        await settle(pilot)
        app.screen.query_one(TabbedContent).active = "tasks"
        await settle(pilot)
        tasks = app.screen.query_one("#tasks-table", ViewTable)
        tasks.focus()
        await pilot.pause()
        monkeypatch.setattr(compare, "task_values", Gate(compare.task_values))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TaskScreen) and app.screen.is_mounted)
        table = app.screen.query_one(ViewTable)
        ref = content_cache.cache_of(app.snapshot).peek(
            content_cache.task_key(filters, tasks.data.row_keys[0]))
        assert table.data is ref and len(ref.rows) == 40
        assert compare.task_values.calls == 0
        compare.task_values.open()


async def test_the_app_precomputes_the_views_once_the_user_pauses(official_store, monkeypatch):
    """`IDLE_S` after the table and its rank intervals, the compare views' first tab
    is in the cache for the selection shown (here after a metric change)."""
    import geneb_tui.app as app_module
    from geneb_tui.core.filters import Filters

    monkeypatch.setattr(app_module, "IDLE_S", 0.3)
    app = GenebApp(official_store)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        await pilot.press("m")                       # another metric before the pause ends
        await settle(pilot)
        filters = app.filters
        assert filters != Filters()
        first = compare.VIEWS[0][0]
        key = content_cache.compare_key(first, filters, CompareOptions.for_filters(filters))
        cache = content_cache.cache_of(app.snapshot)
        await pilot.pause(0.5)
        await settle(pilot)
        got = cache.peek(key)
        want = compare.compute(first, app.snapshot, filters, CompareOptions.for_filters(filters))
        assert got is not None and got.rows == want.rows


async def test_a_category_whose_rank_intervals_are_known_is_precomputed_too(official_store,
                                                                          monkeypatch):
    """A category change reuses the rank intervals (drawn for every scope at once), so no
    intervals worker ends: its views' content is precomputed in the pause all the same."""
    import geneb_tui.app as app_module

    monkeypatch.setattr(app_module, "IDLE_S", 0.3)
    app = GenebApp(official_store)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: app.view is not None and app.view.intervals is not None)
        await pilot.press("c")
        await settle(pilot)
        filters = app.filters
        assert filters.category is not None and app.view.intervals is not None
        first = compare.VIEWS[0][0]
        key = content_cache.compare_key(first, filters, CompareOptions.for_filters(filters))
        cache = content_cache.cache_of(app.snapshot)
        await until(pilot, lambda: cache.peek(key) is not None, rounds=3000)
        want = compare.compute(first, app.snapshot, filters, CompareOptions.for_filters(filters))
        assert cache.peek(key).rows == want.rows


async def test_the_app_prepares_its_screens_in_a_pause_and_opens_them_at_once(official_store,
                                                                            monkeypatch):
    """Once the views' content for the selection is cached and the user pauses, the comparison,
    Significance and missing views, the filter dialog and the help are made and mounted off
    screen, the views painted from the cache: the first opening shows the prepared screen.
    After a selection change the views follow it off screen; after a reload, new ones."""
    import geneb_tui.app as app_module
    from geneb_tui.components.help_screen import HelpScreen

    monkeypatch.setattr(app_module, "IDLE_S", 0.3)
    app = GenebApp(official_store)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: set(app._kept) == set(app_module.KEPT)
                    and all(s.is_mounted for s in app._kept.values()), rounds=3000)
        kept = dict(app._kept)
        assert app.screen is app.screen_stack[0] and len(app.screen_stack) == 1
        options = CompareOptions.for_filters(app.filters)
        want = compare.compute(compare.VIEWS[0][0], app.snapshot, app.filters, options)
        leaders = kept["compare"].query_one(f"#{compare.VIEWS[0][0]}-table", ViewTable)
        assert leaders.data is not None and leaders.data.rows == want.rows
        sig = significance(app.snapshot, app.filters)
        assert kept["significance"].sig.critical_difference == sig.critical_difference
        await pilot.press("v")
        await pilot.pause()
        assert app.screen is kept["compare"]
        await pilot.press("escape", "question_mark")
        await pilot.pause()
        assert app.screen is kept["help"] and isinstance(app.screen, HelpScreen)
        app.action_help()                          # help from the palette over the help
        await pilot.pause()
        assert app.screen is kept["help"] and len(app.screen_stack) == 2
        await pilot.press("question_mark", "g")    # ? closes the help
        await pilot.pause()
        assert app.screen is kept["missing"]
        await pilot.press("escape", "f")
        await pilot.pause()
        assert app.screen is kept["filters"]
        await pilot.press("escape", "r")          # another regime: the views follow it
        await settle(pilot)
        await until(pilot, lambda: all(kept[n].filters == app.filters
                                       for n in ("compare", "significance", "missing")),
                    rounds=3000)
        options = CompareOptions.for_filters(app.filters)
        want = compare.compute(compare.VIEWS[0][0], app.snapshot, app.filters, options)
        assert app.filters.regime == "10shot" and kept["compare"].options == options
        assert leaders.data.rows == want.rows
        assert kept["compare"].sub_title == app.filters.describe()
        old = app.snapshot
        await pilot.press("ctrl+r")               # the store read again: new views prepared
        await settle(pilot)
        await until(pilot, lambda: app.snapshot is not old or app._exception is not None)
        await until(pilot, lambda: app._exception is not None or (
            set(app._kept) == set(app_module.KEPT)
            and all(getattr(s, "snapshot", app.snapshot) is app.snapshot and s.is_mounted
                    for s in app._kept.values())), rounds=3000)
        assert app._exception is None and not app.internal_errors
        assert app._kept["compare"] is not kept["compare"]
        assert app._kept["help"] is kept["help"]              # nothing in it to follow
