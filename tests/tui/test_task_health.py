"""The dashboard's task health: a flag beside flagged tasks in the Tasks tab, the health line
of a task's drill-down, and the filter that leaves the flagged tasks out of the scores."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import apply_filters, settle

from geneb_tui.core import compare
from geneb_tui.core.compare import CompareOptions
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot, build_view, selection_aggregates
from store.audit.report import audit_task
from store.catalog import TaskMeta
from store.paths import resolve_store
from store.tables.audit import record_audits
from store.tables.catalogs import register_tasks
from store.tables.results import append_rows
from store.vocab.protocol import GENEB_V1, SEEDS

# t1 is flagged (its composition probe reaches MCC 0.8), t2 clean, t3 never audited.
TASKS = (TaskMeta("t1", "T1", "Promoters", "mine", "other"),
         TaskMeta("t2", "T2", "Promoters", "mine", "other"),
         TaskMeta("t3", "T3", "Enhancers", "mine", "other"))
HASHES = {"t1": "h1", "t2": "h2", "t3": "h3"}
MCC = {"m1": {"t1": 0.9, "t2": 0.3, "t3": 0.5}, "m2": {"t1": 0.2, "t2": 0.5, "t3": 0.5}}


@pytest.fixture
def health_store(tmp_path):
    paths = resolve_store(tmp_path / "store")
    register_tasks(paths, TASKS, HASHES)
    append_rows(paths, [{"model": m, "task": t, "regime": "full", "seed": seed,
                         "probe": "logreg", "protocol": GENEB_V1.name,
                         "protocol_hash": GENEB_V1.hash, "mcc": v, "acc": 0.7,
                         "f1_macro": 0.6, "source": "local", "shared_fit": True,
                         "data_hash": HASHES[t]}
                        for m, row in MCC.items() for t, v in row.items() for seed in SEEDS])
    train, test = ["ACGTACGTAAAC", "GGGCCCAATTCA"], ["TTTTGGGGACAC", "CACACAGGGTTT"]
    y = np.array([0, 1])
    record_audits(paths, [audit_task(t, HASHES[t], train, y, test, y, shortcuts)
                          for t, shortcuts in (("t1", {"composition": 0.8}),
                                               ("t2", {"gc": 0.1}))])
    return paths


def test_the_task_views_show_each_task_s_health(health_store):
    snap = StoreSnapshot.load(health_store)
    filters = Filters(suite="mine")
    tasks = compare.tasks(snap, filters, CompareOptions.for_filters(filters))
    column = tasks.header.index("Health")
    assert dict(zip(tasks.row_keys, (r[column] for r in tasks.rows), strict=True)) == {
        "t1": "⚑ shortcut", "t2": "clean", "t3": ""}
    t1 = compare.task_values(snap, filters, "t1").note
    assert "Health: ⚑ shortcut — test rows with a copy in train 0.0%" in t1
    assert "best shortcut composition (MCC 0.80, 89% of the best model's)" in t1
    assert "Health: not audited" in compare.task_values(snap, filters, "t3").note


def test_leaving_the_flagged_tasks_out_recomputes_the_scores(health_store):
    snap = StoreSnapshot.load(health_store)
    whole = selection_aggregates(snap, Filters(suite="mine"))
    micro = dict(zip(whole["model"], whole["micro"], strict=True))
    assert micro == pytest.approx({"m1": 1.7 / 3, "m2": 0.4})
    kept = Filters(suite="mine", exclude_flagged=True)
    without = selection_aggregates(snap, kept)
    micro = dict(zip(without["model"], without["micro"], strict=True))
    assert micro == pytest.approx({"m1": 0.4, "m2": 0.5})      # t2 and t3 only
    view = build_view(snap, kept)
    assert view.flagged_left_out == 1 and "flagged tasks left out" in kept.describe()
    assert build_view(snap, Filters(suite="mine")).flagged_left_out == 0


async def test_the_filter_dialog_leaves_flagged_tasks_out(health_store):
    from geneb_tui.app import GenebApp

    app = GenebApp(health_store, filters=Filters(suite="mine"))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await apply_filters(pilot, exclude_flagged=True)
        assert app.view.filters.exclude_flagged and app.view.flagged_left_out == 1
        assert "1 flagged task(s) left out" in str(app.query_one("FilterBar").render())


def test_the_main_table_flags_a_flagged_task_s_column(health_store):
    snap = StoreSnapshot.load(health_store)
    view = build_view(snap, Filters(suite="mine", category="Promoters"))
    labels = {c.key: c.label for c in view.columns if c.key.startswith("task:")}
    assert labels == {"task:t1": "⚑ T1", "task:t2": "T2"}
    kept = build_view(snap, Filters(suite="mine", category="Promoters", exclude_flagged=True))
    assert [c.key for c in kept.columns if c.key.startswith("task:")] == ["task:t2"]
