"""Controlled comparisons: pairs of models that differ in exactly one attribute.

The attributes are the catalog's architecture family, tokenization family, pretraining data and
scale band (<100M, 100M-1B, >1B). A pair that agrees on all but one of them isolates that one
(as far as these attributes go). For each pair: the per-column deltas (a - b) for macro and every
category, and the category win counts (a higher, b higher, equal).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

import polars as pl

from store.analyses.aggregates import category_columns, entry_keys

ATTRIBUTES: tuple[str, ...] = (
    "architecture_family", "tokenization_family", "pretraining_data", "scale_band")


def controlled_pairs(agg_df: pl.DataFrame, models_df: pl.DataFrame,
                     pairs: Iterable[tuple[str, str]] | None = None, *,
                     attributes: Sequence[str] = ATTRIBUTES) -> pl.DataFrame:
    """[(source), model_a, model_b, attribute, value_a, value_b, macro, <categories>, wins_a,
    wins_b, ties].

    Without `pairs`: every pair of entries (of the same source, when the frame has several)
    that differs in exactly one of `attributes`, `attribute` naming it; a and b in the frame's
    order. With `pairs` (model ids): those pairs as given, `attribute` listing every attribute
    they differ in ("" when none), values joined the same way. `macro` and the category columns
    hold a - b (NULL where either is missing); wins count the categories where a (b) scores
    higher, ties where both are equal, over the categories both have.
    """
    categories = category_columns(agg_df)
    keys = entry_keys(agg_df)
    meta = {r["model_id"]: r for r in models_df.iter_rows(named=True)}
    entries = [r for r in agg_df.iter_rows(named=True) if r["model"] in meta]
    if pairs is None:
        candidates = [(a, b) for a, b in combinations(entries, 2)
                      if a.get("source") == b.get("source")]
    else:
        by_model: dict[str, list[dict]] = {}
        for entry in entries:
            by_model.setdefault(entry["model"], []).append(entry)
        candidates = [(a, b) for ma, mb in pairs
                      for a in by_model.get(ma, []) for b in by_model.get(mb, [])
                      if a.get("source") == b.get("source")]
    rows = []
    for a, b in candidates:
        differ = [x for x in attributes if meta[a["model"]][x] != meta[b["model"]][x]]
        if pairs is None and len(differ) != 1:
            continue
        deltas = {c: None if a[c] is None or b[c] is None else a[c] - b[c]
                  for c in ("macro", *categories)}
        scored = [deltas[c] for c in categories if deltas[c] is not None]
        rows.append({
            **({"source": a["source"]} if "source" in keys else {}),
            "model_a": a["model"], "model_b": b["model"], "attribute": ", ".join(differ),
            "value_a": ", ".join(str(meta[a["model"]][x]) for x in differ),
            "value_b": ", ".join(str(meta[b["model"]][x]) for x in differ),
            **deltas,
            "wins_a": sum(d > 0 for d in scored), "wins_b": sum(d < 0 for d in scored),
            "ties": sum(d == 0 for d in scored),
        })
    schema = {**({"source": pl.String} if "source" in keys else {}),
              "model_a": pl.String, "model_b": pl.String, "attribute": pl.String,
              "value_a": pl.String, "value_b": pl.String,
              **{c: pl.Float64 for c in ("macro", *categories)},
              "wins_a": pl.Int64, "wins_b": pl.Int64, "ties": pl.Int64}
    return pl.DataFrame(rows, schema=schema)
