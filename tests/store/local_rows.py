"""Synthetic local geneb-v1 results for one model, written as the engine writes them."""

from __future__ import annotations

import numpy as np

from store.catalog import geneb_v1_tasks, register_tasks
from store.paths import resolve_store
from store.protocol import GENEB_V1, REGIMES, SEEDS
from store.results import append_rows


def local_rows(model: str, skip=frozenset(), seeds_of=lambda regime, task: SEEDS) -> list[dict]:
    """Rows for every (regime, task) but those in `skip`: the full regime shares one fit over
    the seeds, k-shot regimes have one fit per seed (`seeds_of` picks the seeds)."""
    rng = np.random.default_rng(0)
    rows = []
    for regime in REGIMES:
        for task in geneb_v1_tasks():
            if (regime, task.task_id) in skip:
                continue
            shared = rng.uniform(0, 1, 3)
            for seed in seeds_of(regime, task.task_id):
                mcc, acc, f1 = shared if regime == "full" else rng.uniform(0, 1, 3)
                rows.append({"model": model, "task": task.task_id, "regime": regime,
                             "seed": seed, "probe": "logreg", "protocol": GENEB_V1.name,
                             "protocol_hash": GENEB_V1.hash, "mcc": 2 * mcc - 1, "acc": acc,
                             "f1_macro": f1, "source": "local", "shared_fit": regime == "full"})
    return rows


def local_store(root, model: str, rows: list[dict]):
    """A store at `root` with the geneb-v1 task catalog and `rows` in two fragments."""
    paths = resolve_store(root)
    register_tasks(paths, geneb_v1_tasks())
    half = len(rows) // 2
    append_rows(paths, rows[:half])
    append_rows(paths, rows[half:])
    return paths
