"""Task health as every reader shows it (`audit`, `report`, `export`, the dashboard): a task's
stored audit (`store.tables.audit`) of its current data, and its verdict
(`store.audit.verdict.health`) with the best model's MCC on that data.

A task's current data is the store's (`store.cells.CURRENT_DATA_SQL`, the snapshot's
`current_data` view); a task the store knows no data hash of (results only imported) takes its
newest audit. The best model's MCC: geneb-v1, full regime, the mean over seeds, the best over
models and sources, of the rows computed on the audited data (imported rows, which carry no
data hash, count for the audit of a task the store knows no data of).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from store.audit.report import TaskAudit
from store.audit.verdict import Health, health
from store.db import Source, query, snapshot_of
from store.seedmeans import seed_means
from store.tables.audit import audits_of_tasks
from store.vocab.protocol import GENEB_V1


def best_model_mccs(source: Source, hashes: Mapping[str, str | None],
                    means: pl.DataFrame | None = None) -> dict[str, float]:
    """Task -> the best model's geneb-v1 full-regime MCC on the data of hash `hashes[task]`
    (None: rows without a data hash), for the tasks with such results; `means`: the store's
    geneb-v1 seed means already read (`store.seedmeans.seed_means`), else they are read."""
    if not hashes:
        return {}
    cells = seed_means(source, task=list(hashes), regime=["full"],
                       protocol_hash=[GENEB_V1.hash]) if means is None else \
        means.filter(pl.col("regime") == "full", pl.col("protocol_hash") == GENEB_V1.hash,
                     pl.col("task").is_in(list(hashes)))
    best: dict[str, float] = {}
    for task, data_hash, mcc in cells.select("task", "data_hash", "mcc").iter_rows():
        if data_hash == hashes[task] and mcc is not None:
            best[task] = max(best.get(task, mcc), mcc)
    return best


def task_health(source: Source, tasks: Sequence[str], means: pl.DataFrame | None = None
                ) -> dict[str, tuple[TaskAudit, Health]]:
    """Task -> (its audit, its health), for the tasks of `tasks` with an audit (`means`: see
    `best_model_mccs`)."""
    snap = snapshot_of(source)
    current = dict(query(snap, "SELECT task, data_hash FROM current_data "
                               "WHERE list_contains(?, task)", [list(tasks)]).iter_rows())
    audits = audits_of_tasks(snap.paths, tasks, current)
    best = best_model_mccs(snap, {t: current.get(t) for t in audits}, means)
    return {t: (a, health(a, best.get(t))) for t, a in audits.items()}


def health_row(task: str, h: Health) -> dict:
    """One task's health as plain columns (the report's JSON, the dashboard)."""
    return {"task": task, "verdict": h.verdict, "flags": list(h.flags),
            "leak_share": h.leak_share, "conflict_share": h.conflict_share,
            "shortcut": h.shortcut, "shortcut_mcc": h.shortcut_mcc,
            "best_model_mcc": h.best_model_mcc, "shortcut_share": h.shortcut_share}
