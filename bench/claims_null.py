"""How often does "A and B differ" come out when it is false, and how often when it is true?
The one rule (`store.analyses.differ`: the sign-flip test of the per-task differences, with the
task bootstrap's interval excluding 0) beside the old rule (the 95 % percentile interval of the
task bootstrap excludes 0), on simulated scopes.

- **Null** (the claim is false): per task, A's and B's scores are exchangeable, so a task's
  difference a - b has a random sign. Shapes: normal; heavy-tailed t(2); a few large tasks
  (a tenth of them, 30x the rest) carrying the mean; ties (half zeros, two magnitudes); macro
  weights over uneven categories (one category of half the tasks, the rest of one or two
  tasks each, every category weighing the same). Printed: the share of scopes called
  different per task count (2, 3, 5, 10, 30, 100), all shapes pooled and the worst shape.
- **Power** (the claim is true): normal differences shifted by 0.5 and 1 standard deviation,
  at 10, 30 and 100 tasks, for a pair named in advance (threshold 0.05) and for a comparison
  with the leader among 40 models (threshold 0.05/39).
- **The leader** (why comparisons with it share the threshold): 40 models of equal merit,
  each model's tasks normal; the share of non-leaders called "separably worse" than whichever
  leads, with the threshold 0.05 and with 0.05/39.

The task bootstrap draws tasks within each category (`store.analyses.uncertainty`), with
`--resamples` resamples. Seeded: the same arguments print the same figures.

    .venv/bin/python bench/claims_null.py [--scopes 2000] [--resamples 1000] [--seed 0]

`tests/store/test_differ.py` runs the null part with a few hundred scopes per task count.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store.analyses.differ import decide  # noqa: E402
from store.analyses.uncertainty import percentile_interval, scope_weights  # noqa: E402

LEVEL = 0.95
TASK_COUNTS = (2, 3, 5, 10, 30, 100)
POWER_COUNTS = (10, 30, 100)
SHIFTS = (0.5, 1.0)
SHAPES = ("normal", "t2", "dominated", "tied", "macro")
MODELS = 40


def null_scopes(shape: str, scopes: int, n: int, rng) -> tuple[np.ndarray, list[str]]:
    """(scopes x n per-task differences a - b under the null, each task's category)."""
    if shape == "t2":
        size = rng.standard_t(2, (scopes, n)) * 0.02
    elif shape == "dominated":
        size = rng.normal(0, 0.01, (scopes, n))
        size[:, : max(1, n // 10)] *= 30
    elif shape == "tied":
        size = rng.choice([0.0, 0.0, 0.02, 0.05], (scopes, n))
    elif shape in ("normal", "macro"):
        size = rng.normal(0, 0.05, (scopes, n))
    else:
        raise ValueError(f"no shape {shape!r}")
    categories = ["all"] * n
    if shape == "macro":
        big = max(1, n // 2)
        categories = ["big"] * big + [f"c{(i + 1) * 2 // 3}" for i in range(n - big)]
    return size * rng.choice([-1.0, 1.0], (scopes, n)), categories


def weights_of(categories: list[str]) -> np.ndarray:
    """The scope's task weights: macro over the categories (one category: its own mean)."""
    order = list(dict.fromkeys(categories))
    return scope_weights(categories, order)[1 if len(order) > 1 else 2]


def bootstrap_interval(d: np.ndarray, categories: list[str], resamples: int,
                       rng) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % percentile interval of the weighted difference over `resamples` task
    bootstraps (tasks drawn within each category, one draw shared by every row of `d`); none
    (NaN) when every category has one task (`store.analyses.uncertainty` gives none there: a
    resample would draw the same tasks every time)."""
    n = d.shape[1]
    cats = np.array(categories)
    if len(set(categories)) == n:
        return np.full(len(d), np.nan), np.full(len(d), np.nan)
    counts = np.zeros((resamples, n))
    rows = np.arange(resamples)[:, None]
    for c in dict.fromkeys(categories):
        members = np.flatnonzero(cats == c)
        drawn = members[rng.integers(0, len(members), (resamples, len(members)))]
        np.add.at(counts, (np.broadcast_to(rows, drawn.shape), drawn), 1)
    return percentile_interval((d * weights_of(categories)) @ counts.T, LEVEL)


def claim_rates(d: np.ndarray, categories: list[str], resamples: int, rng, *,
                compared: int = 1) -> tuple[float, float]:
    """(the share of rows of `d` the rule calls different, the old rule's share)."""
    low, high = bootstrap_interval(d, categories, resamples, rng)
    new = decide(d, weights_of(categories), LEVEL, compared=compared, low=low, high=high)
    return float(new.differs.mean()), float(((low > 0) | (high < 0)).mean())


def null_rates(n: int, scopes: int, resamples: int, seed: int) -> dict[str, tuple[float, float]]:
    """{shape: (the rule's claim rate, the old rule's)} on null scopes of `n` tasks."""
    rng = np.random.default_rng(seed)
    out = {}
    for shape in SHAPES:
        d, categories = null_scopes(shape, scopes, n, rng)
        out[shape] = claim_rates(d, categories, resamples, rng)
    return out


def power(n: int, shift: float, scopes: int, resamples: int, seed: int,
          compared: int) -> tuple[float, float]:
    """(the rule's, the old rule's) share of normal scopes of `n` tasks, shifted by `shift`
    standard deviations, called different."""
    rng = np.random.default_rng(seed)
    d = rng.normal(shift * 0.05, 0.05, (scopes, n))
    return claim_rates(d, ["all"] * n, resamples, rng, compared=compared)


def leader_rates(n: int, sims: int, resamples: int, seed: int,
                 models: int = MODELS) -> tuple[float, float]:
    """The share of non-leaders called separably worse than the leader among `models` models
    of equal merit (normal task scores), with the threshold 0.05 and with 0.05/(models - 1)."""
    rng = np.random.default_rng(seed)
    plain = shared = 0
    for _ in range(sims):
        x = rng.normal(0, 0.05, (models, n))
        lead = int(np.argmax(x.mean(axis=1)))
        d = x[lead] - np.delete(x, lead, axis=0)
        low, high = bootstrap_interval(d, ["all"] * n, resamples, rng)
        w = np.full(n, 1 / n)
        plain += int(decide(d, w, LEVEL, low=low, high=high).differs.sum())
        shared += int(decide(d, w, LEVEL, compared=models - 1, low=low, high=high)
                      .differs.sum())
    total = sims * (models - 1)
    return plain / total, shared / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scopes", type=int, default=2_000,
                        help="simulated scopes per shape and task count (default 2,000)")
    parser.add_argument("--resamples", type=int, default=1_000,
                        help="task bootstrap resamples per scope (default 1,000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"Null: share of scopes called different at {LEVEL:.0%} ({args.scopes:,} scopes per "
          f"shape and task count, {len(SHAPES)} shapes, {args.resamples:,} resamples)")
    print(f"{'tasks':>5}  {'rule':>6}  {'worst shape':>18}  {'old rule':>8}  "
          f"{'worst shape':>18}")
    for n in TASK_COUNTS:
        rates = null_rates(n, args.scopes, args.resamples, args.seed + n)
        new = np.mean([r[0] for r in rates.values()])
        old = np.mean([r[1] for r in rates.values()])
        worst_new = max(rates, key=lambda s: rates[s][0])
        worst_old = max(rates, key=lambda s: rates[s][1])
        print(f"{n:>5}  {new:>6.3f}  {rates[worst_new][0]:>6.3f} {worst_new:>11}  "
              f"{old:>8.3f}  {rates[worst_old][1]:>6.3f} {worst_old:>11}")
    print(f"\nPower: share of normal scopes called different (shift in standard deviations "
          f"of the task differences; {args.scopes:,} scopes)")
    print(f"{'tasks':>5}  {'shift':>5}  {'rule, pair':>10}  {'rule, vs leader of 40':>21}  "
          f"{'old rule':>8}")
    for n in POWER_COUNTS:
        for shift in SHIFTS:
            pair, old = power(n, shift, args.scopes, args.resamples, args.seed + n, 1)
            lead, _ = power(n, shift, args.scopes, args.resamples, args.seed + n, MODELS - 1)
            print(f"{n:>5}  {shift:>5.1f}  {pair:>10.3f}  {lead:>21.3f}  {old:>8.3f}")
    sims = max(1, args.scopes // 20)
    print(f"\nThe leader: share of {MODELS - 1} non-leaders of equal merit called separably "
          f"worse than the leader of {MODELS} ({sims} leaderboards)")
    print(f"{'tasks':>5}  {'threshold 0.05':>14}  {'0.05/39':>8}")
    for n in (10, 22, 100):
        plain, shared = leader_rates(n, sims, args.resamples, args.seed + n)
        print(f"{n:>5}  {plain:>14.3f}  {shared:>8.3f}")
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
