"""What runs on the Ray cluster: the embedding actor's body and the probe task's.

Plain Python, made remote by `engine.cluster.executor` (so this module imports without Ray).
Both work under the store's rules exactly as the local executor does: the pair lock around the
work, the cells still missing checked again under it, the rows committed per pair after their
predictions (`engine.pairs.probe_pair`: the commit lock and its done-check), embeddings resumed
from their done flags after a kill.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache

from engine.data import KindTargets
from engine.encoders import EncoderOptions, build_encoder, preflight, told_storage
from engine.pairs import (
    context_policy,
    embed_pair,
    embedded_event,
    loaded,
    probe_pair,
    provenance_of,
    recipe_preset,
    remaining,
    score_llr,
    wants_llr,
)
from engine.suites import Suite
from store.catalog import ModelMeta
from store.embeddings import EmbeddingStore
from store.failpoints import reach
from store.locks import pair_lock, try_acquire
from store.paths import StorePaths
from store.vocab.errors import GenebError

Todo = tuple   # ((Protocol, (regime, ...)), ...), as `engine.planner.PairWork.todo`


def _gpu_ids() -> list[str]:
    import ray  # lazy: ray

    return [str(g) for g in ray.get_gpu_ids()]


class EmbedWorker:
    """One embedding actor: its model's weights are loaded once (at its first pair, before that
    pair's lock), then `embed` handles one pair per call. `gpus`: the GPUs Ray gave it (0: embeds on
    CPU; more than 1: the model is spread over them)."""

    def __init__(self, paths: StorePaths, suite: Suite, model: ModelMeta, options: EncoderOptions,
                 gpus: float, planned: Mapping[str, str | None],
                 precisions: Mapping[str, str | None]):
        self.paths = paths
        self.suite, self.model = suite, model
        self.planned = planned       # the plan's revisions (`engine.planner.Plan.revisions`)
        self.precisions = precisions     # and precisions (`engine.planner.Plan.precisions`)
        self.options = (replace(options, device="cpu") if gpus == 0
                        else replace(options, spread=gpus > 1))
        self.embeddings = EmbeddingStore(self.paths)
        self.load = lru_cache(maxsize=2)(suite.load)
        self.encoder = None
        self.scorer = None              # its LM head, loaded at the first pair that needs it
        self.pending: list[dict] = []   # the load's events, reported with the next embedded pair
        ids = _gpu_ids() if gpus else []
        self.worker = (f"{socket.gethostname()} gpu {','.join(ids)}" if ids
                       else f"{socket.gethostname()} cpu {os.getpid()}")

    def embed(self, task_id: str, todo: Todo) -> dict:
        """Embed one pair under its lock: {"status": "busy"} (another process holds it),
        "done" (nothing left to compute) or "embedded" with what its probe task needs and the
        events to report."""
        model_id = self.model.model_id
        encoder = self._encoder()
        lock = pair_lock(self.paths, model_id, task_id)
        if not try_acquire(lock):
            return {"status": "busy"}
        try:
            data = self.load(task_id)
            storage = told_storage(self.model, self.options)
            todo = remaining(self.paths, model_id, task_id, data.data_hash,
                             self.planned.get(model_id), encoder.precision, todo,
                             recipe_preset(encoder), context_policy(encoder), storage)
            if not todo:
                return {"status": "done"}
            events, self.pending = self.pending, []
            expect, encoded = embed_pair(self.paths, self.embeddings, self.model, encoder,
                                         data, self.worker, storage)
            if encoded["sequences"]:
                events.append(embedded_event(model_id, task_id, self.worker, encoded))
            if wants_llr(todo):         # where the local executor scores them: before the probe
                score_llr(self.embeddings, self.model, self._scorer, data, expect)
            return {"status": "embedded", "todo": todo, "expect": expect,
                    "data_hash": data.data_hash,
                    "provenance": provenance_of(self.suite, data, encoder, storage),
                    "targets": data.targets, "events": events}
        finally:
            lock.release()

    def _encoder(self):
        """The model's encoder, built at the actor's first pair and before its lock: the checks
        of the device the model embeds on run here, where it runs (`preflight`; the driver ran
        only the others), and a model that cannot be built leaves no lock file. A refusal
        names the actor. Loading records the revision it computes with (`engine.pairs.loaded`)."""
        if self.encoder is None:
            try:
                preflight(self.model, self.options)
                self.encoder = build_encoder(self.model, self.options)
            except GenebError as exc:
                raise GenebError(f"{exc} (on the Ray actor {self.worker})") from None
            if event := loaded(self.paths, self.model, self.encoder, self.planned,
                               self.precisions):
                self.pending.append(event)
        return self.encoder


    def _scorer(self):
        """The model's LM head (`engine.encoders.lm_head.load_scorer`), loaded once."""
        from engine.encoders.lm_head import load_scorer  # lazy: torch, transformers

        if self.scorer is None:
            self.scorer = load_scorer(self.model, self._encoder())
        return self.scorer


def probe_task(paths: StorePaths, model_id: str, task_id: str, data_hash: str, todo: Todo,
               expect: dict, provenance: dict, probe_device: str,
               targets: KindTargets | None = None) -> int:
    """Probe one pair whose embeddings are complete and commit its rows, under its lock (waited
    for: the process holding it is finishing the pair); returns the rows written (0 when
    another process finished them meanwhile). `targets`: a regression or variant task's rows
    and labels (`engine.data.KindTargets`), probed by the local executor's code
    (`engine.pairs.probe_pair`)."""
    with pair_lock(paths, model_id, task_id):
        todo = remaining(paths, model_id, task_id, data_hash, provenance["model_revision"],
                         provenance["compute_precision"], todo, provenance["recipe_preset"],
                         provenance["context_policy"], provenance["storage_precision"])
        if not todo:
            return 0
        reach("probe-task")
        return probe_pair(paths, model_id, task_id, todo, expect, provenance, probe_device,
                          targets)
