"""CSV export: exactly the rows and columns shown, full precision, formula-safe."""

from __future__ import annotations

import csv
from datetime import date

from conftest import apply_filters, opened, settle, two_seeds
from fixture_store import SUBMISSIONS, build_official_store
from textual.widgets import Input

from geneb_tui.components.export_screen import ExportScreen
from geneb_tui.core.filters import Filters
from store.catalog import geneb_v1_tasks
from store.csv_out import safe_cell, write_csv
from store.tables.results import append_rows
from tests.store.local_rows import local_rows


async def export_to(pilot, path) -> None:
    await pilot.press("e")
    await pilot.pause()
    assert isinstance(pilot.app.screen, ExportScreen)
    pilot.app.screen.query_one("#export-path", Input).value = str(path)
    await pilot.press("enter")
    await settle(pilot)


def read(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


async def test_export_writes_exactly_the_shown_rows_and_columns(official_store, tmp_path):
    from geneb_tui.app import GenebApp

    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("r")                       # 10-shot
        await apply_filters(pilot, architecture_family="Transformer encoder",
                            scale_band="<100M")
        view = app.view
        out = tmp_path / "view.csv"
        await export_to(pilot, out)
        lines = read(out)
        header, body = lines[0], lines[1:]
        assert header == view.export_header()
        # the columns shown, in order; the model id after the name; two ranks after each score
        labels = [c.label for c in view.columns]
        selection = ["Suite", "Category", "Regime", "Metric", "Protocol", "Protocol hash",
                     "Filters"]
        shown = [h for h in header[:-len(selection)]
                 if h != "Model ID" and not h.endswith((" rank (shown)", " rank (store)"))
                 and " 95% " not in h]   # the interval columns (tests/tui/test_significance.py)
        assert shown == labels and header[1] == "Model ID"
        assert header[-len(selection):] == selection
        assert len(body) == len(view.rows) > 0
        macro = header.index("Macro")
        assert header[macro + 1:macro + 3] == ["Macro rank (shown)", "Macro rank (store)"]
        for line, row in zip(body, view.rows, strict=True):
            assert line[0] == row.meta["display"] and line[1] == row.model
            assert float(line[macro]) == row.values["macro"]          # full precision
            assert int(line[macro + 1]) == row.ranks["macro"]
            assert int(line[macro + 2]) == row.overall["macro"]
            assert line[header.index("Params")] == str(row.meta["params"])
            assert line[-len(selection):] == [
                "geneb-v1", "all", "10shot", "MCC", "geneb-v1", view.protocol_hash,
                "arch Transformer encoder · params <100M"]
        # the rank in the store is never better than the rank among the rows shown
        assert all(int(r[macro + 2]) >= int(r[macro + 1]) for r in body)
        assert any(int(r[macro + 2]) > int(r[macro + 1]) for r in body)

        # an empty view writes the header only
        await apply_filters(pilot, search="no-such-model")
        assert app.view.rows == []
        empty = tmp_path / "empty.csv"
        await export_to(pilot, empty)
        assert read(empty) == [header]


async def test_export_dialog_offers_a_descriptive_name_in_the_current_folder(
        official_store, tmp_path, monkeypatch):
    from geneb_tui.app import GenebApp

    monkeypatch.chdir(tmp_path)
    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        field = app.screen.query_one("#export-path", Input)
        assert field.value == str(tmp_path / "geneb-v1-full-mcc.csv")
        await pilot.press("escape")
        await pilot.press("r", "m", "c")                 # 10-shot, Acc, Histone Mod.
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        field = app.screen.query_one("#export-path", Input)
        assert field.value == str(tmp_path / "geneb-v1-10shot-acc-Histone_Mod..csv")
        await pilot.press("enter")
        await settle(pilot)
        lines = read(tmp_path / "geneb-v1-10shot-acc-Histone_Mod..csv")
        header = lines[0]
        assert lines[1][header.index("Category")] == "Histone Mod."
        assert lines[1][header.index("Metric")] == "Acc"
        assert lines[1][header.index("Filters")] == "none"


async def test_export_dialog_names_a_geneb_mini_file_without_repeating_geneb(
        store_of_kind, tmp_path, monkeypatch):
    from geneb_tui.app import GenebApp

    monkeypatch.chdir(tmp_path)
    app = GenebApp(store_of_kind("mini"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.filters.suite == "geneb-mini"
        await pilot.press("e")
        await pilot.pause()
        field = app.screen.query_one("#export-path", Input)
        assert field.value == str(tmp_path / "geneb-mini-full-mcc.csv")


async def test_a_model_without_a_parameter_count_is_na_on_screen_and_empty_in_the_csv(
        store_of_kind, tmp_path):
    """The k-mer baselines have no parameter count (store.catalog.param_count)."""
    from geneb_tui.app import GenebApp
    from geneb_tui.components.results_table import ResultsTable

    app = GenebApp(store_of_kind("mini"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = app.query_one(ResultsTable)
        shown = [table.get_row_at(i) for i in range(table.row_count)]
        assert sorted((r[0].plain, r[2].plain) for r in shown) == [
            ("3-mer spectrum", "n/a"), ("4-mer spectrum", "n/a"), ("6-mer spectrum", "n/a")]
        out = tmp_path / "mini.csv"
        await export_to(pilot, out)
        header, *body = read(out)
        params = header.index("Params")
        assert sorted((line[1], line[params]) for line in body) == [
            ("kmer-3", ""), ("kmer-4", ""), ("kmer-6", "")]


def test_export_names_each_suite_once_as_a_safe_file_name():
    assert Filters().export_name() == "geneb-v1-full-mcc.csv"
    assert Filters(suite="geneb-mini", regime="1shot", metric="f1_macro",
                   category="Promoters").export_name() == "geneb-mini-1shot-f1_macro-Promoters.csv"
    # a suite run from a folder goes by the folder's name: made a safe file name, prefixed
    assert Filters(suite="my suite (v2)").export_name() == "geneb-my_suite__v2_-full-mcc.csv"
    assert Filters(suite="..", category="TF/Binding").export_name() == \
        "geneb-..-full-mcc-TF_Binding.csv"


async def test_export_escapes_formulas_but_keeps_negative_numbers(tmp_path):
    paths = build_official_store(tmp_path / "store", [SUBMISSIONS / "GROVER.json"])
    tasks = [t.task_id for t in geneb_v1_tasks()]
    rows = local_rows("=HYPERLINK(evil)", tasks, ("full",), value=-0.2, seeds_of=two_seeds)
    append_rows(paths, rows)
    from geneb_tui.app import GenebApp

    app = GenebApp(paths)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        out = tmp_path / "x.csv"
        await export_to(pilot, out)
        text = out.read_text()
        body = read(out)[1:]
        evil = next(r for r in body if "HYPERLINK" in r[0])
        assert evil[0] == "'=HYPERLINK(evil)"
        assert "\n=" not in text and ",=" not in text
        negative = [c for c in evil if c.startswith("-")]
        assert negative and all(float(c) < 0 for c in negative)   # numbers stay numbers


def test_safe_cell_rules(tmp_path):
    assert safe_cell("=1+1") == "'=1+1"
    assert safe_cell("+cmd") == "'+cmd"
    assert safe_cell("-cmd") == "'-cmd"
    assert safe_cell("@SUM(A1)") == "'@SUM(A1)"
    assert safe_cell("\tx") == "'\tx" and safe_cell("\rx") == "'\rx"
    assert safe_cell(-0.25) == "-0.25" and safe_cell(-3) == "-3" and safe_cell(True) == "True"
    assert safe_cell(0.1 + 0.2) == "0.30000000000000004"
    assert safe_cell(None) == "" == safe_cell(float("nan")) and safe_cell("GROVER") == "GROVER"
    assert safe_cell(date(2024, 5, 1)) == "2024-05-01"
    out = tmp_path / "h.csv"
    assert write_csv(out, ["a", "b"], []) == 0
    assert out.read_bytes() == b"a,b\r\n"
    assert write_csv(out, ["n", "x", "none", "flag"], [[-3, -0.25, None, False]]) == 1
    assert out.read_bytes() == b"n,x,none,flag\r\n-3,-0.25,,False\r\n"
    assert [p.name for p in tmp_path.iterdir()] == ["h.csv"]     # no temporary file left


def _typed_fast(app, keys) -> None:
    """`keys` sent to the app as a terminal sends a burst (a fast typist, a script): each key
    queued at once, none waited for (`pilot.press` waits for the app to be idle after each)."""
    import unicodedata

    from textual import events
    from textual.app import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

    for key in keys:
        if len(key) == 1 and not key.isalnum():
            key = _character_to_key(key)
        try:
            char = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
        except KeyError:
            char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)




async def test_a_path_typed_fast_is_exported_to_as_typed(official_store, tmp_path):
    """Editing keys (ctrl+u, backspace) and Enter act in the order typed, not after the
    characters that followed them (Textual runs a field's bindings once the key has bubbled
    back to the app: a burst lost its last characters, `tui-export.`)."""
    from geneb_tui.app import GenebApp

    app = GenebApp(official_store)
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(pilot, "e", ExportScreen)
        typo = str(tmp_path / "tui-export.csx")
        _typed_fast(app, ["ctrl+u", *typo, "backspace", "v", "enter"])
        for _ in range(20):
            await pilot.pause()
            if not isinstance(app.screen, ExportScreen):
                break
        await settle(pilot)
        assert not isinstance(app.screen, ExportScreen)
    assert [p.name for p in tmp_path.iterdir()] == ["tui-export.csv"]
    assert read(tmp_path / "tui-export.csv")[0] == app.view.export_header()


async def test_at_120_columns_the_export_dialogs_title_is_read_whole(official_store):
    from capture import screen_text

    from geneb_tui.app import GenebApp

    app = GenebApp(official_store)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await opened(pilot, "e", ExportScreen)
        title = (f"Export to CSV — {dialog.n_rows} rows × {dialog.n_cols} columns: "
                 f"{ExportScreen.TABLE}")
        inside = [line.split("█")[1] for line in screen_text(app).splitlines()
                  if line.count("█") == 2]                # between the dialog's borders
    assert title in " ".join(" ".join(inside).split())
