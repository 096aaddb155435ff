"""The Ray driver of `fill --executor ray`: connects, places the models, hands out the pairs
and reports, then leaves the cluster as it found it.

- **Connect.** With no address a new local Ray instance is started (even where this machine
  runs a cluster already) and shut down at the end; with one (`auto`, `HOST:PORT`,
  `ray://HOST:PORT`) the run joins that cluster; a process that is already connected
  (`ray.init` done) keeps its connection. The driver's `GENEB_*` settings go
  to every worker (`runtime_env`).
- **Embed.** Per model, `engine.cluster.placement` decides the GPUs per actor and the actors;
  each actor pulls its model's pairs, largest task first, at most two calls queued so it never
  waits for the driver. A pair another process holds comes back "busy" and is offered again
  after `_BUSY_S`. An actor is killed once its model has nothing left, freeing its GPU for the
  actors that wait in Ray's queue.
- **Probe.** A pair whose embeddings are complete becomes a probe task at once, on
  `--probe-cpus` CPUs: GPUs never wait for probes.
- **Faults.** A dead actor is restarted and its calls retried (`MAX_RETRIES` each; an embedding
  resumes from its done flags), a failed probe task is retried (`MAX_RETRIES`); beyond that the
  run stops with the error. Ctrl-C (or any error) cancels every task and kills every actor: the
  store keeps what was committed, and a rerun computes only what is missing.
- **Events.** The local executor's (`plan`, `cell`, `embedded`), with `executor` (the cluster)
  and one `placement` per model first.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.cluster import ClusterOptions, require_ray
from engine.cluster.placement import place
from engine.cluster.workers import EmbedWorker, probe_task
from engine.encoders import EncoderOptions
from engine.pairs import cell_events
from engine.planner import PairWork, Plan
from engine.suites import Suite
from store.paths import StorePaths
from store.vocab.errors import GenebError

MAX_RETRIES = 3      # restarts of an actor, retries of its calls and of a probe task
_BUSY_S = 1.0        # before a pair another process holds is offered again
_WAIT_S = 0.2        # the longest the driver waits for a result before looking again
_QUEUED = 2          # calls queued on an actor
CONNECT_S = 10       # how long a cluster address may take to answer, or cancelled tasks to end
LOCAL_OBJECT_STORE = 256 * 1024 * 1024   # bytes: only small dicts travel through it


def _answers(address: str) -> None:
    """Fail fast where nothing listens at HOST:PORT (Ray itself waits minutes for it)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_S).close()
    except OSError as exc:
        raise GenebError(f"--address {address}: nothing answers at {host}:{port} ({exc}); "
                         "is the Ray head running (`ray start --head`)?") from None


@dataclass
class _Actor:
    handle: object
    model_id: str
    calls: set = field(default_factory=set)


class RayExecutor:
    """Runs a `fill` plan on a Ray cluster (see the module docstring)."""

    def __init__(self, paths: StorePaths, suite: Suite, plan: Plan, encoder: EncoderOptions,
                 probe_device: str | None, cluster: ClusterOptions,
                 on_event: Callable[[dict], None], sizes: dict[str, int]):
        self.paths, self.suite, self.plan = paths, suite, plan
        self.encoder, self.probe_device, self.cluster = encoder, probe_device, cluster
        self.on_event = on_event
        self.queues: dict[str, deque[tuple[float, PairWork]]] = {}
        for work in sorted(plan.work, key=lambda w: -sizes.get(w.task.task_id, 0)):
            self.queues.setdefault(work.model.model_id, deque()).append((0.0, work))
        self.done = 0
        self.run_id = uuid.uuid4().hex[:8]
        self.actors: list[_Actor] = []
        self.pending: dict = {}          # ref -> ("embed" | "probe", PairWork, _Actor | None)
        self.started = False             # this run started the Ray instance it uses

    def __enter__(self) -> RayExecutor:
        """Connect (before anything is written: an unreachable cluster changes nothing)."""
        self.ray = require_ray()
        if not self.ray.is_initialized():
            self._connect(self.ray)
            self.started = True
        try:
            self._announce(self.ray)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        """Leave the cluster as it was found (a local instance this run started is shut
        down)."""
        self._release()
        if self.started:
            self.ray.shutdown()
            self.started = False

    def run(self) -> set[str]:
        """Work through the plan; whatever happens, no task or actor of this run is left
        working when it returns (so none writes after `fill` lets go of the store lock)."""
        try:
            return self._work(self.ray, self.actors, self.pending)
        finally:
            self._release()

    def _release(self) -> None:
        """Cancel every task and kill every actor of this run, waiting (up to `CONNECT_S`) for
        the cancelled tasks to end."""
        probes = [ref for ref, (kind, _, _) in self.pending.items() if kind == "probe"]
        for ref in probes:
            self.ray.cancel(ref, force=True)
        for actor in self.actors:
            self.ray.kill(actor.handle, no_restart=True)
        if probes:
            self.ray.wait(probes, num_returns=len(probes), timeout=CONNECT_S)
        self.pending.clear()
        self.actors.clear()

    # -- the cluster ---------------------------------------------------------------------

    def _connect(self, ray) -> None:
        env = {k: v for k, v in os.environ.items() if k.startswith("GENEB_")}
        local = self.cluster.address is None
        if not local and self.cluster.address != "auto":
            _answers(self.cluster.address)
        try:
            ray.init(address="local" if local else self.cluster.address, namespace="geneb",
                     runtime_env={"env_vars": env} if env else None,
                     logging_level=logging.ERROR, log_to_driver=False,
                     **({"include_dashboard": False, "object_store_memory": LOCAL_OBJECT_STORE}
                        if local else {}))
        except ConnectionError as exc:
            raise GenebError(f"--address {self.cluster.address}: cannot reach a Ray cluster "
                             f"there ({str(exc).splitlines()[0]})") from None

    def _announce(self, ray) -> None:
        resources = ray.cluster_resources()
        self.cpus = float(resources.get("CPU", 0))
        self.gpus = float(resources.get("GPU", 0))
        nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
        self.on_event({"event": "executor", "kind": "ray",
                       "address": self.cluster.address or "local", "nodes": nodes,
                       "cpus": self.cpus, "gpus": self.gpus})

    # -- the work ------------------------------------------------------------------------

    def _work(self, ray, actors: list[_Actor], pending: dict) -> set[str]:
        models = {w.model.model_id: w.model for w in self.plan.work}
        placements = place({m: len(q) for m, q in self.queues.items()}, models, self.cpus,
                           self.gpus, self.cluster.gpus_per_model, self.cluster.probe_cpus)
        worker = ray.remote(EmbedWorker)
        for p in placements:
            self.on_event(p.event())
            for i in range(p.actors):
                handle = worker.options(
                    name=f"embed-{self.run_id}-{p.model_id}-{i}", num_gpus=p.gpus,
                    num_cpus=p.cpus, max_restarts=MAX_RETRIES, max_task_retries=MAX_RETRIES,
                ).remote(self.paths, self.suite, models[p.model_id],
                         self.encoder, p.gpus, self.plan.revisions, self.plan.precisions)
                actors.append(_Actor(handle, p.model_id))
        probe = ray.remote(probe_task).options(
            num_cpus=self.cluster.probe_cpus, max_retries=MAX_RETRIES, retry_exceptions=True)
        touched: set[str] = set()
        while pending or any(self.queues.values()):
            for actor in list(actors):
                self._feed(actor, pending)
                if not actor.calls and not self.queues.get(actor.model_id):
                    ray.kill(actor.handle, no_restart=True)   # its model is finished
                    actors.remove(actor)
            if not pending:
                time.sleep(_WAIT_S)   # every pair left is held by another process
                continue
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=_WAIT_S)
            for ref in ready:
                kind, work, actor = pending.pop(ref)
                result = self._result(ray, ref, work)
                if kind == "probe":
                    touched.add(work.model.model_id)
                    self._report(work, computed=result > 0)
                    continue
                actor.calls.discard(ref)
                if result["status"] == "busy":
                    self.queues[work.model.model_id].append((time.monotonic() + _BUSY_S, work))
                elif result["status"] == "done":
                    self._report(work, computed=False)
                else:
                    for event in result["events"]:
                        self.on_event(event)
                    todo_ref = probe.remote(
                        self.paths, work.model.model_id, work.task.task_id,
                        result["data_hash"], result["todo"], result["expect"],
                        result["provenance"], self.probe_device or "cpu", result["targets"])
                    pending[todo_ref] = ("probe", work, None)
        return touched

    def _feed(self, actor: _Actor, pending: dict) -> None:
        """Queue the actor's next pairs (those not waiting for another process)."""
        queue = self.queues.get(actor.model_id)
        now = time.monotonic()
        for _ in range(len(queue or ())):
            if len(actor.calls) >= _QUEUED:
                return
            due, work = queue.popleft()
            if due > now:
                queue.append((due, work))
                continue
            ref = actor.handle.embed.remote(work.task.task_id, work.todo)
            actor.calls.add(ref)
            pending[ref] = ("embed", work, actor)

    def _result(self, ray, ref, work: PairWork):
        """The call's result; its error (after Ray's retries) as one clear message."""
        from ray.exceptions import RayActorError, RayTaskError  # lazy: ray

        try:
            return ray.get(ref)
        except RayTaskError as exc:
            cause = exc.cause if isinstance(exc.cause, BaseException) else None
            if isinstance(cause, GenebError):
                raise GenebError(str(cause)) from None
            raise GenebError(f"model {work.model.model_id}, task {work.task.task_id}: failed on "
                             f"the cluster after {MAX_RETRIES} retries: "
                             f"{str(cause or exc).splitlines()[0]}") from None
        except RayActorError as exc:
            raise GenebError(f"model {work.model.model_id}: its embedding actor died "
                             f"{MAX_RETRIES + 1} times (last: "
                             f"{str(exc).splitlines()[0]}); `ray logs` has the workers' output"
                             ) from None

    def _report(self, work: PairWork, computed: bool) -> None:
        for event in cell_events(work, computed, self.done, self.plan.cells_missing):
            self.on_event(event)
        self.done += work.cells
