"""What is current is decided once for every reader (`store.current`, the views of `store.db`):
a checkpoint folder's rows of an earlier revision are left out with a note as soon as its files
changed (not only in `status`), a README or a log changes nothing, a folder that is gone keeps
the last run's revision with a note, rows of the fingerprint's older rule stay current while
they match; a model's rows at two compute precisions are two entries, never pooled, and a row
written before the precision was recorded reads as its run's."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa

from store.analyses.scores import seed_means
from store.catalog import ModelMeta, TaskMeta
from store.cells import cell_states
from store.current import with_entries
from store.db import Snapshot, query
from store.fingerprint import checkpoint_fingerprint, folder_sha256
from store.paths import resolve_store
from store.tables.catalogs import models_frame, register_models, register_tasks
from store.tables.data_files import Table
from store.tables.predictions import PREDICTIONS, prediction_rows, read_predictions
from store.tables.results import append_rows, append_table
from store.tables.schema import RESULT_SCHEMA, rows_table
from store.tables.telemetry import RUNS
from store.vocab.protocol import GENEB_V1, SEEDS

TASKS = [TaskMeta("t1", "t1", "Promoters", "s", "s"), TaskMeta("t2", "t2", "Enhancers", "s", "s")]
HASHES = {t.task_id: f"h-{t.task_id}" for t in TASKS}
T0 = datetime(2025, 1, 1, tzinfo=UTC)
SEEDS_OF = {GENEB_V1.hash: len(SEEDS)}


def checkpoint(tmp_path: Path, weights: bytes = b"\x00\x01") -> Path:
    folder = tmp_path / "ckpt" / "m"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_bytes(b"{}")
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def cell(model: str, task: str, revision: str | None, mcc: float, minutes: int = 0, *,
         precision: str | None = "float32", source: str = "local") -> list[dict]:
    """One full-regime cell: a row per seed (one row, seed NULL, for an imported source)."""
    seeds = SEEDS if source == "local" else (None,)
    return [{"model": model, "task": task, "regime": "full", "seed": seed, "probe": "logreg",
             "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash, "mcc": mcc, "acc": 0.7,
             "f1_macro": 0.6, "source": source,
             "data_hash": HASHES[task] if source == "local" else None,
             "model_revision": revision, "compute_precision": precision if source == "local"
             else None, "created_at": T0 + timedelta(minutes=minutes)} for seed in seeds]


def store_with(root: Path, folder: Path | None, cells: list[list[dict]], *,
               registered: str | None = None):
    """A store of TASKS holding `cells`, model `m` a checkpoint folder given by path (its
    catalog row with `folder` and the revision its last fill registered)."""
    paths = resolve_store(root)
    register_tasks(paths, TASKS, HASHES)
    register_models(paths, [ModelMeta.one_off("m", path=str(folder) if folder else None),
                            ModelMeta.one_off("kmer-3", encoder="kmer", encoder_k=3)],
                    {"m": registered} if registered else {})
    for rows in cells:
        append_rows(paths, rows)
    return paths


def shown(paths) -> dict[tuple[str, str], float]:
    """(model, task) -> the seed-mean MCC of the local cells every reader shows (the `results`
    view)."""
    means = seed_means(paths, source="local")
    return {(m, t): v for m, t, v in means.select("model", "task", "mcc").iter_rows()}


def notes(paths) -> list[str]:
    return Snapshot(paths).notes


def test_resaved_weights_leave_the_old_rows_out_of_every_reader_with_a_note(tmp_path):
    folder = checkpoint(tmp_path)
    first = checkpoint_fingerprint(folder)
    paths = store_with(tmp_path / "s", folder,
                       [cell("m", "t1", first, 0.5), cell("m", "t2", first, 0.6),
                        cell("kmer-3", "t1", None, 0.1),
                        cell("m", "t1", "x", 0.9, source="official")], registered=first)
    assert shown(paths) == {("m", "t1"): 0.5, ("m", "t2"): 0.6, ("kmer-3", "t1"): 0.1}
    assert notes(paths) == []

    checkpoint(tmp_path, weights=b"\x00\x02")               # re-saved, same folder
    # the registered revision is still the first: only the folder tells that it changed
    assert shown(paths) == {("kmer-3", "t1"): 0.1}
    assert seed_means(paths, source="official")["mcc"].to_list() == [0.9]    # as it was
    assert notes(paths) == [f"m: 2 results of an earlier revision of {folder} left out; fill "
                            "computes the current one"]
    states = cell_states(Snapshot(paths).query, seeds=SEEDS_OF)
    assert sorted(states.filter(pl.col("source") == "local")
                  .select("model", "task", "state").iter_rows()) == [
        ("kmer-3", "t1", "done"), ("m", "t1", "stale"), ("m", "t2", "stale")]


def test_a_readme_or_a_log_added_to_the_folder_makes_nothing_stale(tmp_path):
    folder = checkpoint(tmp_path)
    revision = checkpoint_fingerprint(folder)
    paths = store_with(tmp_path / "s", folder, [cell("m", "t1", revision, 0.5)],
                       registered=revision)
    (folder / "README.md").write_text("# m\n")
    (folder / "logs").mkdir()
    (folder / "logs" / "train.log").write_text("step 1 loss 0.3\n")
    assert shown(paths) == {("m", "t1"): 0.5}
    assert notes(paths) == []


def test_a_folder_that_is_gone_shows_the_last_runs_revision_and_says_so(tmp_path):
    folder = checkpoint(tmp_path)
    revision = checkpoint_fingerprint(folder)
    paths = store_with(tmp_path / "s", folder,
                       [cell("m", "t1", "older", 0.2, 0), cell("m", "t2", revision, 0.5, 5)],
                       registered=revision)
    shutil.rmtree(folder)
    assert shown(paths) == {("m", "t2"): 0.5}
    assert notes(paths) == [
        f"m: 1 result of an earlier revision of {folder} left out; fill computes the current "
        "one", f"m: {folder}: folder not found: showing the last run's revision"]


def test_rows_of_the_rule_before_stay_current_while_the_folder_still_matches(tmp_path):
    """A store written before the fingerprint: its rows carry `folder-sha256-` over every file
    (a README among them); the upgrade turns nothing stale."""
    folder = checkpoint(tmp_path)
    (folder / "README.md").write_text("# m\n")
    old = folder_sha256(folder)
    paths = store_with(tmp_path / "s", folder, [cell("m", "t1", old, 0.5)], registered=old)
    assert old.startswith("folder-sha256-") and old != checkpoint_fingerprint(folder)
    assert shown(paths) == {("m", "t1"): 0.5} and notes(paths) == []
    states = cell_states(Snapshot(paths).query, seeds=SEEDS_OF)
    assert states["state"].to_list() == ["done"]
    # the weights re-saved: the older name no longer matches either
    checkpoint(tmp_path, weights=b"\x09")
    assert shown(paths) == {}
    assert len(notes(paths)) == 1


def test_two_precisions_are_two_entries_never_pooled(tmp_path):
    folder = checkpoint(tmp_path)
    revision = checkpoint_fingerprint(folder)
    paths = store_with(tmp_path / "s", folder,
                       [cell("m", "t1", revision, 0.5, 0, precision="float16"),
                        cell("m", "t1", revision, 0.7, 5, precision="float32"),
                        cell("m", "t2", revision, 0.6, 6, precision="float32")],
                       registered=revision)
    # both rows stand (the precision is part of the key), each its own entry: the newest
    # run's precision under the model's id
    assert query(paths, "SELECT count(*) FROM results_latest").item() == 3 * len(SEEDS)
    assert shown(paths) == {("m", "t1"): 0.7, ("m", "t2"): 0.6, ("m [float16]", "t1"): 0.5}
    assert notes(paths) == ["m: results at float32 shown as m, at other precisions apart as "
                            "m [float16] (never pooled)"]
    models = with_entries(models_frame([ModelMeta.one_off("m", display="My model",
                                                          params=1000)]),
                          Snapshot(paths).query)
    assert models.select("model_id", "display", "params").rows() == [
        ("m", "My model", 1000), ("m [float16]", "My model [float16]", 1000)]
    # the cells: one per precision; the current precision's done by default
    states = cell_states(Snapshot(paths).query, seeds=SEEDS_OF)
    assert sorted(states.select("task", "compute_precision", "state").iter_rows()) == [
        ("t1", "float32", "done"), ("t2", "float32", "done")]
    at16 = cell_states(Snapshot(paths).query, seeds=SEEDS_OF, precisions={"m": "float16"})
    assert sorted(at16.select("task", "compute_precision", "state").iter_rows()) == [
        ("t1", "float16", "done")]


OLD_SCHEMA = pa.schema([f for f in RESULT_SCHEMA if f.name != "compute_precision"])
OLD_PREDICTIONS = pa.schema([f for f in PREDICTIONS.schema if f.name != "compute_precision"])


def test_a_row_written_before_the_precision_was_recorded_reads_as_its_runs(tmp_path):
    """The store as geneb wrote it before the column (its data files without it): each local
    row is read at the precision the runs table recorded for its pair's newest encoding before
    it; an imported row stays without one; nothing is rewritten."""
    folder = checkpoint(tmp_path)
    revision = checkpoint_fingerprint(folder)
    paths = store_with(tmp_path / "s", folder, [], registered=revision)
    old_rows = [*cell("m", "t1", revision, 0.5, 10, precision=None),
                *cell("m", "t2", revision, 0.6, 10, precision=None),
                *cell("m", "t1", "x", 0.9, source="official", precision=None)]
    append_table(paths, rows_table(old_rows).select(OLD_SCHEMA.names).cast(OLD_SCHEMA),
                 "fill", Table("results", OLD_SCHEMA, "geneb-results"))
    preds = prediction_rows([{**r, "pred": [0, 1]} for r in old_rows[:len(SEEDS)]], [0, 1],
                            model="m", task="t1", source="local", data_hash=HASHES["t1"],
                            created_at=T0 + timedelta(minutes=10))
    append_table(paths, pa.Table.from_pylist(preds, schema=PREDICTIONS.schema)
                 .select(OLD_PREDICTIONS.names),
                 "fill", Table("predictions", OLD_PREDICTIONS, "geneb-predictions"))

    def run(task: str, dtype: str, minutes: int) -> dict:
        return {"model": "m", "task": task, "split": "train", "data_hash": HASHES[task],
                "dtype": dtype, "source": "local", "created_at": T0 + timedelta(minutes=minutes)}

    # t1 embedded on a GPU, then (after its rows) again in float32: the run before the row counts
    append_rows(paths, [run("t1", "bfloat16-autocast", 5), run("t1", "float32", 20),
                        run("t2", "float32", 5)], table=RUNS)
    read = query(paths, "SELECT task, source, compute_precision FROM results_all "
                        "GROUP BY ALL ORDER BY ALL")
    assert read.rows() == [("t1", "local", "bfloat16-autocast"), ("t1", "official", None),
                           ("t2", "local", "float32")]
    assert query(paths, "SELECT protocol_hash FROM results_all GROUP BY ALL").item() == \
        GENEB_V1.hash
    # every cell current; the model has two precisions, so two entries
    assert shown(paths) == {("m", "t2"): 0.6, ("m [bfloat16-autocast]", "t1"): 0.5}
    assert seed_means(paths, source="official")["mcc"].to_list() == [0.9]
    # its predictions follow their rows
    assert read_predictions(paths)["model"].unique().to_list() == ["m [bfloat16-autocast]"]


def test_the_official_results_read_as_before(official_store):
    """Imported rows carry no precision and no local counterpart: every row stands, once, under
    its model id, with its protocol hash; nothing is left out or noted."""
    counts = query(official_store, "SELECT count(*) AS n, count(compute_precision) AS p, "
                                   "count(DISTINCT protocol_hash) AS h FROM results")
    assert counts.rows() == [(40 * 100 * 3, 0, 1)]       # 40 models x 100 tasks x 3 regimes
    assert query(official_store, "SELECT count(*) FROM results_all").item() == 40 * 100 * 3
    assert query(official_store, "SELECT count(*) FROM entries").item() == 0
    assert Snapshot(official_store).notes == []
