"""Scores split by domain: per entry, the micro score over the tasks in its model's pretraining
domain and over those out of it (`store.domains.domain`, through a `(model, task) -> flag`
callable such as `store.tables.catalogs.pair_domains`), with the task counts."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from store.analyses.aggregates import entry_keys
from store.domains import IN, OUT, UNKNOWN


def domain_split(scores: pl.DataFrame, domain_of: Callable[[str, str], str]) -> pl.DataFrame:
    """[model, (source), in_micro, n_in, out_micro, n_out, n_unknown] from a `scores` frame
    (`store.analyses.scores_of`): `in_micro` the mean over the entry's scored in-domain tasks,
    `out_micro` over its out-of-domain ones (NULL where it has none), `n_unknown` the tasks whose
    domain is unknown (in neither mean); entries in model order."""
    keys = entry_keys(scores)
    flagged = scores.with_columns(pl.Series(
        "domain", [domain_of(m, t) for m, t in zip(scores["model"], scores["task"], strict=True)],
        dtype=pl.String))
    value = pl.col("value")
    return (flagged.group_by(keys)
            .agg(value.filter(pl.col("domain") == IN).mean().alias("in_micro"),
                 (pl.col("domain") == IN).sum().cast(pl.Int64).alias("n_in"),
                 value.filter(pl.col("domain") == OUT).mean().alias("out_micro"),
                 (pl.col("domain") == OUT).sum().cast(pl.Int64).alias("n_out"),
                 (pl.col("domain") == UNKNOWN).sum().cast(pl.Int64).alias("n_unknown"))
            .sort(keys))
