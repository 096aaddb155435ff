"""The one rule for "A and B differ": every claim that two entries are separable (tie groups,
"separably worse", the leader's margin, leader changes between regimes, "smaller beats
larger", controlled pairs, the two-model view) is this decision, shown with its numbers.

The rule, for a scope (micro, macro, a category) and two entries scored on all of its tasks:

- **The statistic** is the scope's score difference, the weighted mean of the per-task
  differences d_t = a_t - b_t with the scope's task weights (micro: 1/T each; a category: 1/T_c
  on its tasks; macro: 1/(C T_c), so every category weighs the same): exactly the difference of
  the two aggregates.
- **The p-value** is the two-sided sign-flip (paired permutation) test of that statistic: under
  the null hypothesis that, task by task, A's and B's scores are exchangeable, every sign
  pattern s of the d_t is equally likely, and p is the share of patterns whose |sum w_t s_t d_t|
  reaches the observed |sum w_t d_t|. Exact (every pattern; half of them, as s and -s give the
  same value) up to EXACT_TASKS tasks; above, FLIPS random patterns (seeded: one matrix per
  task count, shared by every pair) with p = (b + 1) / (FLIPS + 1), b = the patterns reaching
  it, which is still a valid p-value. A pattern counts as reaching the observed value within a
  relative 1e-9 (rounding never makes p smaller); the random patterns are summed in float32
  with a margin of its rounding added (4 n float32 eps, relative), which can only count more.
  The test is valid at every task count (exact, or a valid randomised test above): its
  false-positive rate is at most 1 - level whatever the shape of the differences (heavy tails,
  a few large tasks, ties, uneven categories); `bench/claims_null.py` measures it.
- **The decision**: A and B differ at `level` when p <= (1 - level) / m and, where the task
  bootstrap gives an interval of the difference (`store.analyses.uncertainty`), that interval
  excludes 0 (the bootstrap alone is anti-conservative on few tasks, so it never decides
  alone; requiring it too can only make a claim rarer). m = 1 for a pair named in advance
  (controlled pairs, smaller-beats-larger cases, the dashboard's two models); for comparisons
  with a leader, m = the number of entries compared with it (Bonferroni), because the leader
  is picked by the same scores: without it, among 40 entries of equal merit about a third
  would be called "separably worse" than whichever happened to lead. With m, a given entry is
  wrongly called worse than the leader with probability at most 1 - level (a union bound over
  the entries that could lead), at every task count.
- **Too few tasks**: with n tasks the smallest possible p is 2 / 2^n (every task on one side),
  so a scope of 5 tasks or fewer separates nothing at 95 % (`too_few` says so in words).

Vectorised: the sign patterns are one matrix (patterns x tasks) and the flipped statistics of
many pairs one matrix product (pairs x patterns).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from store.vocab.pvalues import p_text

FLIPS = 10_000         # random sign patterns above EXACT_TASKS tasks
EXACT_TASKS = 14       # up to this many tasks, every sign pattern: 2^13 = 8,192 after the
#                        symmetry, no more work than the FLIPS random ones
FLIP_SEED = 0          # their seed (numpy.random.default_rng(FLIP_SEED + n) for n tasks)
RELATIVE_TIE = 1e-9    # a flipped |statistic| this close (relative) to the observed one reaches it
_BLOCK = 1 << 21       # pairs x patterns of one block (float64, 16 MB)

EXACT, SAMPLED = "exact", "sampled"


@lru_cache(maxsize=8)
def _all_patterns(n: int) -> np.ndarray:
    """(2^(n-1), n) float64 of +-1: every sign pattern with the first sign +1 (the other half
    are their negations, which give the same |statistic|); row 0 is the identity."""
    rows = np.arange(1 << (n - 1), dtype=np.int64)[:, None]
    bits = (rows >> np.arange(n - 1)) & 1
    signs = np.ones((len(rows), n))
    signs[:, 1:] = 1 - 2 * bits
    signs.flags.writeable = False
    return signs


@lru_cache(maxsize=16)
def _random_patterns(n: int) -> np.ndarray:
    """(FLIPS, n) float32 of +-1, each sign +1 or -1 with probability 1/2, seeded per n."""
    rng = np.random.default_rng(FLIP_SEED + n)
    signs = (1.0 - 2.0 * rng.integers(0, 2, size=(FLIPS, n))).astype(np.float32)
    signs.flags.writeable = False
    return signs


def method(n: int) -> str:
    """How the p-value of `n` tasks is computed: every pattern, or FLIPS random ones."""
    return EXACT if n <= EXACT_TASKS else SAMPLED


def smallest_p(n: int) -> float:
    """The smallest p-value the test can give on `n` tasks (1 with fewer than two)."""
    if n < 2:
        return 1.0
    return 2.0 / 2.0 ** n if method(n) == EXACT else max(2.0 / 2.0 ** n, 1 / (FLIPS + 1))


def sign_flip_p(contributions: np.ndarray) -> np.ndarray:
    """The two-sided sign-flip p-values of rows of `contributions` (pairs x n: each task's
    weighted difference w_t d_t of the scope's n tasks; one row for one pair): the share of sign
    patterns s with |sum s_t c_t| >= |sum c_t| (exact up to EXACT_TASKS tasks, else
    (b + 1) / (FLIPS + 1) over FLIPS seeded random patterns). NaN where a row holds a NaN."""
    c = np.atleast_2d(np.asarray(contributions, dtype=np.float64))
    pairs, n = c.shape
    if n == 0:
        return np.ones(pairs)
    observed = np.abs(c.sum(axis=1))
    size = np.abs(c).sum(axis=1)
    exact = method(n) == EXACT
    if exact:
        signs, values = _all_patterns(n), c
        reach = observed - RELATIVE_TIE * size
    else:   # float32 (twice as fast); the margin covers its rounding, so it only counts more
        signs, values = _random_patterns(n), c.astype(np.float32)
        reach = (observed - (RELATIVE_TIE + 4 * n * np.finfo(np.float32).eps) * size).astype(
            np.float32)
    counts = np.zeros(pairs)
    step = max(1, _BLOCK // len(signs))
    for start in range(0, pairs, step):
        block = slice(start, start + step)
        flipped = np.abs(values[block] @ signs.T)                 # (pairs, patterns)
        counts[block] = (flipped >= reach[block, None]).sum(axis=1, dtype=np.int32)
    p = counts / len(signs) if exact else (counts + 1) / (len(signs) + 1)
    p[np.isnan(c).any(axis=1)] = np.nan
    return np.minimum(p, 1.0)


def compared_for(level: float, bar: float) -> int:
    """The m of a threshold (1 - level) / m (as the frames carry it)."""
    return max(1, round((1 - level) / bar)) if bar > 0 else 1


def threshold(level: float, compared: int = 1) -> float:
    """The largest p that separates at `level` with `compared` comparisons (Bonferroni)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    return (1 - level) / max(1, compared)


@dataclass(frozen=True)
class Verdicts:
    """The rule applied to pairs (a, b) of one scope: arrays over the pairs."""

    delta: np.ndarray        # the scope's score difference a - b (weighted mean of the d_t)
    p: np.ndarray            # the two-sided sign-flip p-value
    wins: np.ndarray         # tasks where a > b
    losses: np.ndarray       # tasks where a < b
    low: np.ndarray          # the bootstrap interval of a - b (NaN: none)
    high: np.ndarray
    differs: np.ndarray      # bool: the decision
    n_tasks: int             # the scope's tasks (the test's n)
    level: float
    compared: int            # m: the comparisons the threshold is shared by

    @property
    def method(self) -> str:
        return method(self.n_tasks)

    @property
    def threshold(self) -> float:
        return threshold(self.level, self.compared)

    def too_few(self) -> str | None:
        """Why this scope cannot separate any pair at the level, or None when it can."""
        return too_few(self.n_tasks, self.level, self.compared)

    def text(self, i: int = 0, *, a: str = "", b: str = "") -> str:
        """Pair `i`'s decision with the numbers it rests on (`claim_text`)."""
        return claim_text(bool(self.differs[i]), float(self.p[i]), self.n_tasks,
                          int(self.wins[i]), int(self.losses[i]), self.level, self.threshold,
                          float(self.delta[i]), float(self.low[i]), float(self.high[i]),
                          a=a, b=b)

    def row(self, i: int) -> dict:
        """Pair `i`'s fields as the frames carry them (JSON-ready; NaN -> None)."""
        return {"p_value": _none(self.p[i]), "method": self.method, "n_tasks": self.n_tasks,
                "wins": int(self.wins[i]), "losses": int(self.losses[i]),
                "threshold": self.threshold, "differs": bool(self.differs[i])}


def decide(differences: np.ndarray, weights: np.ndarray, level: float, *,
               compared: int = 1, low: np.ndarray | None = None,
               high: np.ndarray | None = None) -> Verdicts:
    """The rule for pairs of one scope: `differences` (pairs x T) the per-task a - b over the
    suite's T tasks, `weights` (T,) the scope's task weights (0 off the scope; they sum to 1),
    `low`/`high` (pairs,) the bootstrap interval of a - b (None or NaN: none), `compared` the
    m of the threshold (see the module docstring)."""
    d = np.atleast_2d(np.asarray(differences, dtype=np.float64))
    w = np.asarray(weights, dtype=np.float64)
    on = w > 0
    scoped = d[:, on]
    contributions = scoped * w[on]
    p = sign_flip_p(contributions)
    pairs = len(d)
    low = np.full(pairs, np.nan) if low is None else np.asarray(low, dtype=np.float64)
    high = np.full(pairs, np.nan) if high is None else np.asarray(high, dtype=np.float64)
    no_iv = np.isnan(low) | np.isnan(high)
    excludes_zero = no_iv | (low > 0) | (high < 0)
    differs = (p <= threshold(level, compared)) & excludes_zero & ~np.isnan(p)
    return Verdicts(contributions.sum(axis=1), p, np.count_nonzero(scoped > 0, axis=1),
                 np.count_nonzero(scoped < 0, axis=1), low, high, differs,
                 int(on.sum()), level, compared)


def too_few(n: int, level: float, compared: int = 1) -> str | None:
    """Why a scope of `n` tasks cannot separate anything at `level` with `compared`
    comparisons, in words; None when it can (its smallest possible p is within the
    threshold)."""
    bar = threshold(level, compared)
    smallest = smallest_p(n)
    if smallest <= bar:
        return None
    tasks = f"{n} task{'' if n == 1 else 's'}"
    if smallest > 2.0 / 2.0 ** n:       # the random patterns' resolution, not the tasks
        return (f"{tasks}, {FLIPS:,} random sign patterns: the smallest p they can give, "
                f"{p_text(smallest)}, is above {threshold_text(level, compared)}; nothing "
                f"can be separated at {level_text(level)}")
    if compared <= 1:
        return (f"{tasks}: too few to separate any two models at {level_text(level)}: the "
                f"smallest possible p is {p_text(smallest)}")
    return (f"{tasks}: too few to separate any model from the leader at {level_text(level)} "
            f"when it is compared with {compared} others: the smallest possible p is "
            f"{p_text(smallest)}, above {threshold_text(level, compared)}")


def claim_text(differs: bool, p: float | None, n_tasks: int, wins: int | None,
               losses: int | None, level: float, bar: float, delta: float | None = None,
               low: float | None = None, high: float | None = None, *, a: str = "",
               b: str = "") -> str:
    """One decision of the rule with the numbers it rests on (plain text), e.g.
    `differs at 95 %: sign-flip p = 0.004 ≤ 0.05 (9 tasks, exact), 8 wins / 1 loss,
    Δ +0.031 [+0.012, +0.050]` or `not separable at 95 %: sign-flip p = 0.033 > 0.05/40
    (22 tasks, sampled), 11 wins / 11 losses, ...`. `bar`: the threshold it was decided at;
    `a`/`b`: how the wins and Δ read (`a` wins w, loses l; Δ `a` − `b`); `delta` None: no Δ."""
    pct = level_text(level)
    shown = threshold_text(level, compared_for(level, bar))
    has_iv = not (_missing(low) or _missing(high))
    if _missing(p):
        head = f"not tested at {pct}"
    elif differs:
        head = f"differs at {pct}: sign-flip p = {p_text(p)} ≤ {shown}"
    elif p <= bar and has_iv:
        head = (f"not separable at {pct}: sign-flip p = {p_text(p)} ≤ {shown} but the "
                "bootstrap interval of Δ contains 0")
    else:
        head = f"not separable at {pct}: sign-flip p = {p_text(p)} > {shown}"
    parts = [f"{head} ({n_tasks} task{'' if n_tasks == 1 else 's'}, {method(n_tasks)})"]
    if wins is not None and losses is not None:
        parts.append(f"{a} wins {wins}, loses {losses}" if a else
                     f"{wins} win{'' if wins == 1 else 's'} / "
                     f"{losses} loss{'' if losses == 1 else 'es'}")
    if delta is not None and not _missing(delta):
        parts.append(f"Δ{f' {a} − {b}' if a and b else ''} {delta:+.3f}"
                     + (f" [{low:+.3f}, {high:+.3f}]" if has_iv else ""))
    return ", ".join(parts)


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def level_text(level: float) -> str:
    return f"{level * 100:g} %"


def threshold_text(level: float, compared: int = 1) -> str:
    """`0.05`, or `0.05/39` with several comparisons."""
    alpha = f"{1 - level:.4g}"
    return alpha if compared <= 1 else f"{alpha}/{compared}"


def _none(x) -> float | None:
    return None if x is None or math.isnan(x) else float(x)
