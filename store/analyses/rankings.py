"""Rankings: per column ranks, a Borda count across categories, rank shifts and Spearman rho.

Conventions:
- higher scores rank better; rank 1 is the best;
- ties share the best rank of the tie ('min': 1, 2, 2, 4), as leaderboards print them;
- NULL scores get no rank;
- Spearman rho is Pearson's r between average ranks (ties share the mean of their ranks, as the
  coefficient's definition requires), over the entries that have both values, with a
  two-sided p-value: exact up to EXACT_SPEARMAN entries (the share of the n! orderings of one
  side whose |rho| reaches the observed one: with 3 entries and rho = 1 that is 1/3, where the
  t approximation says 0), above it `scipy.stats.spearmanr`'s (t distribution, n - 2 degrees of
  freedom); with fewer than 3 such entries, or a constant input, rho and its p-value are NULL.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from itertools import combinations, combinations_with_replacement, permutations

import numpy as np
import polars as pl

from store.analyses.aggregates import category_columns, entry_keys, score_columns


def _rank(column: str) -> pl.Expr:
    return pl.col(column).rank(method="min", descending=True).cast(pl.Int64)


def tie_mean_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..E along the last axis of `x` (n, E), ties sharing the mean of their ranks (as
    Spearman's rho needs; `scipy.stats.rankdata(method="average")`), vectorised over rows."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    n, e = x.shape
    order = np.argsort(x, axis=1)             # any order: a tie's positions are contiguous
    ordered = np.take_along_axis(x, order, axis=1)
    idx = np.broadcast_to(np.arange(e), (n, e))
    starts = np.ones((n, e), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.ones((n, e), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, idx, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, idx, e)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((n, e))
    np.put_along_axis(ranks, order, (first + last) / 2 + 1, axis=1)
    return ranks


EXACT_SPEARMAN = 8   # up to this many entries the p-value enumerates every ordering (8! = 40,320)


@cache
def _orderings(n: int) -> np.ndarray:
    """Every permutation of range(n), one per row (n! x n)."""
    return np.array(list(permutations(range(n))), dtype=np.int8)


def _exact_p(a: np.ndarray, b: np.ndarray, rho: float) -> float:
    """The two-sided permutation p-value of Spearman's rho between rank vectors `a` and `b`:
    the share of the orderings of `b` whose |rho| is at least |rho| (a relative tolerance of
    1e-9 keeps ties of the statistic in, as the observed ordering is one of them)."""
    a = a - a.mean()
    b = b - b.mean()
    permuted = b[_orderings(len(b))] @ a / math.sqrt((a @ a) * (b @ b))
    return float(np.mean(np.abs(permuted) >= abs(rho) * (1 - 1e-9)))


def spearman(x: Sequence[float | None], y: Sequence[float | None]) -> tuple[
        float | None, float | None, int]:
    """(rho, two-sided p-value, n) over the pairs where both values are present.

    rho is Pearson's r between the average ranks. The p-value is exact up to EXACT_SPEARMAN
    pairs (every ordering of one side enumerated), else from the t distribution with n - 2
    degrees of freedom, as in `scipy.stats.spearmanr` (computed here without importing
    scipy.stats, which costs seconds of start-up time).
    """
    from scipy.special import stdtr  # lazy: scipy

    pairs = [(a, b) for a, b in zip(x, y, strict=True) if a is not None and b is not None]
    n = len(pairs)
    if n < 3 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
        return None, None, n
    ranks = tie_mean_ranks(np.array(pairs, dtype=float).T)
    rho = float(np.corrcoef(ranks[0], ranks[1])[0, 1])
    if n <= EXACT_SPEARMAN:
        return rho, _exact_p(ranks[0], ranks[1], rho), n
    dof = n - 2
    t = rho * math.sqrt(max(dof / ((rho + 1.0) * (1.0 - rho)), 0.0)) if abs(rho) < 1 else math.inf
    return rho, float(2 * stdtr(dof, -abs(t))), n


def rankings(agg_df: pl.DataFrame, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """[keys..., <one rank column per aggregate column>]: the rank of each entry in each column
    (micro, macro and every category by default), 'min' ties, NULL for a NULL score."""
    columns = list(columns) if columns is not None else score_columns(agg_df)
    return agg_df.select(*entry_keys(agg_df), *(_rank(c) for c in columns))


def borda(agg_df: pl.DataFrame, categories: Sequence[str] | None = None) -> pl.DataFrame:
    """[keys..., borda, borda_rank, mean_rank]: a Borda count across categories.

    Only entries with a score in every category take part (NULL otherwise). Among those n
    entries, a category gives an entry n - rank points (n - 1 for the best; tied entries all get
    the points of the tie's best rank); `borda` sums the points over the categories,
    `borda_rank` ranks that sum ('min' ties) and `mean_rank` is the mean category rank. Sorted
    by borda, best first.
    """
    categories = list(categories) if categories is not None else category_columns(agg_df)
    keys = entry_keys(agg_df)
    complete = agg_df.filter(pl.all_horizontal(pl.col(categories).is_not_null()))
    n = complete.height
    ranked = complete.select(*keys, *(_rank(c) for c in categories))
    scored = ranked.select(
        *keys,
        pl.sum_horizontal(n - pl.col(c) for c in categories).cast(pl.Int64).alias("borda"),
        pl.mean_horizontal(categories).alias("mean_rank"),
    ).with_columns(_rank("borda").alias("borda_rank"))
    return (agg_df.select(keys).join(scored, on=keys, how="left")
            .select(*keys, "borda", "borda_rank", "mean_rank")
            .sort(["borda", *keys], descending=[True] + [False] * len(keys), nulls_last=True))


def rank_shift(agg_a: pl.DataFrame, agg_b: pl.DataFrame, column: str = "macro") -> pl.DataFrame:
    """[keys..., value_a, value_b, rank_a, rank_b, shift] for the entries scored in both frames.

    Ranks are taken among those common entries ('min' ties); shift = rank_a - rank_b, so a
    positive shift is a climb from a to b. Sorted by rank_a.
    """
    keys = entry_keys(agg_a)
    both = (agg_a.select(*keys, pl.col(column).alias("value_a"))
            .join(agg_b.select(*keys, pl.col(column).alias("value_b")), on=keys)
            .drop_nulls(["value_a", "value_b"]))
    return (both.with_columns(_rank("value_a").alias("rank_a"), _rank("value_b").alias("rank_b"))
            .with_columns((pl.col("rank_a") - pl.col("rank_b")).alias("shift"))
            .sort(["rank_a", *keys]))


def spearman_regimes(aggs: Mapping[str, pl.DataFrame], column: str = "macro") -> pl.DataFrame:
    """[regime_a, regime_b, rho, p_value, n]: Spearman rho between the `column` rankings of
    every pair of regimes (in the mapping's order), over the entries scored in both."""
    rows = []
    for (ra, a), (rb, b) in combinations(aggs.items(), 2):
        rho, p, n = _agreement(a, b, column)
        rows.append({"regime_a": ra, "regime_b": rb, "rho": rho, "p_value": p, "n": n})
    return pl.DataFrame(rows, schema={"regime_a": pl.String, "regime_b": pl.String,
                                      "rho": pl.Float64, "p_value": pl.Float64, "n": pl.Int64})


def category_agreement(agg_df: pl.DataFrame,
                       categories: Sequence[str] | None = None) -> pl.DataFrame:
    """A square frame [category, <one column per category>] of Spearman rho between the
    rankings of two categories, over the entries scored in both (the diagonal is 1.0 wherever
    rho is defined)."""
    categories = list(categories) if categories is not None else category_columns(agg_df)
    values = {c: agg_df[c].to_list() for c in categories}
    rho = {(a, b): spearman(values[a], values[b])[0]
           for a, b in combinations_with_replacement(categories, 2)}
    rho.update({(a, a): 1.0 for a in categories if rho[a, a] is not None})  # not 1 - 1e-16
    return pl.DataFrame(
        [{"category": a, **{b: rho.get((a, b), rho.get((b, a))) for b in categories}}
         for a in categories],
        schema={"category": pl.String, **{c: pl.Float64 for c in categories}})


def protocol_agreement(agg_a: pl.DataFrame, agg_b: pl.DataFrame,
                       columns: Sequence[str] | None = None) -> pl.DataFrame:
    """[column, rho, p_value, n]: Spearman rho between the rankings two probe protocols give
    (e.g. the linear geneb-v1 probe against the MLP probe, appendix E.1) in each aggregate
    column (macro, micro, the categories), over the entries scored under both."""
    rows = []
    for column in columns or score_columns(agg_a):
        rho, p, n = _agreement(agg_a, agg_b, column)
        rows.append({"column": column, "rho": rho, "p_value": p, "n": n})
    return pl.DataFrame(rows, schema={"column": pl.String, "rho": pl.Float64,
                                      "p_value": pl.Float64, "n": pl.Int64})


def _agreement(a: pl.DataFrame, b: pl.DataFrame, column: str) -> tuple[float | None,
                                                                        float | None, int]:
    """Spearman (rho, p, n) of one column of two aggregate frames, over their common entries."""
    keys = entry_keys(a)
    both = a.select(*keys, pl.col(column).alias("a")).join(
        b.select(*keys, pl.col(column).alias("b")), on=keys)
    return spearman(both["a"].to_list(), both["b"].to_list())
