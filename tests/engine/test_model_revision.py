"""A model's revision is part of "current": re-saving a checkpoint folder's weights makes its
cells stale in `status` and the dashboard, `report` leaves them out, and `fill` recomputes them,
and only them, embedding again instead of reusing the other revision's embeddings."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import polars as pl  # noqa: E402
import pyarrow as pa  # noqa: E402
import pytest  # noqa: E402
import zarr  # noqa: E402

from engine.cli import main  # noqa: E402
from store.db import query  # noqa: E402
from store.fingerprint import checkpoint_fingerprint, folder_sha256  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.tables.catalogs import path_models, register_models  # noqa: E402
from store.tables.data_files import RESULTS, Table  # noqa: E402
from store.tables.predictions import PREDICTIONS  # noqa: E402
from store.tables.results import append_rows, append_table, read_files, read_state  # noqa: E402
from store.tables.telemetry import RUNS, read_runs  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.engine.tiny_models import build  # noqa: E402

MODEL = "tiny-bert"
TASKS = ("task_a", "task_b")


@pytest.fixture
def setup(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    for i, task in enumerate(TASKS):
        write_task(suite / f"{task}.csv", 24, 12, 2, seed=i, length=30)
    folder = build("bert", tmp_path / "checkpoints" / MODEL, max_len=64)
    return {"suite": suite, "store": tmp_path / "store", "folder": folder}


def events(capsys, *argv: str) -> list[dict]:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def fill(capsys, setup, *models: str, tasks: tuple[str, ...] = TASKS) -> list[tuple[str, str]]:
    """(model, task) of every cell the fill computed."""
    found = events(capsys, "fill", "--store", str(setup["store"]), "--suite",
                   str(setup["suite"]), "--models", *models, "--tasks", *tasks, "--regimes",
                   "full", "--json")
    return sorted((e["model"], e["task"]) for e in found
                  if e["event"] == "cell" and e["computed"])


def status(capsys, setup) -> dict[str, tuple[int, int]]:
    """model -> (cells done, cells stale) by `status --json`."""
    doc = events(capsys, "status", "--store", str(setup["store"]), "--suite",
                 str(setup["suite"]), "--regimes", "full", "--json")[0]
    out: dict[str, tuple[int, int]] = {}
    for r in doc["rows"]:
        done, stale = out.get(r["model"], (0, 0))
        out[r["model"]] = (done + r["done"], stale + r["stale"])
    return out


def revisions(setup) -> dict[tuple[str, str], str | None]:
    rows = query(StorePaths(setup["store"]), "SELECT DISTINCT model, task, model_revision "
                                             "FROM results")
    return {(m, t): r for m, t, r in rows.iter_rows()}


def split_revision(setup, task: str, split: str) -> str:
    group = zarr.open_group(str(setup["store"] / "embeddings.zarr" / MODEL / task / split))
    return group.attrs["model_revision"]


def test_resaved_weights_make_the_cells_stale_and_fill_recomputes_only_them(setup, capsys):
    folder, store = setup["folder"], setup["store"]
    assert fill(capsys, setup, str(folder), "kmer-3") == sorted(
        (m, t) for m in (MODEL, "kmer-3") for t in TASKS)
    first = checkpoint_fingerprint(folder)
    assert revisions(setup) == {**{(MODEL, t): first for t in TASKS},
                                **{("kmer-3", t): None for t in TASKS}}
    kmer_sql = "SELECT * FROM results WHERE model = 'kmer-3' ORDER BY task, seed"
    kmer_rows = query(StorePaths(store), kmer_sql)

    (folder / "README.md").write_text("# tiny\n")       # docs and logs define nothing
    (folder / "logs").mkdir()
    (folder / "logs" / "train.log").write_text("step 1\n")
    assert status(capsys, setup) == {MODEL: (2, 0), "kmer-3": (2, 0)}
    assert fill(capsys, setup, MODEL) == []

    build("bert", folder, max_len=64, seed=1)        # other weights, the same folder
    second = checkpoint_fingerprint(folder)
    assert second != first
    # `status` tells the revision from the folder as it is now: both cells are stale, and
    # every reader sees it too (the registered revision is still the first one).
    assert status(capsys, setup) == {MODEL: (0, 2), "kmer-3": (2, 0)}
    before = events(capsys, "report", "--store", str(store), "--suite", str(setup["suite"]),
                    "--resamples", "0", "--json")[0]
    assert [a["model"] for a in before["aggregates"]] == ["kmer-3"]
    assert before["notes"] == [f"{MODEL}: 2 results of an earlier revision of {folder} left "
                               "out; fill computes the current one"]

    # One task again: computed with the new revision, embedded again (not reused).
    assert fill(capsys, setup, MODEL, tasks=("task_a",)) == [(MODEL, "task_a")]
    assert split_revision(setup, "task_a", "train") == second
    assert split_revision(setup, "task_b", "train") == first
    # The new revision is the model's current one: its other cell is stale for every reader.
    assert revisions(setup) == {(MODEL, "task_a"): second, ("kmer-3", "task_a"): None,
                                ("kmer-3", "task_b"): None}
    assert status(capsys, setup) == {MODEL: (1, 1), "kmer-3": (2, 0)}
    report = events(capsys, "report", "--store", str(store), "--suite", str(setup["suite"]),
                    "--resamples", "0", "--json")[0]
    missing = {r["model"]: r["n_missing"] for r in report["aggregates"]}
    assert missing == {MODEL: 1, "kmer-3": 0}

    from geneb_tui.core.query import StoreSnapshot

    snap = StoreSnapshot.load(StorePaths(store))
    assert sorted(snap.done.filter(model=MODEL).select("model", "task", "regime").rows()) == [
        (MODEL, "task_a", "full")]
    assert sorted(snap.scores.filter(model=MODEL)["task"]) == ["task_a"]

    # The next fill recomputes that cell, and only it.
    assert fill(capsys, setup, MODEL, "kmer-3") == [(MODEL, "task_b")]
    assert revisions(setup) == {**{(MODEL, t): second for t in TASKS},
                                **{("kmer-3", t): None for t in TASKS}}
    assert split_revision(setup, "task_b", "test") == second
    assert query(StorePaths(store), kmer_sql).equals(kmer_rows)        # untouched
    assert status(capsys, setup) == {MODEL: (2, 0), "kmer-3": (2, 0)}


def test_status_reads_a_store_whose_checkpoint_folder_is_gone(setup, capsys):
    """A folder that is no longer there tells no revision: the store's current one counts."""
    assert fill(capsys, setup, str(setup["folder"])) == [(MODEL, t) for t in TASKS]
    for file in Path(setup["folder"]).iterdir():
        file.unlink()
    setup["folder"].rmdir()
    assert status(capsys, setup) == {MODEL: (2, 0)}


def test_a_store_written_before_the_fingerprint_and_the_precision_opens_current(setup, capsys,
                                                                               tmp_path):
    """A store as geneb wrote it at ebefafa: its data files without `compute_precision`, its
    checkpoint folder's rows under `folder-sha256-` (every file, a README among them). Opened by
    this version, every cell is current: `fill` computes nothing, `status` counts them done,
    `report` shows each model once and notes nothing."""
    folder = setup["folder"]
    (folder / "README.md").write_text("# tiny\n")
    assert fill(capsys, setup, str(folder), "kmer-3") == sorted(
        (m, t) for m in (MODEL, "kmer-3") for t in TASKS)
    legacy = folder_sha256(folder)
    old = StorePaths(tmp_path / "old")
    write_as_before(StorePaths(setup["store"]), old, {MODEL: legacy})
    assert query(old, "SELECT DISTINCT model_revision FROM results_all WHERE model = ?",
                 [MODEL]).item() == legacy
    setup = {**setup, "store": old.root}
    assert fill(capsys, setup, MODEL, "kmer-3") == []
    assert status(capsys, setup) == {MODEL: (2, 0), "kmer-3": (2, 0)}
    report = events(capsys, "report", "--store", str(old.root), "--suite", str(setup["suite"]),
                    "--resamples", "0", "--json")[0]
    assert sorted(a["model"] for a in report["aggregates"]) == ["kmer-3", MODEL]
    assert report["notes"] == []


def write_as_before(new: StorePaths, old: StorePaths, revisions: dict[str, str]) -> None:
    """Copy the store `new` to `old` as geneb wrote it before the compute precision and the
    checkpoint fingerprint: results and predictions data files without the column, the models'
    revisions (results and catalog) those of `revisions`; runs and catalogs as they are."""
    def as_before(table: Table, frame: pl.DataFrame) -> None:
        schema = pa.schema([f for f in table.schema if f.name != "compute_precision"])
        append_table(old, frame.to_arrow().select(schema.names).cast(schema), "fill",
                     Table(table.name, schema, table.delta_name))

    shutil.copytree(new.root / "catalog", old.root / "catalog")
    results = read_files(new, read_state(new).files)[0]
    as_before(RESULTS, pl.from_arrow(results).with_columns(
        pl.col("model").replace_strict(revisions, default=pl.col("model_revision"))
        .alias("model_revision")))
    as_before(PREDICTIONS, pl.from_arrow(read_files(new, read_state(new, PREDICTIONS).files,
                                                    PREDICTIONS)[0]))
    append_rows(old, read_runs(new).to_arrow(), table=RUNS)
    register_models(old, list(path_models(old).values()), revisions)
