"""Seed means: one value per (source, protocol, model, task, regime), from the `results` view
(a model's rows at another compute precision are their own entry there, so a cell has one
precision, `compute_precision`, and one recipe preset, `recipe_preset`).

mean = arithmetic mean over the stored seeds, summed in seed order (a plain `avg` sums in
whatever order DuckDB's threads meet the rows, so the last bit could change between reads);
sd = sample standard deviation (ddof = 1) over seeds, also in seed order, NULL with fewer than
two seeds. Imported
rows are already seed means (seed NULL): they pass through with `n_seeds` 0 and NULL sd.
Full-regime rows share one fit (sd 0).
"""

from __future__ import annotations

import polars as pl

from store.db import Source, query

SEED_MEANS_SQL = """
WITH cells AS (
  SELECT r.model, r.task, r.regime, r.source, r.protocol_hash, min(r.protocol) AS protocol,
         count(r.seed) AS n_seeds,
         list_sort(list(struct_pack(seed := r.seed, mcc := r.mcc, acc := r.acc,
                                    f1 := r.f1_macro))) AS v,
         bool_and(r.converged) AS converged, bool_or(r.degenerate) AS degenerate,
         max(r.n_test) AS n_test, min(r.data_hash) AS data_hash,
         min(r.compute_precision) AS compute_precision, min(r.recipe_preset) AS recipe_preset,
         min(r.storage_precision) AS storage_precision
  FROM results r
  WHERE {where}
  GROUP BY r.model, r.task, r.regime, r.source, r.protocol_hash
), lists AS (
  SELECT * EXCLUDE (v), list_transform(v, lambda x: x.mcc) AS mccs,
         list_transform(v, lambda x: x.acc) AS accs, list_transform(v, lambda x: x.f1) AS f1s
  FROM cells
)
SELECT c.model, c.task, t.category, c.regime, c.source, c.protocol, c.protocol_hash, c.n_seeds,
       list_avg(mccs) AS mcc, list_aggregate(mccs, 'stddev_samp') AS mcc_sd,
       list_avg(accs) AS acc, list_aggregate(accs, 'stddev_samp') AS acc_sd,
       list_avg(f1s) AS f1_macro, list_aggregate(f1s, 'stddev_samp') AS f1_macro_sd,
       c.converged, c.degenerate, c.n_test, c.data_hash, c.compute_precision, c.recipe_preset,
       c.storage_precision
FROM lists c LEFT JOIN tasks t ON t.task_id = c.task
WHERE {category}
ORDER BY c.model, t.category, c.task, c.regime, c.source
"""

PER_SEED_SQL = """
SELECT r.*, t.category FROM results r LEFT JOIN tasks t ON t.task_id = r.task
WHERE {where} ORDER BY r.model, t.category, r.task, r.regime, r.source, r.seed
"""


def _where(filters: dict[str, list[str] | None], table: str = "r") -> tuple[str, list]:
    """`column IN list` for every filter given (columns: model, task, category, regime,
    source, protocol_hash; `category` is the task catalog's, `t`)."""
    clauses, params = ["true"], []
    for column, values in filters.items():
        if values:
            col = "t.category" if column == "category" else f"{table}.{column}"
            clauses.append(f"list_contains(?, {col})")
            params.append(list(values))
    return " AND ".join(clauses), params


def seed_means(paths: Source, **filters: list[str] | None) -> pl.DataFrame:
    """One row per cell (aggregated over its seeds, then its task's category added: the
    aggregation groups by the cell's key alone, which keeps it small)."""
    category = filters.pop("category", None)
    where, params = _where(filters)
    by_category, more = _where({"category": category})
    return query(paths, SEED_MEANS_SQL.format(where=where, category=by_category),
                 params + more)


def per_seed(paths: Source, **filters: list[str] | None) -> pl.DataFrame:
    where, params = _where(filters)
    return query(paths, PER_SEED_SQL.format(where=where), params)
