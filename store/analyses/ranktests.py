"""Rank tests across tasks: Friedman's test, the Nemenyi critical difference, paired Wilcoxon
signed-rank tests with Holm's correction (Demsar 2006, "Statistical comparisons of classifiers
over multiple data sets").

Input: one regime's and one metric's `scores_of` frame ([model, (source), task, category,
value]); the caller picks the regime. Definitions:

- level: tasks. The blocks are the tasks (N of them), the treatments the entries (k of them;
  an entry is a model, or a (model, source) pair when the frame mixes sources). Nothing is
  resampled: the tests are exact or asymptotic on the N x k matrix of task scores.
- ranks: on every task the entries are ranked by score, rank 1 = the best (highest) score;
  tied entries share the mean of the ranks they span ('average': 1, 2.5, 2.5, 4), as
  scikit-posthocs, autorank and Demsar do. `average_rank` = the mean over the N tasks.
- completeness: a scope's tests use only the entries with a score on every task of the scope
  (a task missing for one entry would change every other entry's ranks); the expected tasks
  are `tasks` (default: the 100 geneb-v1 tasks), scores of other tasks are ignored.
- Friedman chi-square, with the tie correction of `scipy.stats.friedmanchisquare`:
  chi2 = [12 / (N k (k + 1)) * sum_j R_j^2 - 3 N (k + 1)] / C, R_j the rank sum of entry j,
  C = 1 - sum over tie groups (t^3 - t) / (N k (k^2 - 1)); p = P(chi2_{k-1} >= chi2).
- Nemenyi critical difference: CD = q_alpha * sqrt(k (k + 1) / (6 N)),
  q_alpha = studentized range quantile(1 - alpha; k, inf) / sqrt(2) (`scipy.stats.
  studentized_range`; at alpha 0.05 its values kept in `store.analyses.nemenyi_q`, so that
  Friedman's test and the CD need only scipy.special); two entries whose average ranks
  differ by more than CD differ at level alpha (all pairs, family-wise).
- scopes: "all" (every expected task), then each category with at least `min_tasks` expected
  tasks, in `store.catalog.CATEGORY_ORDER` (a custom suite's other categories after them).
- Wilcoxon signed-rank for chosen pairs over the tasks both entries have: two-sided,
  `scipy.stats.wilcoxon` with its defaults (`store.analyses.signed_rank` computes it to the
  bit without importing scipy.stats; its docstring gives the method). Holm's step-down over
  the given pairs: the m p-values sorted ascending, p_holm_(i) = max_{j <= i} min(1,
  (m - j + 1) p_(j)); reject = p_holm <= alpha (the family-wise error rate over the pairs is
  at most alpha).

Undefined values are NULL: a Friedman statistic with fewer than 3 entries or when every task
ties all entries; a critical difference with fewer than 2 entries or no task; a Wilcoxon test
without a non-zero difference (such a pair is left out of the Holm family).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from store.analyses.aggregates import entry_keys
from store.analyses.nemenyi_q import Q_05
from store.analyses.presets import LEVEL, MIN_TASKS, alpha_of
from store.analyses.rankings import tie_mean_ranks
from store.analyses.signed_rank import wilcoxon
from store.catalog import CATEGORY_ORDER, TaskMeta, geneb_v1_tasks

_TEST_SCHEMA = {"n_models": pl.Int64, "n_tasks": pl.Int64, "statistic": pl.Float64,
                "p_value": pl.Float64, "critical_difference": pl.Float64, "alpha": pl.Float64}
_PAIR_SCHEMA = {"model_a": pl.String, "model_b": pl.String, "n_tasks": pl.Int64,
                "mean_difference": pl.Float64, "statistic": pl.Float64, "p_value": pl.Float64,
                "p_holm": pl.Float64, "reject": pl.Boolean}
ALPHA = alpha_of(LEVEL)   # the tests' alpha at the presets' level (0.05): defaults, dashboard


def _expected(tasks: Iterable[TaskMeta] | None) -> list[TaskMeta]:
    return list(tasks if tasks is not None else geneb_v1_tasks())


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")


def _scopes(expected: Sequence[TaskMeta], min_tasks: int) -> list[tuple[str, list[str]]]:
    """[(scope, task ids)]: "all", then the categories with at least `min_tasks` tasks."""
    categories = [c for c in CATEGORY_ORDER if any(t.category == c for t in expected)]
    categories += list(dict.fromkeys(t.category for t in expected if t.category not in categories))
    out = [("all", [t.task_id for t in expected])]
    for c in categories:
        ids = [t.task_id for t in expected if t.category == c]
        if len(ids) >= min_tasks:
            out.append((c, ids))
    return out


def _matrix(scores_df: pl.DataFrame, task_ids: Sequence[str]) -> tuple[pl.DataFrame, np.ndarray]:
    """(entries, values): the entries with a score on every task of `task_ids` (sorted by their
    keys) and the (tasks x entries) float64 matrix of their scores, tasks in `task_ids` order."""
    keys = entry_keys(scores_df)
    ids = list(dict.fromkeys(task_ids))
    present = scores_df.filter(pl.col("task").is_in(ids) & pl.col("value").is_not_null())
    if present.select(*keys, "task").is_duplicated().any():
        raise ValueError("the scores frame has several values for one (entry, task): pass one "
                         "regime's scores_of frame (entries keyed by model and source)")
    entries = (present.group_by(keys).agg(pl.len().alias("n"))
               .filter(pl.col("n") == len(ids)).select(keys).sort(keys)
               .with_row_index("_entry"))
    cells = (present.join(entries, on=keys)
             .with_columns(pl.col("task").replace_strict(
                 {t: i for i, t in enumerate(ids)}, return_dtype=pl.Int64).alias("_task"))
             .sort("_task", "_entry"))
    values = cells["value"].cast(pl.Float64).to_numpy().reshape(len(ids), entries.height)
    return entries.drop("_entry"), values


def _ranks(values: np.ndarray) -> np.ndarray:
    """Per task (row), rank 1 = the highest score; ties share the mean of their ranks (as
    `scipy.stats.rankdata(-values, method="average", axis=1)`, without importing scipy.stats;
    a NaN row is all NaN there, so one is left to scipy)."""
    if values.size == 0:
        return values.copy()
    if np.isnan(values).any():
        from scipy.stats import rankdata  # lazy: scipy

        return rankdata(-values, method="average", axis=1)
    return tie_mean_ranks(-values)


def critical_difference(n_models: int, n_tasks: int, alpha: float = ALPHA) -> float | None:
    """The Nemenyi critical difference of average ranks for k = `n_models` entries over N =
    `n_tasks` tasks: q_alpha * sqrt(k (k + 1) / (6 N)), q_alpha the studentized range quantile
    (1 - alpha; k, inf) / sqrt(2). NULL (None) with fewer than 2 entries or no task."""
    _check_alpha(alpha)
    if n_models < 2 or n_tasks < 1:
        return None
    return _nemenyi_q(n_models, alpha) * math.sqrt(n_models * (n_models + 1) / (6 * n_tasks))


@functools.lru_cache(maxsize=256)
def _nemenyi_q(n_models: int, alpha: float) -> float:
    """q_alpha of the Nemenyi test for k = `n_models` entries: at alpha 0.05 for k <= 200 from
    `store.analyses.nemenyi_q` (scipy's values), else one root-finding over a numerical
    integral (~10 ms, computed once per k and alpha)."""
    if alpha == 0.05 and 2 <= n_models < 2 + len(Q_05):
        return Q_05[n_models - 2]
    from scipy.stats import studentized_range  # lazy: scipy

    return float(studentized_range.ppf(1 - alpha, n_models, np.inf)) / math.sqrt(2)


def _friedman_row(ranks: np.ndarray, alpha: float) -> dict:
    """Friedman's chi-square, its p-value and the Nemenyi CD from an (N x k) rank matrix."""
    n, k = ranks.shape
    row = {"n_models": k, "n_tasks": n, "statistic": None, "p_value": None,
           "critical_difference": critical_difference(k, n, alpha), "alpha": alpha}
    if k < 3 or n < 1:
        return row
    # lazy: scipy (chi2.sf(x, df) is chdtrc(df, x), without scipy.stats)
    from scipy.special import chdtrc

    # Per task, sum_j (r_j - (k+1)/2)^2 = (k^3 - k - sum over tie groups (t^3 - t)) / 12, so the
    # tie term comes from the ranks alone (exact: average ranks are multiples of 1/2).
    centred = ranks - (k + 1) / 2
    ties = float(np.rint(n * (k ** 3 - k) - 12 * np.square(centred).sum()))
    c = 1 - ties / (k * (k * k - 1) * n)
    if c <= 0:       # every task ties every entry: no ranking to test
        return row
    ssbn = float(np.square(ranks.sum(axis=0)).sum())
    statistic = (12.0 / (k * n * (k + 1)) * ssbn - 3 * n * (k + 1)) / c
    row.update(statistic=statistic, p_value=float(chdtrc(k - 1, statistic)))
    return row


def average_ranks(scores_df: pl.DataFrame, *,
                  tasks: Iterable[TaskMeta] | None = None) -> pl.DataFrame:
    """[model, (source), average_rank]: the mean over the expected tasks of each entry's rank
    on the task (rank 1 = best score, ties share the mean of their ranks), among the entries
    with a score on every expected task (the others are left out). Sorted by average_rank,
    then the entry keys."""
    keys = entry_keys(scores_df)
    entries, values = _matrix(scores_df, [t.task_id for t in _expected(tasks)])
    mean = _ranks(values).mean(axis=0) if values.size else np.empty(values.shape[1])
    return (entries.with_columns(pl.Series("average_rank", mean, dtype=pl.Float64))
            .sort(["average_rank", *keys]))


def friedman(scores_df: pl.DataFrame, *, tasks: Iterable[TaskMeta] | None = None,
             alpha: float = ALPHA) -> pl.DataFrame:
    """One row: [n_models, n_tasks, statistic, p_value, critical_difference, alpha].

    Friedman's chi-square over the expected tasks (the blocks) and the entries with a score on
    every one of them (the treatments), tie-corrected as `scipy.stats.friedmanchisquare`, its
    p-value from the chi-square distribution with k - 1 degrees of freedom, and the Nemenyi
    critical difference of average ranks at `alpha` (see the module docstring)."""
    _check_alpha(alpha)
    _, values = _matrix(scores_df, [t.task_id for t in _expected(tasks)])
    return pl.DataFrame([_friedman_row(_ranks(values), alpha)],
                        schema=_TEST_SCHEMA)


def rank_tests(scores_df: pl.DataFrame, *, tasks: Iterable[TaskMeta] | None = None,
               alpha: float = ALPHA, min_tasks: int = MIN_TASKS) -> pl.DataFrame:
    """[scope, n_models, n_tasks, statistic, p_value, critical_difference, alpha]: `friedman`
    for scope "all" (every expected task), then for each category with at least `min_tasks`
    expected tasks (CATEGORY_ORDER). Each scope counts the entries complete on its own tasks,
    so a category's row may hold more entries than "all"."""
    _check_alpha(alpha)
    rows = []
    for scope, ids in _scopes(_expected(tasks), min_tasks):
        _, values = _matrix(scores_df, ids)
        rows.append({"scope": scope,
                     **_friedman_row(_ranks(values), alpha)})
    return pl.DataFrame(rows, schema={"scope": pl.String, **_TEST_SCHEMA})


def scope_average_ranks(scores_df: pl.DataFrame, *, tasks: Iterable[TaskMeta] | None = None,
                        min_tasks: int = MIN_TASKS) -> pl.DataFrame:
    """[scope, model, (source), average_rank]: `average_ranks` for the scopes of `rank_tests`
    (scope order kept; within a scope sorted by average_rank, then the entry keys)."""
    keys = entry_keys(scores_df)
    frames = []
    for scope, ids in _scopes(_expected(tasks), min_tasks):
        subset = [t for t in _expected(tasks) if t.task_id in set(ids)]
        frames.append(average_ranks(scores_df, tasks=subset)
                      .select(pl.lit(scope).alias("scope"), *keys, "average_rank"))
    schema = {"scope": pl.String, **{k: pl.String for k in keys}, "average_rank": pl.Float64}
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema)


def regime_rank_tests(scores: dict[str, pl.DataFrame], *, tasks: Sequence[TaskMeta] | None,
                      level: float) -> dict[str, pl.DataFrame]:
    """`rank_tests` ([regime, scope, n_models, n_tasks, statistic, p_value,
    critical_difference, alpha]) and `average_ranks` ([regime, scope, model, (source),
    average_rank]) of every regime of `scores` (regime -> its scores) with scores: Friedman
    and Nemenyi over the tasks, for all of them and for each category with at least
    MIN_TASKS, at alpha = 1 - level (`presets.alpha_of`); none when no regime has scores."""
    tests, ranks = [], []
    for r, frame in scores.items():
        if frame.is_empty():
            continue
        tests.append(rank_tests(frame, tasks=tasks, alpha=alpha_of(level), min_tasks=MIN_TASKS)
                     .select(pl.lit(r).alias("regime"), pl.all()))
        ranks.append(scope_average_ranks(frame, tasks=tasks, min_tasks=MIN_TASKS)
                     .select(pl.lit(r).alias("regime"), pl.all()))
    return {"rank_tests": pl.concat(tests), "average_ranks": pl.concat(ranks)} if tests else {}


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the input order: p sorted ascending,
    p_holm_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


def wilcoxon_holm(scores_df: pl.DataFrame, pairs: list[tuple[str, str]], *,
                  tasks: Iterable[TaskMeta] | None = None, alpha: float = ALPHA) -> pl.DataFrame:
    """[model_a, model_b, n_tasks, mean_difference, statistic, p_value, p_holm, reject]: one
    row per pair, in the given order.

    Over the expected tasks both models have: n_tasks, mean_difference = mean of (a - b)
    (positive: a scores higher), and the two-sided Wilcoxon signed-rank test of
    `scipy.stats.wilcoxon(a, b)` with its defaults (zero differences dropped; see the module
    docstring): `statistic` = min(W+, W-), `p_value`. `p_holm` adjusts the p-values over the
    pairs that have one (Holm's step-down); reject = p_holm <= alpha. A pair without a non-zero
    difference has NULL statistic, p-values and reject.

    Models are named by id; a frame mixing sources must hold each named model under one source
    only (filter it first). Raises ValueError for an unknown or ambiguous model, a model paired
    with itself, or a pair given twice.
    """
    _check_alpha(alpha)
    ids = [t.task_id for t in _expected(tasks)]
    present = scores_df.filter(pl.col("task").is_in(ids) & pl.col("value").is_not_null())
    keys = entry_keys(scores_df)
    known = present.select(keys).unique()
    seen: set[frozenset[str]] = set()
    for a, b in pairs:
        if a == b:
            raise ValueError(f"pair ({a!r}, {b!r}): a model cannot be compared with itself")
        if frozenset((a, b)) in seen:
            raise ValueError(f"pair ({a!r}, {b!r}) is given twice: give each pair once "
                             "(Holm's correction counts every pair)")
        seen.add(frozenset((a, b)))
        for m in (a, b):
            n = known.filter(pl.col("model") == m).height
            if n == 0:
                raise ValueError(f"model {m!r} has no score on these tasks: check the name "
                                 "(model ids as in the store's catalog)")
            if n > 1:
                raise ValueError(f"model {m!r} appears under several sources: filter the "
                                 "scores to one source first")
    by_model = {m: present.filter(pl.col("model") == m).select("task", "value")
                for m in dict.fromkeys(x for pair in pairs for x in pair)}
    rows = []
    for a, b in pairs:
        both = by_model[a].join(by_model[b], on="task", suffix="_b")
        x = both["value"].cast(pl.Float64).to_numpy()
        y = both["value_b"].cast(pl.Float64).to_numpy()
        row = {"model_a": a, "model_b": b, "n_tasks": x.size,
               "mean_difference": float(np.mean(x - y)) if x.size else None,
               "statistic": None, "p_value": None}
        if np.any(x != y):
            statistic, p_value = wilcoxon(x, y)
            row.update(statistic=statistic, p_value=p_value)
        rows.append(row)
    tested = [i for i, r in enumerate(rows) if r["p_value"] is not None]
    adjusted = holm([rows[i]["p_value"] for i in tested])
    for r in rows:
        r.update(p_holm=None, reject=None)
    for i, p in zip(tested, adjusted, strict=True):
        rows[i].update(p_holm=float(p), reject=bool(p <= alpha))
    return pl.DataFrame(rows, schema=_PAIR_SCHEMA)
