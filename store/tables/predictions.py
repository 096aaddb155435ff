"""The predictions table: `<store>/predictions`, each local result row's test-set predictions.

A row is keyed like a result row (`store.tables.schema.KEY`: source, protocol hash, model, task,
regime, seed, data hash) plus `kind`:

- classification tasks: `pred`, the predicted class of every test row of that result row, in
  the test split's file order; or `labels`, the test split's labels (one row per pair commit,
  its protocol hash, regime and seed NULL: the labels of a (task, data hash) are the same
  whichever model wrote them). The values are compact: one small integer per test row, the
  narrowest of int8, int16, int32 and int64 that holds every value, as little-endian bytes
  (`values`, `width` bytes each).
- regression and variant tasks (`store.vocab.kinds`): `value`, a result row's value of every
  test row in the task file's order (a regression's predicted target; a variant's score, higher
  meaning label 1 more likely: the cosine distance, the probe's probability of label 1, -LLR);
  or `target`, the test rows' targets (a regression's real label, a variant's 0/1), one row per
  pair commit as `labels`. Their values are float64, little-endian (`width` 8).

The kinds' rows add no column, so a classification row's bytes are what they were;
`read_predictions` and `read_labels` read `pred` and `labels` rows only, `read_values` and
`read_targets` the others.

It is written through `store.tables.results` (same data files, commits, compaction and vacuum as the
results table): `append_pair` commits a pair's predictions before its results, under the pair's
commit lock, so a committed result always has its predictions; predictions committed without
their results (a kill in between) are superseded when the pair is computed again, since readers
take the newest row per key (`created_at`), as `results_latest` does.

Imported official results carry no predictions (the official formats have none):
`read_predictions` of such a model is empty, and `missing_reason` says why; their uncertainty
comes from the task-level methods (`store.analyses.uncertainty`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

import numpy as np
import polars as pl
import pyarrow as pa

from store.cells import ENTRY
from store.paths import StorePaths
from store.tables.data_files import Table
from store.tables.results import read_files, read_state
from store.tables.schema import KEY
from store.vocab.sources import LOCAL
from store.vocab.variant import CONTEXT_COLUMN

PREDICTION_SCHEMA = pa.schema([
    ("model", pa.string()),
    ("task", pa.string()),
    ("regime", pa.string()),
    ("seed", pa.int64()),
    ("protocol_hash", pa.string()),
    ("kind", pa.string()),         # "pred" or "labels"; "value" or "target" (other kinds)
    ("width", pa.int8()),          # bytes per value: 1, 2, 4 or 8
    ("n", pa.int64()),             # test rows
    ("values", pa.binary()),       # n little-endian signed integers of `width` bytes; float64
                                   # for "value" and "target"
    ("source", pa.string()),
    ("data_hash", pa.string()),
    ("compute_precision", pa.string()),     # the result row's variant (`store.vocab.variant`)
    ("recipe_preset", pa.string()),
    ("context_policy", pa.string()),
    ("storage_precision", pa.string()),
    ("created_at", pa.timestamp("us", tz="UTC")),
])
PREDICTIONS = Table("predictions", PREDICTION_SCHEMA, "geneb-predictions",
                    (CONTEXT_COLUMN, "storage_precision"))
PRED_KEY: tuple[str, ...] = (*KEY, "kind")

NO_PREDICTIONS = ("imported results carry no predictions (the official formats have none): "
                  "per-example intervals and paired tests need a local run (`geneb-engine "
                  "fill`); use the task-level methods (store.analyses.uncertainty)")

_DTYPES = (np.dtype("<i1"), np.dtype("<i2"), np.dtype("<i4"), np.dtype("<i8"))


def encode(values: np.ndarray) -> tuple[int, bytes]:
    """(width, bytes) of integer `values` in the narrowest signed type that holds them."""
    values = np.asarray(values).astype(np.int64, copy=False)
    lo, hi = (int(values.min()), int(values.max())) if values.size else (0, 0)
    for dt in _DTYPES:
        info = np.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return dt.itemsize, values.astype(dt).tobytes()
    raise AssertionError("int64 holds every int64")


def decode(width: int, data: bytes) -> np.ndarray:
    """The int64 values of `encode`."""
    dt = next(d for d in _DTYPES if d.itemsize == width)
    return np.frombuffer(data, dtype=dt).astype(np.int64)


def _common(model: str, task: str, source: str, data_hash: str | None,
            compute_precision: str | None = None, recipe_preset: str | None = None,
            context_policy: str | None = None, storage_precision: str | None = None,
            created_at: datetime | None = None) -> dict:
    return {"model": model, "task": task, "source": source, "data_hash": data_hash,
            "compute_precision": compute_precision, "recipe_preset": recipe_preset,
            "context_policy": context_policy, "storage_precision": storage_precision,
            "created_at": created_at or datetime.now(UTC)}


def _row(common: dict, kind: str, r: Mapping | None, width: int, n: int, data: bytes) -> dict:
    """A row of `kind` (`r`: its result row; None: a labels/target row, keyed by no result)."""
    key = ({"regime": None, "seed": None, "protocol_hash": None} if r is None else
           {"regime": r["regime"], "seed": r["seed"], "protocol_hash": r["protocol_hash"]})
    return {**common, **key, "kind": kind, "width": width, "n": n, "values": data}


def prediction_rows(rows: Iterable[Mapping], y_test: np.ndarray, *, model: str, task: str,
                    source: str, data_hash: str | None, compute_precision: str | None = None,
                    recipe_preset: str | None = None, context_policy: str | None = None,
                    storage_precision: str | None = None,
                    created_at: datetime | None = None) -> list[dict]:
    """The predictions rows of one pair at one variant (`compute_precision`,
    `recipe_preset`, `context_policy`, `storage_precision`): one `pred` row
    per result row of `rows` (each with its `pred` array, and protocol_hash, regime, seed) and
    one `labels` row of `y_test`."""
    common = _common(model, task, source, data_hash, compute_precision, recipe_preset,
                     context_policy, storage_precision, created_at)
    out = [_row(common, "labels", None, *_int_values(y_test))]
    out += [_row(common, "pred", r, *_int_values(r["pred"])) for r in rows]
    return out


def _int_values(values: np.ndarray) -> tuple[int, int, bytes]:
    width, data = encode(values)
    return width, len(values), data


_FLOAT = np.dtype("<f8")


def _float_values(values: np.ndarray) -> tuple[int, int, bytes]:
    return _FLOAT.itemsize, len(values), np.asarray(values, dtype=_FLOAT).tobytes()


def value_rows(rows: Iterable[Mapping], y_test: np.ndarray, *, model: str, task: str,
               source: str, data_hash: str | None, compute_precision: str | None = None,
               recipe_preset: str | None = None, context_policy: str | None = None,
               storage_precision: str | None = None,
               created_at: datetime | None = None) -> list[dict]:
    """`prediction_rows` of a regression or variant pair: one `target` row of `y_test` and one
    `value` row of each result row's `pred` (real values), float64."""
    common = _common(model, task, source, data_hash, compute_precision, recipe_preset,
                     context_policy, storage_precision, created_at)
    out = [_row(common, "target", None, *_float_values(y_test))]
    out += [_row(common, "value", r, *_float_values(r["pred"])) for r in rows]
    return out


def predictions_table(rows: Iterable[Mapping]) -> pa.Table:
    """Prediction rows (dicts with the schema's columns) as an Arrow table."""
    rows = list(rows)
    return pa.Table.from_pydict({name: [r.get(name) for r in rows]
                                 for name in PREDICTION_SCHEMA.names}, schema=PREDICTION_SCHEMA)


def _latest(paths: StorePaths) -> pl.DataFrame:
    """The newest row per key (`PRED_KEY`) of the newest version that is current by
    `store.cells`: a `pred` row whose result row is current (on the task's current data, of
    the model's current revision), named by its result row's entry (a model's predictions at
    another precision than its current one as `<model> [<precision>]`, as the `results` view
    names them), a `labels` row on its task's current data. A local row written before the
    compute precision was recorded reads as its run's (`store.tables.migrate`)."""
    from store.db import Snapshot  # lazy: duckdb, filelock

    state = read_state(paths, PREDICTIONS)
    rows, _ = read_files(paths, state.files if state else (), PREDICTIONS)
    if rows.num_rows == 0:
        return pl.from_arrow(rows)
    snap = Snapshot(paths)
    try:
        snap.con.register("_prediction_rows", rows)
        frame = snap.query(snap.recorded_precision(snap.con, "_prediction_rows"))
        frame = (frame.sort("created_at", descending=True)
                 .unique(subset=list(PRED_KEY), keep="first", maintain_order=True))
        current = snap.query("SELECT task, data_hash AS current_hash FROM current_data")
        results = snap.query(f"SELECT DISTINCT {', '.join(f'r.{k}' for k in KEY)}, "
                             f"{ENTRY} AS entry FROM current_rows r LEFT JOIN "
                             f"current_precision p ON p.model = r.model "
                             f"WHERE r.source = '{LOCAL}'")
    finally:
        snap.close()
    labels = (frame.filter(pl.col("kind").is_in(["labels", "target"]))
              .join(current, on="task", how="left")
              .filter(pl.col("current_hash").is_null() | pl.col("data_hash").is_null()
                      | (pl.col("data_hash") == pl.col("current_hash")))
              .drop("current_hash"))
    preds = (frame.filter(pl.col("kind").is_in(["pred", "value"]))   # no data hash too
             .join(results, on=list(KEY), how="inner", nulls_equal=True)
             .with_columns(pl.col("entry").alias("model")).drop("entry"))
    return pl.concat([labels, preds])


def _decoded(frame: pl.DataFrame, column: str) -> pl.Series:
    return pl.Series(column, [decode(w, v) for w, v in
                              zip(frame["width"].to_list(), frame["values"].to_list(),
                                  strict=True)], dtype=pl.List(pl.Int64))


class Predictions:
    """One read of the current predictions (`_latest`: the table, a snapshot and three queries),
    asked several things: a reader of two models' predictions and their task's labels reads the
    table once. `read_predictions`, `read_labels`, `labels_of` and `read_values` are its
    one-question forms."""

    def __init__(self, paths: StorePaths):
        self.frame = _latest(paths)

    def predictions(self, *, model: str | None = None, task: str | None = None,
                    regime: str | None = None, seed: int | None = None,
                    protocol_hash: str | None = None) -> pl.DataFrame:
        """`read_predictions`."""
        frame = self.frame
        cols = ["source", "protocol_hash", "model", "task", "regime", "seed", "data_hash", "n"]
        if frame.height == 0:
            return pl.DataFrame(schema={**{c: pl.Utf8 for c in cols}, "seed": pl.Int64,
                                        "n": pl.Int64, "pred": pl.List(pl.Int64)}).select(
                *cols, "pred")
        frame = frame.filter(pl.col("kind") == "pred")
        for name, value in (("model", model), ("task", task), ("regime", regime),
                            ("seed", seed), ("protocol_hash", protocol_hash)):
            if value is not None:
                frame = frame.filter(pl.col(name) == value)
        return frame.with_columns(_decoded(frame, "pred")).select(*cols, "pred").sort(
            "model", "task", "regime", "seed")

    def labels(self, keys: Iterable[tuple[str, str | None]]
               ) -> dict[tuple[str, str | None], np.ndarray]:
        """`labels_of`."""
        frame = self.frame
        if frame.height == 0:
            return {}
        frame = frame.filter(pl.col("kind") == "labels").sort("created_at", descending=True)
        out = {}
        for task, data_hash in keys:
            rows = frame.filter(pl.col("task") == task)
            if data_hash is not None:
                rows = rows.filter(pl.col("data_hash") == data_hash)
            if rows.height:
                first = rows.row(0, named=True)
                out[(task, data_hash)] = decode(first["width"], first["values"])
        return out

    def values(self, *, model: str | None = None, task: str | None = None,
               protocol_hash: str | None = None) -> pl.DataFrame:
        """`read_values`."""
        frame = self.frame
        cols = ["source", "protocol_hash", "model", "task", "regime", "seed", "data_hash", "n"]
        floats = pl.List(pl.Float64)
        if frame.height == 0:
            return pl.DataFrame(schema={**{c: pl.Utf8 for c in cols}, "seed": pl.Int64,
                                        "n": pl.Int64, "value": floats, "target": floats})
        targets = (frame.filter(pl.col("kind") == "target")
                   .sort("created_at", descending=True)
                   .unique(subset=["task", "data_hash"], keep="first", maintain_order=True))
        targets = targets.select("task", "data_hash", _floats(targets, "target"))
        frame = frame.filter(pl.col("kind") == "value")
        for name, value in (("model", model), ("task", task), ("protocol_hash", protocol_hash)):
            if value is not None:
                frame = frame.filter(pl.col(name) == value)
        return (frame.with_columns(_floats(frame, "value")).select(*cols, "value")
                .join(targets, on=["task", "data_hash"], how="left", nulls_equal=True)
                .sort("model", "task", "protocol_hash", "regime", "seed"))


def read_predictions(paths: StorePaths, *, model: str | None = None, task: str | None = None,
                     regime: str | None = None, seed: int | None = None,
                     protocol_hash: str | None = None) -> pl.DataFrame:
    """[source, protocol_hash, model, task, regime, seed, data_hash, n, pred (list of int64)]:
    the current predictions (newest per key, current data only), filtered by what is given.
    Empty for a model without local predictions (imported results: `missing_reason`)."""
    return Predictions(paths).predictions(model=model, task=task, regime=regime, seed=seed,
                                          protocol_hash=protocol_hash)


def read_labels(paths: StorePaths, task: str, data_hash: str | None = None) -> np.ndarray | None:
    """The test labels of `task` on `data_hash` (None: its current data); None when no local
    run stored them."""
    return labels_of(paths, [(task, data_hash)]).get((task, data_hash))


def labels_of(paths: StorePaths, keys: Iterable[tuple[str, str | None]]
              ) -> dict[tuple[str, str | None], np.ndarray]:
    """`read_labels` of each (task, data_hash) of `keys` that has them, from one read of the
    table (a reader of many tasks' labels reads it once, not once a task)."""
    return Predictions(paths).labels(keys)


def read_values(paths: StorePaths, *, model: str | None = None, task: str | None = None,
                protocol_hash: str | None = None) -> pl.DataFrame:
    """[source, protocol_hash, model, task, regime, seed, data_hash, n, value (list of
    float64)]: the current `value` rows of regression and variant tasks (newest per key,
    current data only; see the module), filtered by what is given, with the test rows' targets
    beside them (`target`, list of float64; null where no row of them is stored)."""
    return Predictions(paths).values(model=model, task=task, protocol_hash=protocol_hash)


def _floats(frame: pl.DataFrame, column: str) -> pl.Series:
    return pl.Series(column, [np.frombuffer(v, dtype=_FLOAT).tolist()
                              for v in frame["values"].to_list()], dtype=pl.List(pl.Float64))


def missing_reason(paths: StorePaths, model: str, task: str | None = None) -> str | None:
    """Why `model` (on `task`) has no predictions; None when it has some."""
    if read_predictions(paths, model=model, task=task).height:
        return None
    from store.db import query  # lazy: duckdb, filelock

    sources = query(paths, "SELECT DISTINCT source FROM results WHERE model = ?",
                    [model])["source"].to_list()
    if sources and LOCAL not in sources:
        return f"model {model}: {NO_PREDICTIONS}"
    where = f" on task {task}" if task else ""
    return (f"model {model}{where}: no stored predictions (no local run on the current data, "
            "or rows computed before predictions were stored); run `geneb-engine fill`")
