"""`fill`: compute only the missing cells, embedding each (model, task) once.

Order of work: validate every task the plan may touch and check every model that needs work
(a malformed file or a model that cannot run stops the run before the store changes), plan
against the store, then, holding the store lock shared (`store.locks`) and after removing the
temporary files of dead writers (`store.sweep`), work through the pairs. Each pair is taken
under its lock (a pair another process holds is tried again later, usually to find it done):
its remaining cells are checked again, its embeddings reused from Zarr when complete and
verified, else computed and streamed into it, every missing regime probed and its rows
committed as ONE commit of the results table, except cells done meanwhile (`append_pair`),
after their test-set predictions are committed to the predictions table
(`store.tables.predictions`).
The local executor (`_PairRunner`) probes inline (`jobs=1`) or in worker processes that die
with their parent (`jobs>1`) while the main process embeds the next pair; with
`FillOptions.cluster` the Ray executor (`engine.cluster`) runs the same steps
(`engine.pairs`) on a cluster. At the end the touched partitions are compacted and old files
vacuumed, here and only here. Imported embeddings are held for the whole run
(`engine.embedding_import.imports_unchanged`): no import of them runs beside it.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Protocol as Interface

from filelock import FileLock

from engine.cluster import ClusterOptions
from engine.cluster.executor import RayExecutor
from engine.data import SPLITS, Sample, TaskData
from engine.embedding_import import check_imported, imports_unchanged
from engine.encoders import EncoderOptions, build_encoder, preflight
from engine.encoders.checkpoint_checks import SAMPLE_SEQUENCES
from engine.encoders.pins import record as record_trust
from engine.encoders.pins import trusted_commits
from engine.pairs import (
    cell_events,
    embed_pair,
    embedded_event,
    loaded,
    probe_pair,
    provenance_of,
    refuse_headless,
    remaining,
    score_llr,
    wants_llr,
)
from engine.planner import PairWork, Plan, plan
from engine.space import refuse_when_full, space_needed
from engine.suites import Suite
from engine.workers import init_probe_worker, probe_jobs
from store.catalog import LetterCounts, ModelMeta, TaskMeta, TaskProfile
from store.csv_in import RowProblems
from store.embeddings import EmbeddingStore
from store.locks import StoreSession, pair_lock, try_acquire
from store.paths import StorePaths
from store.sweep import sweep
from store.tables.catalogs import open_catalogs, register_tasks
from store.tables.data_files import RESULTS
from store.tables.predictions import PREDICTIONS
from store.tables.results import compact, open_for_writing, vacuum
from store.tables.telemetry import RUNS
from store.vocab.errors import GenebError
from store.vocab.executors import IN_PROCESS
from store.vocab.protocol import GENEB_V1, Protocol
from store.vocab.sources import LOCAL

Event = Callable[[dict], None]


class Watch(Interface):
    """What follows a run from outside (`engine.eta.EtaWatch`): each task as it is read, then
    the plan, once the probe workers are known."""

    def see(self, data: TaskData) -> None: ...

    def planned(self, paths: StorePaths, the_plan: Plan, hashes: dict[str, str],
                options: FillOptions) -> None: ...
_WAIT_S = 0.2   # how long to wait for a busy pair or a probe worker before looking again


@dataclass(frozen=True)
class FillOptions:
    protocols: tuple[Protocol, ...] = (GENEB_V1,)
    jobs: int | None = 1                        # None: `--jobs auto` (engine.workers.probe_jobs)
    probe_device: str | None = None                       # batched solvers: cuda or cpu
    encoder: EncoderOptions = EncoderOptions()           # device, batch size, remote-code opt-in
    cluster: ClusterOptions | None = None                # set: the Ray executor (engine.cluster)
    ignore_free_space: bool = False     # start even when the embeddings may not fit the disk


@dataclass(frozen=True)
class TaskChecks:
    """What loading every task of a run found: each one's data hash, letter counts and
    profile, and a sample of their sequences (what a model's tokenizer is checked on)."""

    hashes: dict[str, str]
    letters: dict[str, LetterCounts]
    profiles: dict[str, TaskProfile]
    sizes: dict[str, int]              # sequences (train + test): the Ray executor's order
    sample: Sample                     # SAMPLE_SEQUENCES of them (`engine.encoders.preflight`)
    splits: dict[tuple[str, str], int] = field(default_factory=dict)   # (task, split) -> rows


def validate_tasks(suite: Suite, tasks: list[TaskMeta], on_event: Event,
                   seen: Callable[[TaskData], None] | None = None) -> TaskChecks:
    """Load every task once; the problems of every file that cannot be used are raised
    together at the end (`store.csv_in.RowProblems`, one line each). Each file's warnings
    (skipped rows) become one `warning` event; `seen` is shown every task read (what
    `fill --dry-run` counts)."""
    checks = TaskChecks({}, {}, {}, {}, Sample(SAMPLE_SEQUENCES, of=f"suite {suite.name}"))
    problems: list[GenebError] = []
    for t in tasks:
        try:
            data = suite.load(t.task_id)
        except GenebError as exc:
            problems.append(exc)
            continue
        for message in data.warnings:
            on_event({"event": "warning", "message": message})
        if seen is not None:
            seen(data)
        checks.hashes[t.task_id] = data.data_hash
        checks.letters[t.task_id] = data.letters
        checks.profiles[t.task_id] = data.profile
        checks.sizes[t.task_id] = len(data.train.sequences) + len(data.test.sequences)
        for name in SPLITS:
            checks.splits[t.task_id, name] = len(getattr(data, name).sequences)
        checks.sample.add(data.train.sequences)
        checks.sample.add(data.test.sequences)
    if problems:
        raise RowProblems.merged(problems)
    return checks


def run_fill(paths: StorePaths, suite: Suite, models: list[ModelMeta], tasks: list[TaskMeta],
             regimes: list[str], options: FillOptions, on_event: Event,
             watch: Watch | None = None) -> Plan:
    """Validate, plan, then compute every missing pair (see the module docstring). Events:
    `warning`, `plan`, one `cell` per planned cell (`computed` False when another process
    computed it meanwhile) and, from the caller, `done`. `watch` sees each task and the plan
    (the ETA)."""
    with imports_unchanged(paths, models):    # no import replaces them while it runs
        return _run_fill(paths, suite, models, tasks, regimes, options, on_event, watch)


def _run_fill(paths: StorePaths, suite: Suite, models: list[ModelMeta], tasks: list[TaskMeta],
              regimes: list[str], options: FillOptions, on_event: Event,
              watch: Watch | None) -> Plan:
    checks = validate_tasks(suite, tasks, on_event, watch.see if watch else None)
    models, trusted = trusted_commits(paths, models, options.encoder.trust_remote_code)
    the_plan = plan(paths, models, tasks, regimes, list(options.protocols), checks.hashes,
                    options.encoder, suite.kinds)
    check_imported(paths, the_plan.work, checks.hashes)
    running = {w.model.model_id: w.model for w in the_plan.work}
    for model in running.values():      # the Ray driver: the device's checks run on the actors
        preflight(model, options.encoder, device=options.cluster is None, sample=checks.sample)
    refuse_headless(the_plan.work)
    if not options.ignore_free_space:     # before anything is written
        refuse_when_full(space_needed(paths, the_plan.work, checks.splits, checks.hashes,
                                      the_plan.revisions, options.encoder))
    on_event({"event": "plan", "cells_total": the_plan.cells_total,
              "cells_missing": the_plan.cells_missing, "pairs": len(the_plan.work),
              **({"other_kinds": n} if (n := len(suite.other_kinds(tasks))) else {})})
    if options.cluster is None:             # the Ray executor has rules of its own
        jobs, line = probe_jobs(options.jobs, max(checks.sizes.values(), default=0))
        if line is not None:
            on_event({"event": "jobs", "jobs": jobs, "message": line})
        options = replace(options, jobs=jobs)
    if watch is not None:
        watch.planned(paths, the_plan, checks.hashes, options)
    if "GENEB_FAILPOINT" in os.environ:    # crash tests: a point met in a worker kills fill
        os.environ.setdefault("GENEB_FAILPOINT_PID", str(os.getpid()))
    executor = _executor(paths, suite, the_plan, options, on_event, checks) \
        if the_plan.work else nullcontext()
    # The executor first: a cluster that cannot be reached stops the run before any write.
    with executor, StoreSession(paths) as session:
        open_for_writing(paths)
        open_for_writing(paths, PREDICTIONS)
        open_for_writing(paths, RUNS)
        open_catalogs(paths)        # a model that then fails to load leaves both catalogs
        sweep(paths, session)
        suite.materialize()
        if suite.subsample:   # a subsample's hashes are not the task's current data
            register_tasks(paths, tasks)
        else:
            register_tasks(paths, tasks, checks.hashes, checks.letters, checks.profiles)
        record_trust(paths, [t for t in trusted if t.model.model_id in running], on_event)
        if the_plan.work:
            touched = executor.run()
            for table in (RESULTS, PREDICTIONS, RUNS):
                compact(paths, {(LOCAL, m) for m in touched}, table)
                vacuum(paths, table=table)
    return the_plan


def _executor(paths: StorePaths, suite: Suite, the_plan: Plan, options: FillOptions,
              on_event: Event, checks: TaskChecks):
    """The executor of a run (a context: entered before the store is written to, it connects
    and, when left, releases what it holds); `run()` works through the plan."""
    if options.cluster is None:
        return _PairRunner(paths, suite, the_plan, options, on_event)

    return RayExecutor(paths, suite, the_plan, options.encoder, options.probe_device,
                       options.cluster, on_event, checks.sizes)


class _PairRunner:
    """Works through the plan's pairs under their locks: a pair another process holds is
    skipped for now and tried again later (by then usually done). Its worker processes live
    within `run`, so entering and leaving it holds nothing."""

    def __init__(self, paths: StorePaths, suite: Suite, the_plan: Plan, options: FillOptions,
                 on_event: Event):
        self.paths, self.suite, self.plan = paths, suite, the_plan
        self.options, self.on_event = options, on_event
        self.load = lru_cache(maxsize=4)(suite.load)
        self.embeddings = EmbeddingStore(paths)
        self.encoder: tuple[str, object] | None = None   # the loaded model's (id, encoder)
        self.scorer: tuple[str, object] | None = None    # its LM head's (id, Scorer)
        self.built: set[str] = set()                     # the models built once in this run
        self.models = {w.model.model_id: w.model for w in the_plan.work}
        self.done = 0

    def __enter__(self) -> _PairRunner:
        return self

    def __exit__(self, *exc) -> None:
        self.encoder = self.scorer = None

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
                    if work.model.model_id not in self.built:
                        self._encoder(work.model)   # before any lock of it: see `_encoder`
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
            mid = work.model.model_id
            todo = remaining(self.paths, mid, data.task_id, data.data_hash,
                             self.plan.revisions.get(mid), self.plan.precisions.get(mid),
                             work.todo, self.plan.presets.get(mid), self.plan.contexts.get(mid),
                             self.plan.storages.get(mid))
            if not todo:
                lock.release()
                self._report(work, computed=False)
                return None
            encoder = self._encoder(work.model)
            expect, encoded = embed_pair(self.paths, self.embeddings, work.model, encoder,
                                         data, storage=self.plan.storages.get(mid))
            if encoded["sequences"]:
                self.on_event(embedded_event(work.model.model_id, data.task_id, IN_PROCESS,
                                             encoded))
            if wants_llr(todo):
                score_llr(self.embeddings, work.model, self._scorer, data, expect)
            args = (self.paths, work.model.model_id, data.task_id, todo, expect,
                    provenance_of(self.suite, data, encoder, self.plan.storages.get(mid)),
                    self.options.probe_device,
                    data.targets)
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
        """The model's encoder (the previous model's freed first). A model is built the first
        time before the lock of any of its pairs is taken, so that one that cannot be built (a
        bad extractor class) leaves no lock file."""
        if self.encoder is None or self.encoder[0] != model.model_id:
            self.encoder = None   # free the previous model before loading the next
            self.encoder = (model.model_id, build_encoder(model, self.options.encoder))
            self.built.add(model.model_id)
            if event := loaded(self.paths, model, self.encoder[1], self.plan.revisions,
                               self.plan.precisions):
                self.on_event(event)
        return self.encoder[1]

    def _scorer(self):
        """The loaded model's LM head (`engine.encoders.lm_head.load_scorer`), loaded once."""
        from engine.encoders.lm_head import load_scorer  # lazy: torch, transformers

        model_id, encoder = self.encoder
        if self.scorer is None or self.scorer[0] != model_id:
            self.scorer = None
            self.scorer = (model_id, load_scorer(self.models[model_id], encoder))
        return self.scorer[1]

    def _report(self, work: PairWork, computed: bool) -> None:
        for event in cell_events(work, computed, self.done, self.plan.cells_missing):
            self.on_event(event)
        self.done += work.cells
