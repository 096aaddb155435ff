"""What is missing: the (model, task, regime, protocol) cells a run needs that the store lacks.

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
    """One (model, task) pair and, per protocol, the regimes it still needs; embedded once."""

    model: ModelMeta
    task: TaskMeta
    todo: tuple[tuple[Protocol, tuple[str, ...]], ...]

    @property
    def cells(self) -> int:
        return sum(len(regimes) for _, regimes in self.todo)


@dataclass(frozen=True)
class Plan:
    cells_total: int
    work: tuple[PairWork, ...]

    @property
    def cells_missing(self) -> int:
        return sum(w.cells for w in self.work)


def done_cells(paths: StorePaths, protocols: list[Protocol], data_hashes: dict[str, str],
               models: list[str]) -> set[tuple[str, str, str, str]]:
    """(protocol hash, model, task, regime) of every complete, current local cell."""
    if not data_hashes or not models:
        return set()
    frame = query(paths, """
        SELECT protocol_hash, model, task, regime, data_hash, count(DISTINCT seed) AS n
        FROM results
        WHERE source = 'local' AND seed IS NOT NULL AND list_contains(?, protocol_hash)
          AND list_contains(?, model) AND list_contains(?, task)
        GROUP BY ALL""",
        [[p.hash for p in protocols], models, list(data_hashes)])
    seeds = {p.hash: len(p.seeds) for p in protocols}
    return {(ph, m, t, r) for ph, m, t, r, h, n in frame.iter_rows()
            if n >= seeds[ph] and data_hashes.get(t) == h}


def plan(paths: StorePaths, models: list[ModelMeta], tasks: list[TaskMeta],
         regimes: list[str], protocols: list[Protocol], data_hashes: dict[str, str]) -> Plan:
    done = done_cells(paths, protocols, data_hashes, [m.model_id for m in models])
    work = []
    for m in models:
        for t in tasks:
            todo = tuple(
                (p, missing) for p in protocols
                if (missing := tuple(r for r in regimes
                                     if (p.hash, m.model_id, t.task_id, r) not in done))
            )
            if todo:
                work.append(PairWork(m, t, todo))
    return Plan(len(models) * len(tasks) * len(regimes) * len(protocols), tuple(work))
