"""Result rows of one (model, task) cell under protocol variants, fitted with the batched solvers
(the runner of solver `torch-lbfgs`, `engine.probes.RUNNERS`).

Per probe configuration, the fits of a cell run in two groups: the full-regime problems on the
shared train matrix (one per protocol for the logistic probe, whose fit does not depend on the
seed, solved along increasing C with warm starts; one per protocol and seed for the seeded MLP,
batched), and every k-shot problem (protocol x regime x seed) stacked in one batch. The k-shot
rows are the geneb-v1 draws (`engine.probes.exact.few_shot_indices`) and the metrics are
geneb-v1's (`engine.probes.exact.evaluate`), so variant rows line up with official ones.

`fit_seconds` of a row is the wall time of the batch that fitted it divided by the number of
problems in that batch (an amortised share); rows of one shared fit carry the same value.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from engine.probes.batched import BatchedLogisticRegression
from engine.probes.exact import evaluate, few_shot_indices
from engine.probes.mlp import BatchedMLPClassifier
from engine.probes.problems import resolve_device
from store.vocab.protocol import REGIME_K, Protocol


@dataclass(frozen=True)
class _Problem:
    protocol: int            # index into the protocols of the call
    regime: str
    seed: int                # the seed that drew the rows (and initialises an MLP)
    rows: np.ndarray | None  # None: the whole train split


_Fit = tuple[list[_Problem], np.ndarray, np.ndarray, np.ndarray]
"""Problems fitted together, with their test predictions, convergence flags and iterations."""


def run_cells(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    protocols: Sequence[Protocol],
    regimes: Sequence[str],
    device: str | torch.device | None = None,
) -> list[list[dict]]:
    """Rows of one cell under several variant protocols (e.g. a C sweep), one list per protocol.

    Protocols that differ only in C share batches (C is per problem); each protocol's rows cover
    its own seeds. Keys of a row: regime, seed, probe, mcc, acc, f1_macro, degenerate, n_train,
    n_test, converged, n_iter, shared_fit, fit_seconds, and `pred` (the test predictions, one
    class per test row; stored by `engine.pairs` in the predictions table). `device` None picks
    CUDA where available.
    """
    for p in protocols:
        if p.tol is None:
            raise ValueError(f"protocol {p.name}: solver {p.solver!r} without a tolerance is not "
                             "a batched-solver protocol; engine.probes.RUNNERS sends each "
                             "protocol to its solver's runner (geneb-v1: engine.probes.exact)")
    out: list[list[dict]] = [[] for _ in protocols]
    groups: dict[tuple, list[int]] = {}
    for i, p in enumerate(protocols):
        groups.setdefault((p.probe, p.standardize, p.tol, p.max_iter, p.hidden), []).append(i)
    for members in groups.values():
        full, shots = _problems(y_train, protocols, members, regimes)
        for problems in (full, shots):
            if problems:
                for problem, row in _fit_batch(X_train, y_train, X_test, y_test, protocols,
                                               problems, device):
                    out[problem.protocol].extend(_expand(problem, row, protocols))
    return out


def _problems(
    y_train: np.ndarray, protocols: Sequence[Protocol], members: list[int],
    regimes: Sequence[str],
) -> tuple[list[_Problem], list[_Problem]]:
    """The full-regime and the k-shot problems of the protocols `members` (which share batches)."""
    full: list[_Problem] = []
    shots: list[_Problem] = []
    for i in members:
        p = protocols[i]
        for regime in regimes:
            k = REGIME_K[regime]
            if k is None:
                full += ([_Problem(i, regime, p.seeds[0], None)] if p.shares_full_fit
                         else [_Problem(i, regime, s, None) for s in p.seeds])
            else:
                shots += [_Problem(i, regime, s, few_shot_indices(y_train, k, s))
                          for s in p.seeds]
    return full, shots


def _fit_batch(
    X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
    protocols: Sequence[Protocol], problems: list[_Problem], device: str | torch.device | None,
) -> list[tuple[_Problem, dict]]:
    """Fit one batch of problems (same probe configuration) and score each on the test split."""
    p = protocols[problems[0].protocol]
    if p.probe not in _FITS:
        raise ValueError(f"protocol {p.name}: unknown probe {p.probe!r} ({' or '.join(_FITS)})")
    device = resolve_device(device)
    Cs = [protocols[q.protocol].C for q in problems]
    rows = None if problems[0].rows is None else [q.rows for q in problems]
    start = time.perf_counter()
    fits = _FITS[p.probe](p, problems, Cs, rows, X_train, y_train, X_test, device)
    seconds = (time.perf_counter() - start) / len(problems)
    return [
        (q, {**evaluate(y_test, pred), "probe": p.probe, "converged": bool(conv),
             "n_iter": int(it), "fit_seconds": seconds, "n_test": len(y_test),
             "n_train": len(y_train) if q.rows is None else len(q.rows),
             "pred": np.asarray(pred)})
        for batch, predictions, converged, n_iter in fits
        for q, pred, conv, it in zip(batch, predictions, converged, n_iter, strict=True)
    ]


FULL_HISTORY = 80
"""L-BFGS curvature pairs of a full-regime logistic fit (the k-shot batches keep the estimator's
10, as scipy's lbfgs does). A pass over the whole train split costs far more than the two-loop
recursion over 80 pairs of (d + 1)·K' numbers, and the longer memory models the curvature of
these ill-conditioned problems better. Measured on the five-value sweep's full fits (synthetic
cells, one thread, along C, before the `Curvature` preconditioner): n = 10,000, d = 512,
2 classes: 913 iterations in all with 10 pairs, 349 with 80, test predictions identical;
10 classes (n = 6,000): 5,377 with 10, 3,466 with 80. With the preconditioner: 2 classes 48 with
10 or 80; 10 classes 432 with 10, 365 with 30, 360 with 80. Memory: 80 x 2 x (d + 1)·K'
float64 per problem (13 MB at d = 1,024, K' = 10)."""


def _fit_logreg(p: Protocol, problems: list[_Problem], Cs: list[float],
                rows: list[np.ndarray] | None, X_train: np.ndarray, y_train: np.ndarray,
                X_test: np.ndarray, device: torch.device) -> list[_Fit]:
    """Logistic problems: k-shot ones in one batch; full-regime ones (one per C) one after another
    along increasing C, each warm-started from the previous optimum and preconditioned by the
    features' curvature (`BatchedLogisticRegression.fit_path`). Measured, before the
    preconditioner, on the five-value
    sweep (n = 30,000, d = 1,024, 2 classes, one thread): one compacted batch of the five took
    31.7 s, this path 34.1 s, scikit-learn's five fits 107.6 s; the batch shares each pass over
    X but runs 2,005 problem-iterations to the path's 1,176; with 10 classes (K' = 10 columns
    per problem) a pass is bound by arithmetic rather than memory, which favours fewer
    iterations, so the path stays. The full fits keep FULL_HISTORY curvature pairs."""
    est = BatchedLogisticRegression(tol=p.tol, max_iter=p.max_iter, standardize=p.standardize,
                                    device=device)
    if rows is not None:
        est.C = Cs
        est.fit(X_train, y_train, rows)
        return [(problems, est.predict(X_test), est.converged_, est.n_iter_)]
    est.history = FULL_HISTORY
    ordered = sorted(zip(Cs, problems, strict=True), key=lambda pair: pair[0])
    path = est.fit_path(X_train, y_train, [C for C, _ in ordered])
    return [([q], fitted.predict(X_test), fitted.converged_, fitted.n_iter_)
            for (_, q), (_, fitted) in zip(ordered, path, strict=True)]


def _fit_mlp(p: Protocol, problems: list[_Problem], Cs: list[float],
             rows: list[np.ndarray] | None, X_train: np.ndarray, y_train: np.ndarray,
             X_test: np.ndarray, device: torch.device) -> list[_Fit]:
    """MLP problems in one batch, each initialised from its seed."""
    est = BatchedMLPClassifier(hidden=p.hidden, C=Cs, tol=p.tol, max_iter=p.max_iter,
                               standardize=p.standardize, device=device)
    seeds = [q.seed for q in problems]
    if rows is None:
        est.fit(X_train, np.broadcast_to(y_train, (len(problems), len(y_train))), seeds)
    else:
        est.fit(X_train, y_train, seeds, rows)
    return [(problems, est.predict(X_test), est.converged_, est.n_iter_)]


_FITS = {"logreg": _fit_logreg, "mlp": _fit_mlp}   # probe -> how a batch of its problems is fit


def _expand(problem: _Problem, row: dict, protocols: Sequence[Protocol]) -> list[dict]:
    """The rows one fitted problem stands for: every seed for a seed-independent full fit."""
    p = protocols[problem.protocol]
    if problem.rows is None and p.shares_full_fit:
        return [{"regime": problem.regime, "seed": s, "shared_fit": True, **row} for s in p.seeds]
    return [{"regime": problem.regime, "seed": problem.seed, "shared_fit": False, **row}]
