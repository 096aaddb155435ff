"""Few-shot degradation: how much of its full-data score a model keeps with 10 and 1 examples
per class.

For a score column (macro, micro or a category) and a few-shot regime k:
- drop_k = full - k (absolute drop, in score units);
- rel_drop_k = (full - k) / full (relative drop);
- retention_k = k / full (= 1 - rel_drop_k).
The ratios are NULL unless full > 0: with MCC near or below 0 a ratio means nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from store.analyses.aggregates import by_regime, entry_keys


def degradation(aggs: Mapping[str, pl.DataFrame], *, reference: str = "full") -> pl.DataFrame:
    """[keys..., scope, full, 10shot, 1shot, drop_<k>, rel_drop_<k>, retention_<k> per few-shot
    regime k]: one row per entry and aggregate column (`aggs` maps regime -> aggregates)."""
    wide = by_regime(aggs)
    full = pl.col(reference)
    ratio_ok = full > 0
    derived = []
    for k in (r for r in aggs if r != reference):
        derived += [
            (full - pl.col(k)).alias(f"drop_{k}"),
            pl.when(ratio_ok).then((full - pl.col(k)) / full).alias(f"rel_drop_{k}"),
            pl.when(ratio_ok).then(pl.col(k) / full).alias(f"retention_{k}"),
        ]
    return wide.with_columns(derived)


def degradation_summary(degradation_df: pl.DataFrame) -> pl.DataFrame:
    """[scope, n, <means of every regime and derived column>]: per score column, the mean over
    the entries of each value (an entry with a NULL value is left out of that mean; n counts
    the entries with a full score)."""
    keys = entry_keys(degradation_df)
    values = [c for c in degradation_df.columns if c not in (*keys, "scope")]
    return (degradation_df.group_by("scope", maintain_order=True)
            .agg(pl.col(values[0]).count().cast(pl.Int64).alias("n"), pl.col(values).mean()))
