"""Task health: audit a suite's tasks (`geneb-engine audit`).

The measures are `store.audit`'s; what needs scikit-learn is here: the shortcut probes, fitted
with the geneb-v1 probe itself (`engine.probes.exact.fit_predict`, its full regime: the whole
train split, the protocol's first seed, test MCC by `engine.probes.exact.evaluate`) on each
shortcut feature (`store.audit.features`). An audit is stored per data hash
(`store.tables.audit`) and reused unless `refresh`; the verdicts are derived when read, with the
best model's geneb-v1 full-regime MCC on that data where the store has results
(`store.task_health.best_model_mccs`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.data import TaskData
from engine.probes.exact import evaluate, fit_predict
from store.audit.crosstask import shared
from store.audit.features import FEATURES, shortcut_features
from store.audit.report import TaskAudit, audit_task
from store.audit.verdict import Health, health
from store.paths import StorePaths
from store.vocab.protocol import GENEB_V1


def shortcut_mccs(train: Sequence[str], y_train: np.ndarray, test: Sequence[str],
                  y_test: np.ndarray) -> dict[str, float]:
    """Feature -> the test MCC of the geneb-v1 probe fitted on that feature alone."""
    x_train, x_test = shortcut_features(train), shortcut_features(test)
    mccs = {}
    for name in FEATURES:
        pred, _ = fit_predict(x_train[name], y_train, x_test[name], GENEB_V1.seeds[0],
                              GENEB_V1)
        mccs[name] = evaluate(y_test, pred)["mcc"]
    return mccs


def measure(data: TaskData) -> tuple[TaskAudit, np.ndarray, np.ndarray]:
    """One task's audit and its splits' keys (`store.audit.report.audit_task`)."""
    train, test = data.train, data.test
    return audit_task(data.task_id, data.data_hash, train.sequences, train.labels,
                      test.sequences, test.labels,
                      shortcut_mccs(train.sequences, train.labels, test.sequences, test.labels))


@dataclass(frozen=True)
class SuiteAudit:
    audits: dict[str, TaskAudit]          # task -> its audit, in the order asked
    health: dict[str, Health]
    shared: list[dict]                    # `store.audit.crosstask.shared`
    measured: tuple[str, ...]             # the tasks audited now (the rest were stored)


def audit_suite(paths: StorePaths, tasks: Iterable[TaskData], *,
                refresh: bool = False) -> SuiteAudit:
    """Audit `tasks`, read one at a time (an iterator keeps one task's data in memory), reusing
    the stored audits of their data hashes unless `refresh`. The new audits are stored after
    the last task was read, so a task that cannot be read leaves the store as it was."""
    from store.tables.audit import (  # lazy: polars
        record_audits,
        stored_audits,
        stored_keys,
    )
    from store.task_health import best_model_mccs  # lazy: polars, duckdb

    stored = {} if refresh else stored_audits(paths)
    hashes: dict[str, str] = {}
    keys: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    new = []
    for data in tasks:
        hashes[data.task_id] = data.data_hash
        if data.data_hash not in stored:                 # one audit per data hash
            audit, train, test = found = measure(data)
            new.append(found)
            stored[audit.data_hash] = audit
            keys[audit.data_hash] = (train, test)
    record_audits(paths, new)
    keys |= stored_keys(paths, set(hashes.values()) - set(keys))
    best = best_model_mccs(paths, hashes)   # on the data read now
    audits = {task: stored[h] for task, h in hashes.items()}
    return SuiteAudit(audits, {task: health(a, best.get(task)) for task, a in audits.items()},
                      shared({task: keys[h][0] for task, h in hashes.items()},
                             {task: keys[h][1] for task, h in hashes.items()}),
                      tuple(a.task_id for a, _, _ in new))
