"""The main table on the official store: filters, regimes, metrics, sorting, ranks, missing."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import apply_filters, settle, two_seeds
from fixture_store import OFFICIAL_IDS, SUBMISSIONS, board
from rich.markup import escape
from textual.widgets import Input

from geneb_tui.components.results_table import ResultsTable
from store.catalog import geneb_v1_tasks, load_models
from tests.store.local_rows import local_rows

SIZE = (100, 30)
MODELS = load_models(None)


def shown(app) -> dict[str, dict]:
    """model -> {column key: value} of the rows the table shows."""
    return {r.model: r.values for r in app.view.rows}


def table_rows(app) -> list[str]:
    table = app.query_one(ResultsTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


async def test_default_table_is_the_official_leaderboard(official_store, make_app):
    app = make_app(official_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lb = board("full")
        values = shown(app)
        assert set(values) == set(OFFICIAL_IDS)
        for model, row in lb.items():
            assert values[model]["macro"] == pytest.approx(row["macro_MCC"], abs=1e-9)
            assert values[model]["micro"] == pytest.approx(row["micro_MCC"], abs=1e-9)
            for cat, v in row["cat_MCC"].items():
                assert values[model][f"cat:{cat}"] == pytest.approx(v, abs=1e-9)
        # sorted by macro, best first; rank = position (no ties among the official macros)
        expected = sorted(lb, key=lambda m: -lb[m]["macro_MCC"])
        assert [r.model for r in app.view.rows] == expected
        assert [r.ranks["macro"] for r in app.view.rows] == list(range(1, 41))
        # the widget shows the same rows, value and rank in each cell
        table = app.query_one(ResultsTable)
        assert table.row_count == 40
        first = table.get_row_at(0)
        assert str(first[0]) == MODELS[expected[0]].display
        macro_idx = [c.key for c in app.view.columns].index("macro")
        # value and rank; once the worker has computed it, the rank interval (test_significance)
        value = f"{lb[expected[0]]['macro_MCC']:.3f}"
        assert re.fullmatch(rf"{value}\s+≈?#1( \[\d+-\d+\])?", str(first[macro_idx]))
        assert "regime full" in str(app.query_one("#filter-bar").render())


async def test_regime_switch_shows_the_10shot_and_1shot_values(official_store, make_app):
    app = make_app(official_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for regime in ("10shot", "1shot"):
            await pilot.press("r")
            await settle(pilot)
            assert app.filters.regime == regime
            assert f"regime {regime}" in str(app.query_one("#filter-bar").render())
            lb = board(regime)
            values = shown(app)
            for model, row in lb.items():
                assert values[model]["macro"] == pytest.approx(row["macro_MCC"], abs=1e-9)
                for cat, v in row["cat_MCC"].items():
                    assert values[model][f"cat:{cat}"] == pytest.approx(v, abs=1e-9)
            best = max(lb, key=lambda m: lb[m]["macro_MCC"])
            assert app.view.rows[0].model == best


async def test_metric_switch_shows_acc_then_f1(official_store, make_app):
    app = make_app(official_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lb = board("full")
        for metric, key in (("acc", "Acc"), ("f1_macro", "F1")):
            await pilot.press("m")
            await settle(pilot)
            assert app.filters.metric == metric
            values = shown(app)
            for model, row in lb.items():
                assert values[model]["macro"] == pytest.approx(row[f"macro_{key}"], abs=1e-9)
                assert values[model]["micro"] == pytest.approx(row[f"micro_{key}"], abs=1e-9)


async def test_category_shows_its_tasks_with_the_submitted_values(official_store, make_app):
    app = make_app(official_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")   # first category: Histone Mod.
        await settle(pilot)
        assert app.filters.category == "Histone Mod."
        tasks = [t for t in geneb_v1_tasks() if t.category == "Histone Mod."]
        score_labels = [c.label for c in app.view.score_columns]
        assert score_labels == ["Histone Mod.", *(t.label for t in tasks)]
        sub = json.loads((SUBMISSIONS / "GROVER.json").read_text())["results"]["full"]
        grover = shown(app)["GROVER"]
        for t in tasks:
            assert grover[f"task:{t.task_id}"] == sub[t.task_id]["MCC"]
        assert grover["cat:Histone Mod."] == pytest.approx(
            board("full")["GROVER"]["cat_MCC"]["Histone Mod."], abs=1e-9)
        # sorted by the category score by default
        cat_values = [r.values["cat:Histone Mod."] for r in app.view.rows]
        assert cat_values == sorted(cat_values, reverse=True)


async def test_model_filters_combine_and_one_key_clears(official_store, make_app):
    app = make_app(official_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        def ids(pred):
            return {m for m in OFFICIAL_IDS if pred(MODELS[m])}

        await apply_filters(pilot, architecture_family="Mamba")
        assert set(shown(app)) == ids(lambda m: m.architecture_family == "Mamba")
        assert "arch Mamba" in str(app.query_one("#filter-bar").render())

        await apply_filters(pilot, scale_band="<100M")
        assert set(shown(app)) == ids(lambda m: m.architecture_family == "Mamba"
                                      and m.params < 100_000_000)
        await pilot.press("x")
        await settle(pilot)
        assert app.filters.is_default and len(shown(app)) == 40

        await apply_filters(pilot, scale_band="100M-1B")
        assert set(shown(app)) == ids(lambda m: 100_000_000 <= m.params <= 1_000_000_000)
        await pilot.press("x")
        await settle(pilot)

        await apply_filters(pilot, params_min="200M", params_max="600M")
        assert app.filters.scale_band == "custom"
        assert set(shown(app)) == ids(lambda m: 200_000_000 <= m.params <= 600_000_000)
        assert "params 200M–600M" in str(app.query_one("#filter-bar").render())
        await pilot.press("x")
        await settle(pilot)

        await apply_filters(pilot, pretraining_data="human")
        human = ids(lambda m: m.pretraining_data == "human")
        assert set(shown(app)) == human and human
        # ranks are taken among the rows shown
        assert sorted(r.ranks["macro"] for r in app.view.rows) == list(range(1, len(human) + 1))
        lb = board("full")
        for r in app.view.rows:
            assert r.values["macro"] == pytest.approx(lb[r.model]["macro_MCC"], abs=1e-9)
        await pilot.press("x")
        await settle(pilot)

        await apply_filters(pilot, source="official")
        assert len(shown(app)) == 40


async def test_model_name_search(official_store, make_app):
    app = make_app(official_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        assert app.focused is app.query_one("#search", Input)
        await pilot.press(*"hyena")
        await pilot.press("enter")
        await settle(pilot)
        assert set(shown(app)) == {m for m in OFFICIAL_IDS if "hyena" in m.lower()}
        assert isinstance(app.focused, ResultsTable)
        assert table_rows(app) == [MODELS[r.model].display for r in app.view.rows]
        await pilot.press("x")
        await settle(pilot)
        assert app.query_one("#search", Input).value == "" and len(shown(app)) == 40


async def test_sort_by_any_column_and_reverse(official_store, make_app):
    app = make_app(official_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = [c.key for c in app.view.columns]
        table = app.query_one(ResultsTable)
        # the Params column: largest first, then smallest first
        table.move_cursor(column=keys.index("params"))
        await pilot.press("s")
        await settle(pilot)
        params = [MODELS[r.model].params for r in app.view.rows]
        assert params == sorted(params, reverse=True) and app.view.sort_key == "params"
        await pilot.press("s")
        await settle(pilot)
        params = [MODELS[r.model].params for r in app.view.rows]
        assert params == sorted(params)
        # a category column by clicking its header
        col = keys.index("cat:Promoters")
        table.move_cursor(column=col)
        table.post_message(table.HeaderSelected(table, table.ordered_columns[col].key, col,
                                                table.ordered_columns[col].label))
        await settle(pilot)
        vals = [r.values["cat:Promoters"] for r in app.view.rows]
        assert vals == sorted(vals, reverse=True)
        assert [r.ranks["cat:Promoters"] for r in app.view.rows] == list(range(1, 41))
        # the Model column sorts by name
        table.move_cursor(column=0)
        await pilot.press("s")
        await settle(pilot)
        names = [MODELS[r.model].display.lower() for r in app.view.rows]
        assert names == sorted(names)


async def test_missing_cells_are_shown_as_missing_and_sorted_last(mixed_store, make_app):
    app = make_app(mixed_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = {(r.model, r.source): r for r in app.view.rows}
        assert set(rows) == {("GROVER", "official"), ("MutBERT", "official"),
                             ("kmer-3", "local")}
        local = rows[("kmer-3", "local")]
        assert local.values["macro"] is None and local.ranks["macro"] is None
        assert app.view.rows[-1].model == "kmer-3"     # missing sorts last, either direction
        table = app.query_one(ResultsTable)
        macro = [c.key for c in app.view.columns].index("macro")
        assert str(table.get_row_at(2)[macro]) == "—"
        await pilot.press("c", "c")                    # Promoters: its first 3 tasks are there
        await settle(pilot)
        local = next(r for r in app.view.rows if r.model == "kmer-3")
        present = [k for k, v in local.values.items() if v is not None]
        assert len(present) == 3 and "cat:Promoters" not in present
        await apply_filters(pilot, source="local")
        assert [(r.model, r.source) for r in app.view.rows] == [("kmer-3", "local")]


async def test_works_at_80x24_and_help_and_palette(official_store, make_app):
    app = make_app(official_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.query_one(ResultsTable)
        assert table.region.height >= 15 and table.region.width >= 78
        await pilot.press("question_mark")
        await pilot.pause()
        from geneb_tui.components.help_screen import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        from geneb_tui.actions import ACTIONS, palette_title

        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        for a in ACTIONS:
            if a.action not in ("quit", "help"):
                assert palette_title(a) in commands
        assert commands["Quit"].callback == app.action_quit     # Textual's own entry
        regime = app.filters.regime
        cycle = next(a for a in ACTIONS if a.action == "cycle_regime")
        app.call_later(commands[palette_title(cycle)].callback)   # as the palette runs it
        await settle(pilot)
        assert app.filters.regime != regime                    # the entry did what it says


async def test_a_late_result_of_a_superseded_query_is_dropped(official_store, make_app):
    from geneb_tui.core.query import build_view
    from geneb_tui.messages import ViewBuilt

    app = make_app(official_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        current = app.view
        stale = build_view(app.snapshot, app.filters.with_(regime="1shot"))
        app.post_message(ViewBuilt(stale, app._view_token - 1))
        await settle(pilot)
        assert app.view is current and app.filters.regime == "full"
        assert str(app.query_one("#filter-bar").render()).count("regime full") == 1


async def test_a_store_with_only_local_suite_results_opens_on_that_suite(tmp_path, make_app):
    """A fresh `make demo` store holds geneb-mini results only: the table opens on them."""
    from engine import mini
    from store.paths import resolve_store
    from store.tables.catalogs import register_tasks
    from store.tables.results import append_rows

    paths = resolve_store(tmp_path / "store")
    mini.materialize(paths.suites / "geneb-mini")
    register_tasks(paths, mini.TASKS)
    append_rows(paths, local_rows("kmer-3", [t.task_id for t in mini.TASKS], ("full",),
                                  value=0.5, seeds_of=two_seeds))
    app = make_app(paths)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert app.filters.suite == "geneb-mini"
        assert [r.model for r in app.view.rows] == ["kmer-3"]


async def test_a_broken_models_toml_is_reported_once_and_the_table_still_shown(small_store,
                                                                             make_app):
    small_store.user_models.write_text("[model]\nmodel_id = 'x'\n")
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        problem = (f"{small_store.user_models}: 'model' must be a list of tables, one "
                   "[[model]] per model")
        assert app.snapshot.catalog_error == problem
        assert [n.message for n in app._notifications] == [
            escape(f"{problem}; its models are left out (fix it, then Ctrl+R)")]
        assert {r.model for r in app.view.rows} == {"GROVER", "MutBERT"}
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert len(app._notifications) == 1                  # reported once, not per reload


def test_the_store_read_imports_neither_pandas_nor_pyarrow_dataset(official_store):
    """The dashboard's cold start: the snapshot (catalogs included) is read without pandas and
    pyarrow.dataset, and the catalogs read are those pyarrow's dataset reader gives."""
    code = (
        "import sys; from store.paths import resolve_store; "
        "from geneb_tui.core.query import StoreSnapshot; "
        f"snap = StoreSnapshot.load(resolve_store({str(official_store.root)!r})); "
        "print(snap.tasks.height, snap.models.height, "
        "sorted(m for m in ('pandas', 'pyarrow.dataset') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split(maxsplit=2)
    assert out[2].strip() == "[]"
    import polars as pl
    import pyarrow.parquet as pq

    from store.tables.catalogs import read_catalog

    for name in ("tasks", "models"):
        f = official_store.catalog_table(name)
        assert f.exists()
        got = read_catalog(official_store, name)
        assert got.height > 0
        assert got.equals(pl.concat([got.clear(), pl.from_arrow(pq.read_table(f))],
                                    how="diagonal_relaxed"))
