"""Score against context, per model (issue 45): each model's entries at several context policies
(`store.vocab.context`: `fill --context-length N` once per N, `--context-lengths`, windows) side
by side, with the task-bootstrap interval of each (`score_intervals`, the one bootstrap of
`store.analyses.intervals`). It answers "does this model use its context": a curve that rises
with the length where a suite's labels need it (geneb-long), flat where they do not.

Nothing is pooled: each point is one entry of the report (`<model> [crop-left-1000]`,
or the model's own name at its current variant), read back to its model and context policy
through the store's `entries` and `current_precision` views (`store.cells`).
"""

from __future__ import annotations

import polars as pl

# The entries of the snapshot with their model and context policy (NULL: the default): those
# at another variant than their model's current one (`entries`), and each model's own name at
# its current one.
VARIANTS_SQL = """
SELECT entry, model, context_policy FROM entries
UNION ALL
SELECT model AS entry, model, nullif(context_policy, '') AS context_policy
FROM current_precision
"""
COLUMNS = ("model", "context", "context_length", "entry", "scope", "value", "low", "high")


def context_length(value: str | None) -> int | None:
    """The nucleotides a policy value keeps (`crop-<side>-<N>`: N; `windows-<W>-<S>`: W, each
    window's), None for the default (the model's own limit)."""
    if value is None:
        return None
    parts = value.split("-")
    return int(parts[2]) if parts[0] == "crop" else int(parts[1])


def context_curve(intervals: pl.DataFrame, variants: pl.DataFrame,
                  scope: str = "macro") -> pl.DataFrame:
    """[model, context, context_length, entry, scope, value, low, high]: the `scope` score
    interval (`score_intervals`) of every entry of a model whose entries hold at least two
    context policies, ordered by model, then by length (the default, its own limit, last;
    windows after crops of their length). Empty when no model has two."""
    if intervals.is_empty() or variants.is_empty():
        return pl.DataFrame(schema={c: pl.String for c in COLUMNS})
    rows = (intervals.filter(pl.col("scope") == scope)
            .join(variants.rename({"model": "base"}), left_on="model", right_on="entry",
                  how="inner")
            .with_columns(pl.col("context_policy").fill_null("crop").alias("context"),
                          pl.col("context_policy").map_elements(
                              context_length, return_dtype=pl.Int64).alias("context_length")))
    several = rows.group_by("base").agg(pl.col("context").n_unique().alias("n")) \
        .filter(pl.col("n") > 1)["base"]
    return (rows.filter(pl.col("base").is_in(several.implode()))
            .with_columns(pl.col("context").str.starts_with("windows").alias("_windows"))
            .sort(["base", "context_length", "_windows"], nulls_last=True)
            .select(pl.col("base").alias("model"), "context", "context_length",
                    pl.col("model").alias("entry"), "scope", "value", "low", "high"))
