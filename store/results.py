"""The results store: append-only Parquet fragments, one per finished batch of rows.

A fragment is written under a temporary name (`*.parquet.tmp`, invisible to the readers' glob)
and renamed into place, so a crash never leaves a half-written fragment visible. Readers see the
fragments through DuckDB views (`store.db`) that keep the latest row per key.
"""

from __future__ import annotations

import math
import os
import re
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from store.paths import StorePaths

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
    ("data_hash", pa.string()),
    ("model_revision", pa.string()),
    ("engine_version", pa.string()),
    ("created_at", pa.timestamp("us", tz="UTC")),
])
RESULT_COLUMNS: tuple[str, ...] = tuple(RESULT_SCHEMA.names)
# A row is identified by these; the latest `created_at` wins.
KEY: tuple[str, ...] = ("source", "protocol_hash", "model", "task", "regime", "seed")

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(name: str) -> str:
    """A file-system-safe form of a model or task id (as the official validator does)."""
    return _SAFE.sub("_", name)


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


def write_fragment(paths: StorePaths, rows: Iterable[Mapping], group: str) -> Path | None:
    """Append `rows` as one fragment under `results/<group>/`; atomic; returns its path."""
    table = rows_table(rows)
    if table.num_rows == 0:
        return None
    folder = paths.results / group
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    final = folder / f"{stamp}-{uuid.uuid4().hex[:8]}.parquet"
    tmp = final.with_name(final.name + ".tmp")
    pq.write_table(table, tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)
    return final
