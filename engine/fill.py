"""`fill`: compute only the missing cells, embedding each (model, task) once.

Order of work: validate every task the plan may touch and check every model that needs work
(a malformed file or a model that cannot run stops the run before the store changes), plan
against the store, then, holding the store lock shared (`store.locks`) and after removing the
temporary files of dead writers (`store.sweep`), work through the pairs. Each pair is taken
under its lock (a pair another process holds is tried again later, usually to find it done):
its remaining cells are checked again, its embeddings reused from Zarr when complete and
verified, else computed and streamed into it, every missing regime probed and its rows
committed as ONE commit of the results table, except cells done meanwhile (`append_pair`),
after their test-set predictions are committed to the predictions table (`store.predictions`).
Probing runs inline (`jobs=1`) or in worker processes that die with their parent (`jobs>1`,
one BLAS thread each) while the main process embeds the next pair. At the end the touched
partitions are compacted and old files vacuumed.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from filelock import FileLock

from engine import __version__
from engine.data import TaskData
from engine.encoders import EncoderOptions, build_encoder, preflight
from engine.planner import PairWork, Plan, plan
from engine.probes import RUNNERS, runner
from engine.suites import Suite
from engine.workers import init_probe_worker
from store.catalog import LetterCounts, ModelMeta, TaskMeta, register_models, register_tasks
from store.embeddings import EmbeddingStore
from store.errors import GenebError
from store.locks import StoreSession, pair_lock, try_acquire
from store.paths import StorePaths
from store.predictions import PREDICTIONS, prediction_rows
from store.protocol import GENEB_V1, Protocol
from store.results import append_pair, compact, done_in_table, open_for_writing, vacuum
from store.sweep import sweep

Event = Callable[[dict], None]
_WAIT_S = 0.2   # how long to wait for a busy pair or a probe worker before looking again


@dataclass(frozen=True)
class FillOptions:
    protocols: tuple[Protocol, ...] = (GENEB_V1,)
    jobs: int = 1
    probe_device: str | None = None                       # batched solvers: cuda or cpu
    encoder: EncoderOptions = EncoderOptions()           # device, batch size, remote-code opt-in


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
        writer.finish(encoder.encode_into(split.sequences, writer))
    return expect


def probe_rows(X_train, y_train, X_test, y_test,
               todo: tuple[tuple[Protocol, tuple[str, ...]], ...],
               probe_device: str | None = None) -> list[dict]:
    """Rows of every (protocol, regimes) of one pair, each protocol fitted by its solver's runner
    (`engine.probes.RUNNERS`, in that order): geneb-v1 exactly as the official harness, variants
    with the batched solvers. Protocols of one solver that need the same regimes share one call,
    so a C sweep shares its batches and warm starts. Each row carries its test predictions
    (`pred`), which `probe_pair` stores apart."""
    order = {solver: i for i, solver in enumerate(RUNNERS)}   # an unknown solver: last, refused
    calls: dict[tuple[str, tuple[str, ...]], list[Protocol]] = {}
    for protocol, regimes in sorted(todo, key=lambda item: order.get(item[0].solver, len(order))):
        calls.setdefault((protocol.solver, regimes), []).append(protocol)
    rows: list[dict] = []
    for (solver, regimes), protocols in calls.items():
        per_protocol = runner(solver)(X_train, y_train, X_test, y_test, protocols, regimes,
                                      probe_device)
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
    """Probe one pair from its verified stored embeddings and commit its rows (one commit,
    none for cells another process finished meanwhile), their test predictions first (the
    rows' `pred`, separated from them here); returns the rows written."""
    paths = StorePaths(Path(root))
    store = EmbeddingStore(paths)
    train = store.load(model_id, task_id, "train", expect)
    test = store.load(model_id, task_id, "test", expect)
    if train is None or test is None:
        raise GenebError(f"model {model_id}, task {task_id}: its embeddings changed or were "
                         "damaged while it was being probed; run the same command again")
    rows = probe_rows(*train, *test, todo, probe_device)
    now = datetime.now(UTC)
    for r in rows:
        r.update(provenance, model=model_id, task=task_id, created_at=now)
    predictions = prediction_rows(rows, test[1], model=model_id, task=task_id,
                                  source=provenance["source"],
                                  data_hash=provenance["data_hash"], created_at=now)
    for r in rows:
        del r["pred"]
    return append_pair(paths, rows, model=model_id, task=task_id,
                       data_hash=provenance["data_hash"],
                       seeds={p.hash: len(p.seeds) for p, _ in todo}, predictions=predictions)


@dataclass(frozen=True)
class TaskChecks:
    """What loading every task of a run found: each one's data hash and letter counts."""

    hashes: dict[str, str]
    letters: dict[str, LetterCounts]


def validate_tasks(suite: Suite, tasks: list[TaskMeta], on_event: Event) -> TaskChecks:
    """Load every task once (raising on the first malformed file). Each file's warnings
    (skipped rows) become one `warning` event."""
    checks = TaskChecks({}, {})
    for t in tasks:
        data = suite.load(t.task_id)
        for message in data.warnings:
            on_event({"event": "warning", "message": message})
        checks.hashes[t.task_id] = data.data_hash
        checks.letters[t.task_id] = data.letters
    return checks


def run_fill(paths: StorePaths, suite: Suite, models: list[ModelMeta], tasks: list[TaskMeta],
             regimes: list[str], options: FillOptions, on_event: Event) -> Plan:
    """Validate, plan, then compute every missing pair (see the module docstring). Events:
    `warning`, `plan`, one `cell` per planned cell (`computed` False when another process
    computed it meanwhile) and, from the caller, `done`."""
    checks = validate_tasks(suite, tasks, on_event)
    the_plan = plan(paths, models, tasks, regimes, list(options.protocols), checks.hashes)
    on_event({"event": "plan", "cells_total": the_plan.cells_total,
              "cells_missing": the_plan.cells_missing, "pairs": len(the_plan.work)})
    for model in {w.model.model_id: w.model for w in the_plan.work}.values():
        preflight(model, options.encoder)
    if "GENEB_FAILPOINT" in os.environ:    # crash tests: a point met in a worker kills fill
        os.environ.setdefault("GENEB_FAILPOINT_PID", str(os.getpid()))
    with StoreSession(paths) as session:
        open_for_writing(paths)
        open_for_writing(paths, PREDICTIONS)
        sweep(paths, session)
        if suite.subsample:   # a subsample's hashes are not the task's current data
            register_tasks(paths, tasks)
        else:
            register_tasks(paths, tasks, checks.hashes, checks.letters)
        if the_plan.work:
            touched = _PairRunner(paths, suite, the_plan, options, on_event).run()
            compact(paths, {("local", m) for m in touched})
            compact(paths, {("local", m) for m in touched}, PREDICTIONS)
            vacuum(paths)
            vacuum(paths, table=PREDICTIONS)
    return the_plan


class _PairRunner:
    """Works through the plan's pairs under their locks: a pair another process holds is
    skipped for now and tried again later (by then usually done)."""

    def __init__(self, paths: StorePaths, suite: Suite, the_plan: Plan, options: FillOptions,
                 on_event: Event):
        self.paths, self.suite, self.plan = paths, suite, the_plan
        self.options, self.on_event = options, on_event
        self.load = lru_cache(maxsize=4)(suite.load)
        self.embeddings = EmbeddingStore(paths)
        self.encoder: tuple[str, object] | None = None   # the loaded model's (id, encoder)
        self.done = 0

    def run(self) -> set[str]:
        pool = None
        if self.options.jobs > 1:
            pool = ProcessPoolExecutor(
                self.options.jobs, mp_context=multiprocessing.get_context("spawn"),
                initializer=init_probe_worker, initargs=(os.getpid(),))
        waiting = list(self.plan.work)
        running: list[tuple[Future, PairWork, FileLock]] = []
        touched: set[str] = set()
        try:
            while waiting or running:
                started = False
                for work in list(waiting):
                    if len(running) >= 2 * self.options.jobs:
                        break
                    lock = pair_lock(self.paths, work.model.model_id, work.task.task_id)
                    if not try_acquire(lock):
                        continue
                    waiting.remove(work)
                    started = True
                    future = self._start(work, lock, pool)
                    touched.add(work.model.model_id)
                    if future is not None:
                        running.append((future, work, lock))
                    self._finish(running, wait=False)
                if not started:
                    if running:
                        self._finish(running, wait=True)
                    elif waiting:
                        time.sleep(_WAIT_S)   # every pair left is held by another process
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            for _, _, lock in running:
                lock.release()
        return touched

    def _start(self, work: PairWork, lock: FileLock, pool) -> Future | None:
        """Embed the pair and probe it (inline, or submitted to `pool`) under `lock`."""
        try:
            data = self.load(work.task.task_id)
            done = done_in_table(self.paths, work.model.model_id, work.task.task_id,
                                 data.data_hash, {p.hash: len(p.seeds) for p, _ in work.todo})
            todo = tuple((p, left) for p, regimes in work.todo
                         if (left := tuple(r for r in regimes if (p.hash, r) not in done)))
            if not todo:
                lock.release()
                self._report(work, computed=False)
                return None
            encoder = self._encoder(work.model)
            expect = embed_pair(self.embeddings, work.model, encoder, data)
            provenance = {"source": "local", "data_revision": self.suite.revision,
                          "data_hash": data.data_hash, "model_revision": encoder.revision,
                          "engine_version": __version__}
            args = (str(self.paths.root), work.model.model_id, data.task_id, todo, expect,
                    provenance, self.options.probe_device)
            if pool is not None:
                return pool.submit(probe_pair, *args)
            probe_pair(*args)
        except BaseException:
            lock.release()
            raise
        lock.release()
        self._report(work, computed=True)
        return None

    def _finish(self, running: list, wait: bool) -> None:
        """Collect finished probe futures (`wait`: at least one), releasing their locks."""
        if wait:
            futures_wait([f for f, _, _ in running], timeout=_WAIT_S,
                         return_when=FIRST_COMPLETED)
        for item in [r for r in running if r[0].done()]:
            running.remove(item)
            future, work, lock = item
            lock.release()
            future.result()
            self._report(work, computed=True)

    def _encoder(self, model: ModelMeta):
        if self.encoder is None or self.encoder[0] != model.model_id:
            self.encoder = None   # free the previous model before loading the next
            self.encoder = (model.model_id, build_encoder(model, self.options.encoder))
            register_models(self.paths, [model])
        return self.encoder[1]

    def _report(self, work: PairWork, computed: bool) -> None:
        for protocol, regimes in work.todo:
            for regime in regimes:
                self.done += 1
                self.on_event({"event": "cell", "model": work.model.model_id,
                               "task": work.task.task_id, "regime": regime,
                               "protocol": protocol.name, "done": self.done,
                               "total": self.plan.cells_missing, "computed": computed})
