"""What is missing: the (model, task, regime, protocol) cells a run needs that the store lacks.

A cell is done when the store holds local rows for every seed of the protocol, with the same
protocol hash, the data hash of the suite's files as they are now, the revision the run
computes the model with and the compute precision it computes in (`store.cells`; rows on other
data or of another revision are stale: MTEB's rule that old results merge only when the data
revision matches; rows at another precision are other cells, `store.vocab.variant`). The
revision is told before loading where it can be (`engine.encoders.revision`; a checkpoint
folder's rows recorded under the fingerprint's rule before count while that older hash still
matches, `store.current.legacy_revisions`); a model whose revision only its loaded weights
tell (a random-initialisation control) is planned with the store's current revision, and a run
that finds another one when it loads it says so (`engine.pairs`). The precision is told from
`--device` and `--dtype` (`engine.encoders.told_precision`), the recipe preset from `--preset`
and `--batch-size` (`engine.encoders.told_preset`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial

from engine.encoders import (
    EncoderOptions,
    told_context,
    told_precision,
    told_preset,
    told_storage,
)
from engine.encoders.revision import told_revisions
from store.catalog import ModelMeta, TaskMeta
from store.cells import cell_states, current_revisions
from store.current import folder_of, legacy_revisions
from store.db import Source, query
from store.vocab.kinds import CLASSIFICATION, TaskKind
from store.vocab.protocol import Protocol, protocols_for, seed_counts
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
    # model id -> the revision its done cells were checked against (`run_revisions`); a model
    # left out had no local rows (nothing of it done, whatever its revision)
    revisions: Mapping[str, str | None]
    # model id -> the compute precision its done cells were checked at (`told_precision`)
    precisions: Mapping[str, str | None]
    # model id -> the recipe preset value its done cells were checked at (`told_preset`)
    presets: Mapping[str, str | None] = field(default_factory=dict)
    # model id -> the context policy value its done cells were checked at (`told_context`)
    contexts: Mapping[str, str | None] = field(default_factory=dict)
    # model id -> the storage precision value its done cells were checked at (`told_storage`)
    storages: Mapping[str, str | None] = field(default_factory=dict)

    @property
    def cells_missing(self) -> int:
        return sum(w.cells for w in self.work)


def run_revisions(source: Source, model_ids: list[str],
                  known: Mapping[str, ModelMeta]) -> dict[str, str | None]:
    """Model id -> the revision a run of it computes with: told before loading for the models
    `known` describes (`engine.encoders.revision.told_revisions`), else the store's current one
    (`store.cells.current_revisions`); a model with neither has no local rows."""
    told = told_revisions([known[m] for m in model_ids if m in known])
    untold = [m for m in model_ids if m not in told]
    return {**current_revisions(partial(query, source), untold), **told} if untold else told


def accepted_revisions(source: Source, models: list[ModelMeta]) -> dict[str, str]:
    """Model id -> a second name of the revision it is told (`store.current.legacy_revisions`:
    a checkpoint folder's `folder-sha256-` while it still matches the folder's files)."""
    folders = {m.model_id: folder for m in models
               if (folder := folder_of(m.path, m.encoder, m.random_init)) is not None}
    return legacy_revisions(partial(query, source), folders) if folders else {}


def done_cells(source: Source, protocols: list[Protocol], data_hashes: dict[str, str],
               revisions: Mapping[str, str | None], precisions: Mapping[str, str | None],
               also: Mapping[str, str] | None = None,
               presets: Mapping[str, str | None] | None = None,
               contexts: Mapping[str, str | None] | None = None,
               storages: Mapping[str, str | None] | None = None
               ) -> set[tuple[str, str, str, str]]:
    """(protocol hash, model, task, regime) of every done local cell on the given data, of the
    models `revisions` names with the revision it gives each (`also`: a second name of it;
    rows of others are stale) at the precision `precisions`, the recipe preset `presets`
    (not named: normalized), the context policy `contexts` (not named: the default) and the
    storage precision `storages` (not named: float32) give each."""
    if not data_hashes or not revisions:
        return set()
    states = cell_states(
        partial(query, source), seeds=seed_counts(protocols),
        data_hashes=data_hashes, revisions=revisions, also=also,
        precisions={m: precisions.get(m) for m in revisions}, presets=presets,
        contexts=contexts, storages=storages,
        where=f"r.source = '{LOCAL}' AND list_contains(?, r.model) AND list_contains(?, r.task)",
        params=[list(revisions), list(data_hashes)])
    return {(r["protocol_hash"], r["model"], r["task"], r["regime"])
            for r in states.iter_rows(named=True) if r["state"] == "done"}


def plan(source: Source, models: list[ModelMeta], tasks: list[TaskMeta],
         regimes: list[str], protocols: list[Protocol], data_hashes: dict[str, str],
         options: EncoderOptions, kinds: Mapping[str, TaskKind] | None = None) -> Plan:
    """The cells of `models` x `tasks` that are missing: a classification task's under
    `protocols` in `regimes`, a task of another kind (`kinds`: task id -> kind, the tasks not
    of classification) under its kind's protocols (`store.vocab.protocol.protocols_for`), each
    protocol in the regimes it runs of `regimes` (`Protocol.regimes_of`)."""
    kinds = kinds or {}
    runs = {t.task_id: tuple((p, p.regimes_of(regimes)) for p in protocols_for(
        kinds.get(t.task_id, CLASSIFICATION), protocols)) for t in tasks}
    every = list({p.hash: p for todo in runs.values() for p, _ in todo}.values())
    revisions = run_revisions(source, [m.model_id for m in models],
                              {m.model_id: m for m in models})
    precisions = {m.model_id: told_precision(m, options) for m in models}
    presets = {m.model_id: told_preset(m, options) for m in models}
    contexts = {m.model_id: told_context(m, options) for m in models}
    storages = {m.model_id: told_storage(m, options) for m in models}
    done = done_cells(source, every, data_hashes, revisions, precisions,
                      accepted_revisions(source, models), presets, contexts, storages)
    work = []
    for m in models:
        for t in tasks:
            todo = tuple(
                (p, missing) for p, own in runs[t.task_id]
                if (missing := tuple(r for r in own
                                     if (p.hash, m.model_id, t.task_id, r) not in done))
            )
            if todo:
                work.append(PairWork(m, t, todo))
    cells = sum(len(own) for todo in runs.values() for _, own in todo)
    return Plan(len(models) * cells, tuple(work), revisions, precisions, presets, contexts,
                storages)
