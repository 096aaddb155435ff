"""One pass over X per evaluation: the blocked analytic logistic objective, active-set compaction
and the full-regime C sweep against scikit-learn converged."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from engine.probes import problems
from engine.probes.batched import BatchedLogisticRegression
from engine.probes.cell import run_cells
from engine.probes.exact import few_shot_indices
from engine.probes.lbfgs import minimize_lbfgs, value_and_grad
from engine.probes.problems import build_batch, l2_weight, logistic_objective, mean_loss
from store.vocab.protocol import sweep_protocols

CPU = torch.device("cpu")


def features(n: int, d: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Float32 features with offsets and unequal scales, labels with a linear signal."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    y = np.argmax(Z @ rng.normal(size=(d, k)) + rng.gumbel(size=(n, k)), axis=1)
    return (Z * rng.uniform(0.2, 4.0, size=d) + rng.normal(size=d) * 2).astype(np.float32), y


def autograd_objective(batch: problems.Batch, penalty: torch.Tensor):
    """The reference: autograd through `Design.linear` and `mean_loss` (the formulas of record)."""
    d, k = batch.design.X.shape[-1], batch.n_outputs

    def objective(theta: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        sub = batch.select(index)
        params = theta.view(-1, d + 1, k)
        W, c = params[:, :d], params[:, d]
        return mean_loss(sub.design.linear(W) + c[:, None, :], sub) + penalty[index] * (
            W * W).sum((1, 2))

    return value_and_grad(objective)


@pytest.mark.parametrize("k", [2, 4], ids=["binary", "multinomial"])
@pytest.mark.parametrize("standardize", [False, True], ids=["raw", "standardised"])
@pytest.mark.parametrize("layout", ["shared", "stacked"])
def test_blocked_objective_equals_autograd(monkeypatch, k: int, standardize: bool,
                                           layout: str) -> None:
    monkeypatch.setattr(problems, "_BLOCK_BYTES", 37 * 12 * 8)   # 37-row blocks: 17 of them
    X, y = features(600, 12, k, seed=k)
    rows = ([np.arange(0, 500), np.r_[0:600, 0:150], np.arange(40, 600)] if layout == "shared"
            else [few_shot_indices(y, 5, s) for s in (1, 2, 3)])   # weighted rows / stacked
    batch = build_batch(X, y, rows, standardize=standardize, device=CPU, dtype=torch.float64)
    assert batch.design.shared == (layout == "shared")
    penalty = l2_weight([0.1, 1.0, 10.0], batch)
    theta = torch.randn(3, 13 * batch.n_outputs, dtype=torch.float64,
                        generator=torch.Generator().manual_seed(0)) * 0.1
    for index in (torch.arange(3), torch.tensor([0, 2])):          # all, and an active subset
        ref_value, ref_grad = autograd_objective(batch, penalty)(theta[index], index)
        value, grad = logistic_objective(batch, penalty)(theta[index], index)
        assert torch.allclose(value, ref_value, rtol=1e-12, atol=0)
        assert float((grad - ref_grad).norm() / ref_grad.norm()) < 1e-12


def test_float32_features_stay_float32_and_fit_exactly_as_their_float64_copy() -> None:
    X, y = features(400, 10, 3, seed=7)
    batch = build_batch(X, y, None, standardize=True, device=CPU, dtype=torch.float64)
    assert batch.design.X.dtype == torch.float32
    single = BatchedLogisticRegression(standardize=True).fit(X, y)
    double = BatchedLogisticRegression(standardize=True).fit(X.astype(np.float64), y)
    assert np.array_equal(single.theta_.numpy(), double.theta_.numpy())


def test_compaction_evaluates_only_active_problems_and_reaches_each_single_optimum() -> None:
    X, y = features(800, 16, 2, seed=3)
    Cs = [0.01, 1.0, 100.0]
    batch = build_batch(X, np.broadcast_to(y, (3, len(y))), None, standardize=True, device=CPU,
                        dtype=torch.float64)
    fun = logistic_objective(batch, l2_weight(Cs, batch))
    sizes: list[int] = []

    def counted(theta: torch.Tensor, index: torch.Tensor):
        sizes.append(len(index))
        return fun(theta, index)

    theta0 = torch.zeros(3, 17, dtype=torch.float64)
    result = minimize_lbfgs(counted, theta0, tol=1e-8, max_iter=10_000)
    assert result.converged.all()
    n_iter = result.n_iter.tolist()
    assert len(set(n_iter)) == 3                       # they finish at different iterations
    assert sizes[0] == 3 and sizes[-1] == 1 and min(sizes) == 1
    assert sum(sizes) < 3 * len(sizes)                 # finished problems stopped costing
    for b, C in enumerate(Cs):
        alone = BatchedLogisticRegression(C=C, tol=1e-8, standardize=True).fit(X, y)
        np.testing.assert_allclose(result.x[b].numpy(), alone.theta_[0].numpy(),
                                   rtol=1e-6, atol=1e-8)


def test_full_regime_sweep_predicts_as_sklearn_converged_at_each_C() -> None:
    X, y = features(1500, 24, 3, seed=11)
    X_test, y_test = features(600, 24, 3, seed=12)
    protocols = sweep_protocols()
    rows = run_cells(X, y, X_test, y_test, protocols, ("full",), device="cpu")
    for p, cell_rows in zip(protocols, rows, strict=True):
        ref = make_pipeline(StandardScaler(), LogisticRegression(C=p.C, max_iter=10_000,
                                                                  tol=1e-8))
        ref_pred = ref.fit(X.astype(np.float64), y).predict(X_test)
        assert all(r["converged"] for r in cell_rows)
        assert np.array_equal(cell_rows[0]["pred"], ref_pred), p.name
