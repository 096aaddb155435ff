"""What a result row is: its columns and its key."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

import pyarrow as pa

from store.vocab.kinds import KIND_METRICS
from store.vocab.variant import VARIANT_COLUMNS

# One result row. `seed` is NULL for imported seed means (the official formats carry no seeds).
RESULT_SCHEMA = pa.schema([
    ("model", pa.string()),
    ("task", pa.string()),
    ("regime", pa.string()),
    ("seed", pa.int64()),
    ("probe", pa.string()),
    ("protocol", pa.string()),
    ("protocol_hash", pa.string()),
    ("mcc", pa.float64()),
    ("acc", pa.float64()),
    ("f1_macro", pa.float64()),
    ("n_train", pa.int64()),
    ("n_test", pa.int64()),
    ("degenerate", pa.bool_()),      # fewer than two predicted classes on the test split
    ("converged", pa.bool_()),       # False when the solver hit max_iter (ConvergenceWarning)
    ("n_iter", pa.int64()),
    ("shared_fit", pa.bool_()),      # True: one fit recorded for every seed (full regime, lbfgs)
    ("fit_seconds", pa.float64()),
    ("source", pa.string()),         # "local", or the provenance of an imported reference
    ("data_revision", pa.string()),
    ("data_hash", pa.string()),      # content hash of the task data; NULL for imported rows
    ("model_revision", pa.string()),
    # the row's variant (`store.vocab.variant`): NULL where none applies, and on rows written
    # before it was recorded (read as `store.tables.migrate.LEGACY_PRECISION_SQL` says)
    ("compute_precision", pa.string()),
    ("recipe_preset", pa.string()),
    ("context_policy", pa.string()),
    ("storage_precision", pa.string()),
    ("engine_version", pa.string()),
    ("created_at", pa.timestamp("us", tz="UTC")),
    # the task kind and its metrics (`store.vocab.kinds`): NULL on classification rows, whose
    # data files are written without these columns (`store.tables.data_files.Table.sparse`)
    ("kind", pa.string()),
    *((metric, pa.float64()) for metric in KIND_METRICS),
])
RESULT_COLUMNS: tuple[str, ...] = tuple(RESULT_SCHEMA.names)
# A row is identified by these; the latest `created_at` wins. The data hash and the variant are
# part of the key: rows on other data (a subsample, an edited or re-downloaded task file) or at
# another variant (precision, recipe preset) never replace others.
KEY: tuple[str, ...] = ("source", "protocol_hash", "model", "task", "regime", "seed", "data_hash",
                        *VARIANT_COLUMNS)
# The results table is partitioned by these (one folder per source and model).
PARTITIONS: tuple[str, ...] = ("source", "model")
FILE_SCHEMA = pa.schema([f for f in RESULT_SCHEMA if f.name not in PARTITIONS])

def _clean(value):
    """NaN and infinities become NULL: the store never holds NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def rows_table(rows: Iterable[Mapping]) -> pa.Table:
    """Rows (dicts with the schema's columns; missing ones are NULL) as an Arrow table."""
    rows = list(rows)
    now = datetime.now(UTC)
    cols = {
        name: [_clean(r.get(name)) for r in rows] for name in RESULT_COLUMNS if name != "created_at"
    }
    cols["created_at"] = [r.get("created_at") or now for r in rows]
    return pa.Table.from_pydict(cols, schema=RESULT_SCHEMA)
