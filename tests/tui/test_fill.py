"""Missing evaluations: list the cells, run a real `geneb-engine fill` (geneb-mini; local and Ray
executors), cancel."""

from __future__ import annotations

import pytest
from conftest import settle
from textual.widgets import DataTable, ProgressBar, Static

from engine import mini
from geneb_tui.components.missing_screen import MissingScreen
from geneb_tui.core import fill
from store.db import query
from store.tables.schema import KEY


def materialise_mini(paths) -> None:
    """What the first `geneb-engine fill --suite geneb-mini` does before its first cell: write
    the suite into the store (the dashboard lists a suite's tasks from its manifest there)."""
    mini.materialize(paths.suite_dir("geneb-mini"))


async def open_missing_for(pilot, search: str, category_steps: int = 0) -> MissingScreen:
    app = pilot.app
    await pilot.press("u")                             # suite: geneb-mini
    await settle(pilot)
    assert app.filters.suite == "geneb-mini"
    for _ in range(category_steps):
        await pilot.press("c")
    await pilot.press("slash", *search, "enter")
    await settle(pilot)
    await pilot.press("g")
    await pilot.pause()
    assert isinstance(app.screen, MissingScreen)
    return app.screen


def assert_consistent(paths) -> None:
    """Readers see whole fragments only, and each key once in `results`."""
    assert not list(paths.results.rglob("*.tmp")), "a temporary fragment was left behind"
    keys = ", ".join(KEY)
    dup = query(paths, f"SELECT {keys}, count(*) AS n FROM results GROUP BY {keys} HAVING n > 1")
    assert dup.is_empty()
    query(paths, "SELECT * FROM results")             # every fragment readable


async def test_missing_cells_run_a_real_fill_and_the_results_appear(small_store):
    from geneb_tui.app import GenebApp

    materialise_mini(small_store)
    app = GenebApp(small_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_missing_for(pilot, "kmer-3", category_steps=2)  # Promoters
        assert app.filters.category == "Promoters"
        assert screen.candidates == ["kmer-3"]
        await pilot.press("r")                          # regimes: all -> full
        await pilot.press("space")                      # tick kmer-3
        await pilot.pause()
        assert screen.ticked == ["kmer-3"] and app.fill_choices.ticked == {"kmer-3"}
        assert screen.cells == [("kmer-3", "mini_promoter_tata", "full")]
        assert screen.query_one("#missing-cells", DataTable).row_count == 1

        await pilot.press("g")                          # run
        await settle(pilot)
        kinds = [e.kind for e in screen.events]
        assert kinds[0] == "plan" and "cell" in kinds and kinds[-1] == "done", kinds
        rates = [fill.worker_rate(e) for e in screen.events if e.kind == "embedded"]
        assert rates and all(r is not None and r[0] == "local" for r in rates), rates
        bar = screen.query_one(ProgressBar)
        assert bar.total == 1 and bar.progress == 1
        assert screen.last_command[1:4] == ["-m", "engine.cli", "fill"]
        assert "--json" in screen.last_command
        assert screen.outcome.state == "done", screen.outcome
        await settle(pilot)
        assert screen.cells == []                       # refreshed: nothing missing any more
        await pilot.press("escape")
        await settle(pilot)
        rows = {r.model: r for r in app.view.rows}
        assert rows["kmer-3"].values["cat:Promoters"] is not None
        assert rows["kmer-3"].source == "local"
    assert_consistent(small_store)


async def test_a_real_ray_fill_shows_the_executor_and_ends_done(small_store):
    """`e` chooses the Ray executor: the engine starts a local Ray instance; its events (executor,
    placement, embedded) never trouble the screen."""
    pytest.importorskip("ray")
    from geneb_tui.app import GenebApp

    materialise_mini(small_store)
    app = GenebApp(small_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_missing_for(pilot, "kmer-3", category_steps=2)  # Promoters
        await pilot.press("r", "space", "e", "g")       # full, tick kmer-3, ray, run
        await settle(pilot)
        assert screen.last_command[-2:] == ["--executor", "ray"]
        kinds = [e.kind for e in screen.events]
        assert {"executor", "placement", "embedded", "cell"} <= set(kinds), kinds
        assert kinds[-1] == "done" and screen.outcome.state == "done", screen.outcome
        assert str(screen.query_one("#fill-status", Static).render()).startswith(
            "Done: 1 cell(s) computed")
    assert_consistent(small_store)


async def test_cancel_mid_run_leaves_a_consistent_store(small_store):
    from geneb_tui.app import GenebApp

    materialise_mini(small_store)
    app = GenebApp(small_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_missing_for(pilot, "kmer-6")
        await pilot.press("r", "space")                 # regime full, tick kmer-6
        await pilot.pause()
        assert len(screen.cells) == 13                  # the 13 geneb-mini tasks, full regime
        await pilot.press("g")
        # wait (bounded) for the first finished cell, then cancel
        for _ in range(600):
            if any(e.kind == "cell" for e in screen.events) or not screen.running:
                break
            await pilot.pause(0.05)
        assert screen.running, "the run ended before it could be cancelled"
        await pilot.press("k")
        await settle(pilot)
        assert not screen.running
        status = str(screen.query_one("#fill-status", Static).render())
        assert "Cancelled" in status and screen.outcome.state == "cancelled"
        done = sum(e.kind == "cell" for e in screen.events)
        assert 1 <= done < 13
        await settle(pilot)
        # what was finished is in the store and the views; the rest is still missing
        local = query(small_store, "SELECT model, task, regime FROM results "
                                   "WHERE source = 'local'")
        finished = set(local.iter_rows())
        reported = {(e.data["model"], e.data["task"], e.data["regime"])
                    for e in screen.events if e.kind == "cell"}
        assert reported <= finished and {m for m, _, _ in finished} == {"kmer-6"}
        assert not finished & set(screen.cells) and len(finished) + len(screen.cells) == 13
    assert_consistent(small_store)
