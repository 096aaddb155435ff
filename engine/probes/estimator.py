"""The base of the batched probe estimators: their shared parameters and the shared steps of
`fit` (assemble the batch, run L-BFGS, keep the fitted state) and of prediction.

scikit-learn's estimator conventions: parameters are taken in `__init__` and stored as given
(each subclass lists its own, with its defaults), `fit` learns, and learned state carries a
trailing underscore.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from engine.probes.lbfgs import Objective, minimize_lbfgs
from engine.probes.problems import Batch, Design, as_tensor, build_batch, decide, resolve_device


class BatchedEstimator:
    """Many probes of one kind fitted at once by batched L-BFGS, one problem per batch entry.

    C: one value for all problems or one per problem. tol: gradient max-norm of the mean-form
    objective. history: L-BFGS curvature pairs kept. device: "cpu", "cuda", or "auto"/None
    (CUDA where present). Learned state of every fit: theta_ (B, P) the parameters, classes_,
    n_iter_ (B,), converged_ (B,), grad_max_ (B,).
    """

    def __init__(self, C: float | Sequence[float], tol: float, max_iter: int, standardize: bool,
                 history: int, device: str | torch.device | None, dtype: torch.dtype) -> None:
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.standardize = standardize
        self.history = history
        self.device = device
        self.dtype = dtype

    def _batch(self, X: np.ndarray | Tensor, y: np.ndarray,
               rows: Sequence[np.ndarray] | None) -> Batch:
        """The problems of one `fit` (`engine.probes.problems.build_batch`) on this device."""
        return build_batch(X, y, rows, standardize=self.standardize,
                           device=resolve_device(self.device), dtype=self.dtype)

    def _solve(self, batch: Batch, fun: Objective, theta0: Tensor,
               precondition: Callable[[Tensor], Tensor] | None = None) -> None:
        """Minimise the B problems of `fun` from `theta0` (B, P) and keep the fitted state."""
        result = minimize_lbfgs(fun, theta0, tol=self.tol, max_iter=self.max_iter,
                                history=self.history, precondition=precondition)
        self.theta_ = result.x
        self.classes_ = batch.classes
        self._standardisation = (batch.design.mean, batch.design.scale)
        self.n_iter_ = result.n_iter.cpu().numpy()
        self.converged_ = result.converged.cpu().numpy()
        self.grad_max_ = result.grad_max.cpu().numpy()

    def _design(self, X: np.ndarray | Tensor) -> Design:
        """Features X (m, d), shared by all problems, standardised as each problem's training
        rows were."""
        return Design(as_tensor(X, self.theta_.device, self.dtype), *self._standardisation)

    def decision_function(self, X: np.ndarray | Tensor) -> Tensor:
        """Logits (B, m, K') of every problem on features X (m, d)."""
        raise NotImplementedError

    def predict(self, X: np.ndarray | Tensor) -> np.ndarray:
        """Predicted labels (B, m): classes_[1] where the binary logit > 0, else the argmax."""
        return decide(self.decision_function(X), self.classes_)
