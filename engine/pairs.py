"""One (model, task) pair's steps, shared by both executors (`engine.fill`'s local one and
`engine.cluster`'s Ray one): which cells it still needs, its embeddings streamed into the store,
its probes fitted and committed, and the events each step reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

import numpy as np
from threadpoolctl import threadpool_limits

from engine import __version__
from engine.data import KindTargets, TaskData
from engine.encoders.imported import not_stored
from engine.planner import PairWork
from engine.probes import PROBE_THREADS, probe_rows
from engine.suites import Suite
from store.catalog import ModelMeta
from store.embeddings import EmbeddingStore
from store.paths import StorePaths
from store.tables.catalogs import register_models
from store.tables.pair_commit import append_pair, done_in_table
from store.tables.predictions import prediction_rows, value_rows
from store.tables.telemetry import record_runs, run_row
from store.vocab.encoder_kinds import KINDS
from store.vocab.errors import GenebError
from store.vocab.executors import IN_PROCESS
from store.vocab.kinds import SEVERAL_TARGETS
from store.vocab.protocol import Probe, Protocol, seed_counts
from store.vocab.sources import LOCAL
from store.vocab.variant import STORED_FLOAT32, precision_label


def embeddings_identity(model: ModelMeta, encoder, data_hash: str,
                        storage: str | None = None) -> dict:
    """The embeddings' identity and provenance, stored as the split's attributes (what
    `store.embeddings.IDENTITY` compares: a stored split is reused when they match); the
    recipe preset only where it is not normalized and the context policy only where it is not
    the default (each is in the encoder's settings then too), so the default variant's
    attributes are what they always were; `dtype`: the storage precision (`storage`,
    `store.vocab.variant`; None: float32)."""
    preset, context = recipe_preset(encoder), context_policy(encoder)
    return {"model_id": model.model_id, "model_revision": encoder.revision,
            "encoder": encoder.settings, "data_hash": data_hash,
            "dtype": storage or STORED_FLOAT32,
            "compute_precision": encoder.precision, "engine_version": __version__,
            **({"recipe_preset": preset} if preset is not None else {}),
            **({"context_policy": context} if context is not None else {})}


def recipe_preset(encoder) -> str | None:
    """The encoder's recipe preset value (`store.vocab.variant`; None: normalized, and for the
    kinds that batch nothing of their own)."""
    return getattr(encoder, "preset", None)


def context_policy(encoder) -> str | None:
    """The encoder's context policy value (`store.vocab.context`; None: the default, and every
    encoder `engine.encoders.context.ContextEncoder` does not wrap)."""
    return getattr(encoder, "context", None)


def embed_pair(paths: StorePaths, embeddings: EmbeddingStore, model: ModelMeta, encoder,
               data: TaskData, worker: str = IN_PROCESS,
               storage: str | None = None) -> tuple[dict, dict]:
    """Make sure both splits are complete in the store, each split encoded now recorded in the
    runs table (`store.tables.telemetry`, one commit); returns the expected attributes and what this
    call encoded: {sequences, tokens (None where the encoder does not count them), seconds}."""
    expect = embeddings_identity(model, encoder, data.data_hash, storage)
    done = {"sequences": 0, "tokens": 0, "seconds": 0.0}
    runs = []
    for name in ("train", "test"):
        if embeddings.load(model.model_id, data.task_id, name, expect) is not None:
            continue
        if KINDS[model.encoder].imported:     # nothing to embed with: refused, nothing written
            path = embeddings.split_path(model.model_id, data.task_id, name)
            raise not_stored(model.model_id, path, embeddings.inspect(path))
        split = getattr(data, name)
        writer = embeddings.writer(model.model_id, data.task_id, name, split.labels, expect)
        start = time.perf_counter()
        stats = encoder.encode_into(split.sequences, writer)
        stats.setdefault("seconds", round(time.perf_counter() - start, 3))
        done["seconds"] += stats["seconds"]
        writer.finish(stats)
        stats.setdefault("n_encoded", len(split.sequences))
        done["sequences"] += stats["n_encoded"]
        done["tokens"] = (done["tokens"] + stats["n_tokens"]
                          if "n_tokens" in stats and done["tokens"] is not None else None)
        runs.append(run_row(model.model_id, data.task_id, name, stats, data_hash=data.data_hash,
                            worker=worker, engine_version=__version__))
    if runs:
        record_runs(paths, runs, model=model.model_id, task=data.task_id)
    return expect, done


def embedded_event(model_id: str, task_id: str, worker: str, done: dict) -> dict:
    """The `embedded` event of one pair's encoding: where it ran and its throughput."""
    seconds = done["seconds"]

    def rate(n: int | None) -> float | None:
        return round(n / seconds, 1) if n is not None and seconds > 0 else None

    return {"event": "embedded", "model": model_id, "task": task_id, "worker": worker,
            "sequences": done["sequences"], "tokens": done["tokens"],
            "seconds": round(seconds, 3), "sequences_per_s": rate(done["sequences"]),
            "tokens_per_s": rate(done["tokens"])}


def remaining(paths: StorePaths, model_id: str, task_id: str, data_hash: str,
              revision: str | None, precision: str | None,
              todo: tuple[tuple[Protocol, tuple[str, ...]], ...], preset: str | None = None,
              context: str | None = None,
              storage: str | None = None) -> tuple[tuple[Protocol, tuple[str, ...]], ...]:
    """The part of a pair's `todo` the results table still lacks on `data_hash` with the
    model's `revision` at the compute `precision`, recipe `preset`, `context` policy and
    `storage` precision (another process may have finished cells since the plan); checked under
    the pair's lock."""
    done = done_in_table(paths, model_id, task_id, data_hash, revision, precision,
                         seed_counts(p for p, _ in todo), preset, context, storage)
    return tuple((p, left) for p, regimes in todo
                 if (left := tuple(r for r in regimes if (p.hash, r) not in done)))


def loaded(paths: StorePaths, model: ModelMeta, encoder, planned: Mapping[str, str | None],
           precisions: Mapping[str, str | None]) -> dict | None:
    """What a run does once it has built a model's encoder: records the revision it computes
    with as the model's current one (`store.tables.catalogs.register_models`), and returns a
    `warning` event when the plan checked the model's done cells against another revision
    (`planned`, `engine.planner.Plan.revisions`: a random-initialisation control whose weights
    came out otherwise, a file changed since the plan): those cells are stale now; or at
    another compute precision (`precisions`, `engine.planner.Plan.precisions`: a Ray actor on
    another device than the driver's): those are other cells."""
    register_models(paths, [model], {model.model_id: encoder.revision})
    mid = model.model_id
    if mid in planned and planned[mid] != encoder.revision:
        return {"event": "warning", "message": (
            f"model {mid}: loaded at revision {encoder.revision or 'none'}, not "
            f"{planned[mid] or 'none'} as planned; the cells this run computes are of the new "
            "revision, and those it found done are stale now: run the same command again to "
            "compute them")}
    if mid in precisions and precisions[mid] != encoder.precision:
        return {"event": "warning", "message": (
            f"model {mid}: computes in {precision_label(encoder.precision)} here, not in "
            f"{precision_label(precisions[mid])} as planned; its cells are counted at "
            f"{precision_label(encoder.precision)}: run the same command again to see them "
            "done")}
    return None


def provenance_of(suite: Suite, data: TaskData, encoder, storage: str | None = None) -> dict:
    """What every result row of a pair records about where it came from (`storage`: the
    storage precision value of its embeddings)."""
    return {"source": LOCAL, "data_revision": suite.revision, "data_hash": data.data_hash,
            "model_revision": encoder.revision, "compute_precision": encoder.precision,
            "recipe_preset": recipe_preset(encoder), "context_policy": context_policy(encoder),
            "storage_precision": storage,
            "engine_version": __version__}


def cell_events(work: PairWork, computed: bool, done: int, total: int) -> list[dict]:
    """The `cell` events of a finished pair (`done`: cells finished before it)."""
    events = []
    for protocol, regimes in work.todo:
        for regime in regimes:
            done += 1
            events.append({"event": "cell", "model": work.model.model_id,
                           "task": work.task.task_id, "regime": regime,
                           "protocol": protocol.name, "done": done, "total": total,
                           "computed": computed})
    return events


def probe_pair(paths: StorePaths, model_id: str, task_id: str,
               todo: tuple[tuple[Protocol, tuple[str, ...]], ...], expect: dict,
               provenance: dict, probe_device: str | None = None,
               targets: KindTargets | None = None) -> int:
    """Probe one pair from its verified stored embeddings and commit its rows (one commit,
    none for cells another process finished meanwhile), their test predictions first (the
    rows' `pred`, separated from them here); returns the rows written. `targets`: a regression
    or variant task's rows and labels (`engine.probes.kinds`: rows with their values)."""
    store = EmbeddingStore(paths)
    train = store.load(model_id, task_id, "train", expect)
    test = store.load(model_id, task_id, "test", expect)
    if train is None or test is None:
        raise GenebError(f"model {model_id}, task {task_id}: its embeddings changed or were "
                         "damaged while it was being probed; run the same command again")
    if targets is not None:
        return _commit_kind_rows(paths, model_id, task_id, todo, train[0], test[0],
                                 provenance, targets, expect)
    with threadpool_limits(PROBE_THREADS):
        rows = probe_rows(*train, *test, todo, probe_device)
    return _commit(paths, rows, model_id, task_id, todo, provenance,
                   lambda keys: prediction_rows(rows, test[1], **keys))


def _commit(paths: StorePaths, rows: list[dict], model_id: str, task_id: str,
            todo: tuple[tuple[Protocol, tuple[str, ...]], ...], provenance: dict,
            predictions_of: Callable[[dict], list]) -> int:
    """Commit a pair's rows: each stamped with its provenance, model, task and commit time,
    their `pred` taken out into `predictions_of(keys)` (`store.tables.predictions`: the keys
    every prediction row carries, the same values), all in one commit
    (`store.tables.results.append_pair`); the rows written."""
    now = datetime.now(UTC)
    for r in rows:
        r.update(provenance, model=model_id, task=task_id, created_at=now)
    predictions = predictions_of({
        "model": model_id, "task": task_id, "source": provenance["source"],
        "data_hash": provenance["data_hash"],
        "compute_precision": provenance["compute_precision"],
        "recipe_preset": provenance["recipe_preset"],
        "context_policy": provenance["context_policy"],
        "storage_precision": provenance["storage_precision"], "created_at": now})
    for r in rows:
        del r["pred"]
    return append_pair(paths, rows, model=model_id, task=task_id,
                       data_hash=provenance["data_hash"], revision=provenance["model_revision"],
                       seeds=seed_counts(p for p, _ in todo),
                       precision=provenance["compute_precision"],
                       preset=provenance["recipe_preset"], predictions=predictions,
                       context=provenance["context_policy"],
                       storage=provenance["storage_precision"])


def _commit_kind_rows(paths: StorePaths, model_id: str, task_id: str,
                      todo: tuple[tuple[Protocol, tuple[str, ...]], ...], X_train, X_test,
                      provenance: dict, targets: KindTargets, expect: dict) -> int:
    """`probe_pair`'s steps for a task of another kind than classification: its rows and their
    test values (`store.tables.predictions.value_rows`; none for a kind with several targets a
    row, whose rows have a value per target where that table holds one a row), one commit."""
    from engine.probes.kinds import kind_rows  # lazy: sklearn

    with threadpool_limits(PROBE_THREADS):
        rows = kind_rows(X_train, X_test, targets, todo,
                         stored_llr(paths, model_id, task_id, todo, expect))
    return _commit(paths, rows, model_id, task_id, todo, provenance,
                   lambda keys: [] if targets.kind in SEVERAL_TARGETS
                   else value_rows(rows, targets.y_test, **keys))


def wants_llr(todo: tuple[tuple[Protocol, tuple[str, ...]], ...]) -> bool:
    """Whether a pair's `todo` holds variant-llr-v1 (it needs the model's LM head)."""
    return any(p.probe is Probe.LLR for p, _ in todo)


def refuse_headless(work: list[PairWork]) -> None:
    """Refuse, in one line, a model of `work` that variant-llr-v1 would score but that has no
    language-model head (`engine.encoders.lm_head.head_of`; its checkpoint's architectures where
    its config.json is on this machine): what `fill` and its dry run ask before anything else."""
    if scored := {w.model.model_id: w.model for w in work if wants_llr(w.todo)}:
        from engine.encoders.lm_head import head_of, local_architectures  # lazy: torch

        for model in scored.values():
            head_of(model)              # the entry first (a k-mer baseline has no checkpoint)
            head_of(model, local_architectures(model))


def score_llr(embeddings: EmbeddingStore, model: ModelMeta, scorer: Callable[[], object],
              data: TaskData, expect: dict) -> int:
    """Make sure the pair's test LLRs are complete in the store (`engine.encoders.lm_head`,
    resumed from what a killed run wrote; `scorer` gives the model's `Scorer`, asked only when
    some are missing); returns how many variants this call scored."""
    from engine.encoders.lm_head import score_into  # lazy: torch, transformers
    from engine.probes.kinds import LLR_SPLIT, llr_identity  # lazy: sklearn

    identity = llr_identity(expect)
    if embeddings.load(model.model_id, data.task_id, LLR_SPLIT, identity) is not None:
        return 0
    pairs = data.targets.rows_test
    refs = [data.test.sequences[i] for i in pairs[:, 0]]
    alts = [data.test.sequences[i] for i in pairs[:, 1]]
    where = [f"task {data.task_id}, test variant {i + 1}" for i in range(len(refs))]
    lm = scorer()
    writer = embeddings.writer(model.model_id, data.task_id, LLR_SPLIT, data.targets.y_test,
                               identity)
    start = time.perf_counter()
    n = score_into(lm, refs, alts, writer, where)
    writer.finish({"n_encoded": n, "seconds": round(time.perf_counter() - start, 3)})
    return n


def stored_llr(paths: StorePaths, model_id: str, task_id: str,
               todo: tuple[tuple[Protocol, tuple[str, ...]], ...],
               expect: dict) -> np.ndarray | None:
    """The pair's verified cached LLRs where its `todo` needs them (None where not)."""
    from engine.probes.kinds import LLR_SPLIT, llr_identity  # lazy: sklearn

    if not wants_llr(todo):
        return None
    stored = EmbeddingStore(paths).load(model_id, task_id, LLR_SPLIT, llr_identity(expect))
    if stored is None:
        raise GenebError(f"model {model_id}, task {task_id}: its LLRs changed or were damaged "
                         "while it was being probed; run the same command again")
    return stored[0][:, 0]
