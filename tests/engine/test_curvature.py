"""The full-regime fit's preconditioner: the features' second-moment matrix in the units of the
parameters, and L-BFGS preconditioned by it reaching scikit-learn's optimum in fewer iterations."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from engine.probes.batched import BatchedLogisticRegression
from engine.probes.lbfgs import minimize_lbfgs
from engine.probes.problems import (
    HESSIAN_BOUND,
    build_batch,
    feature_curvature,
    l2_weight,
    logistic_objective,
)

CPU = torch.device("cpu")


def spectral_features(n: int, d: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Embedding-like float32 features: a spectrum decaying over two orders of magnitude under a
    random rotation, per-feature offsets, labels from the leading components."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    rotation, _ = np.linalg.qr(rng.normal(size=(d, d)))
    X = (Z * (4.0 / (1.0 + np.arange(d)) ** 0.7)) @ rotation + rng.normal(size=d)
    y = np.argmax(Z[:, :8] @ rng.normal(size=(8, k)) + rng.gumbel(size=(n, k)), axis=1)
    return X.astype(np.float32), y


def second_moment(X: np.ndarray, standardize: bool) -> np.ndarray:
    """Σ [x̃, 1][x̃, 1]^T / n, with x̃ scikit-learn's StandardScaler output where standardised."""
    X = X.astype(np.float64)
    Xs = StandardScaler().fit_transform(X) if standardize else X
    augmented = np.hstack([Xs, np.ones((len(Xs), 1))])
    return augmented.T @ augmented / len(Xs)


@pytest.mark.parametrize("standardize", [False, True], ids=["raw", "standardised"])
def test_curvature_is_the_second_moment_of_features_and_one(standardize: bool) -> None:
    X, y = spectral_features(700, 12, 3, seed=1)
    batch = build_batch(X, y, None, standardize=standardize, device=CPU, dtype=torch.float64)
    curvature = feature_curvature(batch)
    Q, e = curvature.vectors.numpy(), curvature.values.numpy()
    np.testing.assert_allclose(Q @ np.diag(e) @ Q.T, second_moment(X, standardize),
                               rtol=1e-9, atol=1e-9)
    q = torch.randn(2, 13 * 3, dtype=torch.float64)
    applied = curvature.preconditioner(0.01, 3)(q).view(2, 13, 3)
    expected = np.linalg.solve(second_moment(X, standardize) + 0.02 / HESSIAN_BOUND * np.eye(13),
                               q.view(2, 13, 3).numpy())
    np.testing.assert_allclose(applied.numpy(), expected, rtol=1e-8, atol=1e-12)


def test_no_curvature_for_several_problems_k_shot_rows_or_fewer_rows_than_features() -> None:
    X, y = spectral_features(400, 8, 2, seed=2)
    two = build_batch(X, y, [np.arange(300), np.arange(100, 400)], standardize=True,
                      device=CPU, dtype=torch.float64)
    stacked = build_batch(X, y, [np.r_[0:6, 100:104], np.arange(200, 207)], standardize=True,
                          device=CPU, dtype=torch.float64)
    small = build_batch(X[:8], y[:8], None, standardize=True, device=CPU, dtype=torch.float64)
    assert [feature_curvature(b) for b in (two, stacked, small)] == [None, None, None]


@pytest.mark.parametrize("k", [2, 5], ids=["binary", "multinomial"])
def test_preconditioned_lbfgs_reaches_sklearns_optimum_in_fewer_iterations(k: int) -> None:
    X, y = spectral_features(3000, 48, k, seed=3)
    C = 100.0   # weak regularisation: the ill-conditioned end of the sweep
    batch = build_batch(X, y, None, standardize=True, device=CPU, dtype=torch.float64)
    penalty = l2_weight(C, batch)
    fun = logistic_objective(batch, penalty)
    theta0 = torch.zeros(1, 49 * batch.n_outputs, dtype=torch.float64)
    plain = minimize_lbfgs(fun, theta0, tol=1e-8, max_iter=20_000)
    pre = minimize_lbfgs(fun, theta0, tol=1e-8, max_iter=20_000, precondition=feature_curvature(
        batch).preconditioner(float(penalty[0]), batch.n_outputs))
    assert bool(plain.converged[0]) and bool(pre.converged[0])
    assert int(pre.n_iter[0]) * 3 < int(plain.n_iter[0])
    assert float(pre.value[0]) <= float(plain.value[0]) + 1e-12

    ours = BatchedLogisticRegression(C=C, tol=1e-8, standardize=True).fit(X, y)
    np.testing.assert_array_equal(ours.theta_.numpy(), pre.x.numpy())
    ref = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=20_000, tol=1e-10))
    lr = ref.fit(X.astype(np.float64), y)[-1]
    got = np.hstack([ours.coef_[0], ours.intercept_[0][:, None]])
    want = np.hstack([lr.coef_, lr.intercept_[:, None]])
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-4
