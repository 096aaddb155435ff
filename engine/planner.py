"""What is missing: the (model, task, regime) cells a run needs that the store lacks.

A cell is done when the store's `results` view holds local rows for every seed of the protocol,
with the same protocol hash and the same data hash (results on other data are stale: MTEB's rule
that old results merge only when the data revision matches).
"""

from __future__ import annotations

from dataclasses import dataclass

from store.catalog import ModelMeta, TaskMeta
from store.db import query
from store.paths import StorePaths
from store.protocol import Protocol


@dataclass(frozen=True)
class PairWork:
    """One (model, task) pair and the regimes it still needs; embedded once for all of them."""

    model: ModelMeta
    task: TaskMeta
    regimes: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    cells_total: int
    work: tuple[PairWork, ...]

    @property
    def cells_missing(self) -> int:
        return sum(len(w.regimes) for w in self.work)


def done_cells(paths: StorePaths, protocol: Protocol, data_hashes: dict[str, str],
               models: list[str]) -> set[tuple[str, str, str]]:
    if not data_hashes or not models:
        return set()
    frame = query(paths, """
        SELECT model, task, regime, data_hash FROM results
        WHERE source = 'local' AND protocol_hash = ? AND seed IS NOT NULL
          AND list_contains(?, model) AND list_contains(?, task)
        GROUP BY model, task, regime, data_hash
        HAVING count(DISTINCT seed) >= ?""",
        [protocol.hash, models, list(data_hashes), len(protocol.seeds)])
    return {(m, t, r) for m, t, r, h in frame.iter_rows() if data_hashes.get(t) == h}


def plan(paths: StorePaths, models: list[ModelMeta], tasks: list[TaskMeta],
         regimes: list[str], protocol: Protocol, data_hashes: dict[str, str]) -> Plan:
    done = done_cells(paths, protocol, data_hashes, [m.model_id for m in models])
    work = []
    for m in models:
        for t in tasks:
            todo = tuple(r for r in regimes if (m.model_id, t.task_id, r) not in done)
            if todo:
                work.append(PairWork(m, t, todo))
    return Plan(len(models) * len(tasks) * len(regimes), tuple(work))
