"""Per-example uncertainty of local runs: a task's MCC interval from resampling its test
examples, the paired bootstrap of two models' MCC difference on one task, and McNemar's test of
their accuracies. The inputs are the stored test predictions (`store.tables.predictions`); imported
official results have none (`store.tables.predictions.NO_PREDICTIONS`): use the task-level methods
of
`store.analyses.uncertainty`.

Definitions (the docs' "Uncertainty", docs/guide/statistics.md, says the same):

- **Level: one (model, task, regime) cell**, per seed and for the seed mean.
- **Resampling unit: test examples.** A resample draws the task's n test rows with replacement
  (n of n): `numpy.random.default_rng(seed).integers(0, n, (n_resamples, n))`, the draw
  `scipy.stats.bootstrap` makes with the same generator. Every seed, and in a paired
  comparison both models, is scored on the same resampled rows.
- **MCC** is scikit-learn's (multiclass: the R_K statistic of the confusion matrix; 0 when a
  denominator is 0), computed for every resample at once from its confusion matrix.
- **Seed mean**: the mean over the cell's seeds of their MCCs, in the data and in every
  resample (the test examples are resampled, the seeds are not: they are the protocol's).
- **Interval**: percentile, the (1 - level)/2 and 1 - (1 - level)/2 quantiles of the resampled
  values (numpy's "linear" method, as `scipy.stats.bootstrap(method="percentile")`).
- **Paired MCC difference** A - B: its point value, interval, and `p`, the two-sided bootstrap
  p-value 2 min(P(d <= 0), P(d >= 0)) capped at 1 over the resamples (identical predictions
  give d = 0 in every resample: interval [0, 0], p = 1).
- **McNemar** (accuracy), per seed: b = test rows A gets right and B wrong, c = the reverse;
  p = the exact two-sided binomial test of b successes in b + c trials at 1/2
  (`scipy.stats.binomtest`); p = 1 when b + c = 0.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from store.analyses.presets import LEVEL, RESAMPLES

_CHUNK_CELLS = 4_000_000   # resampled rows held at once (resamples x test rows)


def _codes(y: np.ndarray, preds: np.ndarray) -> tuple[np.ndarray, int]:
    """(S, n) confusion-cell codes true * K + predicted over the classes of `y` and `preds`."""
    classes, inverse = np.unique(np.concatenate([y[None, :], preds]), return_inverse=True)
    inverse = inverse.reshape(1 + len(preds), -1)
    k = len(classes)
    return inverse[0][None, :] * k + inverse[1:], k


def _mcc(counts: np.ndarray, k: int) -> np.ndarray:
    """MCC of confusion matrices (..., k * k) (rows: true class), as scikit-learn computes it."""
    cm = counts.reshape(*counts.shape[:-1], k, k).astype(np.float64)
    t = cm.sum(axis=-1)
    p = cm.sum(axis=-2)
    c = np.trace(cm, axis1=-2, axis2=-1)
    s = cm.sum(axis=(-2, -1))
    cov_tp = c * s - (t * p).sum(axis=-1)
    cov_pp = s * s - (p * p).sum(axis=-1)
    cov_tt = s * s - (t * t).sum(axis=-1)
    denom = cov_tt * cov_pp
    with np.errstate(invalid="ignore", divide="ignore"):
        out = cov_tp / np.sqrt(denom)
    return np.where(denom == 0, 0.0, out)


def resampled_mcc(y: np.ndarray, preds: np.ndarray, n_resamples: int = RESAMPLES,
                  seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(point MCC (S,), resampled MCC (n_resamples, S)) of S prediction vectors `preds` (S, n)
    against labels `y` (n,), every vector on the same resampled test rows."""
    y = np.asarray(y)
    preds = np.atleast_2d(np.asarray(preds))
    n = y.size
    codes, k = _codes(y, preds)
    s_count, kk = len(preds), k * k
    offsets = (np.arange(s_count) * kk)[:, None]
    point = _mcc(np.bincount((codes + offsets).ravel(), minlength=s_count * kk)
                 .reshape(s_count, kk), k)
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, s_count))
    step = max(1, _CHUNK_CELLS // max(1, n * s_count))
    for start in range(0, n_resamples, step):     # chunks of resamples, one draw stream
        b = min(step, n_resamples - start)
        idx = rng.integers(0, n, (b, n))
        cells = codes[:, idx]                                    # (S, b, n)
        flat = cells + (np.arange(b * s_count).reshape(s_count, b, 1) * kk)
        counts = np.bincount(flat.ravel(), minlength=b * s_count * kk).reshape(s_count, b, kk)
        out[start:start + b] = _mcc(counts, k).T
    return point, out


def _interval(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1 - level) / 2
    lo, hi = np.percentile(values, [100 * alpha, 100 * (1 - alpha)], axis=0)
    return lo, hi


def mcc_interval(y: np.ndarray, preds: np.ndarray, seeds: list[int] | None = None, *,
                 n_resamples: int = RESAMPLES, level: float = LEVEL,
                 seed: int = 0) -> pl.DataFrame:
    """[seed, mcc, lo, hi, n_test, n_resamples] of one cell: a row per seed of `preds` (S, n)
    and a seed-mean row (`seed` NULL), test examples resampled (module docstring)."""
    preds = np.atleast_2d(np.asarray(preds))
    seeds = list(seeds) if seeds is not None else list(range(len(preds)))
    point, boot = resampled_mcc(y, preds, n_resamples, seed)
    lo, hi = _interval(boot, level)
    mean_lo, mean_hi = _interval(boot.mean(axis=1), level)
    return pl.DataFrame({
        "seed": [*seeds, None],
        "mcc": [*point.tolist(), float(point.mean())],
        "lo": [*lo.tolist(), float(mean_lo)],
        "hi": [*hi.tolist(), float(mean_hi)],
        "n_test": [len(y)] * (len(seeds) + 1),
        "n_resamples": [n_resamples] * (len(seeds) + 1),
    }, schema={"seed": pl.Int64, "mcc": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
               "n_test": pl.Int64, "n_resamples": pl.Int64})


def example_intervals(predictions: pl.DataFrame, labels: dict[tuple[str, str], np.ndarray], *,
                      n_resamples: int = RESAMPLES, level: float = LEVEL,
                      seed: int = 0) -> pl.DataFrame:
    """[model, task, regime, seed, mcc, lo, hi, n_test, n_resamples]: `mcc_interval` of every
    (model, task, regime) of `predictions` (`store.tables.predictions.read_predictions`; one
    protocol),
    `labels` keyed by (task, data_hash). Cells whose labels are missing are left out."""
    out = []
    for (model, task, regime, data_hash), cell in predictions.sort("seed").group_by(
            ["model", "task", "regime", "data_hash"], maintain_order=True):
        y = labels.get((task, data_hash))
        if y is None:
            continue
        preds = np.stack([np.asarray(p) for p in cell["pred"].to_list()])
        frame = mcc_interval(y, preds, cell["seed"].to_list(), n_resamples=n_resamples,
                             level=level, seed=seed)
        out.append(frame.select(pl.lit(model).alias("model"), pl.lit(task).alias("task"),
                                pl.lit(regime).alias("regime"), pl.all()))
    if not out:
        return pl.DataFrame(schema={"model": pl.Utf8, "task": pl.Utf8, "regime": pl.Utf8,
                                    "seed": pl.Int64, "mcc": pl.Float64, "lo": pl.Float64,
                                    "hi": pl.Float64, "n_test": pl.Int64,
                                    "n_resamples": pl.Int64})
    return pl.concat(out).sort("model", "task", "regime", "seed", nulls_last=True)


def paired_mcc_difference(y: np.ndarray, preds_a: np.ndarray, preds_b: np.ndarray, *,
                          n_resamples: int = RESAMPLES, level: float = LEVEL,
                          seed: int = 0) -> pl.DataFrame:
    """[diff, lo, hi, p, n_test, n_resamples]: one row, the seed-mean MCC of A (S_a, n) minus
    B's (S_b, n) on one task, both scored on the same resampled test rows (module docstring)."""
    a = np.atleast_2d(np.asarray(preds_a))
    b = np.atleast_2d(np.asarray(preds_b))
    point, boot = resampled_mcc(y, np.concatenate([a, b]), n_resamples, seed)
    d_point = point[:len(a)].mean() - point[len(a):].mean()
    d = boot[:, :len(a)].mean(axis=1) - boot[:, len(a):].mean(axis=1)
    lo, hi = _interval(d, level)
    p = min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
    return pl.DataFrame({"diff": [float(d_point)], "lo": [float(lo)], "hi": [float(hi)],
                         "p": [p], "n_test": [len(y)], "n_resamples": [n_resamples]})


def mcnemar(y: np.ndarray, preds_a: np.ndarray, preds_b: np.ndarray,
            seeds: list[int] | None = None) -> pl.DataFrame:
    """[seed, acc_a, acc_b, b, c, p]: McNemar's exact test per seed (row s of A (S, n) against
    row s of B): b = rows only A gets right, c = rows only B gets right (module docstring)."""
    from scipy.stats import binomtest  # lazy: scipy

    y = np.asarray(y)
    right_a = np.atleast_2d(np.asarray(preds_a)) == y
    right_b = np.atleast_2d(np.asarray(preds_b)) == y
    seeds = list(seeds) if seeds is not None else list(range(len(right_a)))
    b = (right_a & ~right_b).sum(axis=1)
    c = (~right_a & right_b).sum(axis=1)
    p = [1.0 if bi + ci == 0 else float(binomtest(int(bi), int(bi + ci), 0.5).pvalue)
         for bi, ci in zip(b.tolist(), c.tolist(), strict=True)]
    return pl.DataFrame({"seed": seeds, "acc_a": right_a.mean(axis=1).tolist(),
                         "acc_b": right_b.mean(axis=1).tolist(), "b": b.tolist(),
                         "c": c.tolist(), "p": p},
                        schema={"seed": pl.Int64, "acc_a": pl.Float64, "acc_b": pl.Float64,
                                "b": pl.Int64, "c": pl.Int64, "p": pl.Float64})
