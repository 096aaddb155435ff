"""Scale: does a bigger model score better? Spearman rho between parameter count and score.

Models with an unknown parameter count (NULL or 0, e.g. the k-mer baselines) are left out, as are
the models named in `exclude`. rho and its two-sided p-value are those of `scipy.stats.spearmanr`
(`store.analyses.rankings.spearman`): NULL with fewer than 3 models.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from store.analyses.aggregates import score_columns
from store.analyses.rankings import spearman


def scale_correlation(agg_df: pl.DataFrame, models_df: pl.DataFrame,
                      exclude: Iterable[str] = (), *,
                      columns: Sequence[str] | None = None) -> pl.DataFrame:
    """[(source), scope, rho, p_value, n] for macro, micro and every category (or `columns`).

    `models_df` is the model catalog (`model_id`, `params`). With a `source` column (entries of
    several sources) the correlation is computed per source, so no model counts twice.
    """
    columns = list(columns) if columns is not None else score_columns(agg_df)
    sized = (agg_df.join(models_df.select(pl.col("model_id").alias("model"), "params"),
                         on="model", how="left")
             .filter((pl.col("params") > 0) & ~pl.col("model").is_in(list(exclude))))
    parts = (sized.partition_by("source", as_dict=True, maintain_order=True)
             if "source" in agg_df.columns else {(None,): sized})
    rows = []
    for (source,), part in parts.items():
        params = part["params"].to_list()
        for column in columns:
            rho, p, n = spearman(params, part[column].to_list())
            rows.append({"source": source, "scope": column, "rho": rho, "p_value": p, "n": n})
    frame = pl.DataFrame(rows, schema={"source": pl.String, "scope": pl.String,
                                       "rho": pl.Float64, "p_value": pl.Float64, "n": pl.Int64})
    return frame if "source" in agg_df.columns else frame.drop("source")
