"""When a cell is done and current: the one rule behind the planner, `status`, `export`,
`report`, the dashboard and every commit.

A cell is (source, protocol hash, model, task, regime). A row is **current** when it was computed
on the data chosen for its task: the reader names the data hash of each task (the planner and
`status`: the hashes of the suite's files as they are now), or takes the store's current ones
(`CURRENT_DATA_SQL`). Imported rows carry no data hash (the official formats have none; their data
is geneb-v1 at its pinned revision) and are always current. A cell is **done** when its current
rows cover every seed of its protocol (imported: its seed-mean row), **partial** when they cover
some, and **stale** when all its rows were computed on other data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from store.vocab.sources import LOCAL

# A row `r` joined with the chosen data hash `c` of its task.
CURRENT = "(r.data_hash IS NULL OR c.data_hash IS NULL OR r.data_hash = c.data_hash)"

# The store's current data hash per task: the hash `fill` registered in the task catalog (the
# suite's files, not subsampled, as the last run read them), else the hash of the task's newest
# local row.
CURRENT_DATA_SQL = f"""
SELECT task_id AS task, data_hash FROM tasks WHERE data_hash IS NOT NULL
UNION ALL
SELECT task, arg_max(data_hash, created_at) AS data_hash FROM results_all
WHERE source = '{LOCAL}' AND data_hash IS NOT NULL
  AND task NOT IN (SELECT task_id FROM tasks WHERE data_hash IS NOT NULL)
GROUP BY task
"""

CURRENT_RESULTS_SQL = f"""
SELECT r.* FROM results_latest r LEFT JOIN current_data c ON c.task = r.task WHERE {CURRENT}
"""
STALE_RESULTS_SQL = f"""
SELECT r.* FROM results_latest r LEFT JOIN current_data c ON c.task = r.task WHERE NOT {CURRENT}
"""

_STATES_SQL = f"""
WITH _protocol_seeds AS (
  SELECT unnest(?::VARCHAR[]) AS protocol_hash, unnest(?::BIGINT[]) AS n_seeds
), _chosen_data AS (
  SELECT unnest(?::VARCHAR[]) AS task, unnest(?::VARCHAR[]) AS data_hash
), per_cell AS (
  SELECT r.source, r.protocol_hash, r.model, r.task, r.regime,
         count(DISTINCT r.seed) FILTER (WHERE {CURRENT}) AS n_seeds,
         coalesce(bool_or(r.seed IS NULL AND {CURRENT}), false) AS seed_means,
         coalesce(bool_or({CURRENT}), false) AS has_current
  FROM {{rows}} r LEFT JOIN {{hashes}} c ON c.task = r.task
  WHERE {{where}}
  GROUP BY ALL
)
SELECT p.source, p.protocol_hash, p.model, p.task, p.regime, p.n_seeds,
       CASE WHEN p.seed_means OR p.n_seeds >= s.n_seeds THEN 'done'
            WHEN p.has_current THEN 'partial' ELSE 'stale' END AS state
FROM per_cell p JOIN _protocol_seeds s ON s.protocol_hash = p.protocol_hash
"""

Run = Callable[[str, list], pl.DataFrame]


def cell_states(run: Run, rows: str = "results_latest", *, seeds: Mapping[str, int],
                data_hashes: Mapping[str, str] | None = None, where: str = "true",
                params: list | None = None) -> pl.DataFrame:
    """[source, protocol_hash, model, task, regime, n_seeds, state] of every cell with rows in
    the relation `rows` (rows of protocols that `seeds` does not name are ignored).

    `run(sql, params)` runs a query (`store.db.Snapshot.query`). `seeds`: protocol hash -> the
    number of seeds a done cell covers. `data_hashes`: task -> the chosen data hash (tasks not
    named take any data); None: the store's current data (the `current_data` view of
    `store.db`). `where` filters `r.` columns with `?` placeholders for `params`.
    """
    hashes = "current_data" if data_hashes is None else "_chosen_data"
    chosen = dict(data_hashes or {})
    sql = _STATES_SQL.format(rows=rows, hashes=hashes, where=where)
    return run(sql, [list(seeds), list(seeds.values()), list(chosen), list(chosen.values()),
                     *(params or [])])
