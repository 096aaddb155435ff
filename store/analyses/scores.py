"""Per-task scores read from the results store: the input of every analysis.

A cell is (model, source, task, regime). Its score is the seed mean of `store.seedmeans`: the
mean over the seeds recorded for the cell (local runs: one row per seed; imported references:
one row with a NULL seed, so the mean is the value itself).
"""

from __future__ import annotations

import polars as pl

from store import seedmeans
from store.db import Source
from store.vocab.kinds import ALL_METRICS
from store.vocab.protocol import GENEB_V1


def seed_means(paths: Source, *, protocol_hash: str = GENEB_V1.hash,
               source: str | None = None, model: str | None = None,
               regime: str | None = None) -> pl.DataFrame:
    """`store.seedmeans.seed_means` for one protocol and optionally one source, model and
    regime: one row per cell with `n_seeds`, the metric means and their sample sd."""
    filters = {"source": source, "model": model, "regime": regime}
    return seedmeans.seed_means(paths, protocol_hash=[protocol_hash],
                                **{k: [v] for k, v in filters.items() if v is not None})


def scores_of(means: pl.DataFrame, *, regime: str = "full", metric: str = "mcc",
              with_source: bool = True) -> pl.DataFrame:
    """The `scores` frame of one regime and metric (any kind's: `store.vocab.kinds`), from a
    `seed_means` frame of that kind."""
    if metric not in ALL_METRICS:
        raise ValueError(f"metric must be one of {ALL_METRICS}, got {metric!r}")
    keys = ["model", "task", "category", metric]
    return (means.filter((pl.col("regime") == regime) & pl.col(metric).is_not_null())
            .select(*keys, *(["source"] if with_source else []))
            .rename({metric: "value"}))


def scores(paths: Source, *, regime: str = "full", metric: str = "mcc",
           source: str | None = None, protocol_hash: str = GENEB_V1.hash) -> pl.DataFrame:
    """[model, task, category, value] for one regime and metric (mcc, acc or f1_macro).

    `value` is the seed mean of the cell; `category` comes from the store's task catalog. With
    `source` given ('local', 'official', ...) only that source's rows are read. With
    `source=None` every source is read and a `source` column is added, so a model run locally
    and imported as an official reference appears twice, once per source: pass the frame on as
    is (the analyses key entries by model and source) or filter it. Cells whose value is NULL
    are left out (they count as missing downstream).
    """
    means = seed_means(paths, protocol_hash=protocol_hash, source=source, regime=regime)
    return scores_of(means, regime=regime, metric=metric, with_source=source is None)
