"""`fill`: compute only the missing cells, embedding each (model, task) once.

Order of work: validate every task the plan may touch and check every model that needs work
(a malformed file or a model that cannot run stops the run before the store changes), plan
against the store, then per model load the encoder once and per task get
the embeddings (reused from Zarr when complete, else computed and streamed into it), probe every
missing regime of the pair and write its rows as one atomic fragment. Probing runs inline
(`jobs=1`) or in worker processes (`jobs>1`, one BLAS thread each) while the main process embeds
the next pair.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from engine import __version__
from engine.data import TaskData
from engine.encoders import build_encoder, preflight
from engine.planner import PairWork, Plan, plan
from engine.probe import probe_cell
from engine.suites import Suite
from store.catalog import ModelMeta, TaskMeta, register_models, register_tasks
from store.embeddings import EmbeddingStore
from store.paths import StorePaths
from store.protocol import GENEB_V1, Protocol
from store.results import safe_name, write_fragment

Event = Callable[[dict], None]


@dataclass(frozen=True)
class FillOptions:
    protocols: tuple[Protocol, ...] = (GENEB_V1,)
    jobs: int = 1
    probe_device: str | None = None                       # batched solvers: cuda or cpu
    encoder_options: dict = field(default_factory=dict)  # device, batch_size, trust_remote_code


def _expect(model: ModelMeta, encoder, data: TaskData) -> dict:
    """The embeddings' identity and provenance, stored as the task group's attributes."""
    return {"model_id": model.model_id, "model_revision": encoder.revision,
            "encoder": encoder.settings, "data_hash": data.data_hash, "dtype": "float32",
            "engine_version": __version__}


def embed_pair(embeddings: EmbeddingStore, model: ModelMeta, encoder, data: TaskData) -> dict:
    """Make sure both splits are complete in the store; returns the expected attributes."""
    expect = _expect(model, encoder, data)
    for name in ("train", "test"):
        if embeddings.load(model.model_id, data.task_id, name, expect) is not None:
            continue
        split = getattr(data, name)
        writer = embeddings.writer(model.model_id, data.task_id, name, split.labels, expect)
        stats = encoder.encode_into(split.sequences, writer)
        writer.group.attrs.update({"n_truncated": int(stats.get("n_truncated", 0))})
        writer.finish()
    return expect


def probe_rows(X_train, y_train, X_test, y_test,
               todo: tuple[tuple[Protocol, tuple[str, ...]], ...],
               probe_device: str | None = None) -> list[dict]:
    """Rows of every (protocol, regimes) of one pair: geneb-v1 (scikit-learn) protocols exactly
    as the official harness, variants with the batched solvers (protocols that need the same
    regimes share one call, so a C sweep shares its batches and warm starts)."""
    rows: list[dict] = []
    variants: dict[tuple[str, ...], list[Protocol]] = {}
    for protocol, regimes in todo:
        if protocol.solver == GENEB_V1.solver:
            rows += _tagged(probe_cell(X_train, y_train, X_test, y_test, regimes,
                                       protocol.seeds, protocol), protocol)
        else:
            variants.setdefault(regimes, []).append(protocol)
    if variants:
        from engine.probes.cell import run_variant_cells

        for regimes, protocols in variants.items():
            per_protocol = run_variant_cells(X_train, y_train, X_test, y_test, protocols,
                                             regimes, protocols[0].seeds, probe_device)
            for protocol, found in zip(protocols, per_protocol, strict=True):
                rows += _tagged(found, protocol)
    return rows


def _tagged(rows: list[dict], protocol: Protocol) -> list[dict]:
    for r in rows:
        r.update(protocol=protocol.name, protocol_hash=protocol.hash)
    return rows


def probe_pair(root: str, model_id: str, task_id: str,
               todo: tuple[tuple[Protocol, tuple[str, ...]], ...], expect: dict,
               provenance: dict, probe_device: str | None = None) -> int:
    """Probe one pair from its stored embeddings and write its rows as one fragment."""
    paths = StorePaths(Path(root))
    store = EmbeddingStore(paths)
    X_train, y_train = store.load(model_id, task_id, "train", expect)
    X_test, y_test = store.load(model_id, task_id, "test", expect)
    rows = probe_rows(X_train, y_train, X_test, y_test, todo, probe_device)
    now = datetime.now(UTC)
    for r in rows:
        r.update(provenance, model=model_id, task=task_id, created_at=now)
    write_fragment(paths, rows, f"local/{safe_name(model_id)}")
    return len(rows)


def _init_worker() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def validate_tasks(suite: Suite, tasks: list[TaskMeta]) -> dict[str, str]:
    """Load every task once (raising on the first malformed file); their data hashes."""
    return {t.task_id: suite.load(t.task_id).data_hash for t in tasks}


def run_fill(paths: StorePaths, suite: Suite, models: list[ModelMeta], tasks: list[TaskMeta],
             regimes: list[str], options: FillOptions, on_event: Event) -> Plan:
    hashes = validate_tasks(suite, tasks)
    the_plan = plan(paths, models, tasks, regimes, list(options.protocols), hashes)
    on_event({"event": "plan", "cells_total": the_plan.cells_total,
              "cells_missing": the_plan.cells_missing, "pairs": len(the_plan.work)})
    if not the_plan.work:
        return the_plan
    for model in {w.model.model_id: w.model for w in the_plan.work}.values():
        preflight(model, **options.encoder_options)
    load = lru_cache(maxsize=4)(suite.load)
    embeddings = EmbeddingStore(paths)
    pool = None
    if options.jobs > 1:
        pool = ProcessPoolExecutor(options.jobs, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_init_worker)
    pending: list[tuple[Future | int, PairWork]] = []
    done = 0

    def report(count: int, work: PairWork) -> None:
        nonlocal done
        for protocol, regimes in work.todo:
            for regime in regimes:
                done += 1
                on_event({"event": "cell", "model": work.model.model_id,
                          "task": work.task.task_id, "regime": regime,
                          "protocol": protocol.name, "done": done,
                          "total": the_plan.cells_missing})

    try:
        for model in models:
            model_work = [w for w in the_plan.work if w.model is model]
            if not model_work:
                continue
            encoder = build_encoder(model, **options.encoder_options)
            register_models(paths, [model])
            register_tasks(paths, tasks)
            for work in model_work:
                data = load(work.task.task_id)
                expect = embed_pair(embeddings, model, encoder, data)
                provenance = {
                    "source": "local", "data_revision": suite.revision,
                    "data_hash": data.data_hash, "model_revision": encoder.revision,
                    "engine_version": __version__}
                args = (str(paths.root), model.model_id, data.task_id, work.todo, expect,
                        provenance, options.probe_device)
                if pool is None:
                    report(probe_pair(*args), work)
                else:
                    pending.append((pool.submit(probe_pair, *args), work))
                    while pending and pending[0][0].done():
                        fut, w = pending.pop(0)
                        report(fut.result(), w)
        for fut, w in pending:
            report(fut.result(), w)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return the_plan

