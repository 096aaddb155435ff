"""The exact scikit-learn probe (solver `sklearn-lbfgs`): geneb-v1, as the official harness
computes it.

`LogisticRegression(max_iter=1000, random_state=seed)` with scikit-learn's other defaults (lbfgs,
L2, C=1.0), no feature scaling, on the stored float32 embeddings passed unchanged, as the official
harness passes its extractors' float32 output: scikit-learn (>= 1.2) keeps float32 for the loss
and gradient while scipy's L-BFGS-B iterates in float64, the same arithmetic on the same input.
Seeds 13, 17, 42, 123, 997.

- full: the whole train split. lbfgs is deterministic and `random_state` does not enter it, so the
  five seeds' fits are identical: we fit once and record the result for every seed
  (`shared_fit=True`).
- 10shot / 1shot: for each seed a fresh `numpy.random.RandomState(seed)`; for each class in sorted
  order, `choice(indices_of_class, min(k, class_size), replace=False)` over the train rows in
  file order; the per-class picks are concatenated in that order. The test split is always whole.

Metrics are scikit-learn's MCC, accuracy and macro-F1, computed here from one confusion matrix
with scikit-learn's own arithmetic (the same float64 operations in the same order, so the same
bits: `tests/engine/test_probe_parity.py` holds them equal on hundreds of random predictions):
its input checks cost about 18 ms a prediction, longer than fitting a small probe. Each row also
carries `pred`, its test predictions (the class of every test row, in file order; rows of one
shared fit share them), which `engine.pairs` stores in the predictions table
(`store.tables.predictions`). A fit that stops at `max_iter` (ConvergenceWarning) is flagged
`converged=False`; a prediction with fewer than two classes is flagged `degenerate=True`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from store.vocab.protocol import GENEB_V1, REGIME_K, Protocol


def few_shot_indices(y_train: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Train-row indices of one k-shot draw, in the official harness's order."""
    rng = np.random.RandomState(seed)
    return np.concatenate([
        rng.choice(np.where(y_train == cls)[0], size=min(k, int(np.sum(y_train == cls))),
                   replace=False)
        for cls in np.unique(y_train)
    ])


def evaluate(y_true: np.ndarray, y_pred: np.ndarray) -> dict:
    """MCC, accuracy and macro-F1 of one prediction, equal bit for bit to scikit-learn's
    `matthews_corrcoef`, `accuracy_score` and `f1_score(average="macro")`; `degenerate` when
    fewer than two classes are predicted."""
    n = len(y_true)
    labels, codes = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    true, pred = codes[:n], codes[n:]
    k = len(labels)
    confusion = np.bincount(true * k + pred, minlength=k * k).reshape(k, k)
    return {"mcc": _mcc(confusion),
            "acc": float(np.mean((true == pred).astype(np.float64))),
            "f1_macro": _f1_macro(confusion),
            "degenerate": bool(np.unique(y_pred).size < 2)}


def _mcc(confusion: np.ndarray) -> float:
    """`sklearn.metrics.matthews_corrcoef` from its confusion matrix, its operations in order."""
    t_sum = confusion.sum(axis=1, dtype=np.float64)
    p_sum = confusion.sum(axis=0, dtype=np.float64)
    n_correct = np.trace(confusion, dtype=np.float64)
    n_samples = p_sum.sum()
    cov_ytyp = n_correct * n_samples - np.dot(t_sum, p_sum)
    cov_ypyp = n_samples**2 - np.dot(p_sum, p_sum)
    cov_ytyt = n_samples**2 - np.dot(t_sum, t_sum)
    product = cov_ypyp * cov_ytyt
    return 0.0 if product == 0 else float(cov_ytyp / np.sqrt(product))


def _f1_macro(confusion: np.ndarray) -> float:
    """`f1_score(average="macro")` over the labels of truth and prediction: per label
    2·tp / (true + predicted) in float64 (never 0 / 0 here: every label occurs), then their
    `nanmean`, as scikit-learn's `precision_recall_fscore_support` computes it."""
    tp = np.diagonal(confusion).astype(np.float64)
    true = confusion.sum(axis=1).astype(np.float64)
    predicted = confusion.sum(axis=0).astype(np.float64)
    return float(np.nanmean(2 * tp / (1 * true + predicted)))


def fitted(X, y, seed: int, protocol: Protocol = GENEB_V1) -> tuple[LogisticRegression, dict]:
    """One scikit-learn fit of the protocol's probe, and the fit's flags (converged, n_iter,
    fit_seconds)."""
    clf = LogisticRegression(max_iter=protocol.max_iter, C=protocol.C, random_state=seed)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        clf.fit(X, y)
    seconds = time.perf_counter() - start
    n_iter = int(clf.n_iter_.max())
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return clf, {"converged": converged, "n_iter": n_iter, "fit_seconds": seconds}


def fit_predict(X, y, X_test, seed: int,
                protocol: Protocol = GENEB_V1) -> tuple[np.ndarray, dict]:
    """One scikit-learn fit (`fitted`); returns test predictions and the fit's flags. X, y and
    X_test are numpy arrays, or arrays of one array-API namespace under scikit-learn's
    array-API dispatch (`engine.probes.array_api`; predictions then come back in that
    namespace)."""
    clf, info = fitted(X, y, seed, protocol)
    return clf.predict(X_test), info


Fit = Callable[..., tuple[np.ndarray, dict]]
"""`fit_predict`'s signature: (X, y, X_test, seed, protocol) -> (test predictions, flags)."""


def probe_cell(X_train, y_train: np.ndarray, X_test, y_test: np.ndarray,
               regimes: Sequence[str], protocol: Protocol = GENEB_V1,
               fit: Fit = fit_predict) -> list[dict]:
    """Result rows (regime, seed, metrics, flags, `pred`: the test predictions) for one
    (model, task) cell, geneb-v1 exact. `fit` fits one problem (`fit_predict`, or its array-API
    twin, which takes X_train and X_test as device tensors and returns numpy predictions)."""
    seeds = protocol.seeds
    rows = []
    for regime in regimes:
        k = REGIME_K[regime]
        if k is None:
            pred, info = fit(X_train, y_train, X_test, seeds[0], protocol)
            scored = {**evaluate(y_test, pred), **info, "n_train": len(y_train), "pred": pred}
            rows += [{"regime": regime, "seed": s, "shared_fit": True, **scored} for s in seeds]
            continue
        for seed in seeds:
            idx = few_shot_indices(y_train, k, seed)
            pred, info = fit(X_train[idx], y_train[idx], X_test, seed, protocol)
            rows.append({"regime": regime, "seed": seed, "shared_fit": False,
                         **evaluate(y_test, pred), **info, "n_train": len(idx), "pred": pred})
    for r in rows:
        r.update(probe=protocol.probe, n_test=len(y_test))
    return rows


def run_cells(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
              protocols: Sequence[Protocol], regimes: Sequence[str],
              device: str | None = None) -> list[list[dict]]:
    """Rows of one cell under each of `protocols`, one list per protocol (the runner of
    `engine.probes.RUNNERS`; scikit-learn runs on the CPU whatever `device` says)."""
    return [probe_cell(X_train, y_train, X_test, y_test, regimes, p) for p in protocols]
