"""The metrics of the regression and variant kinds (`store.vocab.kinds`), in numpy alone (no
scikit-learn or scipy at scoring time; the tests hold them equal to those libraries):

- `pearson`: Pearson's r of predictions and targets (scipy.stats.pearsonr);
- `spearman`: Spearman's rho, Pearson's r of their average ranks (scipy.stats.spearmanr);
- `r2`: 1 - SS_res / SS_tot (sklearn.metrics.r2_score);
- `auroc`: the area under the ROC curve, ties counted half (sklearn.metrics.roc_auc_score),
  from the Mann-Whitney U of the scores;
- `auprc`: the average precision, sum over thresholds of (R_n - R_{n-1}) P_n
  (sklearn.metrics.average_precision_score).

A tracks task's metrics (`tracks_scores`) are the regression ones computed per target (a
column of the targets), a multilabel task's (`multilabel_scores`) the variant ones per label,
each averaged over the columns whose value is defined (a target constant in the test split has
no Pearson r, a label with one class there no AUROC: left out of the mean; NaN where no column
has one).

A value that is not defined (constant predictions have no correlation) is NaN, which the store
keeps as NULL (`store.tables.schema`).
"""

from __future__ import annotations

import numpy as np

from store.analyses.rankings import tie_mean_ranks


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of a vector, tied values sharing the mean of their ranks."""
    return tie_mean_ranks(values)[0]


def pearson(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    a = np.asarray(y_true, dtype=np.float64) - np.mean(y_true)
    b = np.asarray(y_pred, dtype=np.float64) - np.mean(y_pred)
    norm = np.sqrt(np.dot(a, a) * np.dot(b, b))
    return float(np.dot(a, b) / norm) if norm > 0 else float("nan")


def spearman(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return pearson(average_ranks(y_true), average_ranks(y_pred))


def r2(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    y_true = np.asarray(y_true, dtype=np.float64)
    total = np.sum((y_true - y_true.mean()) ** 2)
    residual = np.sum((y_true - np.asarray(y_pred, dtype=np.float64)) ** 2)
    return float(1.0 - residual / total) if total > 0 else float("nan")


def regression_scores(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    """The regression kind's metrics (`store.vocab.kinds.METRICS_OF`)."""
    return {"pearson": pearson(y_true, y_pred), "spearman": spearman(y_true, y_pred),
            "r2": r2(y_true, y_pred)}


def _column_means(scores, Y_true: np.ndarray, Y_pred: np.ndarray) -> dict[str, float]:
    """`scores` (one column's metrics) per column, each metric averaged over the columns where
    it is defined (NaN where none)."""
    per_column = [scores(Y_true[:, j], Y_pred[:, j]) for j in range(Y_true.shape[1])]
    out = {}
    for metric in per_column[0]:
        values = np.array([s[metric] for s in per_column])
        defined = values[~np.isnan(values)]
        out[metric] = float(defined.mean()) if defined.size else float("nan")
    return out


def tracks_scores(Y_true: np.ndarray, Y_pred: np.ndarray) -> dict[str, float]:
    """The tracks kind's metrics: each regression metric per target, averaged over the
    targets."""
    return _column_means(regression_scores, Y_true, Y_pred)


def multilabel_scores(Y_true: np.ndarray, score: np.ndarray) -> dict[str, float]:
    """The multilabel kind's metrics: AUROC and AUPRC per label (higher score: label 1 more
    likely), averaged over the labels."""
    return _column_means(variant_scores, Y_true, score)


def auroc(y_true: np.ndarray, score: np.ndarray) -> float:
    y = np.asarray(y_true) == 1
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    u = average_ranks(score)[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def auprc(y_true: np.ndarray, score: np.ndarray) -> float:
    y = (np.asarray(y_true) == 1).astype(np.float64)
    if y.sum() == 0:
        return float("nan")
    order = np.argsort(-np.asarray(score, dtype=np.float64), kind="mergesort")
    ordered = np.asarray(score, dtype=np.float64)[order]
    last = np.r_[np.flatnonzero(ordered[1:] != ordered[:-1]), len(y) - 1]   # each threshold
    tp = np.cumsum(y[order])[last]
    precision = tp / (last + 1)
    recall = tp / tp[-1]
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def variant_scores(y_true: np.ndarray, score: np.ndarray) -> dict[str, float]:
    """The variant kind's metrics of scores where higher means label 1 more likely."""
    return {"auroc": auroc(y_true, score), "auprc": auprc(y_true, score)}
