"""Synthetic local geneb-v1 results, written as the engine writes them (every test package's one
helper for them)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from store.catalog import geneb_v1_tasks
from store.paths import resolve_store
from store.tables.catalogs import register_tasks
from store.tables.results import append_rows
from store.vocab.protocol import GENEB_V1, REGIMES, SEEDS


def local_rows(model: str, tasks: Sequence[str] | None = None,
               regimes: Sequence[str] = REGIMES, *, value: float | None = None,
               seeds_of=lambda regime, task: SEEDS, skip=frozenset()) -> list[dict]:
    """Rows of `model` for each regime of `regimes` and task of `tasks` (default: every geneb-v1
    task) but the (regime, task) pairs in `skip`, one per seed of `seeds_of(regime, task)`: the
    full regime shares one fit over its seeds, k-shot regimes fit once per seed. Scores are
    drawn at random (seeded), or with `value`: MCC `value` + 0.01 × the task's position in
    `tasks`, acc 0.7, F1 0.6 (ranks a test can predict)."""
    rng = np.random.default_rng(0)
    ids = [t.task_id for t in geneb_v1_tasks()] if tasks is None else list(tasks)
    rows = []
    for regime in regimes:
        for i, task in enumerate(ids):
            if (regime, task) in skip:
                continue
            shared = rng.uniform(0, 1, 3)
            for seed in seeds_of(regime, task):
                if value is None:
                    u, acc, f1 = shared if regime == "full" else rng.uniform(0, 1, 3)
                    mcc = 2 * u - 1
                else:
                    mcc, acc, f1 = value + i * 0.01, 0.7, 0.6
                rows.append({"model": model, "task": task, "regime": regime, "seed": seed,
                             "probe": "logreg", "protocol": GENEB_V1.name,
                             "protocol_hash": GENEB_V1.hash, "mcc": mcc, "acc": acc,
                             "f1_macro": f1, "source": "local", "shared_fit": regime == "full",
                             "compute_precision": "float32"})
    return rows


def local_store(root, model: str, rows: list[dict]):
    """A store at `root` with the geneb-v1 task catalog and `rows` in two fragments."""
    paths = resolve_store(root)
    register_tasks(paths, geneb_v1_tasks())
    half = len(rows) // 2
    append_rows(paths, rows[:half])
    append_rows(paths, rows[half:])
    return paths


def full_mcc_rows(mcc: dict[str, dict[str, float]]) -> list[dict]:
    """Local full-regime rows of given MCCs (model -> task -> MCC), every seed alike (one shared
    fit), acc 0.7, F1 0.6: hand-countable aggregates."""
    return [{"model": model, "task": task, "regime": "full", "seed": seed, "probe": "logreg",
             "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash, "mcc": value,
             "acc": 0.7, "f1_macro": 0.6, "source": "local", "shared_fit": True,
             "compute_precision": "float32"}
            for model, scores in mcc.items() for task, value in scores.items()
            for seed in SEEDS]
