"""Batched one-hidden-layer MLP probe (for the paper's appendix E.1 linear-vs-MLP comparison).

Model per problem b: logits = relu(x̃ @ W1 + c1) @ W2 + c2, with x̃ the (optionally standardised)
features, `hidden` ReLU units and K' outputs (1 for binary problems, as the logistic probe).
Objective, in the same C convention as the logistic probe: C · Σ_i w_i · loss_i + ½ (‖W1‖² +
‖W2‖²) (biases unpenalised), minimised in mean form by full-batch L-BFGS to a gradient max-norm
`tol` or `max_iter` iterations, in float32 by default (an MLP fit is ~hidden/K times the cost of a
logistic one). Width, activation, optimiser and penalty are this project's stated choices; the
variant's protocol hash records width, C, tol and max_iter. Initial weights are drawn per problem
from a CPU `torch.Generator` seeded with that problem's seed, uniform on ±1/sqrt(fan_in)
(PyTorch's Linear default): a fit is deterministic given the seed on a given device.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from engine.probes.estimator import BatchedEstimator
from engine.probes.lbfgs import value_and_grad
from engine.probes.problems import Design, l2_weight, mean_loss


class BatchedMLPClassifier(BatchedEstimator):
    """Many one-hidden-layer MLP probes at once; `fit` takes one seed per problem.

    Parameters as `BatchedEstimator`'s, and hidden: the width of the hidden layer. Training rows
    and standardisation are as in `BatchedLogisticRegression`.
    """

    def __init__(self, hidden: int = 256, C: float | Sequence[float] = 1.0, tol: float = 1e-5,
                 max_iter: int = 500, standardize: bool = True, history: int = 10,
                 device: str | torch.device | None = "cpu",
                 dtype: torch.dtype = torch.float32) -> None:
        super().__init__(C, tol, max_iter, standardize, history, device, dtype)
        self.hidden = hidden

    def fit(self, X: np.ndarray | Tensor, y: np.ndarray, seeds: Sequence[int],
            rows: Sequence[np.ndarray] | None = None) -> BatchedMLPClassifier:
        """Fit one MLP per seed (and per row set; `seeds` has one entry per problem).

        Learned state: classes_, n_iter_ (B,), converged_ (B,); `predict` uses the fitted nets.
        """
        batch = self._batch(X, y, rows)
        if len(seeds) != batch.n_problems:
            raise ValueError(f"{len(seeds)} seeds for {batch.n_problems} problems")
        d, h, k = batch.design.X.shape[-1], self.hidden, batch.n_outputs
        self._shape = (d, h, k)
        penalty = l2_weight(self.C, batch)

        def objective(theta: Tensor, index: Tensor) -> Tensor:
            sub = batch.select(index)
            W1, c1, W2, c2 = self._unpack(theta)
            Z = self._logits(sub.design, W1, c1, W2, c2)
            return mean_loss(Z, sub) + penalty[index] * ((W1 * W1).sum((1, 2))
                                                         + (W2 * W2).sum((1, 2)))

        theta0 = torch.stack([self._init(seed) for seed in seeds]).to(batch.weight.device)
        self._solve(batch, value_and_grad(objective), theta0)
        return self

    def _init(self, seed: int) -> Tensor:
        """Flat initial parameters [W1, c1, W2, c2] for one seed."""
        d, h, k = self._shape
        gen = torch.Generator().manual_seed(int(seed))
        parts = [((d, h), d), ((h,), d), ((h, k), h), ((k,), h)]
        return torch.cat([
            ((torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) / fan_in**0.5)
            .reshape(-1) for shape, fan_in in parts
        ]).to(self.dtype)

    def _unpack(self, theta: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        d, h, k = self._shape
        W1, c1, W2, c2 = torch.split(theta, [d * h, h, h * k, k], dim=1)
        b = theta.shape[0]
        return W1.view(b, d, h), c1.view(b, 1, h), W2.view(b, h, k), c2.view(b, 1, k)

    @staticmethod
    def _logits(design: Design, W1: Tensor, c1: Tensor, W2: Tensor, c2: Tensor) -> Tensor:
        return torch.bmm(torch.relu(design.linear(W1) + c1), W2) + c2

    def decision_function(self, X: np.ndarray | Tensor) -> Tensor:
        """Logits (B, m, K') of every problem on features X (m, d)."""
        return self._logits(self._design(X), *self._unpack(self.theta_))
