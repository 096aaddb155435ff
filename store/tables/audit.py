"""The audit table, `<store>/catalog/audit.parquet`: one row per task data hash (a task's data
revision, `engine.data.content_hash`), so a task is audited once per revision of its data and
reused (`geneb-engine audit --refresh` measures again). A row holds the audit
(`store.audit.report.TaskAudit` as JSON) and the distinct canonical sequence keys of its train
and test splits (for the sequences shared between tasks, `store.audit.crosstask`); written like
the other catalog tables (read-modify-write under the catalog lock, atomically:
`store.tables.catalogs.upsert`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from store.audit.report import AUDIT_VERSION, TaskAudit
from store.damage import REPAIR, note
from store.paths import StorePaths
from store.tables.catalogs import upsert
from store.vocab.errors import brief

TABLE = "audit"
_KEYS = pl.List(pl.UInt64)


def _read(paths: StorePaths, columns: list[str]) -> pl.DataFrame | None:
    f = paths.catalog_table(TABLE)
    if not f.exists():
        return None
    try:
        with pq.ParquetFile(f) as parquet:
            return pl.from_arrow(parquet.read(columns=columns))
    except Exception as exc:
        note(str(f), f"{f}: cannot be read ({brief(exc)}); the tasks are audited again; "
                     f"{REPAIR}")
        return None


def stored_audits(paths: StorePaths) -> dict[str, TaskAudit]:
    """Data hash -> its stored audit of the current `AUDIT_VERSION`."""
    frame = _read(paths, ["data_hash", "version", "audit"])
    if frame is None:
        return {}
    frame = frame.filter(pl.col("version") == AUDIT_VERSION)
    return {h: TaskAudit.from_json(a) for h, a in frame.select("data_hash", "audit").iter_rows()}


def audits_of_tasks(paths: StorePaths, tasks: Sequence[str], current: Mapping[str, str]
                    ) -> dict[str, TaskAudit]:
    """Task -> the audit of its data hash in `current`, else (a task of no known data) its
    newest audit; tasks without one are left out."""
    frame = _read(paths, ["data_hash", "task_id", "version", "audit", "audited_at"])
    if frame is None:
        return {}
    frame = frame.filter(pl.col("version") == AUDIT_VERSION).sort("audited_at")
    by_hash = dict(frame.select("data_hash", "audit").iter_rows())
    newest = dict(frame.select("task_id", "audit").iter_rows())   # the last row wins
    found = {t: by_hash.get(current[t]) if t in current else newest.get(t) for t in tasks}
    return {t: TaskAudit.from_json(a) for t, a in found.items() if a is not None}


def stored_keys(paths: StorePaths, hashes: Collection[str]
                ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Data hash -> (train keys, test keys) of the stored audits of `hashes`."""
    frame = _read(paths, ["data_hash", "version", "train_keys", "test_keys"])
    if frame is None:
        return {}
    frame = frame.filter((pl.col("version") == AUDIT_VERSION)
                         & pl.col("data_hash").is_in(list(hashes)))
    return {h: (np.asarray(tr, dtype=np.uint64), np.asarray(te, dtype=np.uint64))
            for h, tr, te in frame.select("data_hash", "train_keys", "test_keys").iter_rows()}


def record_audits(paths: StorePaths,
                  audits: Sequence[tuple[TaskAudit, np.ndarray, np.ndarray]]) -> None:
    """Store audits with their splits' keys (`store.audit.report.audit_task`'s results)."""
    if not audits:
        return
    frame = pl.DataFrame({
        "data_hash": [a.data_hash for a, _, _ in audits],
        "task_id": [a.task_id for a, _, _ in audits],
        "version": [a.version for a, _, _ in audits],
        "audit": [a.to_json() for a, _, _ in audits],
        "train_keys": pl.Series([tr for _, tr, _ in audits], dtype=_KEYS),
        "test_keys": pl.Series([te for _, _, te in audits], dtype=_KEYS),
        "audited_at": [datetime.now(UTC)] * len(audits),
    }, schema_overrides={"version": pl.Int64})
    upsert(paths, TABLE, frame, "data_hash")
