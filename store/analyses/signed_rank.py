"""The two-sided Wilcoxon signed-rank test of `scipy.stats.wilcoxon(x, y)` with its defaults, to
the last bit, without importing scipy.stats (about half a second on two cores, which the
Significance view's default pair waited for). Only `scipy.special.ndtr` is needed.

scipy 1.17's defaults, which this follows (tests/store/test_signed_rank.py holds it to them):

- d = x - y; zero differences are dropped (zero_method "wilcox"); |d| of the n' non-zero ones
  ranked 1..n' with tied values sharing their mean rank; W+ (W-) = the rank sum of the positive
  (negative) differences; the statistic is min(W+, W-).
- method "auto", decided on n = len(d) (zeros included):
  - n <= 50 with no zero and no tie: the exact null distribution of W+ (every sign pattern
    equally likely, n' = n); p = 2 min(P(W+ <= ceil w), P(W+ >= floor w)), clipped to 1, the
    tails summed as scipy sums them;
  - with a zero or a tie and n <= 13: scipy's exhaustive permutation test, every one of the
    2^n sign flips of d; the ranks are half-integers, so the count of flips at or beyond w is
    exact (a subset-sum count over the doubled ranks), and p = 2 min(P(<= w), P(>= w))
    clipped to 1, as `scipy.stats.permutation_test` computes it;
  - otherwise the normal approximation without continuity correction: z = (W+ - n'(n'+1)/4)
    / sqrt((n'(n'+1)(2n'+1) - sum over tie groups (t^3 - t) / 2) / 24), p = 2 Phi(-|z|).
"""

from __future__ import annotations

import math

import numpy as np

from store.analyses.rankings import tie_mean_ranks

EXACT_MAX = 50          # scipy's "auto": the exact distribution up to this many differences
PERMUTATION_MAX = 13    # and the exhaustive permutation test (2^13 <= 9999 resamples) up to this


def wilcoxon(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(statistic, p-value) of `scipy.stats.wilcoxon(x, y)`, NaN for both where a value is NaN;
    raises ValueError without a non-zero difference."""
    d = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    if np.isnan(d).any():
        return math.nan, math.nan       # scipy's nan_policy="propagate"
    n = d.size
    nonzero = d[d != 0]
    if nonzero.size == 0:
        raise ValueError("the signed-rank test needs a non-zero difference")
    ranks = tie_mean_ranks(np.abs(nonzero))[0]
    ties = np.unique(np.abs(nonzero), return_counts=True)[1]     # the size of each tie group
    w_plus = float(np.sum(ranks[nonzero > 0]))
    w_minus = float(np.sum(ranks[nonzero < 0]))
    statistic = min(w_plus, w_minus)
    tied = bool(np.any(ties > 1))
    if n <= EXACT_MAX and not tied and nonzero.size == n:
        return statistic, _exact_p(w_plus, n)
    if n <= PERMUTATION_MAX:
        return statistic, _permutation_p(ranks, w_plus)
    return statistic, _normal_p(w_plus, nonzero.size, ties)


def _wilcoxon_pmf(n: int) -> np.ndarray:
    """P(W+ = r), r = 0..n(n+1)/2, for n differences without ties (as scipy builds it)."""
    c = np.ones(1)
    for k in range(1, n + 1):
        prev = c
        c = np.zeros(k * (k + 1) // 2 + 1)
        c[:prev.size] = prev * 0.5
        c[-prev.size:] += prev * 0.5
    return c


def _exact_p(w_plus: float, n: int) -> float:
    pmf = _wilcoxon_pmf(n)
    mean = n * (n + 1) / 4

    def cdf(k: int) -> float:
        return pmf[:k + 1].sum() if k <= mean else 1 - pmf[k + 1:].sum()

    def sf(k: int) -> float:
        return pmf[k:].sum() if k <= mean else 1 - pmf[:k].sum()

    p = 2 * min(sf(math.floor(w_plus)), cdf(math.ceil(w_plus)))
    return float(min(max(p, 0.0), 1.0))


def _permutation_p(ranks: np.ndarray, w_plus: float) -> float:
    """Share of sign patterns of the non-zero differences whose W+ is <= w_plus and >= it (a
    zero's flip changes nothing, so the share over all 2^n flips is the same)."""
    doubled = np.rint(2 * ranks).astype(np.int64)
    counts = np.zeros(int(doubled.sum()) + 1, dtype=np.int64)
    counts[0] = 1
    for r in doubled:                    # subset sums: each rank (>= 1, so r >= 2) in W+ or not
        counts[r:] = counts[r:] + counts[:-r]
    w = round(2 * w_plus)
    total = float(2 ** ranks.size)
    less, greater = counts[:w + 1].sum() / total, counts[w:].sum() / total
    return float(min(min(less, greater) * 2, 1.0))


def _normal_p(w_plus: float, n: int, ties: np.ndarray) -> float:
    from scipy.special import ndtr  # lazy: scipy

    mean = n * (n + 1.0) * 0.25
    var = n * (n + 1.0) * (2.0 * n + 1.0)
    tie_sum = float(np.sum(ties.astype(np.float64) ** 3 - ties))
    se = math.sqrt((var - tie_sum / 2) / 24)
    z = (w_plus - mean) / se
    return float(2 * ndtr(-abs(z)))
