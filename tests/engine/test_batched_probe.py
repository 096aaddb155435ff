"""The batched torch logistic regression fits scikit-learn's objective, batch or no batch."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from engine.probes.batched import BatchedLogisticRegression
from engine.probes.exact import few_shot_indices


def embeddings(n: int, d: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Embedding-like float32 features (offset, unequal scales) with a planted linear signal."""
    rng = np.random.default_rng(seed)
    offset, scales = rng.normal(size=d) * 3, rng.uniform(0.1, 5.0, size=d)
    Z = rng.normal(size=(n, d))
    y = np.argmax(Z @ rng.normal(size=(d, k)) / np.sqrt(d) * 2 + rng.gumbel(size=(n, k)), axis=1)
    return (Z * scales + offset).astype(np.float32), y


def sklearn_converged(X: np.ndarray, y: np.ndarray, C: float = 1.0):
    """scikit-learn on standardised float64 features, run to a tight tolerance: the optimum.

    (Given float32, scikit-learn computes in float32 and stalls near float32 resolution.)
    """
    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=10_000, tol=1e-8)
                         ).fit(X.astype(np.float64), y)


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize(("k", "C"), [(2, 1.0), (2, 0.1), (10, 1.0)])
def test_agrees_with_converged_sklearn(k: int, C: float) -> None:
    X, y = embeddings(2000, 64, k, seed=k)
    X_test, y_test = embeddings(2000, 64, k, seed=k + 100)
    ref = sklearn_converged(X, y, C)
    ours = BatchedLogisticRegression(C=C, standardize=True).fit(X, y)
    lr = ref[-1]
    assert ours.converged_.all()
    assert ours.coef_.shape == (1, *lr.coef_.shape)
    assert relative(np.hstack([ours.coef_[0], ours.intercept_[0][:, None]]),
                    np.hstack([lr.coef_, lr.intercept_[:, None]])) < 1e-3
    ours_pred, ref_pred = ours.predict(X_test)[0], ref.predict(X_test)
    assert np.mean(ours_pred == ref_pred) >= 0.999
    assert abs(matthews_corrcoef(y_test, ours_pred) - matthews_corrcoef(y_test, ref_pred)) < 0.002


def test_unscaled_objective_matches_sklearn_where_it_converges() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 16))
    y = (X[:, 0] + rng.normal(size=500) > 0).astype(int)
    lr = LogisticRegression(max_iter=10_000, tol=1e-10).fit(X, y)
    ours = BatchedLogisticRegression(tol=1e-9).fit(X, y)
    assert relative(ours.coef_[0], lr.coef_) < 1e-6
    assert abs(ours.intercept_[0, 0] - lr.intercept_[0]) < 1e-6


def test_standardisation_is_a_standard_scaler_on_each_problems_rows() -> None:
    X, y = embeddings(600, 12, 3, seed=1)
    X[:, 5] = 2.5  # a constant feature: StandardScaler keeps scale 1
    rows = [np.arange(0, 300), np.arange(200, 600)]
    ours = BatchedLogisticRegression(standardize=True, tol=1e-8).fit(X, y, rows)
    for b, r in enumerate(rows):
        scaler = StandardScaler().fit(X[r])
        np.testing.assert_allclose(ours.mean_[b], scaler.mean_, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(ours.scale_[b], scaler.scale_, rtol=1e-6)
        ref = sklearn_converged(X[r], y[r])
        assert relative(ours.coef_[b], ref[-1].coef_) < 1e-4
        assert np.mean(ours.predict(X)[b] == ref.predict(X)) >= 0.999


def separate(X: np.ndarray, y: np.ndarray, rows: list[np.ndarray], **kw) -> np.ndarray:
    return np.stack([BatchedLogisticRegression(**kw).fit(X[r], y[r]).coef_[0] for r in rows])


@pytest.mark.parametrize("layout", ["shared", "stacked"])
def test_batch_of_problems_equals_separate_fits(layout: str) -> None:
    X, y = embeddings(800, 16, 3, seed=2)
    if layout == "shared":   # large row sets: weights over the shared matrix
        rows = [np.arange(0, 600), np.arange(200, 800), np.r_[0:400, 0:100]]
    else:                    # k-shot row sets: gathered and stacked
        rows = [few_shot_indices(y, k, s) for k in (10, 1) for s in (13, 17, 42)]
    kw = {"C": 0.5, "tol": 1e-8, "standardize": True}
    batched = BatchedLogisticRegression(**kw).fit(X, y, rows)
    assert batched.converged_.all()
    np.testing.assert_allclose(batched.coef_, separate(X, y, rows, **kw), rtol=1e-5, atol=1e-7)


def test_stacked_independent_problems_and_per_problem_C() -> None:
    parts = [embeddings(300, 8, 2, seed=s) for s in (3, 4)]
    X = np.stack([p[0] for p in parts])
    y = np.stack([p[1] for p in parts])
    # tol 1e-8: alone, the C = 0.1 problem stalls at a gradient of 3.9e-9 (float64 resolution
    # of its objective), and at 1e-9 ran its 10,000 iterations (three minutes of CPU)
    batched = BatchedLogisticRegression(C=[0.1, 10.0], tol=1e-8).fit(X, y)
    for b, (Xb, yb) in enumerate(parts):
        single = BatchedLogisticRegression(C=[0.1, 10.0][b], tol=1e-8).fit(Xb, yb)
        assert single.converged_.all() and batched.converged_[b]
        np.testing.assert_allclose(batched.coef_[b], single.coef_[0], rtol=1e-5, atol=1e-7)


def test_path_along_increasing_C_reaches_each_optimum_sooner() -> None:
    X, y = embeddings(1000, 32, 4, seed=5)
    path = BatchedLogisticRegression(standardize=True, tol=1e-8)
    fitted = [(C, est.coef_.copy(), int(est.n_iter_[0]))
              for C, est in path.fit_path(X, y, [1.0, 0.1])]
    assert [C for C, _, _ in fitted] == [0.1, 1.0]
    cold = BatchedLogisticRegression(C=1.0, standardize=True, tol=1e-8).fit(X, y)
    assert fitted[1][2] < cold.n_iter_[0]
    assert relative(fitted[1][1], cold.coef_) < 1e-5
    assert relative(fitted[1][1], sklearn_converged(X, y, 1.0)[-1].coef_) < 1e-4


def test_a_problem_missing_a_class_is_refused() -> None:
    X, y = embeddings(200, 4, 3, seed=6)
    with pytest.raises(ValueError, match="problem 1 has classes"):
        BatchedLogisticRegression().fit(X, y, [np.arange(200), np.flatnonzero(y != 2)])
