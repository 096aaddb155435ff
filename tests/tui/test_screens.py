"""The empty-store screen, the comparison views, and what start-up imports."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from capture import screen_text
from conftest import opened, settle
from fixture_store import SUBMISSIONS, leaderboard
from textual.widgets import TabbedContent

from geneb_tui.app import GenebApp
from geneb_tui.components.compare_screen import CompareScreen
from geneb_tui.components.empty_store_screen import EmptyStoreScreen
from geneb_tui.components.view_table import ViewTable
from store.catalog import load_models
from store.paths import resolve_store
from store.vocab.pvalues import p_is


async def test_empty_store_says_how_to_fill_or_import(tmp_path):
    app = GenebApp(resolve_store(tmp_path / "empty"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, EmptyStoreScreen)
        text = " ".join(screen_text(app).split())
        assert "geneb-engine import --official" in text
        assert "geneb-engine import PATH.." in text
        assert "geneb-engine fill --suite geneb-mini --models kmer-3 kmer-4 kmer-6" in text




async def test_comparison_views(official_store):
    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot, "v", CompareScreen)
        lb = {r["model"]: r for r in leaderboard()["full"]}
        lb10 = {r["model"]: r for r in leaderboard()["10shot"]}
        official = {m: r for m, r in lb.items() if r["submitted"] == "official"}

        ranks = screen.query_one("#leaders-table", ViewTable).data
        assert len(ranks.rows) == 40
        best_promoters = max(official, key=lambda m: official[m]["cat_MCC"]["Promoters"])
        col = ranks.header.index("Promoters")
        winner = next(r for r in ranks.rows if r[col] == 1)
        assert winner[0] == screen.snapshot.model_meta(best_promoters)["display"]

        await pilot.press("2")   # each tab's widgets: when first shown
        await settle(pilot)
        shift = screen.query_one("#shift-table", ViewTable).data
        first = shift.rows[0]                         # rank 1 in full
        best_full = max(official, key=lambda m: official[m]["macro_MCC"])
        assert first[0] == screen.snapshot.model_meta(best_full)["display"]
        assert first[3] == pytest.approx(lb10[best_full]["macro_MCC"], abs=1e-9)
        assert first[5] == first[2] - first[4]

        await pilot.press("3")
        await settle(pilot)
        agree = screen.query_one("#agreement-table", ViewTable).data
        assert len(agree.rows) == 13 and all(agree.rows[i][i + 1] == pytest.approx(1.0)
                                             for i in range(13))
        from scipy.stats import spearmanr

        cats = agree.header[1:]
        want = spearmanr([official[m]["cat_MCC"][cats[0]] for m in official],
                         [official[m]["cat_MCC"][cats[1]] for m in official]).statistic
        assert agree.rows[0][2] == pytest.approx(want)

        catalog = load_models()
        rho = spearmanr([catalog[m].params for m in official],
                        [official[m]["macro_MCC"] for m in official])
        await pilot.press("4")
        await settle(pilot)
        assert (f"Spearman ρ = {rho.statistic:+.2f} ({p_is(rho.pvalue)}, n = 40)"
                in str(screen.query_one("#scale-note").render()))
        await pilot.press("5")
        await settle(pilot)
        deg = screen.query_one("#degradation-table", ViewTable).data
        assert len(deg.rows) == 40 and deg.header[1:4] == ["full", "10shot", "1shot"]
        await pilot.press("6")
        await settle(pilot)
        tasks = screen.query_one("#tasks-table", ViewTable).data
        assert len(tasks.rows) == 100
        marks, kingdom = tasks.header.index("Marks"), tasks.header.index("Kingdom")
        assert {m for r in tasks.rows for m in r[marks].split()} <= {"easy", "hard", "high-var"}
        assert sum(r[kingdom] == "plants" for r in tasks.rows) == 10   # task_domains.csv

        await pilot.press("7")
        await settle(pilot)
        pairs = screen.query_one("#pairs-table", ViewTable).data
        assert pairs.rows and all(r[2] for r in pairs.rows)

        await pilot.press("b")                         # regime B: 10shot -> 1shot
        await settle(pilot)
        assert screen.options.regime_b == "1shot"
        assert screen.query_one("#shift-table", ViewTable).data.header[3] == "1shot"
        await pilot.press("4")
        await pilot.pause()
        assert screen.query_one(TabbedContent).active == "scale"
        # task drill-down: Enter on a task row lists the task across the models
        await pilot.press("6", "down", "enter")
        await settle(pilot)
        from geneb_tui.components.task_screen import TaskScreen

        assert isinstance(app.screen, TaskScreen)
        task = tasks.row_keys[1]
        detail = app.screen.query_one(ViewTable).data
        sub = json.loads((SUBMISSIONS / "GROVER.json").read_text())["results"]["full"][task]
        grover = next(r for r in detail.rows if r[0] == "GROVER")
        assert grover[2] == sub["MCC"] and len(detail.rows) == 40
        assert [r[3] for r in detail.rows] == sorted(r[3] for r in detail.rows)
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)


async def test_the_comparison_views_shown_again_are_as_left_and_follow_the_selection(
        official_store):
    """The app keeps the comparison views installed: shown again they keep their tab, and
    their options while the selection is the same; a category chosen while they were closed
    gives them the options a new opening would have; once the store is read again, new views
    open (the kept ones are dropped)."""
    from geneb_tui.core.compare import CompareOptions

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await opened(pilot, "v", CompareScreen)
        await pilot.press("2", "b")                     # the Rank shift tab; regime B 1shot
        await settle(pilot)
        await pilot.press("escape", "v")
        await settle(pilot)
        assert app.screen is screen and screen.options.regime_b == "1shot"
        assert screen.query_one(TabbedContent).active == "shift"
        await pilot.press("escape", "c")                # closed; a category on the main table
        await settle(pilot)
        cat = app.filters.category
        assert cat is not None and not isinstance(app.screen, CompareScreen)
        await pilot.press("v")
        await settle(pilot)
        assert app.screen is screen
        assert screen.query_one(TabbedContent).active == "shift"
        assert screen.options == CompareOptions.for_filters(app.filters)
        assert (screen.options.regime_b, screen.options.column) == ("10shot", cat)
        assert screen.sub_title == app.filters.describe()
        official = {m: r for m, r in ((r["model"], r) for r in leaderboard()["full"])
                    if r["submitted"] == "official"}
        lb10 = {r["model"]: r for r in leaderboard()["10shot"]}
        best = max(official, key=lambda m: official[m]["cat_MCC"][cat])
        top = screen.query_one("#shift-table", ViewTable).data.rows[0]
        assert top[0] == screen.snapshot.model_meta(best)["display"]
        assert top[3] == pytest.approx(lb10[best]["cat_MCC"][cat], abs=1e-9)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, CompareScreen)
        await pilot.press("ctrl+r")                     # the store read again
        await settle(pilot)
        assert screen not in app._installed_screens.values()
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen) and app.screen is not screen
        assert app.screen.query_one(TabbedContent).active == "leaders"
        assert not app.internal_errors


async def test_a_tab_shown_and_the_views_closed_in_one_burst(official_store):
    """A tab's widgets are mounted when it is first shown; the views closed while they mount
    (found by the monkey test) leave the main table, with no error."""
    from textual import events

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        for key in ("3", "escape"):
            app.post_message(events.Key(key, None if key == "escape" else key))
        await settle(pilot)
        assert app._exception is None and not app.internal_errors
        assert not isinstance(app.screen, CompareScreen)


@pytest.mark.idle
@pytest.mark.parametrize("turns", [0, 3])
async def test_the_app_shut_down_while_a_screen_is_prepared_off_screen(official_store, turns):
    """The app closes while a kept screen mounts off screen (`_prepare_screens`, in a pause):
    it finishes mounting first, and its workers' results are dropped, with no error (CI found
    a test that ended then: Textual's tabs and the screen's own on_mount failed)."""
    import asyncio
    import time

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(50):   # the views' content cached: what lets a screen be prepared
            await settle(pilot)
            if app._views_ready(app.snapshot, app.filters):
                break
            await asyncio.sleep(0.1)
        assert app._views_ready(app.snapshot, app.filters)
        app._forget("significance")
        app._last_input = time.monotonic() - 10   # a pause
        app.call_later(app._prepare_screens, ("significance",))
        for _ in range(500):
            if "significance" in app._kept:
                break
            await asyncio.sleep(0)
        assert "significance" in app._kept and not app._kept["significance"].is_mounted
        for _ in range(turns):
            await asyncio.sleep(0)
    assert app._exception is None and not app.internal_errors


def test_startup_imports_no_torch_transformers_or_engine(official_store):
    script = textwrap.dedent(f"""
        import asyncio, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from geneb_tui.app import GenebApp
        from store.paths import resolve_store
        from waiting import settle

        async def main():
            app = GenebApp(resolve_store({str(official_store.root)!r}))
            async with app.run_test(size=(100, 30)) as pilot:
                await settle(pilot)
                assert app.view is not None and len(app.view.rows) == 40
                await pilot.press("v")
                await settle(pilot)
                await pilot.press("escape", "g")     # what can run: catalog data only
                await settle(pilot)
                assert type(app.screen).__name__ == "MissingScreen"
                assert app.screen.assessed["kmer-3"].runnable

        asyncio.run(main())
        bad = sorted(m for m in sys.modules
                     if m.split(".")[0] in ("torch", "transformers", "engine"))
        print("BAD", bad)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "BAD []" in out.stdout, out.stdout


def test_core_never_imports_textual():
    script = ("import sys; import geneb_tui.core.query, geneb_tui.core.compare, "
              "geneb_tui.core.fill, geneb_tui.core.filters, "
              "geneb_tui.core.heat, store.runnable, geneb_tui.core.significance, "
              "geneb_tui.core.styles; "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('textual', 'textual_plotext', 'torch', 'transformers', 'engine')))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# -- polish: help, footer, scatter labels, source badges, filter bounds, empty-store times ------
def _listed_keys() -> set[tuple[str, str]]:
    from geneb_tui.actions import SCREENS

    return {(title, k) for title, actions in SCREENS for a in actions for k in a.key.split(",")}


def test_help_lists_every_key_of_every_screen():
    import io

    from rich.console import Console

    from geneb_tui.actions import SCREENS
    from geneb_tui.components.empty_store_screen import EmptyStoreScreen
    from geneb_tui.components.export_screen import ExportScreen
    from geneb_tui.components.filter_screen import FilterScreen
    from geneb_tui.components.help_screen import HelpScreen, keys_table
    from geneb_tui.components.missing_screen import MissingScreen
    from geneb_tui.components.task_screen import TaskScreen

    listed = {k for _, k in _listed_keys()}
    for cls in (GenebApp, CompareScreen, TaskScreen, MissingScreen, FilterScreen, ExportScreen,
                EmptyStoreScreen, HelpScreen):
        for b in cls.BINDINGS:
            for key in b.key.split(","):
                assert key in listed, f"{cls.__name__}: key {key} is not in the help"
    console = Console(width=160, file=io.StringIO(), record=True)
    console.print(keys_table())
    text = console.export_text()
    for title, _ in SCREENS:
        assert title in text
    for key in ("1", "7", "a", "b", "o", "Enter", "Space", "k", "t", "d", "g", "n", "Ctrl+S"):
        assert f"\n{key} " in text or f"\n{key}  " in text, key


async def test_footer_keeps_g_e_help_and_quit_visible_at_120_columns(official_store):
    app = GenebApp(official_store)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        for key in ("g Missing", "e Export", "? Help", "q Quit"):
            assert key in footer, footer


async def test_scale_scatter_names_the_best_models(official_store):
    from geneb_tui.components.scale_plot import ScalePlot

    app = GenebApp(official_store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("v", "4")
        await settle(pilot)
        plot = app.screen.query_one(ScalePlot)
        lb = {r["model"]: r for r in leaderboard()["full"]}
        best = max(lb, key=lambda m: lb[m]["macro_MCC"])
        assert plot.labelled[0] == app.snapshot.model_meta(best)["display"]
        assert len(plot.labelled) == 5
        assert "the 5 best are named" in str(app.screen.query_one("#scale-note").render())
        assert plot.labelled[0] in screen_text(app)


async def test_source_badges_are_whole_words_coloured_per_provenance(mixed_store):
    from geneb_tui.components.results_table import ResultsTable
    from geneb_tui.core.styles import SOURCE_STYLES

    app = GenebApp(mixed_store)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.query_one(ResultsTable)
        col = [c.key for c in app.view.columns].index("source")
        badges = {str(table.get_row_at(i)[col]): table.get_row_at(i)[col].style
                  for i in range(table.row_count)}
        assert badges == {"official": SOURCE_STYLES["official"],
                          "local": SOURCE_STYLES["local"]}
    assert len(set(SOURCE_STYLES.values())) == len(SOURCE_STYLES)   # one colour each
    for name in ("official", "verified", "self-reported", "reproduced", "local"):
        assert name in SOURCE_STYLES


@pytest.mark.parametrize(("lo", "hi", "message"), [
    ("lots", "", "Params from: 'lots' is not a parameter count"),
    ("", "inf", "Params to: 'inf' is not a parameter count"),
    ("-5M", "", "Params from: '-5M' is not a parameter count"),
    ("2B", "1B", "Params from (2B) is above Params to (1B)"),
])
async def test_a_bad_custom_scale_bound_is_refused_with_a_message(official_store, lo, hi,
                                                                  message):
    from textual.widgets import Input, Label

    from geneb_tui.components.filter_screen import FilterScreen

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#params_min", Input).value = lo
        screen.query_one("#params_max", Input).value = hi
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, FilterScreen)            # not applied, not dropped
        assert message in str(screen.query_one("#filter-error", Label).render())
        assert app.filters.is_default


async def test_bounds_with_a_fixed_scale_band_are_refused(official_store):
    from textual.widgets import Input, Label, Select

    from geneb_tui.components.filter_screen import FilterScreen

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#scale_band", Select).value = "<100M"
        screen.query_one("#params_min", Input).value = "10M"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, FilterScreen)
        assert "has fixed bounds" in str(screen.query_one("#filter-error", Label).render())


async def test_empty_store_states_how_long_each_way_takes(tmp_path):
    from textual.widgets import Static

    app = GenebApp(resolve_store(tmp_path / "empty"))
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        text = " ".join(str(app.screen.query_one("#empty-text", Static).render()).split())
        assert "about 15-20 s on two cores with --jobs 2" in text
        assert "no network, about a second" in text and "--jobs 2 --store" in text


async def test_the_filter_dialog_shown_again_opens_as_a_new_one(official_store):
    """The app keeps one filter dialog and shows it again: each opening shows the current
    filters, no error of the last opening, the focus on the first field, and applies again."""
    from textual.widgets import Input, Label, Select

    from geneb_tui.components.filter_screen import FilterScreen

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await pilot.pause()
        first = app.screen
        first.query_one("#architecture_family", Select).value = "Mamba"
        first.query_one("#params_min", Input).value = "lots"
        await pilot.press("ctrl+s")               # refused: the error is shown
        await pilot.pause()
        first.query_one("#params_min", Input).value = ""
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.filters.architecture_family == "Mamba"
        await pilot.press("f")
        await pilot.pause()
        assert app.screen is first and isinstance(first, FilterScreen)
        assert first.query_one("#architecture_family", Select).value == "Mamba"
        assert str(first.query_one("#filter-error", Label).render()) == ""
        assert first.focused is first.query_one("#suite", Select)
        first.query_one("#scale_band", Select).value = "<100M"
        await pilot.press("escape")               # cancelled: nothing kept in the dialog
        await settle(pilot)
        assert app.filters.scale_band is None
        await pilot.press("f")
        await pilot.pause()
        assert first.query_one("#scale_band", Select).value == Select.NULL
        await pilot.press("escape", "x", "f")     # the filters cleared, then the dialog
        await settle(pilot)
        assert app.screen is first
        assert first.query_one("#architecture_family", Select).value == Select.NULL
        first.query_one("#source", Select).value = "official"
        await pilot.press("ctrl+s")               # dismissed (and applied) once more
        await settle(pilot)
        assert app.screen is app.screen_stack[0] and app.filters.source == "official"


async def test_the_help_shows_the_same_keys_each_time_and_fits_each_width(official_store):
    """The keys tables are rendered once per width: a second opening shows the same lines,
    another terminal width lays them out again for it."""
    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        shown = []
        for _ in range(2):
            await pilot.press("question_mark")
            await pilot.pause()
            shown.append(screen_text(app))
            await pilot.press("escape")
            await pilot.pause()
        assert shown[0] == shown[1] and "Main table" in shown[0]
        await pilot.resize_terminal(70, 30)
        await pilot.press("question_mark")
        await pilot.pause()
        narrow = screen_text(app)
        assert "Main table" in narrow and narrow != shown[0]
        assert all(len(line) <= 70 for line in narrow.splitlines())


async def test_the_dialogs_model_name_applies_with_the_dialog_not_while_typed(official_store):
    """The dialog's "Model name" field shares the main search box's id (the `Filters` field):
    typing there leaves the table as it is until the dialog applies, and Esc keeps nothing."""
    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await pilot.pause()
        app.screen.query_one("#search").focus()
        await pilot.press(*"hyena")
        await settle(pilot)
        assert app.filters.search == "" and len(app.view.rows) == 40
        await pilot.press("escape")
        await settle(pilot)
        assert app.filters.search == "" and len(app.view.rows) == 40
        await pilot.press("f")
        await pilot.pause()
        app.screen.query_one("#search").focus()
        await pilot.press(*"hyena", "enter")
        await settle(pilot)
        assert app.screen is app.screen_stack[0] and app.filters.search == "hyena"
        assert 0 < len(app.view.rows) < 40
        assert app.screen_stack[0].query_one("#search").value == "hyena"
