"""Uncertainty: bootstrap intervals of every aggregate score, rank intervals, P(A > B) and the
leader's tie group, for one regime and one metric.

Definitions (the docs' "Uncertainty", docs/guide/statistics.md, says the same):

- **Resampling unit: tasks.** A resample draws, for the micro score, the suite's T tasks with
  replacement (T of T), and, for the categories, each category's own T_c tasks with replacement
  within it (T_c of T_c), so every category keeps its weight; the macro score of a resample is
  the mean of that resample's category scores (the same resample as the categories). micro and
  the categories are drawn independently of each other.
- **Paired.** One set of resampled tasks is shared by every entry, so differences between two
  entries and their ranks are paired (the same tasks count for both).
- **Seed level (two-level bootstrap).** With `seed_rows` (local per-seed rows), within each
  resampled task the entry's k seeds are resampled with replacement (k of k), afresh for every
  time the task is drawn, and their mean is the task's value in that resample. Seeds are
  matched by position in seed order, so entries with the same seeds share the draw (seed s is
  the same few-shot training sample for every model: still paired). A cell without seed rows
  (imported seed means) or whose seeds all agree (the full regime's one shared fit) is resampled
  at the task level only: its value is the same in every seed draw.
- **Entries**: those with every aggregate (no missing task); the others are left out.
- **What the task bootstrap cannot see**: a scope of fewer than `MIN_SCOPE_TASKS` tasks (a
  category of one task: geneb-v1's Coding/NC and Chromatin Acc., every category of
  geneb-mini; macro when every category has one task) draws the same task in every resample,
  so it has no task-level interval: its score interval, rank interval, P(A > B) and p_best
  are NULL (`ONE_TASK_NOTE` says why), never a zero-width interval that would claim a
  certainty the data cannot give. Categories of 2-3 tasks get coarse intervals; the macro
  interval inherits this (it understates the uncertainty of those categories). The one rule
  still applies there (a sign-flip test needs no resampling; one task separates nothing).
- **Point**: the aggregates of the data as observed, taken from
  `store.analyses.aggregates.aggregates` (the official leaderboard to the last bit).
- **Score interval**: percentile, the (1 - level)/2 and 1 - (1 - level)/2 quantiles of the
  resampled scores (numpy's "linear" method).
- **Ranks**: higher is better, rank 1 the best, ties share the best rank ('min', as
  `store.analyses.rankings`), among the entries of the draws, in the data and in every
  resample. **Rank interval**: the same quantiles of the entry's resampled ranks, the lower one
  rounded down and the upper one rounded up to a rank (numpy's "lower" / "higher" methods),
  widened where needed to contain the entry's point rank (a percentile interval of ranks can
  miss it: on the official store 1-shot accuracy, lncRNA's 6 tasks put one entry's point rank 6
  in only 2.4 % of the resamples, below the 2.5 % quantile).
- **P(A > B)**: the share of resamples where A's score is strictly above B's; P(tie) the share
  where they are equal.
- **p_best**: the share of resamples where the entry ranks 1 (entries tied at the top all
  count). **Leader**: the entry with the best point score (ties: the first in key order, as
  `store.analyses.leaders`). **Tie group of the leader**: the leader and the entries the one
  rule for "A and B differ" (`store.analyses.differ`: the sign-flip test of the per-task
  differences, with the interval of the paired resampled difference) does not separate from
  it (`leader_verdicts`, `pair_verdicts`). The rank intervals, P(A > B) and p_best describe
  the resamples; no claim rests on them alone.

Vectorised: the resampled tasks become count matrices (how often each task is drawn in each
resample, `numpy.bincount`) and every resample's sums are one matrix product, counts @ scores;
seeded with `numpy.random.default_rng(seed)`.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import polars as pl

from store.analyses.aggregates import aggregates, entry_keys
from store.analyses.differ import Verdicts, decide
from store.analyses.presets import LEVEL, RESAMPLES, SEED
from store.catalog import CATEGORY_ORDER, TaskMeta, geneb_v1_tasks
from store.db import Source
from store.seedmeans import per_seed
from store.vocab.bootstrap import MIN_SCOPE_TASKS
from store.vocab.kinds import ALL_METRICS
from store.vocab.protocol import GENEB_V1

T = TypeVar("T")
R = TypeVar("R")

# Entries x entries x resamples of one comparison block, at most (booleans, ~32 MB).
_BLOCK = 1 << 25
# Values of one block of rows that an interval works on at a time (float64, ~1 MB): small
# temporaries stay in cache and in memory the allocator reuses (fresh pages cost more than the
# selection itself).
ROWS_BLOCK = 1 << 17


@dataclass(frozen=True)
class Draws:
    """Bootstrap resamples of every complete entry's aggregate scores (one regime, one metric)."""
    entries: pl.DataFrame      # [model] or [model, source]: row i is entry i of the arrays
    scopes: tuple[str, ...]    # ("micro", "macro", *categories in CATEGORY_ORDER / suite order)
    point: np.ndarray          # (E, S) float64: the aggregates of the data as observed
    #                            (== store.analyses.aggregates.aggregates to the last bit)
    values: np.ndarray         # (n, E, S) float64: the aggregates of each resample
    n: int
    seed: int
    seeds_resampled: bool      # True when per-seed rows were resampled too (two-level)
    scope_tasks: tuple[int, ...] = ()   # per scope, the tasks a resample draws from (macro:
    #                                     its largest category's); () counts as enough
    tasks: np.ndarray | None = None     # (E, T) float64: each entry's score per task (suite order)
    weights: np.ndarray | None = None   # (S, T) float64: each scope's task weights (sum 1; 0
    #                                     off the scope): point[:, j] == tasks @ weights[j]

    def resampled(self, scope: str | int) -> bool:
        """Whether resampling the tasks can move `scope`: it has MIN_SCOPE_TASKS tasks or more
        (else its interval, P(A > B) and p_best are NULL)."""
        j = scope if isinstance(scope, int) else _scope_index(self, scope)
        return not self.scope_tasks or self.scope_tasks[j] >= MIN_SCOPE_TASKS


@dataclass(frozen=True)
class Resamples:
    """The index sets of `n` resamples of a suite's tasks (positions in the suite's order).

    `micro` (n, T): the tasks drawn T of T; `strata` (n, T): the tasks drawn within each
    category, the category's T_c columns in category order (the scopes' order), each holding
    positions of that category's tasks; `seeds` maps a seed count k to the seed positions
    (n, T, k) drawn for each drawn task of `micro` and of `strata`: entry [r, j] holds the k seed
    positions (0..k-1, in seed order) of the task drawn in column j of resample r.
    """
    micro: np.ndarray
    strata: np.ndarray
    seeds: dict[int, tuple[np.ndarray, np.ndarray]]


def suite_categories(tasks: Iterable[TaskMeta] | None = None) -> tuple[list[str], list[str]]:
    """(task ids in suite order, categories in scope order) of the suite (default geneb-v1):
    GENEB's categories in CATEGORY_ORDER, then a custom suite's own in order of appearance (as
    `aggregates` orders its columns)."""
    expected = list(tasks if tasks is not None else geneb_v1_tasks())
    categories = [c for c in CATEGORY_ORDER if any(t.category == c for t in expected)]
    categories += list(dict.fromkeys(t.category for t in expected if t.category not in categories))
    return [t.task_id for t in expected], categories


def resample_indices(task_categories: Sequence[str], categories: Sequence[str], n: int,
                     rng: np.random.Generator, seed_counts: Iterable[int] = ()) -> Resamples:
    """The index sets `draw` uses, drawn from `rng` in this order: the micro tasks
    (`rng.integers(0, T, (n, T))`), then for each category in scope order its tasks
    (`rng.integers(0, T_c, (n, T_c))`, positions within the category in suite order), then for
    each seed count k in increasing order the seed positions of micro's and of the strata's
    drawn tasks (`rng.integers(0, k, (n, T, k))` each). `task_categories[t]` is the category
    of the suite's task t."""
    cats = np.asarray(task_categories, dtype=object)
    members = [np.flatnonzero(cats == c) for c in categories]
    t = len(cats)
    micro = rng.integers(0, t, size=(n, t)) if t else np.zeros((n, 0), np.int64)
    strata = (np.concatenate([m[rng.integers(0, len(m), size=(n, len(m)))] for m in members],
                             axis=1)
              if members else np.zeros((n, 0), np.int64))
    seeds = {k: (rng.integers(0, k, size=(n, t, k)), rng.integers(0, k, size=(n, t, k)))
             for k in sorted(set(seed_counts))}
    return Resamples(micro, strata, seeds)


def seed_rows_of(rows: pl.DataFrame, *, regime: str = "full", metric: str = "mcc",
                 with_source: bool = True) -> pl.DataFrame:
    """[model, (source), task, seed, value]: the per-seed rows of one regime and metric, from a
    `store.seedmeans.per_seed` frame (imported rows, seed NULL, and NULL values left out)."""
    if metric not in ALL_METRICS:
        raise ValueError(f"metric must be one of {ALL_METRICS}, got {metric!r}")
    return (rows.filter((pl.col("regime") == regime) & pl.col("seed").is_not_null()
                        & pl.col(metric).is_not_null())
            .select("model", *(["source"] if with_source else []), "task", "seed",
                    pl.col(metric).alias("value")))


def seed_rows(paths: Source, *, regime: str = "full", metric: str = "mcc",
              source: str | None = None, protocol_hash: str = GENEB_V1.hash) -> pl.DataFrame:
    """The `seed_rows` of `draw` read from the store, keyed as `store.analyses.scores(paths,
    regime=, metric=, source=)` keys its frame (a `source` column when `source` is None)."""
    filters = {"protocol_hash": [protocol_hash], "regime": [regime]}
    if source is not None:
        filters["source"] = [source]
    return seed_rows_of(per_seed(paths, **filters), regime=regime, metric=metric,
                        with_source=source is None)


def draw(scores_df: pl.DataFrame, *, tasks: Iterable[TaskMeta] | None = None,
         n: int = RESAMPLES, seed: int = SEED, seed_rows: pl.DataFrame | None = None) -> Draws:
    """`n` bootstrap resamples of the aggregates (micro, macro, categories) of every entry of
    `scores_df` (a `scores()` frame of one regime and metric) that has every task of the suite
    (`tasks`, default geneb-v1); the other entries are left out.

    Resampling unit: tasks (micro: T of T; each category: T_c of T_c within it; macro: the mean
    of the resampled categories), one index set shared by every entry (paired). With
    `seed_rows` ([model, (source), task, seed, value], keyed like `scores_df`), the seeds of
    each drawn task are resampled too, k of k (two-level); cells without seed rows, or whose
    seeds all agree, are resampled at the task level only. Seeded: the same arguments give the
    same draws. See the module docstring for the definitions.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    task_list = list(tasks if tasks is not None else geneb_v1_tasks())
    task_ids, categories = suite_categories(task_list)
    category_of = {t.task_id: t.category for t in task_list}
    keys = entry_keys(scores_df)
    scopes = ("micro", "macro", *categories)
    agg = aggregates(scores_df, tasks=task_list)
    complete = agg.filter(pl.all_horizontal(pl.col(list(scopes)).is_not_null()))
    entries = complete.select(keys)
    point = complete.select(scopes).to_numpy().astype(np.float64).reshape(len(entries),
                                                                          len(scopes))
    x = _matrix(scores_df, entries, task_ids, keys)
    cells = _seed_cells(seed_rows, entries, task_ids, keys) if seed_rows is not None else {}
    rng = np.random.default_rng(seed)
    res = resample_indices([category_of[t] for t in task_ids], categories, n, rng, cells)
    values = _resampled(x, cells, res, [category_of[t] for t in task_ids], categories)
    sizes = [sum(category_of[t] == c for t in task_ids) for c in categories]
    counts = (len(task_ids), max(sizes, default=0), *sizes)
    return Draws(entries, scopes, point, values, n, seed, bool(cells), counts, x,
                 scope_weights([category_of[t] for t in task_ids], categories))


def scope_weights(task_categories: Sequence[str], categories: Sequence[str]) -> np.ndarray:
    """(2 + C, T) float64: the task weights of micro (1/T each), macro (1/(C T_c) on a task of
    category c: every category weighs the same) and each category (1/T_c on its tasks, 0
    elsewhere), so that a scope's aggregate is the weighted sum of the tasks' scores."""
    cats = np.asarray(task_categories, dtype=object)
    t = len(cats)
    w = np.zeros((2 + len(categories), t))
    if t:
        w[0] = 1 / t
    for i, c in enumerate(categories):
        members = cats == c
        w[2 + i, members] = 1 / members.sum()
    if categories:
        w[1] = w[2:].sum(axis=0) / len(categories)
    return w


def bootstrap(scores_df: pl.DataFrame, *, tasks: Iterable[TaskMeta] | None, regime: str,
              metric: str, per_seed_rows: pl.DataFrame | None = None,
              with_source: bool = True, n: int = RESAMPLES, seed: int = SEED) -> Draws:
    """The task bootstrap of one regime and metric, as `report` and the dashboard run it:
    `draw` over `scores_df`'s complete entries, the seeds of each drawn task resampled too
    where `per_seed_rows` (a `store.seedmeans.per_seed` frame) holds local per-seed rows of
    `regime` that differ (`with_source`: keyed by model and source, as `scores_df`)."""
    rows = None
    if per_seed_rows is not None:
        rows = seed_rows_of(per_seed_rows, regime=regime, metric=metric,
                            with_source=with_source)
    return draw(scores_df, tasks=tasks, n=n, seed=seed,
                seed_rows=rows if rows is not None and rows.height else None)


def _matrix(scores_df: pl.DataFrame, entries: pl.DataFrame, task_ids: list[str],
            keys: list[str]) -> np.ndarray:
    """(E, T) scores of the entries on the suite's tasks (every cell present: complete
    entries)."""
    x = np.full((entries.height, len(task_ids)), np.nan)
    if not entries.height or not task_ids:
        return x
    cells = (scores_df.select(*keys, "task", "value")
             .join(entries.with_row_index("e"), on=keys)
             .join(pl.DataFrame({"task": task_ids}).with_row_index("t"), on="task"))
    x[cells["e"].to_numpy(), cells["t"].to_numpy()] = cells["value"].to_numpy()
    return x


def _seed_cells(seed_rows: pl.DataFrame, entries: pl.DataFrame, task_ids: list[str],
                keys: list[str]) -> dict[int, np.ndarray]:
    """{k: (E, T, k) seed values of the cells with k seeds that do not all agree, NaN in the
    other cells}, seeds in seed order."""
    missing = [k for k in (*keys, "task", "seed", "value") if k not in seed_rows.columns]
    if missing:
        raise ValueError(f"seed_rows must have the columns {[*keys, 'task', 'seed', 'value']} "
                         f"(keyed as the scores are); missing {missing}")
    rows = (seed_rows.filter(pl.col("seed").is_not_null() & pl.col("value").is_not_null())
            .unique([*keys, "task", "seed"], keep="last", maintain_order=True)
            .join(entries.with_row_index("e"), on=keys)
            .join(pl.DataFrame({"task": task_ids}).with_row_index("t"), on="task")
            .sort("e", "t", "seed")
            .group_by("e", "t", maintain_order=True)
            .agg(pl.col("value"), pl.col("value").n_unique().alias("distinct"))
            .filter(pl.col("distinct") > 1)
            .with_columns(pl.col("value").list.len().alias("k")))
    out = {}
    for (k,), part in rows.partition_by("k", as_dict=True, maintain_order=True).items():
        v = np.full((entries.height, len(task_ids), k), np.nan)
        v[part["e"].to_numpy(), part["t"].to_numpy()] = np.array(part["value"].to_list())
        out[int(k)] = v
    return out


def _counts(idx: np.ndarray, size: int) -> np.ndarray:
    """(n, size) float64: how often each position is drawn in each row of `idx` (n, m)."""
    n = idx.shape[0]
    flat = (np.arange(n)[:, None] * size + idx).ravel()
    return np.bincount(flat, minlength=n * size).reshape(n, size).astype(np.float64)


def _resampled(x: np.ndarray, cells: dict[int, np.ndarray], res: Resamples,
               task_categories: list[str], categories: list[str]) -> np.ndarray:
    """(n, E, S) resampled aggregates (micro, macro, categories): a view of an (S, n, E)
    array, so each scope's (n, E) plane is contiguous for the ranks and comparisons."""
    n, t = res.micro.shape
    e = x.shape[0]
    cats = np.asarray(task_categories, dtype=object)
    members = [np.flatnonzero(cats == c) for c in categories]
    order = np.concatenate(members) if members else np.zeros(0, np.int64)
    in_order = np.empty(t, dtype=np.int64)       # suite position -> position in category order
    in_order[order] = np.arange(t)
    bounds = np.cumsum([0, *(len(m) for m in members)])
    task_level = x.copy()
    for v in cells.values():
        task_level[~np.isnan(v[..., 0])] = 0.0       # those cells come from their seeds
    seed_level = {k: np.nan_to_num(v, nan=0.0) for k, v in cells.items()}

    def counted(idx: np.ndarray, which: int) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """How often each task is drawn per resample (n, T), and for each seed count k how
        often each (task, seed position) is drawn (n, T, k)."""
        per_seed = {}
        for k in seed_level:
            flat = (idx[..., None] * k + res.seeds[k][which]).reshape(n, -1)
            per_seed[k] = _counts(flat, t * k).reshape(n, t, k)
        return _counts(idx, t), per_seed

    def sums(counts: tuple[np.ndarray, dict[int, np.ndarray]], values: np.ndarray,
             seeds: dict[int, np.ndarray], cols: slice, size: int, into: np.ndarray) -> None:
        """`into` (n, E) = each resample's mean over its `size` drawn tasks among `cols` of
        each entry's values (a seed-level cell adds the mean of its drawn seeds per draw)."""
        tasks, per_seed = counts
        np.matmul(tasks[:, cols], values[:, cols].T, out=into)
        for k, v in seeds.items():
            into += (per_seed[k][:, cols].reshape(n, -1) @ v[:, cols].reshape(e, -1).T) / k
        into /= size

    out = np.empty((2 + len(categories), n, e))
    sums(counted(res.micro, 0), task_level, seed_level, slice(None), t, out[0])
    # The strata in category order: each category a slice of columns.
    strata = counted(in_order[res.strata], 1)
    ordered = task_level[:, order]
    ordered_seeds = {k: v[:, order] for k, v in seed_level.items()}
    for i in range(len(categories)):         # one matrix product per category, all resamples
        sums(strata, ordered, ordered_seeds, slice(bounds[i], bounds[i + 1]),
             int(bounds[i + 1] - bounds[i]), out[2 + i])
    if categories:
        np.sum(out[2:], axis=0, out=out[1])
        out[1] /= len(categories)
    else:
        out[1] = np.nan
    return out.transpose(1, 2, 0)


def planes(draws: Draws) -> np.ndarray:
    """(S, n, E): the draws' values scope by scope (no copy for the draws of `draw`)."""
    return np.ascontiguousarray(draws.values.transpose(2, 0, 1))


def threaded(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """`[fn(x) for x in items]` on a thread per core: numpy's sorts and reductions release the
    GIL, so independent per-scope work runs side by side (results in the order of `items`)."""
    items = list(items)
    workers = min(len(items), os.cpu_count() or 1)
    if workers <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def quantile_bounds(level: float) -> tuple[float, float]:
    """The two quantiles of a percentile interval at `level`; ValueError outside (0, 1)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    return (1 - level) / 2, 1 - (1 - level) / 2


def percentile_interval(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval at `level` of `samples` (resamples on the LAST axis): numpy's
    "linear" (1 - level)/2 and 1 - (1 - level)/2 quantiles, bit for bit; NaN resamples are
    left out (all NaN: NaN). The one interval rule of every bootstrap analysis."""
    q_lo, q_hi = quantile_bounds(level)
    samples = np.asarray(samples, dtype=float)
    if not np.isnan(samples).any():          # the usual case; nanquantile is far slower
        return _linear_quantiles(samples, q_lo, q_hi)
    with warnings.catch_warnings():          # an all-NaN slice: NaN, as wanted
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanquantile(samples, [q_lo, q_hi], axis=-1)
    return low, high


def _virtual(n: int, q: float) -> tuple[int, int, float]:
    """numpy's "linear" quantile `q` of n sorted values: the two positions it interpolates
    between and the weight of the second (virtual index (n - 1) q)."""
    virtual = (n - 1) * np.float64(q)
    previous = np.floor(virtual)
    return int(previous), min(int(previous) + 1, n - 1), float(virtual - previous)


def _interpolated(a: np.ndarray, b: np.ndarray, gamma: float) -> np.ndarray:
    """numpy's "linear" interpolation between the order statistics `a` <= `b` (the same
    expression, so the same bits)."""
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def _linear_quantiles(samples: np.ndarray, q_lo: float, q_hi: float) -> tuple[np.ndarray,
                                                                              np.ndarray]:
    """numpy's "linear" quantiles `q_lo` < `q_hi` along the last axis of NaN-free `samples`,
    from two in-place selections of a copy (numpy's single-position partition is vectorised
    and beats a sort, which beats the multi-position partition `numpy.quantile` runs): the
    upper positions first on all values, then the lower ones among those below them; each
    neighbouring order statistic is the min (max) of the few values beside its position.
    Blocks of rows of about `ROWS_BLOCK` values at a time."""
    n = samples.shape[-1]
    lo_a, lo_b, lo_g = _virtual(n, q_lo)
    hi_a, hi_b, hi_g = _virtual(n, q_hi)
    if n < 4 or lo_b >= hi_a:                # tiny samples: one sort
        ordered = np.sort(samples, axis=-1)
        return (_interpolated(ordered[..., lo_a], ordered[..., lo_b], lo_g),
                _interpolated(ordered[..., hi_a], ordered[..., hi_b], hi_g))
    rows = samples.reshape(-1, n)
    stats = np.empty((4, len(rows)))         # the order statistics lo_a, lo_b, hi_a, hi_b
    step = max(1, ROWS_BLOCK // n)
    for start in range(0, len(rows), step):
        work = np.array(rows[start:start + step], order="C")
        out = stats[:, start:start + step]
        work.partition(hi_a, axis=-1)        # [hi_a] in place, larger values after it
        out[2] = work[:, hi_a]
        out[3] = work[:, hi_a + 1:].min(axis=-1) if hi_b > hi_a else out[2]
        below = work[:, :hi_a]               # the hi_a smallest values
        below.partition(lo_b, axis=-1)
        out[1] = below[:, lo_b]
        out[0] = below[:, :lo_b].max(axis=-1) if lo_b > lo_a else out[1]
    shape = samples.shape[:-1]
    return (_interpolated(stats[0], stats[1], lo_g).reshape(shape),
            _interpolated(stats[2], stats[3], hi_g).reshape(shape))


def _tie_ranks(ascending: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For values sorted in increasing order along the last axis: None when no row holds a
    tie; else (the rows holding one, (k, E) those rows' 0-based ranks from the best of each
    position, 'min' ties: how many values are strictly greater)."""
    m = ascending.shape[-1]
    tie = ascending[..., 1:] == ascending[..., :-1]
    rows = tie.any(axis=-1)
    if not rows.any():
        return None
    # Best first, a tie group's positions all take the rank of its first.
    starts = np.ones((int(rows.sum()), m), dtype=bool)
    starts[:, 1:] = ~tie[rows][:, ::-1]
    return rows, np.maximum.accumulate(np.where(starts, np.arange(m), 0), axis=-1)[:, ::-1]


def _descending_ranks(ascending: np.ndarray) -> np.ndarray:
    """Each position's 0-based rank from the best ('min' ties), for values sorted in
    increasing order along the last axis (without ties: E - 1 - position)."""
    m = ascending.shape[-1]
    ranked = np.broadcast_to(np.arange(m - 1, -1, -1), ascending.shape)
    ties = _tie_ranks(ascending)
    if ties is None:
        return ranked
    ranked = ranked.copy()
    ranked[ties[0]] = ties[1]
    return ranked


def min_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks along the last axis, higher is better, rank 1 the best, ties sharing the best rank
    of the tie ('min': 1, 2, 2, 4), as `store.analyses.rankings` ranks (int64)."""
    order = np.argsort(values, axis=-1)
    ranked = _descending_ranks(np.take_along_axis(values, order, axis=-1)) + 1
    ranks = np.empty(values.shape, dtype=np.int64)
    np.put_along_axis(ranks, order, ranked, axis=-1)
    return ranks


def _rank_histogram(values: np.ndarray) -> np.ndarray:
    """(..., E, E) counts from resampled values (..., n, E): [..., e, r - 1] = how many
    resamples give entry e rank r ('min' ranks)."""
    m = values.shape[-1]
    lead = values.shape[:-2]
    planes = int(np.prod(lead))
    order = np.argsort(values, axis=-1)              # entry at each position, worst first
    untied = np.arange(m - 1, -1, -1)
    flat = order
    flat *= m
    flat += untied
    ties = _tie_ranks(np.sort(values, axis=-1))
    if ties is not None:                             # the few rows holding a tie
        flat[ties[0]] += ties[1] - untied
    flat += (np.arange(planes) * m * m).reshape(*lead, 1, 1)
    return np.bincount(flat.ravel(), minlength=planes * m * m).reshape(*lead, m, m)


def _rank_quantiles(hist: np.ndarray, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(rank_low, rank_high) from a rank histogram: numpy's quantiles of the ranks with the
    "lower" and "higher" methods (sorted positions floor and ceil of (n - 1) q)."""
    q_lo, q_hi = quantile_bounds(level)
    cum = np.cumsum(hist, axis=-1)
    lo = int(np.floor((n - 1) * np.float64(q_lo)))
    hi = int(np.ceil((n - 1) * np.float64(q_hi)))
    # The rank at sorted position i is the smallest r with more than i ranks <= r.
    return (np.argmax(cum > lo, axis=-1) + 1).astype(np.int64), \
        (np.argmax(cum > hi, axis=-1) + 1).astype(np.int64)


def interval_text(low: float | None, high: float | None, digits: int = 3) -> str:
    """`[low, high]` rounded outwards at `digits` decimals (low down, high up), so the point
    value shown at as many decimals or more never falls outside its own interval (0.465 in
    [0.4651, 0.4702] shows [0.46, 0.48], never [0.47, 0.47]); "—" when there is none."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return "—"
    scale = 10 ** digits
    lo = math.floor(round(low * scale, 6)) / scale    # round(.., 6): float noise, not a digit
    hi = math.ceil(round(high * scale, 6)) / scale
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def _scope_index(draws: Draws, scope: str) -> int:
    if scope not in draws.scopes:
        raise ValueError(f"scope must be one of {draws.scopes}, got {scope!r}")
    return draws.scopes.index(scope)


def _per_scope(draws: Draws, columns: dict[str, np.ndarray], schema: dict) -> pl.DataFrame:
    """[keys..., scope, columns...] from (E, S) arrays: scope-major (all entries for micro,
    then macro, then each category), entries in the draws' order."""
    e, s = len(draws.entries), len(draws.scopes)
    keys = draws.entries.columns
    frame = pl.DataFrame({
        **{k: np.tile(draws.entries[k].to_numpy(), s) for k in keys},
        "scope": np.repeat(np.array(draws.scopes, dtype=object), e),
        **{name: a.T.reshape(-1) for name, a in columns.items()},
    }, schema={**{k: pl.String for k in keys}, "scope": pl.String, **schema})
    return frame


def score_intervals(draws: Draws, level: float = LEVEL) -> pl.DataFrame:
    """[model, (source), scope, value, low, high]: per entry and scope the point score and its
    percentile interval, the (1 - level)/2 and 1 - (1 - level)/2 quantiles of the resampled
    scores (numpy "linear"). Resampling unit: tasks (and seeds, two-level, when
    `draws.seeds_resampled`). Scope-major, entries in the draws' order."""
    quantile_bounds(level)
    e, s = draws.point.shape
    if e:          # scope by scope: an (E, n) copy of each plane, on both cores
        found = threaded(lambda plane: percentile_interval(plane.T, level), planes(draws))
        low = np.stack([lo for lo, _ in found], axis=1)                      # (E, S)
        high = np.stack([hi for _, hi in found], axis=1)
    else:
        low = high = np.zeros((0, s))
    frame = _per_scope(draws, {"value": draws.point, "low": low, "high": high},
                       {"value": pl.Float64, "low": pl.Float64, "high": pl.Float64})
    return _without_one_task_scopes(draws, frame, ("low", "high"))


def _without_one_task_scopes(draws: Draws, frame: pl.DataFrame,
                             columns: Sequence[str]) -> pl.DataFrame:
    """`frame` (a `scope` column) with `columns` NULL in the scopes resampling cannot move."""
    fixed = [s for s in draws.scopes if not draws.resampled(s)]
    if not fixed:
        return frame
    moving = ~pl.col("scope").is_in(fixed)
    return frame.with_columns(pl.when(moving).then(pl.col(c)).alias(c) for c in columns)


def rank_intervals(draws: Draws, level: float = LEVEL) -> pl.DataFrame:
    """[model, (source), scope, rank, rank_low, rank_high]: per entry and scope its rank among
    the draws' entries (1 = best, 'min' ties) on the point scores, and its rank interval: the
    (1 - level)/2 quantile of its resampled ranks rounded down ("lower") and the
    1 - (1 - level)/2 quantile rounded up ("higher"), widened to contain `rank` where they
    miss it. Scope-major, entries in the draws' order."""
    quantile_bounds(level)
    e, s = draws.point.shape
    rank = min_ranks(draws.point.T).T                                   # (E, S)
    if e:
        # Scope by scope: (n, E) temporaries stay in cache and reused memory (faster than
        # one pass over all scopes at once).
        hist = np.stack(threaded(_rank_histogram, planes(draws)))                  # (S, E, E)
        low, high = _rank_quantiles(hist, draws.n, level)                     # (S, E)
        low, high = np.minimum(low.T, rank), np.maximum(high.T, rank)
    else:
        low = high = np.zeros((0, s), np.int64)
    frame = _per_scope(draws, {"rank": rank, "rank_low": low, "rank_high": high},
                       {"rank": pl.Int64, "rank_low": pl.Int64, "rank_high": pl.Int64})
    return _without_one_task_scopes(draws, frame, ("rank_low", "rank_high"))


def _beats(values: np.ndarray) -> np.ndarray:
    """(E, E) int64: [a, b] = how many resamples (rows of `values`, (n, E)) have a > b."""
    n, e = values.shape
    wins = np.zeros((e, e), dtype=np.int64)
    step = max(1, _BLOCK // max(1, n * e))
    for a in range(0, e, step):      # blocks of entries (all resamples at once in each)
        block = values[:, a:a + step, None] > values[:, None, :]
        wins[a:a + step] = block.sum(axis=0)
    return wins


def win_probabilities(draws: Draws, scope: str = "macro") -> pl.DataFrame:
    """[model_a, (source_a), model_b, (source_b), p_a_beats_b, p_b_beats_a, p_tie]: for every
    ordered pair of different entries the share of resamples where a's `scope` score is
    strictly above b's, strictly below, and equal (paired resamples). The three add up to 1
    exactly (in that order); NULL in a scope resampling cannot move (`Draws.resampled`).
    Pairs in the draws' order (a, then b)."""
    j = _scope_index(draws, scope)
    e = len(draws.entries)
    wins = _beats(np.ascontiguousarray(draws.values[:, :, j]))
    a, b = np.nonzero(~np.eye(e, dtype=bool))
    p_a = wins[a, b] / draws.n
    p_b = wins[b, a] / draws.n
    p_tie = (draws.n - wins[a, b] - wins[b, a]) / draws.n
    p_tie = np.where(p_a + p_b + p_tie == 1.0, p_tie, 1.0 - (p_a + p_b))
    if not draws.resampled(j):
        p_a = p_b = p_tie = np.full(len(a), np.nan)
    keys = draws.entries.columns
    cols = {}
    for k in keys:
        v = draws.entries[k].to_numpy()
        cols[f"{k}_a"] = v[a]
        cols[f"{k}_b"] = v[b]
    order = [f"{k}_a" for k in keys] + [f"{k}_b" for k in keys]
    return pl.DataFrame({**{c: cols[c] for c in order}, "p_a_beats_b": p_a,
                         "p_b_beats_a": p_b, "p_tie": p_tie},
                        schema={**{c: pl.String for c in order}, "p_a_beats_b": pl.Float64,
                                "p_b_beats_a": pl.Float64, "p_tie": pl.Float64},
                        nan_to_null=True)


def pair_verdicts(draws: Draws, ia: Sequence[int] | np.ndarray, ib: Sequence[int] | np.ndarray,
                  scope: str | int = "macro", level: float = LEVEL, *, compared: int = 1,
                  interval: tuple[np.ndarray, np.ndarray] | None = None) -> Verdicts:
    """The one rule (`store.analyses.differ.decide`) for the pairs (ia[k], ib[k]) of entries of
    `draws` in `scope`: the sign-flip test of their per-task differences with the scope's task
    weights, and the percentile interval at `level` of their paired resampled difference
    (`interval`, when the caller has it; none in a scope resampling cannot move). `compared`:
    the comparisons the threshold is shared by (1 for pairs named in advance; see
    `store.analyses.differ`)."""
    j = scope if isinstance(scope, int) else _scope_index(draws, scope)
    ia, ib = np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64)
    if draws.tasks is None or draws.weights is None:
        raise ValueError("these draws hold no per-task scores (made by `draw`)")
    if interval is None:
        low = high = np.full(len(ia), np.nan)
        if draws.resampled(j) and len(ia):
            plane = draws.values[:, :, j]                                    # (n, E)
            low, high = percentile_interval((plane[:, ia] - plane[:, ib]).T, level)
    else:
        low, high = interval
    return decide(draws.tasks[ia] - draws.tasks[ib], draws.weights[j], level,
                  compared=compared, low=low, high=high)


def leader_index(draws: Draws, scope: str | int = "macro") -> int | None:
    """The row of the leader of `scope` in the draws' arrays: the best point score, ties to
    the first in key order (as `store.analyses.leaders`); None without entries."""
    j = scope if isinstance(scope, int) else _scope_index(draws, scope)
    if not len(draws.entries):
        return None
    value = draws.point[:, j]
    best = np.flatnonzero(value == np.nanmax(value)) if np.isfinite(value).any() else \
        np.arange(len(value))
    rows = list(draws.entries.iter_rows())
    return int(min(best, key=lambda i: rows[i]))


def leader_verdicts(draws: Draws, scope: str | int = "macro",
                    level: float = LEVEL) -> tuple[int, Verdicts] | None:
    """(the leader's row, the rule for the leader against every entry, row by row: the
    leader's own row compares it with itself) in `scope`; the threshold is shared by the
    E - 1 comparisons with the leader (`store.analyses.differ`: the leader is picked by the
    same scores). None without entries."""
    lead = leader_index(draws, scope)
    if lead is None:
        return None
    e = len(draws.entries)
    return lead, pair_verdicts(draws, np.full(e, lead), np.arange(e), scope, level,
                               compared=max(1, e - 1))


def leader_tie_group(draws: Draws, scope: str = "macro", level: float = LEVEL) -> pl.DataFrame:
    """[model, (source), p_best, rank_low, rank_high, leader, tied_with_leader, delta,
    delta_low, delta_high, p_value, method, n_tasks, wins, losses, threshold, p_leader_beats]
    for one scope.

    leader = the entry with the best point score (ties: the first in key order);
    tied_with_leader = the one rule (`store.analyses.differ`) does not separate it from the
    leader (`leader_verdicts`: the leader included), with the numbers it rests on: delta =
    leader - it (its scope score difference), delta_low/delta_high the percentile interval of
    that difference over the resamples, p_value the two-sided sign-flip p (method "exact" or
    "sampled", over the scope's n_tasks), wins/losses the tasks where the leader scores
    above/below it, threshold the largest p that separates ((1 - level) / (E - 1)); NULL on
    the leader's own row. Descriptive, from the bootstrap: p_best = the share of resamples
    where the entry ranks 1 ('min' ties), rank_low/rank_high its rank interval (as
    `rank_intervals`), p_leader_beats the share where the leader scores strictly above it (as
    `win_probabilities`); NULL with the interval in a scope resampling cannot move
    (`Draws.resampled`). Sorted by point score, best first (ties in key order).
    """
    j = _scope_index(draws, scope)
    quantile_bounds(level)
    keys = draws.entries.columns
    schema = {**{k: pl.String for k in keys}, "p_best": pl.Float64, "rank_low": pl.Int64,
              "rank_high": pl.Int64, "leader": pl.Boolean, "tied_with_leader": pl.Boolean,
              "delta": pl.Float64, "delta_low": pl.Float64, "delta_high": pl.Float64,
              "p_value": pl.Float64, "method": pl.String, "n_tasks": pl.Int64,
              "wins": pl.Int64, "losses": pl.Int64, "threshold": pl.Float64,
              "p_leader_beats": pl.Float64}
    found = leader_verdicts(draws, j, level)
    if found is None:
        return pl.DataFrame(schema=schema)
    lead, v = found
    e = len(draws.entries)
    own = np.arange(e) == lead
    moves = draws.resampled(j)
    plane = np.ascontiguousarray(draws.values[:, :, j])                   # (n, E)
    hist = _rank_histogram(plane)                                          # (E, E)
    above = np.count_nonzero(plane[:, [lead]] > plane, axis=0) / draws.n
    rank = min_ranks(draws.point[:, j])
    low, high = _rank_quantiles(hist, draws.n, level)
    low, high = np.minimum(low, rank), np.maximum(high, rank)

    def unless_own(x: np.ndarray) -> pl.Series:     # NULL on the leader's own row
        return pl.Series(np.where(own, np.nan, x.astype(float)), nan_to_null=True)

    frame = draws.entries.with_columns(
        pl.Series("value", draws.point[:, j]),
        pl.Series("p_best", hist[:, 0] / draws.n if moves else np.full(e, np.nan),
                  nan_to_null=True),
        pl.Series("rank_low", low).cast(pl.Int64), pl.Series("rank_high", high).cast(pl.Int64),
        pl.Series("leader", own), pl.Series("tied_with_leader", own | ~v.differs),
        unless_own(v.delta).alias("delta"), unless_own(v.low).alias("delta_low"),
        unless_own(v.high).alias("delta_high"), unless_own(v.p).alias("p_value"),
        pl.Series("method", [None if o else v.method for o in own], dtype=pl.String),
        pl.lit(v.n_tasks, dtype=pl.Int64).alias("n_tasks"),
        unless_own(v.wins).alias("wins"), unless_own(v.losses).alias("losses"),
        pl.lit(v.threshold, dtype=pl.Float64).alias("threshold"),
        unless_own(above if moves else np.full(e, np.nan)).alias("p_leader_beats"),
    ).sort(["value", *keys], descending=[True] + [False] * len(keys))
    frame = frame.select(list(schema)).cast(schema)
    if moves:
        return frame
    return frame.with_columns(pl.lit(None, dtype=schema[c]).alias(c)
                              for c in ("rank_low", "rank_high"))
