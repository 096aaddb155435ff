"""Seed means: one value per (source, protocol, model, task, regime), from the `results` view.

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
  SELECT r.model, r.task, t.category, r.regime, r.source, r.protocol, r.protocol_hash,
         count(r.seed) AS n_seeds, list(r.mcc ORDER BY r.seed) AS mccs,
         list(r.acc ORDER BY r.seed) AS accs, list(r.f1_macro ORDER BY r.seed) AS f1s,
         bool_and(r.converged) AS converged, bool_or(r.degenerate) AS degenerate,
         max(r.n_test) AS n_test, any_value(r.data_hash) AS data_hash
  FROM results r LEFT JOIN tasks t ON t.task_id = r.task
  WHERE {where}
  GROUP BY ALL
)
SELECT model, task, category, regime, source, protocol, protocol_hash, n_seeds,
       list_avg(mccs) AS mcc, list_aggregate(mccs, 'stddev_samp') AS mcc_sd,
       list_avg(accs) AS acc, list_aggregate(accs, 'stddev_samp') AS acc_sd,
       list_avg(f1s) AS f1_macro, list_aggregate(f1s, 'stddev_samp') AS f1_macro_sd,
       converged, degenerate, n_test, data_hash
FROM cells
ORDER BY model, category, task, regime, source
"""

PER_SEED_SQL = """
SELECT r.*, t.category FROM results r LEFT JOIN tasks t ON t.task_id = r.task
WHERE {where} ORDER BY r.model, t.category, r.task, r.regime, r.source, r.seed
"""


def _where(filters: dict[str, list[str] | None]) -> tuple[str, list]:
    """`column IN list` for every filter given (columns: model, task, category, regime,
    source, protocol_hash)."""
    clauses, params = ["true"], []
    for column, values in filters.items():
        if values:
            col = "t.category" if column == "category" else f"r.{column}"
            clauses.append(f"list_contains(?, {col})")
            params.append(list(values))
    return " AND ".join(clauses), params


def seed_means(paths: Source, **filters: list[str] | None) -> pl.DataFrame:
    where, params = _where(filters)
    return query(paths, SEED_MEANS_SQL.format(where=where), params)


def per_seed(paths: Source, **filters: list[str] | None) -> pl.DataFrame:
    where, params = _where(filters)
    return query(paths, PER_SEED_SQL.format(where=where), params)
