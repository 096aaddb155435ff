"""Result rows of one (model, task) pair of a regression or variant task under its kind's
protocols (`store.vocab.protocol.KIND_PROTOCOLS`; their definitions are there), from the
embeddings of the task's distinct sequences and its `engine.data.KindTargets`.

- ridge (regression): `ridge_fit` solves scikit-learn's `Ridge(alpha)` problem (intercept
  unpenalised: centre X and y, solve the normal equations in float64, in the dual form where
  rows are fewer than features, which gives the same solution). Regimes: full (one fit stands
  for every seed, `shared_fit`); k-shot: `regression_draw`'s 2k rows per seed.
- cosine (variant, zero-shot): 1 - cos(ref, alt) of each variant, computed in float64.
- llr (variant, zero-shot): -LLR of each variant (`llr_score`), from the pair's cached LLRs (the
  split `LLR_SPLIT` that `engine.encoders.lm_head.score_into` wrote, its identity
  `llr_identity`).
- variant probe: geneb-v1's logistic regression (`engine.probes.exact.fitted`) on
  `variant_features` ([ref, alt, alt - ref], float32 as stored), geneb-v1's regimes and
  draws (`engine.probes.exact.few_shot_indices` over the variant labels); the score is the
  probability of label 1.
- ridge (tracks, multilabel): the same `ridge_fit` with the targets (the 0/1 labels) as the
  columns of y (one solve for every target: the system's matrix does not depend on y), the
  same regimes and draws; scored per target and averaged (`engine.probes.scores.
  tracks_scores`, `multilabel_scores`: the prediction of a label is its score).

Rows carry the kind (`store.vocab.kinds.stored_kind`) and its metrics (`engine.probes.scores`),
and `pred`, the value of every test row (a regression's prediction, a variant's score: what the
predictions table stores as `value` rows, `store.tables.predictions`; a tracks or multilabel
task's, one per target, which that table's one value a row cannot hold: `engine.pairs` stores
none).
`degenerate` (a classification flag) is NULL; `n_test` counts the
task file's test rows (variants, not distinct sequences).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cached_property

import numpy as np

from engine.data import KindTargets
from engine.probes.exact import few_shot_indices, fitted
from engine.probes.scores import (
    multilabel_scores,
    regression_scores,
    tracks_scores,
    variant_scores,
)
from store.vocab.kinds import TaskKind, stored_kind
from store.vocab.protocol import REGIME_K, VARIANT_LLR_V1, Probe, Protocol

Todo = tuple[tuple[Protocol, tuple[str, ...]], ...]


def ridge_fit(X: np.ndarray, y: np.ndarray,
              alpha: float) -> tuple[np.ndarray, float | np.ndarray]:
    """(coef, intercept) of ridge regression with an unpenalised intercept: scikit-learn's
    `Ridge(alpha=alpha)` on float64 data; `y` (n,) one target, (n, t) t targets (coef (d, t),
    one intercept per target)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    x_mean, y_mean = X.mean(axis=0), y.mean(axis=0)
    Xc, yc = X - x_mean, y - y_mean
    n, d = Xc.shape
    if n >= d:
        coef = np.linalg.solve(Xc.T @ Xc + alpha * np.eye(d), Xc.T @ yc)
    else:   # (X'X + aI)^-1 X' = X'(XX' + aI)^-1
        coef = Xc.T @ np.linalg.solve(Xc @ Xc.T + alpha * np.eye(n), yc)
    intercept = y_mean - x_mean @ coef
    return coef, float(intercept) if y.ndim == 1 else intercept


def ridge_predict(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray,
                  alpha: float) -> np.ndarray:
    coef, intercept = ridge_fit(X_train, y_train, alpha)
    return np.asarray(X_test, dtype=np.float64) @ coef + intercept


def regression_draw(n: int, k: int, seed: int) -> np.ndarray:
    """Train-row indices of a regression task's k-shot draw: 2k rows (all of them where
    fewer) drawn without replacement by `numpy.random.RandomState(seed)`."""
    return np.random.RandomState(seed).choice(n, size=min(2 * k, n), replace=False)


def cosine_distance(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """1 - cos of each row pair (a zero row's distance: 1)."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    norms = np.linalg.norm(A, axis=1) * np.linalg.norm(B, axis=1)
    dots = np.einsum("ij,ij->i", A, B)
    return 1.0 - np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def variant_features(X: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """[ref, alt, alt - ref] of each variant: `pairs` (n, 2) indexes `X`'s rows."""
    ref, alt = X[pairs[:, 0]], X[pairs[:, 1]]
    return np.hstack([ref, alt, alt - ref])


LLR_SPLIT = "test-llr"
"""The embedding store's split of a pair's cached test LLRs (one float64 value a variant)."""


def llr_identity(expect: dict) -> dict:
    """The identity of a pair's cached LLRs, from its embeddings' (`expect`): the same model,
    revision, data and precision, scored by variant-llr-v1 (its hash), stored in float64."""
    return {**expect, "encoder": {"zero_shot": VARIANT_LLR_V1.name,
                                  "protocol_hash": VARIANT_LLR_V1.hash,
                                  "source": expect["encoder"].get("source")},
            "dtype": "float64"}


def llr_score(llr: np.ndarray) -> np.ndarray:
    """The score a variant is ranked by: -LLR (the alternative less likely than the reference:
    an effect more likely)."""
    return -np.asarray(llr, dtype=np.float64).reshape(-1)


class _Rows:
    """The design matrices of one pair's rows, each built once for all its fits: a
    regression's rows' embeddings, a variant's `variant_features`; its cached LLRs (`llr`,
    where it has them)."""

    def __init__(self, X_train: np.ndarray, X_test: np.ndarray, targets: KindTargets,
                 llr: np.ndarray | None = None):
        self.X_train, self.X_test, self.t, self.llr = X_train, X_test, targets, llr

    @cached_property
    def regression(self) -> tuple[np.ndarray, np.ndarray]:
        return self.X_train[self.t.rows_train], self.X_test[self.t.rows_test]

    @cached_property
    def variant(self) -> tuple[np.ndarray, np.ndarray]:
        return (variant_features(self.X_train, self.t.rows_train),
                variant_features(self.X_test, self.t.rows_test))


def _ridge(p: Protocol, rows_of: _Rows, t: KindTargets, regime: str, seed: int) -> dict:
    Xtr, Xte = rows_of.regression
    k = REGIME_K[regime]
    rows = (np.arange(len(t.y_train)) if k is None
            else regression_draw(len(t.y_train), k, seed))
    start = time.perf_counter()
    pred = ridge_predict(Xtr[rows], t.y_train[rows], Xte, p.alpha)
    return {**_RIDGE_SCORES[t.kind](t.y_test, pred), "n_train": len(rows),
            "fit_seconds": time.perf_counter() - start, "converged": True, "n_iter": None,
            "pred": pred}


_RIDGE_SCORES = {TaskKind.REGRESSION: regression_scores, TaskKind.TRACKS: tracks_scores,
                 TaskKind.MULTILABEL: multilabel_scores}
"""How each kind ridge probes scores its test predictions."""


def _cosine(p: Protocol, rows_of: _Rows, t: KindTargets, regime: str, seed: int) -> dict:
    start = time.perf_counter()
    X_test = rows_of.X_test
    score = cosine_distance(X_test[t.rows_test[:, 0]], X_test[t.rows_test[:, 1]])
    return {**variant_scores(t.y_test, score), "n_train": 0,
            "fit_seconds": time.perf_counter() - start, "converged": None, "n_iter": None,
            "pred": score}


def _llr(p: Protocol, rows_of: _Rows, t: KindTargets, regime: str, seed: int) -> dict:
    score = llr_score(rows_of.llr)
    return {**variant_scores(t.y_test, score), "n_train": 0, "fit_seconds": 0.0,
            "converged": None, "n_iter": None, "pred": score}


def _variant_probe(p: Protocol, rows_of: _Rows, t: KindTargets, regime: str,
                   seed: int) -> dict:
    F_train, F_test = rows_of.variant
    k = REGIME_K[regime]
    rows = np.arange(len(t.y_train)) if k is None else few_shot_indices(t.y_train, k, seed)
    clf, info = fitted(F_train[rows], t.y_train[rows], seed, p)
    score = clf.predict_proba(F_test)[:, 1]
    return {**variant_scores(t.y_test, score), **info, "n_train": len(rows), "pred": score}


_SCORED: dict[Probe, Callable[..., dict]] = {
    Probe.RIDGE: _ridge, Probe.COSINE: _cosine, Probe.LOGREG: _variant_probe, Probe.LLR: _llr}
"""How each kind protocol's probe scores one (regime, seed)."""


def kind_rows(X_train: np.ndarray, X_test: np.ndarray, targets: KindTargets,
              todo: Todo, llr: np.ndarray | None = None) -> list[dict]:
    """Rows of every (protocol, regimes) of one pair of a regression or variant task; a fit
    that does not depend on the seed (a full regime, a zero-shot score) is computed once and
    recorded for every seed (`shared_fit`)."""
    rows: list[dict] = []
    rows_of = _Rows(X_train, X_test, targets, llr)
    for p, regimes in todo:
        common = {"probe": p.probe, "protocol": p.name, "protocol_hash": p.hash,
                  "kind": stored_kind(p.kind), "n_test": len(targets.y_test),
                  "degenerate": None}
        for regime in regimes:
            if p.zero_shot or REGIME_K[regime] is None:
                scored = _SCORED[p.probe](p, rows_of, targets, regime, p.seeds[0])
                rows += [{**common, **scored, "regime": regime, "seed": s, "shared_fit": True}
                         for s in p.seeds]
                continue
            for seed in p.seeds:
                scored = _SCORED[p.probe](p, rows_of, targets, regime, seed)
                rows.append({**common, **scored, "regime": regime, "seed": seed,
                             "shared_fit": False})
    return rows
