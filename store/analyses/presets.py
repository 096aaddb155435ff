"""The analyses' presets, in one place: how many resamples each reader of the task bootstrap
draws by default and why, their seed, and the level of every interval, claim and test.

Standard library only (the command line's defaults and the dashboard's first frame read them
before numpy is loaded; `store/analyses/__init__.py` imports nothing). The bootstrap itself is
`store.analyses.uncertainty`; its one-task rule is `store.vocab.bootstrap`.
"""

from __future__ import annotations

# `report` (its --resamples default), `recommend`, the dashboard's Significance view and the
# per-example intervals (`store.analyses.examples`, `report --examples N`'s unit of N): 10,000
# give the percentiles of a 95 % interval to about 0.005, and the dashboard's P(A > B) equals
# report's because both draw these with the same seed.
RESAMPLES = 10_000
# `geneb-engine site`'s default (--resamples): 9 bootstraps (3 metrics x 3 regimes) in a few
# seconds; `report --resamples 1000` gives its values.
SITE_RESAMPLES = 1_000
# The dashboard's main table: its worker ranks every scope (15 on geneb-v1) in every resample:
# 5,000 keep it near 0.2 s for 40 models on two cores (10,000: 0.5 s); the Significance view
# uses one scope and RESAMPLES.
TABLE_RESAMPLES = 5_000
# The dashboard's per-example test of two models on one task: each resample of the task's
# test rows recomputes two MCCs, in the Significance view's worker when a pair is picked;
# fewer than report's keep that wait short (percentiles to about 0.01).
EXAMPLE_RESAMPLES = 2_000

MIN_TASKS = 5  # the rank tests (`store.analyses.ranktests`) of a category need this many tasks
# What the readers show for a scope of fewer than MIN_TASKS tasks (the "all" scope of a small
# suite, a kind with few tasks) in place of its rank tests (computed all the same: `--json`);
# `report --figures` draws no critical-difference diagram for it.
TOO_FEW_TASKS = "too few tasks to decide"

SEED = 0       # every bootstrap's seed (`numpy.random.default_rng`; report --bootstrap-seed)
LEVEL = 0.95   # the level of every interval and claim (report --level, site --level)


def alpha_of(level: float) -> float:
    """The rank tests' alpha at a level (the Friedman test, the Nemenyi critical difference,
    Wilcoxon): 1 - level, rounded off the float noise (0.95 gives 0.05, not
    0.050000000000000044)."""
    return round(1 - level, 12)
