"""Category leaders: the best entry per score column and regime, and where the leader changes.

The leader of a column is the entry with the highest score (ties go to the first model id in sort
order); `margin` is its lead over the runner-up (NULL when alone).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from store.analyses.aggregates import entry_keys, unpivot_scopes


def category_leaders(aggs: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """[regime, scope, model, (source), value, runner_up, margin]: per regime (`aggs` maps regime
    -> aggregates) and score column (micro, macro, categories)."""
    frames = []
    for regime, agg in aggs.items():
        keys = entry_keys(agg)
        ranked = (unpivot_scopes(agg).drop_nulls("value")
                  .sort(["value", *keys], descending=[True] + [False] * len(keys))
                  .group_by("scope", maintain_order=True)
                  .agg(*(pl.col(k).first() for k in keys), pl.col("value").first(),
                       pl.col("model").get(1, null_on_oob=True).alias("runner_up"),
                       (pl.col("value").first() - pl.col("value").get(1, null_on_oob=True))
                       .alias("margin")))
        order = {s: i for i, s in enumerate(agg.columns)}
        frames.append(ranked.sort(pl.col("scope").replace_strict(order))
                      .select(pl.lit(regime).alias("regime"), "scope", *keys, "value",
                              "runner_up", "margin"))
    return pl.concat(frames) if frames else pl.DataFrame()


def leader_changes(leaders_df: pl.DataFrame) -> pl.DataFrame:
    """[scope, <leader per regime>..., changed]: one row per score column, the leader's model id
    in every regime (in the order of `leaders_df`) and whether it is not the same in all."""
    regimes = list(dict.fromkeys(leaders_df["regime"])) if leaders_df.height else []
    if not regimes:   # no entry has a score in any regime (e.g. a suite without results)
        return pl.DataFrame(schema={"scope": pl.String, "changed": pl.Boolean})
    wide = (leaders_df.select("regime", "scope", "model")
            .pivot(on="regime", index="scope", values="model", maintain_order=True))
    return wide.select("scope", *regimes).with_columns(
        (pl.concat_list(regimes).list.n_unique() > 1).alias("changed"))
