"""Aggregates: category scores, micro and macro per model, as GENEB defines them.

- category score = mean of the category's task scores;
- micro = mean over all tasks of the suite; macro = mean of the category scores.
A score is NULL when any task it covers is missing (never an average over what happens to
exist); `n_missing` counts the suite's tasks without a score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import polars as pl

from store.catalog import CATEGORY_ORDER, TaskMeta, geneb_v1_tasks

OVERALL: tuple[str, ...] = ("micro", "macro")
"""The scopes over every task of the suite (the others are categories)."""
SCOPES: tuple[str, ...] = (*OVERALL, *CATEGORY_ORDER)


def entry_keys(frame: pl.DataFrame) -> list[str]:
    """What identifies an entry: the model, and its source when the frame mixes sources."""
    return ["model", "source"] if "source" in frame.columns else ["model"]


def category_columns(frame: pl.DataFrame) -> list[str]:
    """The category columns of an aggregates-shaped frame: the score columns right after
    `macro` (the 13 GENEB categories, or a custom suite's own); GENEB's categories where the
    frame has no `macro`."""
    cols = frame.columns
    if "macro" not in cols:
        return [c for c in CATEGORY_ORDER if c in cols]
    out = []
    for c in cols[cols.index("macro") + 1:]:
        if not frame.schema[c].is_float():
            break
        out.append(c)
    return out


def score_columns(frame: pl.DataFrame) -> list[str]:
    """The aggregate columns of a frame, in the order micro, macro, categories."""
    return [c for c in ("micro", "macro") if c in frame.columns] + category_columns(frame)


def categories_of(tasks: Iterable[TaskMeta]) -> list[str]:
    """The categories of a suite's tasks in column order: GENEB's in CATEGORY_ORDER, then a
    custom suite's own in the order of its tasks."""
    tasks = list(tasks)
    categories = [c for c in CATEGORY_ORDER if any(t.category == c for t in tasks)]
    return categories + list(dict.fromkeys(t.category for t in tasks
                                           if t.category not in categories))


def _complete_mean(values: pl.Expr) -> pl.Expr:
    """The mean, summed left to right in the frame's order (as the official leaderboard
    builder's `sum(values) / len(values)`: the same last bit as the published files, on every
    run; a parallel or pairwise sum is not); NULL when a value is missing."""
    return pl.when(values.null_count() == 0).then(values.cum_sum().last() / values.count())


def _macro(categories: list[str]) -> pl.Expr:
    """The mean of the category scores, added left to right in category order; NULL when one
    is missing, or when the suite has no tasks (a suite not materialised in the store yet: no
    categories, nothing to average)."""
    if not categories:
        return pl.lit(None, dtype=pl.Float64).alias("macro")
    total = pl.col(categories[0])
    for c in categories[1:]:
        total = total + pl.col(c)
    # Divided by a count, not by the literal len(categories): polars turns a division by a
    # literal into a multiplication by its reciprocal, which is off in the last bit.
    return (pl.when(pl.all_horizontal(pl.col(categories).is_not_null()))
            .then(total / pl.concat_list(categories).list.len()).alias("macro"))


def aggregates(scores_df: pl.DataFrame, *, tasks: Iterable[TaskMeta] | None = None,
               missing_by_category: bool = False) -> pl.DataFrame:
    """[model, (source), micro, macro, <categories in CATEGORY_ORDER>, n_missing].

    `scores_df` is a `scores()` frame. The expected tasks are `tasks` (default: the 100 geneb-v1
    tasks) with their categories; scores of other tasks are ignored. With `missing_by_category`
    a column `<category> missing` counts each category's missing tasks. Sorted by macro
    (descending, NULL last), then model.
    """
    expected = list(tasks if tasks is not None else geneb_v1_tasks())
    categories = categories_of(expected)
    keys = entry_keys(scores_df)
    # Orders kept throughout, so every mean sums its values in catalog order (same last bit on
    # every run).
    grid = (scores_df.select(keys).unique(maintain_order=True)
            .join(pl.DataFrame({"task": [t.task_id for t in expected],
                                "category": [t.category for t in expected]},
                               schema={"task": pl.String, "category": pl.String}), how="cross")
            .join(scores_df.select(*keys, "task", "value"), on=[*keys, "task"], how="left",
                  maintain_order="left"))
    in_category = {c: pl.col("value").filter(pl.col("category") == c) for c in categories}
    extra = ([in_category[c].null_count().cast(pl.Int64).alias(f"{c} missing")
              for c in categories]
             if missing_by_category else [])
    return (grid.group_by(keys, maintain_order=True)
            .agg(_complete_mean(pl.col("value")).alias("micro"),
                 *(_complete_mean(in_category[c]).alias(c) for c in categories),
                 pl.col("value").null_count().cast(pl.Int64).alias("n_missing"),
                 *extra)
            .with_columns(_macro(categories))
            .select(*keys, "micro", "macro", *categories, "n_missing",
                    *(f"{c} missing" for c in categories if missing_by_category))
            .sort(["macro", *keys], descending=[True] + [False] * len(keys), nulls_last=True))


def unpivot_scopes(agg_df: pl.DataFrame, value_name: str = "value") -> pl.DataFrame:
    """[keys..., scope, value]: one row per entry and aggregate column."""
    return agg_df.unpivot(on=score_columns(agg_df), index=entry_keys(agg_df),
                          variable_name="scope", value_name=value_name)


def by_regime(aggs: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """[keys..., scope, <one column per regime>] from aggregates of several regimes, in the
    first frame's order (scopes in the order micro, macro, categories)."""
    frames = [unpivot_scopes(agg, regime) for regime, agg in aggs.items()]
    keys = [*entry_keys(frames[0]), "scope"]
    wide = frames[0]
    for frame in frames[1:]:
        wide = wide.join(frame, on=keys, how="full", coalesce=True, maintain_order="left_right")
    return wide
