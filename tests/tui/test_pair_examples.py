"""The two-model tab's per-example line (geneb_tui.core.significance.pair_examples): on a local
store with predictions, the paired MCC-difference interval and McNemar's p equal
store.analyses.examples on the stored predictions; otherwise the line says which model lacks them,
and with neither the note keeps its sentence."""

from __future__ import annotations

import numpy as np
import pytest

from engine.cli import main
from geneb_tui.core import significance as sig_core
from geneb_tui.core.compare import Table
from store.analyses.examples import mcnemar, paired_mcc_difference
from store.paths import resolve_store
from store.tables.predictions import NO_PREDICTIONS, read_labels, read_predictions
from tests.engine.conftest import write_task


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    folder = tmp_path_factory.mktemp("suite")
    write_task(folder / "bin_task.csv", 200, 80, 2, 1)
    store = folder / "store"
    assert main(["fill", "--store", str(store), "--suite", str(folder), "--models", "kmer-3",
                 "kmer-4", "--regimes", "full", "10shot"]) == 0
    return resolve_store(store)


def stacked(paths, model: str, regime: str, task: str = "bin_task") -> np.ndarray:
    frame = read_predictions(paths, model=model, task=task, regime=regime)
    return np.stack([np.asarray(p) for p in frame["pred"].to_list()])


def test_the_line_equals_the_analyses_on_the_stored_predictions(local):
    line = sig_core.pair_examples(local, "kmer-3", "kmer-4", "bin_task", "10shot")
    y = read_labels(local, "bin_task")
    a, b = stacked(local, "kmer-3", "10shot"), stacked(local, "kmer-4", "10shot")
    d = paired_mcc_difference(y, a, b, n_resamples=sig_core.EXAMPLE_RESAMPLES,
                              seed=sig_core.SEED).row(0, named=True)
    assert f"MCC A − B = {d['diff']:+.3f}" in line
    assert f"[{d['lo']:+.3f}, {d['hi']:+.3f}]" in line
    ps = mcnemar(y, a, b)["p"].to_list()
    want = (sig_core._fmt_p(ps[0]) if min(ps) == max(ps)
            else f"{sig_core._fmt_p(min(ps))} – {sig_core._fmt_p(max(ps))}")
    assert f"McNemar p (accuracy, exact) {want} over 5 seed(s)" in line
    assert "80 test rows" in line


def test_a_model_without_predictions_is_named_and_neither_keeps_the_sentence(local):
    line = sig_core.pair_examples(local, "kmer-3", "NT-2.5B [official]", "bin_task", "full")
    assert "NT-2.5B [official]" in line and NO_PREDICTIONS in line
    assert sig_core.pair_examples(local, "x [official]", "y [official]", "bin_task",
                                  "full") is None
    pair = sig_core.Pair("a", "b", f"head. {sig_core.NO_EXAMPLES} Keys.", Table(["Task"], []))
    assert pair.with_examples(None) == pair.note
    assert pair.with_examples("LINE.") == "head. LINE. Keys."


@pytest.fixture
def local_pair_store(tmp_path):
    """kmer-3 and kmer-4 run locally on every geneb-v1 task (full), with stored test-set
    predictions on the first task only."""
    from store.catalog import geneb_v1_tasks
    from store.tables.catalogs import register_tasks
    from store.tables.data_files import write_data_file
    from store.tables.predictions import PREDICTIONS, prediction_rows, predictions_table
    from store.tables.results import append_rows, commit_actions, open_for_writing
    from store.vocab.protocol import GENEB_V1, SEEDS
    from tests.store.local_rows import local_rows

    paths = resolve_store(tmp_path / "store")
    register_tasks(paths, geneb_v1_tasks())
    first = geneb_v1_tasks()[0].task_id
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 120)
    open_for_writing(paths, PREDICTIONS)
    for model, flip in (("kmer-3", 0.2), ("kmer-4", 0.4)):
        append_rows(paths, local_rows(model, regimes=("full",)))
        pred = np.where(rng.random(120) < flip, 1 - y, y)
        rows = [{"regime": "full", "seed": s, "protocol_hash": GENEB_V1.hash, "pred": pred}
                for s in SEEDS]
        table = predictions_table(prediction_rows(rows, y, model=model, task=first,
                                                  source="local", data_hash=None,
                                                  compute_precision="float32"))   # local_rows
        add = write_data_file(paths.predictions, table, "local", model, PREDICTIONS)
        commit_actions(paths, [add], "fill", PREDICTIONS)
    return paths, first, y


async def test_the_pair_tab_shows_the_per_example_tests_of_the_task_under_its_cursor(
        local_pair_store):
    from conftest import settle
    from test_significance import until

    from geneb_tui.app import GenebApp
    from geneb_tui.components.significance_screen import SignificanceScreen

    paths, first, y = local_pair_store
    app = GenebApp(paths)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        screen = app.screen
        assert isinstance(screen, SignificanceScreen)
        await until(pilot, lambda: screen.shown_pair is not None)
        pair = screen.shown_pair
        assert pair.tasks[0] == first

        def note() -> str:
            return str(screen.query_one("#pair-note").render())

        await until(pilot, lambda: "Per-example tests on" in note())
        a, b = (stacked(paths, m, "full", first) for m in (pair.a, pair.b))
        d = paired_mcc_difference(y, a, b, n_resamples=sig_core.EXAMPLE_RESAMPLES,
                                  seed=sig_core.SEED).row(0, named=True)
        assert f"[{d['lo']:+.3f}, {d['hi']:+.3f}]" in note()
        assert sig_core.NO_EXAMPLES not in note()
        await pilot.press("3")            # the pair tab, then the next task: no predictions
        await pilot.press("down")
        await until(pilot, lambda: sig_core.NO_EXAMPLES in note())
        assert "Per-example tests on" not in note() and not app.internal_errors
