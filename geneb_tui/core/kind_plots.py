"""A task drill-down's plot of one model's test values on a task of another kind than
classification (`drill_plot`: a regression task's predicted against true values, a variant
task's ROC curve), from the predictions table (`store.tables.predictions.read_values`).
UI-free: `geneb_tui.components.kind_plot` draws it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from store.paths import StorePaths
from store.tables.predictions import read_values
from store.vocab.kinds import SEVERAL_TARGETS, TaskKind
from store.vocab.sources import LOCAL


@dataclass(frozen=True)
class DrillPlot:
    """One model's test values on one task, as its kind's plot draws them.

    regression: `x` the true targets, `y` the predictions, `score` Pearson's r of them;
    variant: `x` the false-positive and `y` the true-positive rates of the ROC curve (from
    (0, 0), one point per distinct score), `score` its area (AUROC). `note`: why there is no
    plot (then `x` and `y` are empty)."""

    kind: str
    title: str
    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()
    score: float | None = None
    note: str = ""


def roc_points(labels, scores) -> tuple[np.ndarray, np.ndarray]:
    """The ROC curve of `scores` (higher: label 1 likelier) for 0/1 `labels`: false- and
    true-positive rates from (0, 0), one point per distinct score, tied scores one step
    (scikit-learn's `roc_curve` with `drop_intermediate=False`, less its first threshold)."""
    y = np.asarray(labels, dtype=np.float64) == 1
    s = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-s, kind="mergesort")
    ordered, hits = s[order], y[order]
    last = np.r_[np.flatnonzero(ordered[1:] != ordered[:-1]), len(s) - 1]   # each threshold
    tp = np.cumsum(hits)[last]
    fp = (last + 1) - tp
    return np.r_[0.0, fp / max(fp[-1], 1)], np.r_[0.0, tp / max(tp[-1], 1)]


def roc_area(fpr: np.ndarray, tpr: np.ndarray) -> float:
    """The area under an ROC curve (trapezoids: a tie's diagonal step counts half, as
    scikit-learn's `roc_auc_score`)."""
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2.0))


def drill_plot(paths: StorePaths, kind: str, protocol_hash: str, model: str, task: str,
               regime: str, label: str = "") -> DrillPlot:
    """The plot of `model`'s stored test values on `task` in `regime` under `protocol_hash`
    (the local run's first seed: a full fit is one fit for every seed), or a `DrillPlot`
    whose note says why there is none."""
    name = label or model
    if TaskKind(kind) in SEVERAL_TARGETS:
        return DrillPlot(kind, name, note=f"{name}: a {kind} task's test values (one per "
                                          "target) are not stored, so there is no plot")
    rows = read_values(paths, model=model, task=task, protocol_hash=protocol_hash)
    rows = rows.filter((rows["regime"] == regime) & (rows["source"] == LOCAL))
    if rows.is_empty():
        return DrillPlot(kind, name, note=f"{name}: no stored test values on {task} in "
                                          f"{regime} (predictions are kept for local runs)")
    row = rows.sort("seed").row(0, named=True)
    values, targets = row["value"], row["target"]
    where = f"{name} · {regime}, seed {row['seed']}, n = {len(values)}"
    if targets is None or len(targets) != len(values):
        return DrillPlot(kind, where, note=f"{where}: the test targets are not stored")
    if TaskKind(kind) is TaskKind.REGRESSION:
        r = float(np.corrcoef(targets, values)[0, 1]) if np.std(values) > 0 else None
        shown = "n/a" if r is None else f"{r:.3f}"
        return DrillPlot(kind, f"{where}: Pearson r = {shown}", tuple(targets), tuple(values),
                         r)
    if len(set(targets)) < 2:
        return DrillPlot(kind, where, note=f"{where}: one label only, no ROC curve")
    fpr, tpr = roc_points(targets, values)
    area = roc_area(fpr, tpr)
    return DrillPlot(kind, f"{where}: AUROC = {area:.3f}", tuple(fpr), tuple(tpr), area)
