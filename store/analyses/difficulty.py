"""Task difficulty: how well the models do on each task, and how much they disagree.

Per task, over the entries (models) that have a score for it: the mean, the sample standard
deviation (ddof=1, NULL with fewer than 2 entries) and the best entry (highest score; ties go to
the first model id in sort order). A task is easy when mean > `easy`, hard when mean < `hard`,
high-variance when sd > `high_var` (defaults `EASY`, `HARD`, `HIGH_VAR`: GENEB's, on MCC).
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from store.analyses.aggregates import entry_keys
from store.catalog import TaskMeta, geneb_v1_tasks

EASY, HARD, HIGH_VAR = 0.70, 0.35, 0.12


def task_difficulty(scores_df: pl.DataFrame, easy: float = EASY, hard: float = HARD,
                    high_var: float = HIGH_VAR, *,
                    tasks: Iterable[TaskMeta] | None = None) -> pl.DataFrame:
    """[task, label, category, n_models, mean, sd, best_model, (best_source), best_value, easy,
    hard, high_variance], one row per expected task (default: geneb-v1) in catalog order."""
    expected = list(tasks if tasks is not None else geneb_v1_tasks())
    keys = entry_keys(scores_df)
    best = (scores_df.sort(["task", "value", *keys], descending=[False, True] + [False] * len(keys))
            .group_by("task", maintain_order=True).first()
            .select("task", *(pl.col(k).alias(f"best_{k}") for k in keys),
                    pl.col("value").alias("best_value")))
    stats = scores_df.sort("task", *keys).group_by("task", maintain_order=True).agg(
        pl.col("value").count().cast(pl.Int64).alias("n_models"),
        pl.col("value").mean().alias("mean"),
        pl.col("value").std(ddof=1).alias("sd"))
    catalog = pl.DataFrame(
        {"task": [t.task_id for t in expected], "label": [t.label for t in expected],
         "category": [t.category for t in expected]},
        schema={"task": pl.String, "label": pl.String, "category": pl.String})
    return (catalog.join(stats, on="task", how="left", maintain_order="left")
            .join(best, on="task", how="left", maintain_order="left")
            .with_columns(pl.col("n_models").fill_null(0),
                          (pl.col("mean") > easy).alias("easy"),
                          (pl.col("mean") < hard).alias("hard"),
                          (pl.col("sd") > high_var).alias("high_variance"))
            .select("task", "label", "category", "n_models", "mean", "sd",
                    *(f"best_{k}" for k in keys), "best_value", "easy", "hard", "high_variance"))
