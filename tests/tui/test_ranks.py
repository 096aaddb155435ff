"""Ranks: beside the rank among the rows shown, the rank among every entry in the store, so a
filter never makes a model look first overall (the rule: 'min' ties, missing unranked)."""

from __future__ import annotations

import re

from conftest import apply_filters, settle
from fixture_store import board

from geneb_tui.components.results_table import ResultsTable


def macro_cell(app, row: int) -> str:
    """The macro cell's value and rank (its rank interval, once computed, left out)."""
    table = app.query_one(ResultsTable)
    col = [c.key for c in app.view.columns].index("macro")
    return re.sub(r"\s*≈?(#\d+) \[\d+-\d+\]$", r" \1", str(table.get_row_at(row)[col]))


async def test_a_filtered_model_keeps_its_rank_in_the_store(official_store, make_app):
    app = make_app(official_store)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        lb = board("full")
        in_store = sorted(lb, key=lambda m: -lb[m]["macro_MCC"])      # no ties in macro
        await apply_filters(pilot, architecture_family="Mamba")
        view = app.view
        assert 0 < len(view.rows) < 40
        for i, r in enumerate(view.rows):
            assert r.ranks["macro"] == i + 1                           # among the rows shown
            assert r.overall["macro"] == in_store.index(r.model) + 1   # among all 40
        best = view.rows[0]
        assert best.overall["macro"] > 1
        # the cell shows the rank in the store by default, and says so above the table
        assert macro_cell(app, 0).endswith(f"#{best.overall['macro']}")
        bar = str(app.query_one("#filter-bar").render())
        assert "# = rank among all 40 in the store (n: among shown)" in bar
        # n: the rank among the rows shown; again: back
        await pilot.press("n")
        await settle(pilot)
        assert app.view.rank_scope == "shown" and macro_cell(app, 0).endswith(" #1")
        assert "# = rank among the" in str(app.query_one("#filter-bar").render())
        await pilot.press("n")
        await settle(pilot)
        assert macro_cell(app, 0).endswith(f"#{best.overall['macro']}")
        # no filter: both ranks are the same, and the bar says nothing about them
        await pilot.press("x")
        await settle(pilot)
        assert all(r.ranks == r.overall for r in app.view.rows)
        assert "# =" not in str(app.query_one("#filter-bar").render())


async def test_search_and_source_filters_also_keep_store_ranks(mixed_store, make_app):
    app = make_app(mixed_store)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("c", "c")                                   # Promoters: its tasks
        await settle(pilot)
        key = next(c.key for c in app.view.score_columns if c.key.startswith("task:"))
        everyone = {(r.model, r.source): r.overall[key] for r in app.view.rows}
        await apply_filters(pilot, source="local")
        (row,) = app.view.rows
        assert row.ranks[key] == 1 and row.overall[key] == everyone[("kmer-3", "local")]
        assert row.overall[key] == 3       # below the two official models on that task
        # a missing value has no rank in either scope
        assert row.values["cat:Promoters"] is None
        assert row.ranks["cat:Promoters"] is None and row.overall["cat:Promoters"] is None
