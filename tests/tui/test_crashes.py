"""One test per crash found (by the tester's report or the monkey test) and fixed."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import settle
from textual import events

from geneb_tui.app import GenebApp
from geneb_tui.components.export_screen import ExportScreen


def burst(app, *keys: str) -> None:
    """Keys sent like a fast typist (or a held key): no wait for idle between them."""
    for key in keys:
        ev = events.Key(key, key if len(key) == 1 else None)
        ev.set_sender(app)
        app._driver.send_message(ev)


async def test_next_suite_on_a_store_of_official_results_only(store_of_kind):
    """`u` on a store with official results only: geneb-mini has no tasks in the store; the
    aggregates raised polars' `cannot return empty fold` and the app ended."""
    app = GenebApp(store_of_kind("one_model"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert app.filters.suite == "geneb-mini" and app.view is not None
        assert app.view.rows == [] and not app.internal_errors
        for key in ("c", "v", "escape", "g", "escape", "e", "escape", "u"):
            await pilot.press(key)
            await settle(pilot)
        assert app.filters.suite == "geneb-v1" and len(app.view.rows) == 1
        assert app.is_running and not app.internal_errors


def test_aggregates_of_a_suite_without_tasks_are_empty_not_an_error():
    from store.analyses.aggregates import aggregates

    scores = pl.DataFrame({"model": ["m"], "task": ["t"], "category": ["c"], "value": [0.5],
                           "source": ["official"]})
    out = aggregates(scores, tasks=[])
    assert out.columns[:4] == ["model", "source", "micro", "macro"] and out.height == 0


def test_a_crash_exits_with_status_1_not_0(monkeypatch, tmp_path, capsys):
    """geneb-tui returned 0 after a traceback."""
    from geneb_tui import cli

    def broken_mount(self) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(GenebApp, "on_mount", broken_mount)
    run = GenebApp.run
    monkeypatch.setattr(GenebApp, "run", lambda self: run(self, headless=True))
    (tmp_path / "store").mkdir()
    assert cli.main(["--store", str(tmp_path / "store")]) == 1


async def test_two_enters_in_the_export_dialog_close_it_once(official_store, tmp_path,
                                                             monkeypatch):
    """Textual's dismiss pops whatever screen is on top: Enter Enter closed the dialog, then
    failed with ScreenStackError on the main screen."""
    monkeypatch.chdir(tmp_path)
    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        burst(app, "enter", "enter")
        await settle(pilot)
        assert app.screen is app.screen_stack[0] and app.is_running
        assert len(list(tmp_path.glob("*.csv"))) == 1
        await pilot.press("e")
        await pilot.pause()
        burst(app, "enter", "escape", "enter")         # Esc and Enter race: one of them wins
        await settle(pilot)
        assert app.screen is app.screen_stack[0] and app.is_running


async def test_applying_filters_twice_over_the_views_keeps_the_views(official_store):
    """Enter Enter in the filter dialog's name field, opened from the comparison views: the
    second dismiss popped the views as well."""
    from geneb_tui.components.compare_screen import CompareScreen
    from geneb_tui.components.filter_screen import FilterScreen

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, FilterScreen)
        app.screen.query_one("#search").focus()
        await pilot.pause()
        burst(app, "enter", "enter")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen) and app.is_running


@pytest.mark.parametrize("keys", [("ctrl+p", "pageup"), ("ctrl+p", "pagedown", "pageup"),
                                  ("ctrl+p", "q", "pageup", "escape")])
async def test_page_keys_in_the_palette_before_its_list_is_laid_out(official_store, keys):
    """OptionList._move_page raised KeyError (Textual 8.2) for PgUp right after Ctrl+P, and the
    app ended with status 1. The palette stays open with its commands (unless Esc closed it),
    and the dashboard goes on answering keys."""
    from textual.command import CommandList, CommandPalette

    app = GenebApp(official_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(app, *keys)
        await settle(pilot)
        assert app.is_running and app.return_code is None
        if keys[-1] != "escape":
            assert isinstance(app.screen, CommandPalette)
            assert app.screen.query_one(CommandList).option_count > 0
            await pilot.press("escape")
            await settle(pilot)
        assert app.screen is app.screen_stack[0]
        await pilot.press("r")
        await settle(pilot)
        assert app.filters.regime == "10shot" and app.return_code is None


async def test_a_worker_error_is_reported_not_fatal(official_store, monkeypatch):
    """A bug in building the table is shown as a notification; the app keeps running."""
    import geneb_tui.core.query as query

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)

        def broken(*args, **kwargs):
            raise ValueError("broken view")

        monkeypatch.setattr(query, "build_view", broken)
        await pilot.press("r")
        await settle(pilot)
        assert app.is_running
        assert app.internal_errors and "broken view" in app.internal_errors[0]


async def test_the_palette_search_finishing_after_it_closed(official_store):
    """Found by the monkey test (one_model at 160x45): the palette's command search finished
    after Esc had removed the palette's list; its watcher's NoMatches ended the app. The same
    moment, made deterministic: the list is gone when the search result arrives."""
    from textual.command import CommandList

    from geneb_tui.components.palette import Palette

    app = GenebApp(official_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        palette = app.screen
        assert isinstance(palette, Palette)
        await palette.query_one(CommandList).remove()
        palette._list_visible = not palette._list_visible     # what the search result does
        await pilot.pause()
        assert app.is_running and app._exception is None


async def test_a_result_reaching_a_view_dropped_on_a_reload_is_ignored(official_store):
    """A kept Significance view dropped on a reload (Ctrl+R) got its worker's per-example
    result after its widgets were gone: NoMatches ended the app (found by CI). A result for
    a removed view is dropped; on a view in place, a missing widget is still an error."""
    from textual.css.query import NoMatches

    from geneb_tui.components.significance_screen import SignificanceScreen
    from geneb_tui.messages import ComparisonReady

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SignificanceScreen) and screen.shown_pair is not None
        late = ComparisonReady("examples", (screen.shown_pair, "late"), screen._examples_token)
        pair_note = screen.query_one("#pair-note")
        pair_note.remove()                     # a widget missing on a view in place: a bug
        await pilot.pause()
        with pytest.raises(NoMatches):
            screen._ready(late)
        await pilot.press("escape", "ctrl+r")
        await settle(pilot)
        assert screen not in app._installed_screens.values() and not screen.is_attached
        screen._ready(late)                    # the removed view: dropped, no error
        assert app._exception is None and not app.internal_errors


@pytest.mark.parametrize("given, says", [
    ("missing", "does not exist; check the path"),
    ("file", "is a file, not a folder"),
    ("~no-such-user-geneb/store", "~no-such-user-geneb"),   # resolve_store's RuntimeError
    ("", "holds files but no store"),       # a folder of other files (here: `file`)
])
def test_a_store_that_cannot_be_opened_is_one_line_and_status_2(tmp_path, capsys, given, says):
    """The engine's store rules (`store.paths.store_named`): `~unknown-user` raised a
    traceback, and a file was opened as a store."""
    from geneb_tui import cli

    (tmp_path / "file").write_text("not a store")
    store = given if given.startswith("~") else str(tmp_path / given)
    assert cli.main(["--store", store]) == 2
    err = capsys.readouterr().err
    assert err.startswith("geneb-tui: store ") and says in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
