"""Seed means: one value per (source, protocol, model, task, regime), from the `results` view
(a model's rows at another compute precision are their own entry there, so a cell has one
precision, `compute_precision`, one recipe preset, `recipe_preset`, and one context policy,
`context_policy`).

mean = arithmetic mean over the stored seeds, summed in seed order (a plain `avg` sums in
whatever order DuckDB's threads meet the rows, so the last bit could change between reads);
sd = sample standard deviation (ddof = 1) over seeds, also in seed order, NULL with fewer than
two seeds. Imported
rows are already seed means (seed NULL): they pass through with `n_seeds` 0 and NULL sd.
Full-regime rows share one fit (sd 0).
"""

from __future__ import annotations

import polars as pl

from store.db import Source, query, snapshot_of
from store.vocab.kinds import ALL_METRICS, EVERY_KIND, METRICS_OF


def seed_means_sql(metrics: tuple[str, ...], *, with_kind: bool = False) -> str:
    """The seed means' SQL of one kind's metric columns (`store.vocab.kinds.METRICS_OF`), with
    `{where}` and `{category}` to fill: per metric its mean and sample sd, in `metrics` order;
    `with_kind`: the cell's `kind` column after them (rows of several kinds)."""
    kind = ("min(r.kind) AS kind, ", "c.kind, ") if with_kind else ("", "")
    fields = ", ".join(f"m{i} := r.{m}" for i, m in enumerate(metrics))
    lists = ", ".join(f"list_transform(v, lambda x: x.m{i}) AS l{i}"
                      for i in range(len(metrics)))
    means = ",\n       ".join(f"list_avg(l{i}) AS {m}, "
                               f"list_aggregate(l{i}, 'stddev_samp') AS {m}_sd"
                               for i, m in enumerate(metrics))
    return f"""
WITH cells AS (
  SELECT r.model, r.task, r.regime, r.source, r.protocol_hash, min(r.protocol) AS protocol,
         {kind[0]}count(r.seed) AS n_seeds,
         list_sort(list(struct_pack(seed := r.seed, {fields}))) AS v,
         bool_and(r.converged) AS converged, bool_or(r.degenerate) AS degenerate,
         max(r.n_test) AS n_test, min(r.data_hash) AS data_hash,
         min(r.compute_precision) AS compute_precision, min(r.recipe_preset) AS recipe_preset,
         min(r.context_policy) AS context_policy, min(r.storage_precision) AS storage_precision
  FROM results r
  WHERE {{where}}
  GROUP BY r.model, r.task, r.regime, r.source, r.protocol_hash
), lists AS (
  SELECT * EXCLUDE (v), {lists}
  FROM cells
)
SELECT c.model, c.task, t.category, c.regime, c.source, c.protocol, c.protocol_hash, c.n_seeds,
       {means},
       {kind[1]}c.converged, c.degenerate, c.n_test, c.data_hash, c.compute_precision,
       c.recipe_preset, c.context_policy, c.storage_precision
FROM lists c LEFT JOIN tasks t ON t.task_id = c.task
WHERE {{category}}
ORDER BY c.model, t.category, c.task, c.regime, c.source
"""


SEED_MEANS_SQL = {**{kind: seed_means_sql(metrics) for kind, metrics in METRICS_OF.items()},
                  EVERY_KIND: seed_means_sql(ALL_METRICS, with_kind=True)}
"""Each task kind's seed means (a snapshot's `results` view holds one kind's rows), and every
kind's (each cell with its kind and every metric, NULL where not its kind's)."""

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
    aggregation groups by the cell's key alone, which keeps it small), with the metrics of the
    snapshot's task kind (`paths` a `store.db.Snapshot`; classification's on a `StorePaths`)."""
    category = filters.pop("category", None)
    where, params = _where(filters)
    by_category, more = _where({"category": category})
    snap = snapshot_of(paths)
    try:
        return snap.query(SEED_MEANS_SQL[snap.kind].format(where=where, category=by_category),
                          params + more)
    finally:
        if snap is not paths:
            snap.close()


def per_seed(paths: Source, **filters: list[str] | None) -> pl.DataFrame:
    where, params = _where(filters)
    return query(paths, PER_SEED_SQL.format(where=where), params)
