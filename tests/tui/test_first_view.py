"""The first-view cache (`geneb_tui.core.first_view`): a hit paints the rows the live snapshot
shows, any change to the store's results, catalog or registries (or to the start-up selection,
or the package version) misses, a bad file or folder is ignored, the store is never written, and
the cached path imports none of the store stack."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import settle, two_seeds
from fixture_store import SUBMISSIONS
from textual import on
from textual.screen import ModalScreen

import store
from geneb_tui.app import FirstViewRead, GenebApp
from geneb_tui.components.results_table import ResultsTable
from geneb_tui.core import first_view
from geneb_tui.core.filters import Filters
from geneb_tui.core.first_view import cache_dir, cache_file, read_first_view, view_key
from store.catalog import geneb_v1_tasks
from store.official.submission import import_files
from store.tables.catalogs import register_tasks
from store.tables.results import append_rows
from tests.store.local_rows import local_rows

SIZE = (100, 30)
ROOT = Path(__file__).resolve().parents[2]


def painted(view) -> list[list[str]]:
    """Everything the table paints for a view before its rank intervals arrive: the header,
    then each row's cell texts."""
    view = replace(view, intervals=None)
    return ([[c.label for c in view.columns]]
            + [[view.cell_text(r, c) for c in view.columns] for r in view.rows])


def start_key(paths, filters: Filters | None = None) -> dict:
    return view_key(paths, filters or Filters(), None, True, "store")


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


class Recording(GenebApp):
    """Keeps the view painted from the cache (None on a miss)."""

    cached = None

    @on(FirstViewRead)
    def _record(self, msg: FirstViewRead) -> None:
        if msg.view is not None and self.snapshot is None:
            self.cached = msg.view


async def run_once(paths, **kwargs) -> Recording:
    app = Recording(paths, **kwargs)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.internal_errors
        assert app.snapshot is not None and app.view is not None
    return app


async def test_a_hit_paints_the_rows_of_the_live_snapshot(official_store):
    first = await run_once(official_store)
    assert first.cached is None   # an empty cache folder: a miss
    assert cache_file(official_store).is_file()
    second = await run_once(official_store)
    assert second.cached is not None
    assert len(second.cached.rows) == 40
    assert painted(second.cached) == painted(second.view) == painted(first.view)
    live = replace(second.view, intervals=None)
    assert second.cached.export_header() == live.export_header()
    assert second.cached.export_rows() == live.export_rows()
    assert second.view.intervals is not None   # computed after the table, as without a cache
    assert second.cached.filters == second.view.filters
    assert (second.cached.sort_key, second.cached.descending) == (second.view.sort_key,
                                                                  second.view.descending)


async def test_the_cached_table_is_painted_before_the_snapshot(small_store, monkeypatch):
    await run_once(small_store)
    from geneb_tui.core.query import StoreSnapshot

    release = threading.Event()
    load = StoreSnapshot.load.__func__

    def held(cls, paths, *args, **kwargs):
        release.wait(30)
        return load(cls, paths, *args, **kwargs)

    monkeypatch.setattr(StoreSnapshot, "load", classmethod(held))
    app = GenebApp(small_store)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(200):
            if app.view is not None:
                break
            await pilot.pause(0.01)
        assert app.snapshot is None and app.view is not None
        table = app.query_one(ResultsTable)
        assert table.row_count == 2
        assert "2/2 rows" in str(app.query_one("#filter-bar").render())
        # keys that need the snapshot only say so: no crash, no screen, no change
        for key in ("r", "m", "c", "s", "f", "e", "v", "d", "g", "n", "x"):
            await pilot.press(key)
        await pilot.pause()
        assert not isinstance(app.screen, ModalScreen) and app.screen is app.screen_stack[0]
        assert any("Still reading the store" in n.message for n in app._notifications)
        assert app.filters == Filters()
        release.set()
        await settle(pilot)
        assert app.snapshot is not None and not app.internal_errors
        assert table.row_count == 2
        await pilot.press("r")
        await settle(pilot)
        assert app.view.filters.regime == "10shot"


def test_results_catalog_and_registry_changes_miss(small_store, tmp_path):
    asyncio.run(run_once(small_store))
    key = start_key(small_store)
    assert read_first_view(small_store, key) is not None
    # a fill's commit (append_rows: what `fill` commits per pair)
    tasks = [t.task_id for t in geneb_v1_tasks() if t.category == "Promoters"][:2]
    append_rows(small_store, local_rows("kmer-3", tasks, ("full",), value=0.5,
                                        seeds_of=two_seeds))
    assert read_first_view(small_store, start_key(small_store)) is None
    asyncio.run(run_once(small_store))
    assert read_first_view(small_store, start_key(small_store)) is not None
    # an import
    import_files(small_store, [SUBMISSIONS / "DNABERT-S.json"])
    assert read_first_view(small_store, start_key(small_store)) is None
    asyncio.run(run_once(small_store))
    # the catalog alone (a task registered, no result)
    from engine import mini

    register_tasks(small_store, list(mini.TASKS))
    assert read_first_view(small_store, start_key(small_store)) is None
    asyncio.run(run_once(small_store))
    # the user's model registry
    assert read_first_view(small_store, start_key(small_store)) is not None
    small_store.user_models.write_text('[[model]]\nmodel_id = "my-model"\n'
                                       'hub_id = "org/my-model"\nparams = 1000\n')
    assert read_first_view(small_store, start_key(small_store)) is None


async def test_a_reload_caches_the_start_up_view_of_the_store_as_it_is_now(small_store):
    """A reload (Ctrl+R; the dashboard reloads after a run too) writes the view the next start
    opens on, for the store as it is now and whatever selection is shown: that start paints
    it from the cache, the rows the live snapshot then shows."""
    await run_once(small_store)
    tasks = [t.task_id for t in geneb_v1_tasks() if t.category == "Promoters"][:2]
    app = Recording(small_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("m")                   # another selection shown meanwhile
        await settle(pilot)
        append_rows(small_store, local_rows("kmer-3", tasks, ("full",), value=0.5,
                                            seeds_of=two_seeds))
        assert read_first_view(small_store, start_key(small_store)) is None
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert not app.internal_errors
    assert read_first_view(small_store, start_key(small_store)) is not None
    second = await run_once(small_store)
    assert second.cached is not None
    assert painted(second.cached) == painted(second.view)
    assert second.cached.filters == second.view.filters == Filters()


def test_the_start_up_selection_and_the_package_version_are_in_the_key(small_store,
                                                                       monkeypatch):
    asyncio.run(run_once(small_store))
    key = start_key(small_store)
    assert read_first_view(small_store, key) is not None
    assert read_first_view(small_store, start_key(small_store, Filters(regime="10shot"))) is None
    assert read_first_view(small_store, view_key(small_store, Filters(), "micro", True,
                                                 "store")) is None
    monkeypatch.setattr(store, "__version__", "0.0.0-other")
    assert read_first_view(small_store, start_key(small_store)) is None
    # another start-up selection is cached under its own key (and shows its own rows)
    monkeypatch.undo()
    app = asyncio.run(run_once(small_store, filters=Filters(regime="1shot")))
    again = asyncio.run(run_once(small_store, filters=Filters(regime="1shot")))
    assert again.cached is not None and again.cached.filters.regime == "1shot"
    assert painted(again.cached) == painted(app.view)


@pytest.mark.parametrize("content", [
    "", "{", "not json", "[]", '{"key": 1}', "\x00\xff garbage",
])
def test_a_corrupt_cache_file_is_ignored(small_store, content):
    target = cache_file(small_store)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8", errors="surrogateescape")
    app = asyncio.run(run_once(small_store))
    assert app.cached is None and app.view is not None and len(app.view.rows) == 2
    assert read_first_view(small_store, start_key(small_store)) is not None   # rewritten


@pytest.mark.parametrize("damage", ["values", "ranks", "columns", "version", "nan"])
def test_a_cache_file_with_the_right_key_but_a_wrong_view_is_ignored(small_store, damage):
    asyncio.run(run_once(small_store))
    target = cache_file(small_store)
    data = json.loads(target.read_text())
    row = data["view"]["rows"][0]
    if damage == "values":
        row["values"]["macro"] = "0.5"
    elif damage == "ranks":
        row["ranks"]["macro"] = 1.5
    elif damage == "columns":
        data["view"]["columns"][0] = ["display"]
    elif damage == "version":
        data["version"] = "7"
    else:
        row["values"]["macro"] = float("nan")
    target.write_text(json.dumps(data))
    assert read_first_view(small_store, start_key(small_store)) is None
    app = asyncio.run(run_once(small_store))
    assert app.cached is None and not app.internal_errors


def test_an_unwritable_cache_folder_is_ignored(small_store, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GENEB_CACHE_DIR", str(blocker / "tui"))   # under a file: never a folder
    app = asyncio.run(run_once(small_store))
    assert len(app.view.rows) == 2
    assert not (blocker / "tui").exists()


def test_the_store_is_unchanged_byte_for_byte(small_store, monkeypatch):
    before = files_of(small_store.root)
    asyncio.run(run_once(small_store))
    hit = asyncio.run(run_once(small_store))
    assert hit.cached is not None
    assert files_of(small_store.root) == before
    # a cache folder inside the store is never written
    monkeypatch.setenv("GENEB_CACHE_DIR", str(small_store.root / "cache"))
    asyncio.run(run_once(small_store))
    assert files_of(small_store.root) == before
    assert not (small_store.root / "cache").exists()


def test_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("GENEB_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    monkeypatch.delenv("GENEB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "geneb" / "tui"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "geneb" / "tui"


# The dashboard with the store stack made unimportable: the cached table must still be painted.
CHILD = r"""
import asyncio, sys

from tests.helpers import unimportable

BLOCKED = {"polars", "duckdb", "deltalake", "pyarrow", "pandas", "scipy"}
unimportable(BLOCKED, "blocked")
from tests.tui.waiting import settle
from geneb_tui.app import FirstViewRead, GenebApp
from geneb_tui.components.results_table import ResultsTable
from store.paths import resolve_store

async def main():
    app = GenebApp(resolve_store(sys.argv[1]))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, rounds=1)
        print("ROWS", app.query_one(ResultsTable).row_count, app.snapshot is None)
        print("LOADED", sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED))

asyncio.run(main())
"""


def test_the_cached_path_imports_none_of_the_store_stack(small_store):
    asyncio.run(run_once(small_store))
    out = subprocess.run([sys.executable, "-c", CHILD, str(small_store.root)], cwd=ROOT,
                         capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert out.returncode == 0, out.stderr
    lines = dict(ln.split(" ", 1) for ln in out.stdout.splitlines())
    assert lines["ROWS"] == "2 True"      # painted from the cache; the snapshot could not load
    assert lines["LOADED"] == "[]"


async def test_a_sort_of_the_rows_shown_is_the_table_a_rebuild_gives(official_store):
    """`s` re-sorts the view shown in place (no worker): the same rows, in the same order, as
    `build_view` with that sort."""
    from geneb_tui.core.query import build_view

    app = GenebApp(official_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.query_one(ResultsTable)
        for column in (4, 4, 0, 1, 2):   # micro (twice: reversed), model, source, params
            table.move_cursor(column=column)
            await pilot.press("s")
            await pilot.pause()
            key = app.view.columns[column].key
            assert app.view.sort_key == key
            rebuilt = build_view(app.snapshot, app.filters, key, app.view.descending)
            assert painted(app.view) == painted(rebuilt)
            assert [str(table.get_row_at(i)[0]) for i in range(3)] == [
                app.view.cell_text(r, app.view.columns[0]) for r in rebuilt.rows[:3]]
        assert not app.internal_errors


# -- kept current by geneb-engine (`store.changed`, the `geneb.store_changed` entry point) ---
def engine(capsys, *argv: str) -> tuple[int, str]:
    """(exit status, stderr) of `geneb-engine argv` in this process."""
    from engine.cli import main

    capsys.readouterr()
    rc = main(list(argv))
    return rc, capsys.readouterr().err


def tiny_suite(folder: Path) -> Path:
    """A one-task folder suite (200 train, 80 test, 2 classes) for a fill of a few seconds."""
    from tests.engine.conftest import write_task

    folder.mkdir()
    write_task(folder / "bin_task.csv", 200, 80, 2, 1)
    (folder / "manifest.csv").write_text("task_id,category,label\nbin_task,Promoters,Binary\n")
    return folder


async def test_a_cli_import_and_fill_leave_the_next_start_painted_from_the_cache(
        small_store, tmp_path, capsys):
    """After the dashboard has shown a store, `geneb-engine import` and `fill` rewrite its
    start-up view: the next start paints it from the cache (a hit, at the new results version)
    and it is the table the live snapshot then shows."""
    await run_once(small_store)
    version = json.loads(cache_file(small_store).read_text())["version"]
    rc, err = engine(capsys, "import", "--store", str(small_store.root),
                     str(SUBMISSIONS / "DNABERT-S.json"))
    assert (rc, err) == (0, "")
    hit = read_first_view(small_store, start_key(small_store))
    assert hit is not None and hit[1] > version
    assert {r.model for r in hit[0].rows} == {"GROVER", "MutBERT", "DNABERT-S"}
    after_import = await run_once(small_store)
    assert after_import.cached is not None and len(after_import.cached.rows) == 3
    assert painted(after_import.cached) == painted(after_import.view)

    rc, err = engine(capsys, "fill", "--store", str(small_store.root), "--suite",
                     str(tiny_suite(tmp_path / "suite")), "--models", "kmer-3", "--regimes",
                     "full")
    assert (rc, err) == (0, "")
    after_fill = await run_once(small_store)
    assert after_fill.cached is not None
    assert json.loads(cache_file(small_store).read_text())["version"] > hit[1]
    assert painted(after_fill.cached) == painted(after_fill.view)


def test_a_command_that_changed_nothing_leaves_the_cache_file_as_it_was(small_store, capsys):
    asyncio.run(run_once(small_store))
    before = cache_file(small_store).read_bytes(), cache_file(small_store).stat().st_mtime_ns
    rc, _ = engine(capsys, "import", "--store", str(small_store.root),
                   str(SUBMISSIONS / "GROVER.json"))          # stored already: nothing new
    assert rc == 0
    assert (cache_file(small_store).read_bytes(),
            cache_file(small_store).stat().st_mtime_ns) == before


def test_a_store_the_dashboard_never_showed_gets_no_cache_file(tmp_path, capsys,
                                                               first_view_cache):
    rc, err = engine(capsys, "import", "--store", str(tmp_path / "store"),
                     str(SUBMISSIONS / "GROVER.json"))
    assert (rc, err) == (0, "")
    assert list(first_view_cache.iterdir()) == []


def test_a_listener_that_fails_is_one_warning_and_the_command_keeps_its_status(
        small_store, capsys, monkeypatch):
    asyncio.run(run_once(small_store))

    def broken(paths):
        raise OSError("disk on fire\nsecond line")

    monkeypatch.setattr(first_view, "refresh", broken)
    rc, err = engine(capsys, "import", "--store", str(small_store.root),
                     str(SUBMISSIONS / "DNABERT-S.json"))
    assert rc == 0
    assert err == ("geneb-engine import: warning: dashboard (geneb_tui.core.first_view:refresh) "
                   "failed after the store changed: OSError: disk on fire\n")
    assert "DNABERT-S" in {r.model for r in asyncio.run(run_once(small_store)).view.rows}


def test_ctrl_c_during_the_refresh_ends_the_command_with_its_own_status(small_store, capsys,
                                                                        monkeypatch):
    asyncio.run(run_once(small_store))

    def interrupted(paths):
        raise KeyboardInterrupt

    monkeypatch.setattr(first_view, "refresh", interrupted)
    rc, err = engine(capsys, "import", "--store", str(small_store.root),
                     str(SUBMISSIONS / "DNABERT-S.json"))
    assert (rc, err) == (0, "")
