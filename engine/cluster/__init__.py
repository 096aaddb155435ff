"""`fill --executor ray`: embedding on GPU actors and probes as CPU tasks, on a Ray cluster.

Ray's split: one actor per (model, GPU share) loads the weights once and embeds that model's
pairs, largest tasks first (`engine.cluster.workers.EmbedWorker`); every pair whose embeddings
are complete is probed by a Ray task on CPUs (`engine.cluster.workers.probe_task`), which
commits its rows under the store's pair and commit locks, so retries and concurrent runs never
duplicate. The driver (`engine.cluster.executor.RayExecutor`) hands out the pairs, reports
progress and compacts at the end; where each model runs is `engine.cluster.placement`'s rule.

Ray is an optional extra (`pip install 'geneb[cluster]'`): nothing outside this package imports
it, and this module itself does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.vocab.errors import GenebError

INSTALL = "pip install 'geneb[cluster]'"


@dataclass(frozen=True)
class ClusterOptions:
    """What a Ray run asks for: where the cluster is and how models and probes use it."""

    address: str | None = None          # None: start a local Ray instance; "auto"; HOST:PORT
    gpus_per_model: float | None = None  # GPUs per embedding actor; None: placement's rule
    probe_cpus: int = 1                 # CPUs Ray reserves per probe task (fewer at once, more
    #                                     memory each; a fit's BLAS threads: engine.pairs)


def require_ray():
    """The `ray` module; a GenebError saying how to install it when it is not."""
    try:
        import ray  # lazy: ray
    except ImportError:
        raise GenebError(f"--executor ray needs Ray, which is not installed; {INSTALL}") from None
    return ray
