"""Reference tables beside the results: the official leaderboard's published aggregates.

`leaderboard.json` holds only aggregates (micro, macro and the 13 category scores per model,
regime and metric), never per-task scores, so it is not a source of result rows. It is kept as
one table, `StorePaths.leaderboard` (`<store>/reference/leaderboard.parquet`), replaced as a
whole by each import (the leaderboard is one document), and read back in the shape of
`store.analyses.aggregates` so it can stand beside aggregates computed from the results.
"""

from __future__ import annotations

import polars as pl

from store.analyses.aggregates import entry_keys, unpivot_scopes
from store.atomic import write_atomic
from store.catalog import CATEGORY_ORDER
from store.official.formats import Leaderboard, leaderboard_schema
from store.paths import StorePaths


def write_leaderboard(paths: StorePaths, board: Leaderboard) -> bool:
    """Store the leaderboard (atomically); False when the stored one is already identical."""
    path = paths.leaderboard
    frame = board.frame.sort("regime", "metric", "model")
    if path.exists() and pl.read_parquet(path, glob=False).equals(frame):
        return False
    write_atomic(path, lambda tmp: frame.write_parquet(tmp))
    return True


def read_leaderboard(paths: StorePaths, *, regime: str = "full",
                     metric: str = "mcc") -> pl.DataFrame:
    """[model, display, params, provenance, micro, macro, <13 categories>] for one regime and
    metric (result column names: mcc, acc, f1_macro); empty when no leaderboard was imported."""
    path = paths.leaderboard
    columns = ["model", "display", "params", "provenance", "micro", "macro", *CATEGORY_ORDER]
    if not path.exists():
        return pl.DataFrame(schema={c: leaderboard_schema()[c] for c in columns})
    return (pl.read_parquet(path, glob=False)
            .filter((pl.col("regime") == regime) & (pl.col("metric") == metric))
            .select(columns))


def leaderboard_differences(agg_df: pl.DataFrame, board: pl.DataFrame) -> pl.DataFrame:
    """[keys..., scope, value, published, difference]: an `aggregates` frame beside a
    `read_leaderboard` frame of the same regime and metric, for the models in both
    (difference = value - published; NULL where either is missing)."""
    keys = entry_keys(agg_df)
    return (unpivot_scopes(agg_df)
            .join(unpivot_scopes(board.select("model", "micro", "macro", *CATEGORY_ORDER),
                                 "published"), on=["model", "scope"])
            .with_columns((pl.col("value") - pl.col("published")).alias("difference"))
            .select(*keys, "scope", "value", "published", "difference"))
