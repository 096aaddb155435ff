"""The model revision is part of "current" (`store.cells`): local rows of another revision than
the model's current one (the one its last `fill` recorded in the model catalog, else its newest
local row's) are stale and left out of every reader; imported rows keep their own revision and
stay current; a catalog written before the revision column reads as before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from store.analyses.aggregates import aggregates
from store.analyses.scores import scores_of, seed_means
from store.catalog import ModelMeta, TaskMeta
from store.cells import cell_states
from store.db import Snapshot, query
from store.paths import resolve_store
from store.tables.catalogs import models_frame, register_models, register_tasks
from store.tables.predictions import PREDICTIONS, prediction_rows, read_predictions
from store.tables.results import append_rows
from store.vocab.protocol import GENEB_V1, SEEDS

TASKS = [TaskMeta("t1", "t1", "Promoters", "s", "s"), TaskMeta("t2", "t2", "Promoters", "s", "s"),
         TaskMeta("t3", "t3", "Enhancers", "s", "s")]
META = ModelMeta.one_off("m")
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def local(task: str, revision: str | None, mcc: float, minutes: int) -> list[dict]:
    """One full-regime cell of model m: a row per seed, every one `mcc`, `minutes` after T0."""
    return [{"model": "m", "task": task, "regime": "full", "seed": seed, "probe": "logreg",
             "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash, "mcc": mcc, "acc": 0.7,
             "f1_macro": 0.6, "source": "local", "data_hash": f"h-{task}",
             "model_revision": revision, "pred": [0, 1],
             "created_at": T0 + timedelta(minutes=minutes)} for seed in SEEDS]


OFFICIAL = {"model": "m", "task": "t3", "regime": "full", "seed": None, "probe": "logreg",
            "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash, "mcc": 0.5,
            "source": "official", "model_revision": "official-extractor-commit",
            "created_at": T0}


def store_with(root, cells: list[list[dict]]):
    """A store of TASKS whose model catalog predates the revision column, holding `cells`."""
    paths = resolve_store(root)
    register_tasks(paths, TASKS, {t.task_id: f"h-{t.task_id}" for t in TASKS})
    paths.catalog_table("models").parent.mkdir(parents=True, exist_ok=True)
    models_frame([META]).write_parquet(paths.catalog_table("models"))
    for rows in cells:
        append_rows(paths, [{k: v for k, v in r.items() if k != "pred"} for r in rows])
        if rows[0]["source"] == "local":
            append_rows(paths, prediction_rows(rows, [0, 1], model="m", task=rows[0]["task"],
                                               source="local", data_hash=rows[0]["data_hash"],
                                               created_at=rows[0]["created_at"]),
                        table=PREDICTIONS)
    return paths


def shown(paths) -> dict[tuple[str, str], float]:
    """(source, task) -> seed-mean MCC of every cell the readers show (`results`)."""
    means = seed_means(paths)
    return dict(zip(zip(means["source"], means["task"], strict=True), means["mcc"], strict=True))


def local_aggregates(paths) -> dict:
    agg = aggregates(scores_of(seed_means(paths, source="local"), with_source=False),
                     tasks=TASKS)
    return agg.select("micro", "Promoters", "Enhancers").row(0, named=True)


def states(paths) -> dict[tuple[str, str], str]:
    frame = cell_states(Snapshot(paths).query, seeds={GENEB_V1.hash: len(SEEDS)})
    return {(r["source"], r["task"]): r["state"] for r in frame.iter_rows(named=True)}


def test_only_the_current_revisions_rows_are_shown_and_aggregated(tmp_path):
    paths = store_with(tmp_path / "s", [local("t1", "rev-a", 0.1, 0), local("t2", "rev-a", 0.3, 0),
                                        local("t3", "rev-b", 0.9, 5), [OFFICIAL]])
    # No revision recorded (a catalog of before the column): the newest local row's, rev-b.
    assert shown(paths) == {("local", "t3"): 0.9, ("official", "t3"): 0.5}
    assert local_aggregates(paths) == {"micro": None, "Promoters": None, "Enhancers": 0.9}
    assert states(paths) == {("local", "t1"): "stale", ("local", "t2"): "stale",
                             ("local", "t3"): "done", ("official", "t3"): "done"}
    assert query(paths, "SELECT count(*) FROM stale_results").item() == 2 * len(SEEDS)
    assert set(read_predictions(paths)["task"]) == {"t3"}

    # `fill` recorded rev-a as the model's revision: rev-a's rows are current, rev-b's stale.
    register_models(paths, [META], {"m": "rev-a"})
    assert shown(paths) == {("local", "t1"): 0.1, ("local", "t2"): 0.3, ("official", "t3"): 0.5}
    assert local_aggregates(paths) == {"micro": None, "Promoters": 0.2, "Enhancers": None}
    assert set(read_predictions(paths)["task"]) == {"t1", "t2"}
    # A registration without a revision (an import) keeps the recorded one.
    register_models(paths, [META])
    assert states(paths)[("local", "t3")] == "stale"


def test_no_revision_is_a_revision_of_its_own(tmp_path):
    """Rows of a model run without a revision (an unpinned hub id) are current while its
    current revision is none, and stale once it has one (a pinned commit)."""
    paths = store_with(tmp_path / "s", [local("t1", None, 0.1, 0), local("t2", "c0ffee", 0.3, 5)])
    register_models(paths, [META], {"m": None})
    assert shown(paths) == {("local", "t1"): 0.1}
    register_models(paths, [META], {"m": "c0ffee"})
    assert shown(paths) == {("local", "t2"): 0.3}


def test_rows_without_revisions_in_an_old_store_read_as_before(tmp_path):
    paths = store_with(tmp_path / "s", [local("t1", None, 0.1, 0), local("t2", None, 0.3, 5),
                                        local("t3", None, 0.5, 9)])
    assert shown(paths) == {("local", "t1"): 0.1, ("local", "t2"): 0.3, ("local", "t3"): 0.5}
    agg = local_aggregates(paths)
    assert agg["Promoters"] == 0.2 and agg["Enhancers"] == 0.5
    assert pl.Series([agg["micro"]]).round(12).item() == 0.3
