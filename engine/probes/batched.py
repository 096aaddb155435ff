"""Batched L2-regularised logistic regression in torch, fitting scikit-learn's objective exactly.

For each problem b (training rows i with multiplicity w_i, n_b = Σ w_i) the solver minimises
scikit-learn's `LogisticRegression` objective

    C_b · Σ_i w_i · loss_i(W, c) + ½ ‖W‖²

(intercept c unpenalised; binary: one weight vector and the binomial log-loss, positive class
classes[1]; K > 2 classes: multinomial softmax log-loss with all K rows of W penalised). It works
on the equivalent mean form `F_b = Σ_i w_i loss_i / n_b + ‖W‖² / (2 C_b n_b)` (the objective
divided by C_b n_b), and `tol` bounds the max-norm of ∇F_b, the quantity scikit-learn's lbfgs
`tol` bounds. With `standardize=True` the features of each problem are standardised with the
mean and population sd of its own training rows, like a StandardScaler fitted on the training
split, and `coef_` is in standardised units (as in a StandardScaler + LogisticRegression pipeline).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch
from torch import Tensor

from engine.probes.estimator import BatchedEstimator
from engine.probes.problems import (
    Batch,
    Curvature,
    feature_curvature,
    l2_weight,
    logistic_objective,
)


class BatchedLogisticRegression(BatchedEstimator):
    """Many L2-regularised logistic regressions at once (scikit-learn-like estimator).

    Parameters as `BatchedEstimator`'s. A fit of one problem over all rows (the full regime) is
    preconditioned by its features' curvature (`engine.probes.problems.Curvature`); `fit_path`
    fits one such problem along increasing C.
    """

    def __init__(self, C: float | Sequence[float] = 1.0, tol: float = 1e-6,
                 max_iter: int = 10_000, standardize: bool = False, history: int = 10,
                 device: str | torch.device | None = "cpu",
                 dtype: torch.dtype = torch.float64) -> None:
        super().__init__(C, tol, max_iter, standardize, history, device, dtype)

    def fit(self, X: np.ndarray | Tensor, y: np.ndarray,
            rows: Sequence[np.ndarray] | None = None) -> BatchedLogisticRegression:
        """Fit B problems; see `engine.probes.problems.build_batch` for the accepted shapes.

        Learned state: classes_ (K,), coef_ (B, K', d) with K' = 1 for binary problems,
        intercept_ (B, K'), mean_ and scale_ (B, d) or None, n_iter_ (B,), converged_ (B,).
        """
        batch = self._batch(X, y, rows)
        return self._fit(batch, feature_curvature(batch), self._start(batch))

    def fit_path(self, X: np.ndarray | Tensor, y: np.ndarray,
                 Cs: Sequence[float]) -> Iterator[tuple[float, BatchedLogisticRegression]]:
        """One problem on all rows of X (n, d) per value of `Cs`, in increasing C, each started
        from the previous optimum (a regularisation path, as scikit-learn's
        `_logistic_regression_path`); the batch, its standardisation and its curvature are built
        once. Yields (C, self) after each fit, with the learned state of that C's fit."""
        batch = self._batch(X, y, None)
        curvature = feature_curvature(batch)
        theta = self._start(batch)
        for C in sorted(Cs):
            self.C = C
            theta = self._fit(batch, curvature, theta).theta_
            yield C, self

    def _start(self, batch: Batch) -> Tensor:
        """Zero parameters (B, (d + 1) · K') for the problems of `batch`."""
        d = batch.design.X.shape[-1]
        return torch.zeros(batch.n_problems, (d + 1) * batch.n_outputs, dtype=self.dtype,
                           device=batch.weight.device)

    def _fit(self, batch: Batch, curvature: Curvature | None,
             theta0: Tensor) -> BatchedLogisticRegression:
        """Minimise the objective of `batch` at self.C from `theta0`, and keep the state."""
        penalty = l2_weight(self.C, batch)
        k = batch.n_outputs
        precondition = None if curvature is None else curvature.preconditioner(float(penalty[0]), k)
        self._solve(batch, logistic_objective(batch, penalty), theta0, precondition)
        d = batch.design.X.shape[-1]
        params = self.theta_.view(batch.n_problems, d + 1, k)
        self.coef_ = params[:, :d].transpose(1, 2).cpu().numpy()
        self.intercept_ = params[:, d].cpu().numpy()
        self.mean_, self.scale_ = (None if t is None else t.cpu().numpy()
                                   for t in self._standardisation)
        return self

    def decision_function(self, X: np.ndarray | Tensor) -> Tensor:
        """Logits (B, m, K') of every problem on features X (m, d) shared by all problems."""
        design = self._design(X)
        d = design.X.shape[-1]
        params = self.theta_.view(-1, d + 1, self.coef_.shape[1])
        return design.linear(params[:, :d]) + params[:, d][:, None, :]
