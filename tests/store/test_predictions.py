"""The predictions table (store.tables.predictions): compact values, a fill's predictions equal a
direct
scikit-learn fit (the geneb-v1 path), every result row has exactly one, and imported results
have none (with the reason)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.linear_model import LogisticRegression

from engine.cli import main
from engine.probes.exact import few_shot_indices
from store.db import query
from store.embeddings import EmbeddingStore, _open_group, _verified
from store.paths import resolve_store
from store.tables.predictions import (
    NO_PREDICTIONS,
    PREDICTIONS,
    decode,
    encode,
    missing_reason,
    read_labels,
    read_predictions,
)
from store.tables.results import read_state
from store.vocab.protocol import GENEB_V1, REGIME_K
from tests.engine.conftest import write_task


@pytest.mark.parametrize(("values", "width"), [([0, 1, 127, -128], 1), ([0, 200], 2),
                                               ([-40_000, 3], 4), ([2**40], 8), ([], 1)])
def test_values_take_the_narrowest_integer_and_decode_exactly(values, width):
    w, data = encode(np.array(values, dtype=np.int64))
    assert w == width and len(data) == width * len(values)
    assert decode(w, data).tolist() == values


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("suite")
    write_task(folder / "bin_task.csv", 200, 80, 2, 1)
    write_task(folder / "tri_task.csv", 240, 90, 3, 2)
    store = folder / "store"
    assert main(["fill", "--store", str(store), "--suite", str(folder), "--models", "kmer-3"]) == 0
    return resolve_store(store)


def test_a_fills_predictions_equal_a_direct_scikit_learn_fit(filled):
    preds = read_predictions(filled)
    assert preds.height == 2 * 3 * 5
    assert set(preds["protocol_hash"]) == {GENEB_V1.hash}
    emb = EmbeddingStore(filled)
    for task in ("bin_task", "tri_task"):
        X, y = (_verified(p, _open_group(p)) for p in
                (emb.split_path("kmer-3", task, s) for s in ("train", "test")))
        (X_tr, y_tr), (X_te, y_te) = X, y
        labels = read_labels(filled, task)
        assert labels.tolist() == y_te.tolist()
        for row in preds.filter(pl.col("task") == task).iter_rows(named=True):
            k = REGIME_K[row["regime"]]
            idx = np.arange(len(y_tr)) if k is None else few_shot_indices(y_tr, k, row["seed"])
            seed = GENEB_V1.seeds[0] if k is None else row["seed"]
            clf = LogisticRegression(max_iter=1000, random_state=seed).fit(X_tr[idx], y_tr[idx])
            assert row["pred"] == clf.predict(X_te).tolist(), (task, row["regime"], row["seed"])


def test_every_result_row_has_exactly_one_current_predictions_row(filled):
    results = query(filled, "SELECT model, task, regime, seed, protocol_hash, data_hash, mcc "
                            "FROM results")
    preds = read_predictions(filled)
    joined = results.join(preds, on=["model", "task", "regime", "seed", "protocol_hash",
                                     "data_hash"], how="left")
    assert joined.height == results.height and joined["pred"].null_count() == 0
    # the stored MCC is the MCC of the stored predictions
    from sklearn.metrics import matthews_corrcoef

    for row in joined.iter_rows(named=True):
        y = read_labels(filled, row["task"], row["data_hash"])
        assert row["mcc"] == matthews_corrcoef(y, row["pred"])
    # compact: int8 values, one file per pair commit and one table version per commit
    state = read_state(filled, PREDICTIONS)
    assert state is not None and len(state.files) >= 1
    raw = pl.read_parquet([filled.predictions / f.path for f in state.files])
    assert set(raw["width"]) == {1}


def test_imported_results_have_no_predictions_and_say_why(official_store):
    model = query(official_store, "SELECT min(model) AS m FROM results")["m"].item()
    assert read_predictions(official_store, model=model).height == 0
    assert NO_PREDICTIONS in missing_reason(official_store, model)
    assert read_labels(official_store, "anything") is None


def test_a_local_model_without_predictions_on_a_task_says_so(filled):
    assert missing_reason(filled, "kmer-3") is None
    assert "no stored predictions" in missing_reason(filled, "kmer-3", "no_such_task")


def test_doctor_checks_and_repairs_the_predictions_table_like_the_results_one(filled, tmp_path):
    import shutil

    from store.doctor import examine, repair
    from store.tables.results import read_files

    paths = resolve_store(shutil.copytree(filled.root, tmp_path / "store"))
    assert examine(paths) == []
    state = read_state(paths, PREDICTIONS)
    victim = state.files[0]
    held, _ = read_files(paths, [victim], PREDICTIONS)
    held_preds = pl.from_arrow(held).filter(pl.col("kind") == "pred").height
    before = read_predictions(paths)
    (paths.predictions / victim.path).write_bytes(b"garbled")
    found = [f for f in examine(paths) if f.part == "predictions"]
    assert [f.path for f in found] == [str(paths.predictions / victim.path)]
    assert "no per-example tests" in found[0].repair
    done, left = repair(paths)
    assert [f.path for f in done if f.part == "predictions"] == [found[0].path]
    assert left == [] and examine(paths) == []
    assert read_predictions(paths).height == before.height - held_preds
    assert len(read_state(paths, PREDICTIONS).files) == len(state.files) - 1
    assert any(p.name == victim.path.rsplit("/", 1)[-1] for p in paths.aside.rglob("*"))


def test_append_pair_writes_predictions_of_the_cells_it_writes_and_no_others(tmp_path):
    from store.tables.pair_commit import append_pair
    from store.tables.schema import RESULT_COLUMNS
    from tests.store.test_results_table import SEEDS_OF, rows_of

    paths = resolve_store(tmp_path / "s")
    y = np.array([0, 1, 1, 0, 2])
    rows = rows_of("m", "t1")
    with_pred = [{**r, "pred": np.array([0, 1, 0, 0, 2]) + i % 2} for i, r in enumerate(rows)]
    from store.tables.predictions import prediction_rows

    preds = prediction_rows(with_pred, y, model="m", task="t1", source="local", data_hash="h1")
    plain = [{k: v for k, v in r.items() if k in RESULT_COLUMNS} for r in rows]
    assert append_pair(paths, plain, model="m", task="t1", data_hash="h1", revision=None,
                       seeds=SEEDS_OF, predictions=preds) == len(rows)
    versions = read_state(paths, PREDICTIONS).version
    # the same cells again: done, so neither results nor predictions are written
    assert append_pair(paths, plain, model="m", task="t1", data_hash="h1", revision=None,
                       seeds=SEEDS_OF, predictions=preds) == 0
    assert read_state(paths, PREDICTIONS).version == versions
    stored = read_predictions(paths)
    assert stored.height == len(rows)
    got = {(r["regime"], r["seed"]): r["pred"] for r in stored.iter_rows(named=True)}
    assert got == {(r["regime"], r["seed"]): r["pred"].tolist() for r in with_pred}
    assert read_labels(paths, "t1").tolist() == y.tolist()


def test_classification_rows_are_as_before_and_the_kinds_values_are_float64_rows():
    """A classification pair's rows hold what they always did (small integers, `pred` and
    `labels`); a regression or variant pair's are `value` and `target` rows of float64, in
    the same columns (no column added: the table's schema is unchanged)."""
    from datetime import UTC, datetime

    from store.tables.predictions import PREDICTION_SCHEMA, prediction_rows, value_rows

    at = datetime(2026, 1, 1, tzinfo=UTC)
    common = {"model": "m", "task": "t", "source": "local", "data_hash": "h",
              "compute_precision": None, "recipe_preset": None, "context_policy": None,
              "storage_precision": None, "created_at": at}
    row = {"regime": "full", "seed": 13, "protocol_hash": "p"}
    assert prediction_rows([{**row, "pred": np.array([0, 2, 1])}], np.array([0, 1, 1]),
                           model="m", task="t", source="local", data_hash="h",
                           created_at=at) == [
        {**common, "regime": None, "seed": None, "protocol_hash": None, "kind": "labels",
         "width": 1, "n": 3, "values": b"\x00\x01\x01"},
        {**common, **row, "kind": "pred", "width": 1, "n": 3, "values": b"\x00\x02\x01"}]
    rows = value_rows([{**row, "pred": np.array([0.25, -1.5])}], np.array([1.0, 0.0]),
                      model="m", task="t", source="local", data_hash="h", created_at=at)
    assert [(r["kind"], r["width"], r["n"]) for r in rows] == [("target", 8, 2), ("value", 8, 2)]
    assert np.frombuffer(rows[1]["values"], "<f8").tolist() == [0.25, -1.5]
    assert set(rows[0]) == set(PREDICTION_SCHEMA.names)
