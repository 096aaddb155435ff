"""When a cell is done and current: the one rule behind the planner, `status`, `export`,
`report`, the dashboard and every commit.

A cell is (source, protocol hash, model, task, regime). A row is **current** when it was computed
on the data chosen for its task and, for a local row, with the revision chosen for its model:

- data: the reader names the data hash of each task (the planner and `status`: the hashes of the
  suite's files as they are now), or takes the store's current ones (`CURRENT_DATA_SQL`).
  Imported rows carry no data hash (the official formats have none; their data is geneb-v1 at
  its pinned revision) and are always current.
- model revision: the reader names the revision of each model (the planner and `status`: the
  revision a run computes with, `engine.planner.run_revisions`), or takes the store's current
  ones (`CURRENT_REVISION_SQL`). A revision of None (an unpinned hub model, a k-mer baseline) is
  compared as `NO_REVISION`. Imported rows carry their own revision string and have no local
  counterpart: they are always current.

A cell is **done** when its current rows cover every seed of its protocol (imported: its
seed-mean row), **partial** when they cover some, and **stale** when all its rows were computed
on other data or with another revision of the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from store.vocab.sources import LOCAL

# How a model revision of None is written where revisions are compared: the revision a reader
# chooses, and the model catalog's `model_revision` (NULL there: not recorded).
NO_REVISION = ""

# A row `r` joined with the chosen data hash `c` of its task and the chosen revision `v` of its
# model (no chosen revision: any).
CURRENT = ("((r.data_hash IS NULL OR c.data_hash IS NULL OR r.data_hash = c.data_hash) AND "
           f"(r.source <> '{LOCAL}' OR v.model_revision IS NULL "
           f"OR coalesce(r.model_revision, '{NO_REVISION}') = v.model_revision))")

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

# The store's current revision per model: the revision `fill` registered in the model catalog
# (what the model's last run computed with), else that of the model's newest local row.
CURRENT_REVISION_SQL = f"""
SELECT model_id AS model, model_revision FROM models WHERE model_revision IS NOT NULL
UNION ALL
SELECT model, arg_max(coalesce(model_revision, '{NO_REVISION}'), created_at) AS model_revision
FROM results_all
WHERE source = '{LOCAL}'
  AND model NOT IN (SELECT model_id FROM models WHERE model_revision IS NOT NULL)
GROUP BY model
"""

_CHOSEN = ("LEFT JOIN current_data c ON c.task = r.task "
           "LEFT JOIN current_revision v ON v.model = r.model")
CURRENT_RESULTS_SQL = f"SELECT r.* FROM results_latest r {_CHOSEN} WHERE {CURRENT}"
STALE_RESULTS_SQL = f"SELECT r.* FROM results_latest r {_CHOSEN} WHERE NOT {CURRENT}"

_STATES_SQL = f"""
WITH _protocol_seeds AS (
  SELECT unnest(?::VARCHAR[]) AS protocol_hash, unnest(?::BIGINT[]) AS n_seeds
), _chosen_data AS (
  SELECT unnest(?::VARCHAR[]) AS task, unnest(?::VARCHAR[]) AS data_hash
), _chosen_revision AS (
  SELECT unnest(?::VARCHAR[]) AS model, unnest(?::VARCHAR[]) AS model_revision
), per_cell AS (
  SELECT r.source, r.protocol_hash, r.model, r.task, r.regime,
         count(DISTINCT r.seed) FILTER (WHERE {CURRENT}) AS n_seeds,
         coalesce(bool_or(r.seed IS NULL AND {CURRENT}), false) AS seed_means,
         coalesce(bool_or({CURRENT}), false) AS has_current
  FROM {{rows}} r LEFT JOIN {{hashes}} c ON c.task = r.task
                  LEFT JOIN {{revisions}} v ON v.model = r.model
  WHERE {{where}}
  GROUP BY ALL
)
SELECT p.source, p.protocol_hash, p.model, p.task, p.regime, p.n_seeds,
       CASE WHEN p.seed_means OR p.n_seeds >= s.n_seeds THEN 'done'
            WHEN p.has_current THEN 'partial' ELSE 'stale' END AS state
FROM per_cell p JOIN _protocol_seeds s ON s.protocol_hash = p.protocol_hash
"""

Run = Callable[[str, list], pl.DataFrame]


def revision_text(revision: str | None) -> str:
    """A model revision as compared and recorded here (None: `NO_REVISION`)."""
    return NO_REVISION if revision is None else revision


def cell_states(run: Run, rows: str = "results_latest", *, seeds: Mapping[str, int],
                data_hashes: Mapping[str, str] | None = None,
                revisions: Mapping[str, str | None] | None = None, where: str = "true",
                params: list | None = None) -> pl.DataFrame:
    """[source, protocol_hash, model, task, regime, n_seeds, state] of every cell with rows in
    the relation `rows` (rows of protocols that `seeds` does not name are ignored).

    `run(sql, params)` runs a query (`store.db.Snapshot.query`). `seeds`: protocol hash -> the
    number of seeds a done cell covers. `data_hashes`: task -> the chosen data hash (tasks not
    named take any data); None: the store's current data (the `current_data` view of
    `store.db`). `revisions`: model -> the chosen revision (models not named take any); None:
    the store's current revisions (the `current_revision` view). `where` filters `r.` columns
    with `?` placeholders for `params`.
    """
    hashes = "current_data" if data_hashes is None else "_chosen_data"
    chosen = dict(data_hashes or {})
    revised = "current_revision" if revisions is None else "_chosen_revision"
    models = {m: revision_text(r) for m, r in (revisions or {}).items()}
    sql = _STATES_SQL.format(rows=rows, hashes=hashes, revisions=revised, where=where)
    return run(sql, [list(seeds), list(seeds.values()), list(chosen), list(chosen.values()),
                     list(models), list(models.values()), *(params or [])])


def current_revisions(run: Run, models: list[str]) -> dict[str, str | None]:
    """The store's current revision of each of `models` that has one (`CURRENT_REVISION_SQL`,
    through the `current_revision` view of `store.db`; `NO_REVISION` read back as None)."""
    found = run("SELECT model, model_revision FROM current_revision "
                "WHERE list_contains(?, model)", [models])
    return {m: (None if r == NO_REVISION else r) for m, r in found.iter_rows()}
