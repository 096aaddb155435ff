"""Per-example uncertainty (store.analyses.examples) against scipy.stats.bootstrap, scikit-learn,
a straightforward loop over resamples and a hand-computed McNemar case."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import bootstrap
from sklearn.metrics import matthews_corrcoef

from store.analyses.examples import (
    example_intervals,
    mcc_interval,
    mcnemar,
    paired_mcc_difference,
    resampled_mcc,
)


def noisy(y: np.ndarray, flip: float, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    wrong = rng.random(y.size) < flip
    return np.where(wrong, rng.integers(0, k, y.size), y)


@pytest.fixture(scope="module")
def cell():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 150)
    preds = np.stack([noisy(y, f, 3, s) for s, f in enumerate((0.3, 0.5, 0.7))])
    return y, preds


def test_the_mcc_interval_equals_scipy_bootstrap_on_the_same_resamples(cell):
    y, preds = cell
    n = 999
    ours = mcc_interval(y, preds, [13, 17, 42], n_resamples=n, seed=11)
    _, boot = resampled_mcc(y, preds, n, seed=11)
    for s in range(3):
        ref = bootstrap((y, preds[s]), matthews_corrcoef, paired=True, vectorized=False,
                        n_resamples=n, method="percentile", confidence_level=0.95,
                        rng=np.random.default_rng(11))
        # the same draw: the resampled MCCs equal scikit-learn's, resample by resample
        np.testing.assert_allclose(boot[:, s], ref.bootstrap_distribution, rtol=0, atol=1e-12)
        row = ours.row(s, named=True)
        assert row["lo"] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
        assert row["hi"] == pytest.approx(ref.confidence_interval.high, abs=1e-12)
        assert row["mcc"] == pytest.approx(matthews_corrcoef(y, preds[s]), abs=1e-12)
    assert ours["seed"].to_list() == [13, 17, 42, None]


def test_the_seed_mean_interval_equals_a_loop_over_resamples(cell):
    y, preds = cell
    n = 300
    ours = mcc_interval(y, preds, n_resamples=n, seed=5).row(3, named=True)
    rng = np.random.default_rng(5)
    idx = rng.integers(0, y.size, (n, y.size))
    means = [np.mean([matthews_corrcoef(y[i], p[i]) for p in preds]) for i in idx]
    assert ours["lo"] == pytest.approx(np.percentile(means, 2.5), abs=1e-12)
    assert ours["hi"] == pytest.approx(np.percentile(means, 97.5), abs=1e-12)
    assert ours["mcc"] == pytest.approx(np.mean([matthews_corrcoef(y, p) for p in preds]))
    assert ours["lo"] < ours["mcc"] < ours["hi"]


def test_mcc_matches_scikit_learn_on_binary_and_degenerate_predictions():
    y = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    for pred in (np.array([0, 1, 0, 0, 1, 1, 0, 1]), np.zeros(8, int), np.ones(8, int)):
        point, _ = resampled_mcc(y, pred[None, :], 10)
        assert point[0] == pytest.approx(matthews_corrcoef(y, pred), abs=1e-12)


def test_the_paired_difference_of_identical_models_is_exactly_zero(cell):
    y, preds = cell
    row = paired_mcc_difference(y, preds, preds.copy(), n_resamples=500).row(0, named=True)
    assert (row["diff"], row["lo"], row["hi"], row["p"]) == (0.0, 0.0, 0.0, 1.0)


def test_the_paired_difference_equals_a_loop_over_resamples(cell):
    y, preds = cell
    n = 300
    row = paired_mcc_difference(y, preds[:1], preds[2:], n_resamples=n, seed=9).row(0, named=True)
    rng = np.random.default_rng(9)
    idx = rng.integers(0, y.size, (n, y.size))
    d = np.array([matthews_corrcoef(y[i], preds[0][i]) - matthews_corrcoef(y[i], preds[2][i])
                  for i in idx])
    assert row["lo"] == pytest.approx(np.percentile(d, 2.5), abs=1e-12)
    assert row["hi"] == pytest.approx(np.percentile(d, 97.5), abs=1e-12)
    assert row["p"] == pytest.approx(min(1, 2 * min(np.mean(d <= 0), np.mean(d >= 0))))
    assert row["diff"] > 0 and row["lo"] > 0   # 30 % noise beats 70 % on 150 rows


def test_mcnemar_equals_a_hand_computation():
    # 20 rows: both right on 8, only A right on 7, only B right on 2, both wrong on 3
    y = np.zeros(20, int)
    a = np.array([0] * 8 + [0] * 7 + [1] * 2 + [1] * 3)
    b = np.array([0] * 8 + [1] * 7 + [0] * 2 + [1] * 3)
    row = mcnemar(y, a, b, [13]).row(0, named=True)
    # two-sided exact binomial, 7 of 9 at 1/2: 2 * (C(9,0) + C(9,1) + C(9,2)) / 2^9 = 92 / 512
    assert (row["b"], row["c"]) == (7, 2)
    assert row["p"] == pytest.approx(92 / 512, abs=1e-12)
    assert row["acc_a"] == 15 / 20 and row["acc_b"] == 10 / 20
    assert mcnemar(y, a, a).row(0, named=True)["p"] == 1.0


def test_example_intervals_groups_cells_and_leaves_out_cells_without_labels(cell):
    import polars as pl

    y, preds = cell
    frame = pl.DataFrame({"model": ["m"] * 3 + ["n"] * 3, "task": ["t"] * 6,
                          "regime": ["10shot"] * 6, "seed": [13, 17, 42] * 2,
                          "data_hash": ["h"] * 3 + ["other"] * 3,
                          "pred": [p.tolist() for p in preds] * 2})
    out = example_intervals(frame, {("t", "h"): y}, n_resamples=200, seed=1)
    assert out["model"].unique().to_list() == ["m"]
    assert out.height == 4
    direct = mcc_interval(y, preds, [13, 17, 42], n_resamples=200, seed=1)
    assert out.drop("model", "task", "regime").equals(direct)
