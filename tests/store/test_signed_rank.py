"""The signed-rank test without scipy.stats (store.analyses.signed_rank) against
`scipy.stats.wilcoxon` with its defaults, bit for bit, on each of its three methods, and on a
hand-computed case."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from store.analyses.signed_rank import EXACT_MAX, PERMUTATION_MAX, wilcoxon


def _cases(rng: np.random.Generator, n: int):
    """Continuous (no tie, no zero), small integers (ties and zeros), rounded (ties, zeros
    rarer) and a partly equal pair (zeros, no tie)."""
    x = rng.normal(size=n)
    yield x, rng.normal(size=n)
    yield rng.integers(0, 4, n).astype(float), rng.integers(0, 4, n).astype(float)
    yield np.round(x, 1), np.round(rng.normal(size=n), 1)
    y = x.copy()
    y[: n // 2 + 1] += rng.normal(size=n // 2 + 1)
    yield x, y


@pytest.mark.parametrize(("n", "rounds"), [
    (1, 40), (2, 40), (5, 40), (9, 10),
    (PERMUTATION_MAX, 1),             # scipy's permutation test takes about a second a case here
    (PERMUTATION_MAX + 1, 40), (30, 40), (EXACT_MAX, 40), (EXACT_MAX + 1, 40), (100, 40)])
def test_equals_scipy_to_the_bit_on_every_method(n, rounds):
    rng = np.random.default_rng(n)
    checked = 0
    for _ in range(rounds):
        for x, y in _cases(rng, n):
            if not np.any(x != y):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")      # scipy's small-sample warnings
                ref = stats.wilcoxon(x, y)
            assert wilcoxon(x, y) == (float(ref.statistic), float(ref.pvalue)), (x, y)
            checked += 1
    assert checked >= 2 * rounds


def test_a_hand_computed_case():
    """Five positive differences of distinct sizes: W+ = 15, W- = 0; of the 32 sign patterns
    only 'all positive' reaches 15 and only 'all negative' reaches 0, so p = 2/32. One tie and
    one zero among seven (permutation test): |d| = 1, 2, 2, 3, 4, 5 ranked 1, 2.5, 2.5, 4, 5,
    6, the negative one's rank 1 gives W- = 1, and of the 64 patterns of the six non-zero
    differences 'W+ <= 1' holds for 2 (none, or the rank-1 one only): p = 2 * 2/64."""
    assert wilcoxon(np.array([1., 2, 3, 4, 5]), np.zeros(5)) == (0.0, 2 / 32)
    d = np.array([-1., 2, 2, 3, 4, 5, 0])
    assert wilcoxon(-d, np.zeros(7)) == (1.0, 2 * 2 / 64)


def test_nan_propagates_and_no_difference_is_refused():
    stat, p = wilcoxon(np.array([1.0, np.nan, 3.0]), np.zeros(3))
    assert math.isnan(stat) and math.isnan(p)
    with pytest.raises(ValueError, match="non-zero difference"):
        wilcoxon(np.ones(4), np.ones(4))
