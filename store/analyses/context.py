"""Score against context, per model and category (issue 45): each model's entries at several
context policies (`store.vocab.context`: `fill --context-length N` once per N,
`--context-lengths`, windows) side by side, with the task-bootstrap interval of each
(`score_intervals`, the one bootstrap of `store.analyses.intervals`), at the macro scope and,
where the suite has more than one category, at each category's (the same draws' category
scopes: a category's score is the mean of its tasks'). It answers "does this model use its
context": a curve that rises with the length where a suite's labels need it (geneb-long), flat
where they do not, and in which category.

Nothing is pooled: each point is one entry of the report (`<model> [crop-left-1000]`,
or the model's own name at its current variant), read back to its model and context policy
through the store's `entries` and `current_precision` views (`store.cells`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from store.analyses.aggregates import OVERALL

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


def curve_scopes(intervals: pl.DataFrame) -> tuple[str, ...]:
    """The scopes a context curve is read at: macro, then each category of `intervals`
    (`score_intervals`' scopes, in their order) where it holds more than one (a suite of one
    category: its curve is macro's)."""
    if intervals.is_empty():
        return ("macro",)
    categories = [s for s in intervals["scope"].unique(maintain_order=True)
                  if s not in OVERALL]
    return ("macro", *categories) if len(categories) > 1 else ("macro",)


def context_curve(intervals: pl.DataFrame, variants: pl.DataFrame,
                  scope: str | Sequence[str] = "macro") -> pl.DataFrame:
    """[model, context, context_length, entry, scope, value, low, high]: the score interval
    (`score_intervals`) at `scope` (a scope, or several: `curve_scopes`) of every entry of a
    model whose entries hold at least two context policies, ordered by scope (as given), then
    model, then length (the default, its own limit, last; windows after crops of their
    length). Empty when no model has two."""
    scopes = [scope] if isinstance(scope, str) else list(scope)
    if intervals.is_empty() or variants.is_empty():
        return pl.DataFrame(schema={c: pl.String for c in COLUMNS})
    rows = (intervals.filter(pl.col("scope").is_in(scopes))
            .join(variants.rename({"model": "base"}), left_on="model", right_on="entry",
                  how="inner")
            .with_columns(pl.col("context_policy").fill_null("crop").alias("context"),
                          pl.col("context_policy").map_elements(
                              context_length, return_dtype=pl.Int64).alias("context_length"),
                          pl.col("scope").replace_strict(
                              scopes, range(len(scopes)), return_dtype=pl.Int64)
                          .alias("_scope")))
    several = rows.group_by("base").agg(pl.col("context").n_unique().alias("n")) \
        .filter(pl.col("n") > 1)["base"]
    return (rows.filter(pl.col("base").is_in(several.implode()))
            .with_columns(pl.col("context").str.starts_with("windows").alias("_windows"))
            .sort(["_scope", "base", "context_length", "_windows"], nulls_last=True,
                  maintain_order=True)
            .select(pl.col("base").alias("model"), "context", "context_length",
                    pl.col("model").alias("entry"), "scope", "value", "low", "high"))
