"""The dashboard over the task kinds (`store.vocab.kinds`): a key switches the kind shown (its
own snapshot, tasks, models and metrics, never mixed), a regression task's drill-down plots
predicted against true values and a variant task's its ROC curve, and the views that read
classification only say so in one line. On geneb-kinds (kmer-3, kmer-6) filled once per
session, beside geneb-mini's classification rows (`kinds_stores`, tests/tui/conftest.py)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from conftest import settle
from scipy.stats import pearsonr
from sklearn.metrics import roc_auc_score, roc_curve
from textual.widgets import Select, Static

from geneb_tui.app import GenebApp
from geneb_tui.components.filter_bar import FilterBar
from geneb_tui.core import compare
from geneb_tui.core.compare import CompareOptions
from geneb_tui.core.filters import Filters
from geneb_tui.core.kind_plots import drill_plot, roc_area, roc_points
from geneb_tui.core.kinds import not_shown
from geneb_tui.core.query import StoreSnapshot, build_view
from geneb_tui.selection import next_metric
from store.db import Snapshot
from store.tables.predictions import read_values
from store.vocab.protocol import read_protocol

REGRESSION = ("kinds_expression_ap1", "kinds_stability_are")
VARIANT = ("kinds_gata_loss", "kinds_ebox_gain")


# -- core ------------------------------------------------------------------------------------
def test_roc_curve_and_area_equal_scikit_learn_with_ties():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(5, 60))
        labels = rng.integers(0, 2, n)
        labels[:2] = (0, 1)
        scores = rng.integers(0, 6, n) / 5.0   # many ties
        fpr, tpr = roc_points(labels, scores)
        want_fpr, want_tpr, _ = roc_curve(labels, scores, drop_intermediate=False)
        np.testing.assert_allclose(fpr, want_fpr)
        np.testing.assert_allclose(tpr, want_tpr)
        assert roc_area(fpr, tpr) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


def test_a_snapshot_holds_one_kind_its_tasks_protocol_and_metric(kinds_stores):
    both = kinds_stores["both"]
    plain = StoreSnapshot.load(both)
    assert (plain.kind, plain.kinds) == ("classification", ("classification", "regression",
                                                            "variant"))
    assert not set(plain.tasks["task_id"]) & {*REGRESSION, *VARIANT}
    assert set(plain.scores["task"]) == {t for t in plain.tasks["task_id"]
                                         if t.startswith("mini_")}
    assert plain.filter_choices("geneb-mini").metrics == ("mcc", "acc", "f1_macro")
    reg = StoreSnapshot.load(both, "regression")
    assert reg.protocol == "ridge-v1" and set(reg.tasks["task_id"]) == set(REGRESSION)
    assert reg.filter_choices("geneb-kinds").metrics == ("pearson", "spearman", "r2")
    filters = reg.filters_for(Filters(suite="geneb-mini", metric="acc"))
    assert (filters.kind, filters.metric, filters.suite) == ("regression", "pearson",
                                                             "geneb-kinds")
    # the table's category cell: the mean of the tasks' seed means of Pearson r (raw rows)
    raw = Snapshot(both).query(
        "SELECT model, task, avg(pearson) AS v FROM results_all WHERE protocol = 'ridge-v1' "
        "AND regime = 'full' GROUP BY model, task")
    view = build_view(reg, filters)
    for row in view.rows:
        want = raw.filter(pl.col("model") == row.model)["v"].mean()
        assert row.values["cat:Expression"] == pytest.approx(want, abs=1e-12)
    assert [c.key for c in view.columns if c.kind == "score"] == ["macro", "micro",
                                                                  "cat:Expression"]
    # no classification numbers in the tasks views: no MCC-threshold marks, no class counts
    tasks = compare.tasks(reg, filters, CompareOptions.for_filters(filters))
    head = tasks.header
    assert {r[head.index("Classes")] for r in tasks.rows} == {"n/a"}
    assert {r[head.index("Marks")] for r in tasks.rows} == {""}
    assert "not regression tasks'" in tasks.note and "easy = mean" not in tasks.note
    one = compare.task_values(reg, filters, REGRESSION[0]).note
    assert "classes n/a" in one and "easy" not in one
    plain_tasks = compare.tasks(plain, plain.filters_for(Filters(), opening=True),
                                CompareOptions())
    assert "easy = mean > 0.70" in plain_tasks.note
    # a store of these kinds alone opens on its first kind (no empty classification table)
    alone = StoreSnapshot.load(kinds_stores["kinds"])
    assert (alone.kind, alone.is_empty) == ("regression", False)


def test_the_metric_key_cycles_the_kind_s_metrics_and_classification_reads_as_before():
    f = Filters(kind="variant", metric="auroc")
    assert next_metric(f).metric == "auprc" and next_metric(next_metric(f)).metric == "auroc"
    g = Filters(kind="regression", metric="pearson")
    assert [next_metric(g).metric, next_metric(next_metric(g)).metric] == ["spearman", "r2"]
    assert next_metric(Filters()).metric == "acc"
    assert Filters().describe() == "suite geneb-v1 · regime full · metric MCC · all categories"
    assert g.describe().startswith("regression tasks · ")
    assert Filters(kind="variant", metric="auprc", regime="1shot").cleared() == Filters(
        kind="variant", metric="auroc")
    assert not_shown("significance", "classification") is None
    assert not_shown("compare", "variant") is None
    assert "report --kind variant" in not_shown("significance", "variant")


def test_drill_plot_values_are_the_stored_test_values(kinds_stores):
    paths = kinds_stores["kinds"]
    variant = read_protocol("variant").hash
    plot = drill_plot(paths, "variant", variant, "kmer-3", "kinds_gata_loss", "10shot")
    row = read_values(paths, model="kmer-3", task="kinds_gata_loss", protocol_hash=variant)
    row = row.filter(pl.col("regime") == "10shot").sort("seed").row(0, named=True)
    auc = roc_auc_score(row["target"], row["value"])
    assert plot.score == pytest.approx(auc, abs=1e-12)
    assert plot.title.endswith(f"seed {row['seed']}, n = 240: AUROC = {auc:.3f}")
    ridge = read_protocol("regression").hash
    plot = drill_plot(paths, "regression", ridge, "kmer-6", "kinds_stability_are", "full")
    row = read_values(paths, model="kmer-6", task="kinds_stability_are", protocol_hash=ridge)
    row = row.filter(pl.col("regime") == "full").sort("seed").row(0, named=True)
    assert plot.x == tuple(row["target"]) and plot.y == tuple(row["value"])
    assert plot.score == pytest.approx(pearsonr(row["target"], row["value"])[0], abs=1e-12)
    none = drill_plot(paths, "regression", ridge, "kmer-4", "kinds_stability_are", "full")
    assert none.x == () and "no stored test values" in none.note


# -- the app ---------------------------------------------------------------------------------
async def test_the_kind_key_switches_kind_metric_and_tasks_never_mixing(kinds_stores):
    from geneb_tui.actions import ACTIONS

    assert any(a.key == "k" and a.action == "cycle_kind" for a in ACTIONS)   # help lists it
    app = GenebApp(kinds_stores["both"])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert (app.filters.kind, app.filters.suite) == ("classification", "geneb-mini")
        await pilot.press("m")   # a classification metric first
        await settle(pilot)
        seen = []
        for _ in range(3):
            await pilot.press("k")
            await settle(pilot)
            view = app.view
            seen.append((app.snapshot.kind, view.filters.metric, view.filters.suite))
            shown = {c.label for c in view.columns if c.kind == "score"}
            cats = {"regression": "Expression", "variant": "Variant effect"}
            for kind, cat in cats.items():
                assert (cat in shown) == (app.snapshot.kind == kind)
            assert str(app.query_one(FilterBar).render()).count(" tasks · ") == (
                app.snapshot.kind != "classification")
        assert seen == [("regression", "pearson", "geneb-kinds"),
                        ("variant", "auroc", "geneb-kinds"),
                        ("classification", "mcc", "geneb-mini")]
        assert not app.internal_errors


async def test_the_filter_dialog_and_a_kind_switch_keep_views_on_the_kind_shown(kinds_stores):
    """Found by random keys on geneb-kinds: Ctrl+S in the filter dialog gave back a selection
    of classification (`collect` built new `Filters` without the kind), and views opened
    while `k` read the next kind got its results with the old kind's metric;
    either made every view fail ("unable to find column mcc"). Now the dialog keeps the kind
    shown, and a new snapshot reaches the screens with the selection that fits it."""
    from geneb_tui.components.compare_screen import CompareScreen

    app = GenebApp(kinds_stores["both"])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("k")                       # regression
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        await pilot.press("ctrl+s")                  # applied as it is: nothing changes
        await settle(pilot)
        assert (app.filters.kind, app.filters.metric) == ("regression", "pearson")
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        app.load_kind("variant")     # as `k` does, its results arriving with the views on top
        await settle(pilot)
        assert (app.snapshot.kind, app.filters.metric) == ("variant", "auroc")
        assert (app.screen.snapshot.kind, app.screen.filters) == ("variant", app.filters)
        for name in ("leaders", "shift", "tasks"):
            app.screen.query_one("#compare-tabs").active = name
            await settle(pilot)
        assert not app.internal_errors, app.internal_errors


@pytest.mark.parametrize("key", ["w", "d"])
async def test_a_view_of_classification_only_says_so_when_another_kind_arrives(kinds_stores,
                                                                              key):
    """Recommend (w) or Significance (d) open over classification while the store is read as
    regression (`k` just before): the view says in its one line that it reads
    classification only, as when opened on regression (Recommend asked the regression
    selection's metric of classification rows: "unable to find column pearson")."""
    app = GenebApp(kinds_stores["both"])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await settle(pilot)
        view = app.screen
        app.load_kind("regression")
        await settle(pilot)
        assert app.screen is view and (view.snapshot.kind, view.filters.metric) == (
            "regression", "pearson")
        said = " ".join(str(w.render()) for w in view.query(Static))
        assert "reads classification results only as yet" in " ".join(said.split())
        assert not app.internal_errors, app.internal_errors


@pytest.mark.idle   # no Significance screen is prepared in a pause either
async def test_views_of_classification_only_say_so_in_one_line(kinds_stores):
    from geneb_tui.components.significance_screen import SignificanceScreen

    app = GenebApp(kinds_stores["kinds"])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert app.snapshot.kind == "regression"
        for key in ("d", "g", "w"):
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is app.screen_stack[0]
        said = [n.message for n in app._notifications]
        assert any("Significance reads classification results only" in m for m in said)
        assert any("Missing evaluations lists classification cells only" in m for m in said)
        assert any("recommend --kind regression" in m for m in said)
        assert not any(isinstance(s, SignificanceScreen) for s in app._kept.values())
        await pilot.press("f")   # the filter dialog offers the kind's metrics only
        await settle(pilot)
        metric = app.screen.query_one("#metric", Select)
        assert [v for _, v in metric._options if v != Select.BLANK] == [
            "pearson", "spearman", "r2"] and metric.value == "pearson"


@pytest.mark.parametrize(("kinds", "task", "title"), [
    (1, "kinds_gata_loss", "AUROC = "), (0, "kinds_expression_ap1", "Pearson r = ")])
async def test_a_task_drill_down_plots_the_model_under_the_cursor(kinds_stores, kinds, task,
                                                                 title):
    from geneb_tui.components.kind_plot import KindPlot
    from geneb_tui.components.task_screen import TaskScreen

    app = GenebApp(kinds_stores["kinds"])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(kinds):
            await pilot.press("k")
            await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        tasks = app.screen.query_one("#tasks-table").data.row_keys
        await pilot.press(*["down"] * tasks.index(task), "enter")
        await settle(pilot)
        assert isinstance(app.screen, TaskScreen) and app.screen.task_id == task
        plot = app.screen.query_one(KindPlot)
        first = plot.data
        assert first is not None and first.title.startswith("6-mer spectrum · full, seed 13")
        assert title in first.title and len(first.x) > 2
        await pilot.press("down")   # the next model's values
        await settle(pilot)
        assert plot.data.title.startswith("3-mer spectrum") and plot.data.score != first.score
        assert not app.internal_errors
