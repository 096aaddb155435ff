"""What is missing: the (model, task, regime, protocol) cells a run needs that the store lacks.

A cell is done when the store holds local rows for every seed of the protocol, with the same
protocol hash and the data hash of the suite's files as they are now (`store.cells`; rows on
other data are stale: MTEB's rule that old results merge only when the data revision matches).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from store.catalog import ModelMeta, TaskMeta
from store.cells import cell_states
from store.db import Source, query
from store.vocab.protocol import Protocol, seed_counts
from store.vocab.sources import LOCAL


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


def done_cells(source: Source, protocols: list[Protocol], data_hashes: dict[str, str],
               models: list[str]) -> set[tuple[str, str, str, str]]:
    """(protocol hash, model, task, regime) of every done local cell on the given data."""
    if not data_hashes or not models:
        return set()
    states = cell_states(
        partial(query, source), seeds=seed_counts(protocols),
        data_hashes=data_hashes,
        where=f"r.source = '{LOCAL}' AND list_contains(?, r.model) AND list_contains(?, r.task)",
        params=[models, list(data_hashes)])
    return {(r["protocol_hash"], r["model"], r["task"], r["regime"])
            for r in states.iter_rows(named=True) if r["state"] == "done"}


def plan(source: Source, models: list[ModelMeta], tasks: list[TaskMeta],
         regimes: list[str], protocols: list[Protocol], data_hashes: dict[str, str]) -> Plan:
    done = done_cells(source, protocols, data_hashes, [m.model_id for m in models])
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
