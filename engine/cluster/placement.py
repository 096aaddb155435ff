"""Where each model embeds on a Ray cluster: GPUs per actor and how many actors, with why.

- A kind that embeds on CPU only (`store.vocab.encoder_kinds`, `gpu` False: the k-mer baselines)
gets
  CPU actors, as does every model on a cluster without GPUs.
- `--gpus-per-model G` is taken as given: G > 1 spreads a model too large for one GPU over G
  (transformers' `device_map="auto"`), G < 1 lets 1/G actors share a GPU (Ray's fractional
  GPUs: each actor holds its own copy of the weights). More than the cluster has is refused.
- Otherwise: a model with a known parameter count under SMALL_PARAMS shares a GPU with one
  other actor (SHARED_GPU): small models leave most of a large GPU idle at the batch sizes
  that fit, so two streams raise throughput; every other model gets one GPU.
- Actors per model: the slots the cluster has (GPU actors: its GPUs, each model's share of
  them / G; CPU actors: its CPUs less those one probe needs, at least one), shared out between
  the models in proportion to their pairs by largest remainder (so the shares add up to the
  slots), at least one each and never more than a model's pairs. Actors of one model pull that
  model's pairs, largest first; actors beyond the free resources wait in Ray's queue until an
  earlier model's actors finish.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from store.catalog import ModelMeta, params_text
from store.vocab.encoder_kinds import KINDS
from store.vocab.errors import GenebError

SMALL_PARAMS = 100_000_000
SHARED_GPU = 0.5


@dataclass(frozen=True)
class Placement:
    model_id: str
    gpus: float         # per actor (0: a CPU actor)
    cpus: float         # per actor
    actors: int
    reason: str

    def event(self) -> dict:
        return {"event": "placement", "model": self.model_id, "gpus": self.gpus,
                "cpus": self.cpus, "actors": self.actors, "reason": self.reason}


def gpus_for(model: ModelMeta, cluster_gpus: float, gpus_per_model: float | None
             ) -> tuple[float, str]:
    """(GPUs per actor, why) of one model; see the module docstring."""
    if not KINDS[model.encoder].gpu:
        return 0.0, f"{KINDS[model.encoder].label or model.encoder} embeds on CPU"
    if cluster_gpus <= 0:
        return 0.0, "the cluster has no GPU: embeds on CPU"
    if gpus_per_model is not None:
        if gpus_per_model > cluster_gpus:
            raise GenebError(f"--gpus-per-model {gpus_per_model:g}: the Ray cluster has "
                             f"{cluster_gpus:g} GPU(s)")
        return gpus_per_model, f"--gpus-per-model {gpus_per_model:g}"
    if model.params and model.params < SMALL_PARAMS:
        return SHARED_GPU, (f"{params_text(model.params)} parameters (< "
                            f"{params_text(SMALL_PARAMS)}): {round(1 / SHARED_GPU)} actors share "
                            "a GPU")
    return 1.0, "one GPU per actor"


def place(pairs: dict[str, int], models: dict[str, ModelMeta], cluster_cpus: float,
          cluster_gpus: float, gpus_per_model: float | None, probe_cpus: int
          ) -> list[Placement]:
    """A `Placement` per model of `pairs` (model id -> its pairs to embed), in that order."""
    share = {m: gpus_for(models[m], cluster_gpus, gpus_per_model) for m in pairs}
    on_gpu = [m for m in pairs if share[m][0] > 0]
    on_cpu = [m for m in pairs if share[m][0] == 0]
    actors = {**_shared(on_gpu, pairs, cluster_gpus, {m: share[m][0] for m in on_gpu}),
              **_shared(on_cpu, pairs, max(1, math.floor(cluster_cpus - probe_cpus)),
                        dict.fromkeys(on_cpu, 1.0))}
    return [Placement(m, share[m][0], 0.0 if share[m][0] else 1.0, actors[m], share[m][1])
            for m in pairs]


def _shared(group: list[str], pairs: dict[str, int], resources: float,
            per_actor: dict[str, float]) -> dict[str, int]:
    """Actors per model of `group`: `resources` shared in proportion to the models' pairs
    (largest remainder), each share / the model's `per_actor`, between 1 and its pairs."""
    work = sum(pairs[m] for m in group)
    quota = {m: resources * pairs[m] / work for m in group} if work else {}
    given = {m: math.floor(q + 1e-9) for m, q in quota.items()}
    left = math.floor(resources + 1e-9) - sum(given.values())
    for m in sorted(group, key=lambda m: given[m] - quota[m])[:max(0, left)]:
        given[m] += 1
    return {m: max(1, min(pairs[m], math.floor(given[m] / per_actor[m] + 1e-9)))
            for m in group}
