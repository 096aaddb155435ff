"""When a cell is done and current: the one rule behind the planner, `status`, `export`,
`report`, the site, the figures, the dashboard and every commit.

A cell is (source, protocol hash, model, task, regime, variant): the variant
(`store.vocab.variant`: the compute precision, the recipe preset, the context policy and the
storage precision) is part of a cell, so a run at another precision, preset, context or storage
computes its own cells and readers show them apart. A row is **current** when it was computed on
the data chosen for its task and, for a local row, with the revision chosen for its model:

- data: the reader names the data hash of each task (the planner and `status`: the hashes of the
  suite's files as they are now), or takes the store's current ones (`CURRENT_DATA_SQL`).
  Imported rows carry no data hash (the official formats have none; their data is geneb-v1 at
  its pinned revision) and are always current.
- model revision: the reader names the revision of each model (the planner and `status`: the
  revision a run computes with, `engine.planner.run_revisions`), or takes the store's current
  ones (the `current_revision` view of `store.db`: a checkpoint folder's revision as its files
  are now, `store.current`; else the one the model's last `fill` registered,
  `CURRENT_REVISION_SQL`). A revision of None (an unpinned hub model, a k-mer baseline) is
  compared as `NO_REVISION`. A chosen revision may name a second one that counts as the same
  (`also_revision`: the name the rule before the checkpoint fingerprint gave the same files,
  `store.fingerprint`). Imported rows carry their own revision string and have no local
  counterpart: they are always current.

Of a model's current local rows, readers show those at its current variant (the precision and
recipe preset, context policy and storage precision of its newest current local row,
`CURRENT_PRECISION_SQL`) under its id, and those at any other as the entry `<model> [<variant>]`
(`ENTRY`: each member where it differs, comma-separated: the precision, `<model> [float16]`; the
preset, `<model> [reference@4]`, `<model> [normalized]`; the context policy,
`<model> [windows-1000-500]`, `<model> [crop]`; the storage precision,
`<model> [stored-float16]`; `<model> [float16, reference@4]` where both differ): never pooled,
always said.

A cell is **done** when its current rows cover every seed of its protocol (imported: its
seed-mean row), **partial** when they cover some, and **stale** when all its rows were computed
on other data or with another revision of the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from store.vocab.context import CROP
from store.vocab.sources import LOCAL
from store.vocab.variant import NORMALIZED, NOT_RECORDED, STORED, STORED_FLOAT32

# How a model revision of None is written where revisions are compared: the revision a reader
# chooses, and the model catalog's `model_revision` (NULL there: not recorded).
NO_REVISION = ""
# How a compute precision of None is written where precisions are compared.
NO_PRECISION = ""
# How a recipe preset of None (normalized) is written where presets are compared.
NO_PRESET = ""
# How a context policy of None (the default crop) is written where policies are compared.
NO_CONTEXT = ""
# How a storage precision of None (float32) is written where storage precisions are compared.
NO_STORAGE = ""

# A row `r` joined with the chosen data hash `c` of its task and the chosen revision `v` of its
# model (no chosen revision: any; `v.also_revision`: a second name of the same files).
CURRENT = ("((r.data_hash IS NULL OR c.data_hash IS NULL OR r.data_hash = c.data_hash) AND "
           f"(r.source <> '{LOCAL}' OR v.model_revision IS NULL "
           f"OR coalesce(r.model_revision, '{NO_REVISION}') = v.model_revision "
           "OR coalesce(r.model_revision = v.also_revision, false)))")
_SAME_PRECISION = f"coalesce(r.compute_precision, '{NO_PRECISION}') = p.compute_precision"
_SAME_PRESET = f"coalesce(r.recipe_preset, '{NO_PRESET}') = p.recipe_preset"
_SAME_CONTEXT = f"coalesce(r.context_policy, '{NO_CONTEXT}') = p.context_policy"
_SAME_STORAGE = f"coalesce(r.storage_precision, '{NO_STORAGE}') = p.storage_precision"
# A row `r` at the chosen variant `p` of its model (precision, recipe preset, context policy and
# storage precision; no chosen variant: any).
AT_PRECISION = (f"(r.source <> '{LOCAL}' OR p.model IS NULL "
                f"OR ({_SAME_PRECISION} AND {_SAME_PRESET} AND {_SAME_CONTEXT} "
                f"AND {_SAME_STORAGE}))")
# The entry a row is shown as: its model, or `<model> [<variant>]` for a local row at another
# variant than its model's current one (`p`): its precision where that differs (or where the
# other members agree), its recipe preset where that differs (`store.vocab.variant.
# preset_label`), its context policy where that differs (`store.vocab.context.context_label`),
# its storage precision where that differs (`storage_label`), comma-separated.
ENTRY = (f"CASE WHEN {AT_PRECISION} THEN r.model ELSE r.model || ' [' || concat_ws(', ', "
         f"CASE WHEN NOT {_SAME_PRECISION} "
         f"OR ({_SAME_PRESET} AND {_SAME_CONTEXT} AND {_SAME_STORAGE}) "
         f"THEN coalesce(r.compute_precision, '{NOT_RECORDED}') END, "
         f"CASE WHEN NOT {_SAME_PRESET} THEN coalesce(r.recipe_preset, '{NORMALIZED}') END, "
         f"CASE WHEN NOT {_SAME_CONTEXT} THEN coalesce(r.context_policy, '{CROP}') END, "
         f"CASE WHEN NOT {_SAME_STORAGE} "
         f"THEN '{STORED}' || coalesce(r.storage_precision, '{STORED_FLOAT32}') END) "
         "|| ']' END")
# The ` [<variant>]` ENTRY appends to a model's id (group 1: the brackets and what they hold).
ENTRY_VARIANT = r" (\[[^\]]*\])$"

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
SELECT model_id AS model, model_revision, NULL::VARCHAR AS also_revision
FROM models WHERE model_revision IS NOT NULL
UNION ALL
SELECT model, arg_max(coalesce(model_revision, '{NO_REVISION}'), created_at) AS model_revision,
       NULL::VARCHAR AS also_revision
FROM results_all
WHERE source = '{LOCAL}'
  AND model NOT IN (SELECT model_id FROM models WHERE model_revision IS NOT NULL)
GROUP BY model
"""

_CHOSEN = ("LEFT JOIN current_data c ON c.task = r.task "
           "LEFT JOIN current_revision v ON v.model = r.model")
# The latest rows current by data and revision (every precision, by model id) and the others.
CURRENT_ROWS_SQL = f"SELECT r.* FROM results_latest r {_CHOSEN} WHERE {CURRENT}"
STALE_RESULTS_SQL = f"SELECT r.* FROM results_latest r {_CHOSEN} WHERE NOT {CURRENT}"
# The store's current variant per model: the precision, recipe preset, context policy and
# storage precision of its newest current local row.
CURRENT_PRECISION_SQL = f"""
SELECT model, v[1] AS compute_precision, v[2] AS recipe_preset, v[3] AS context_policy,
       v[4] AS storage_precision FROM (
  SELECT model, arg_max([coalesce(compute_precision, '{NO_PRECISION}'),
                         coalesce(recipe_preset, '{NO_PRESET}'),
                         coalesce(context_policy, '{NO_CONTEXT}'),
                         coalesce(storage_precision, '{NO_STORAGE}')], created_at) AS v
  FROM current_rows WHERE source = '{LOCAL}' GROUP BY model)
"""
# Whether some model's local rows are at several variants (else every entry is its model, and
# `results` is `current_rows` as it is).
SEVERAL_PRECISIONS_SQL = f"""
SELECT count(*) FROM (SELECT model FROM results_all WHERE source = '{LOCAL}' GROUP BY model
                      HAVING count(DISTINCT [coalesce(compute_precision, '{NO_PRECISION}'),
                                            coalesce(recipe_preset, '{NO_PRESET}'),
                                            coalesce(context_policy, '{NO_CONTEXT}'),
                                            coalesce(storage_precision, '{NO_STORAGE}')]) > 1)
"""
_AT = "LEFT JOIN current_precision p ON p.model = r.model"
# What every reader shows: the current rows, each as its entry (`ENTRY`).
CURRENT_RESULTS_SQL = f"SELECT r.* REPLACE ({ENTRY} AS model) FROM current_rows r {_AT}"
# The entries of models at another precision than their current one.
ENTRIES_SQL = (f"SELECT DISTINCT {ENTRY} AS entry, r.model, r.compute_precision, "
               "r.recipe_preset, r.context_policy, r.storage_precision "
               f"FROM current_rows r {_AT} WHERE NOT {AT_PRECISION}")

_STATES_SQL = f"""
WITH _protocol_seeds AS (
  SELECT unnest(?::VARCHAR[]) AS protocol_hash, unnest(?::BIGINT[]) AS n_seeds
), _chosen_data AS (
  SELECT unnest(?::VARCHAR[]) AS task, unnest(?::VARCHAR[]) AS data_hash
), _chosen_revision AS (
  SELECT unnest(?::VARCHAR[]) AS model, unnest(?::VARCHAR[]) AS model_revision,
         unnest(?::VARCHAR[]) AS also_revision
), _chosen_precision AS (
  SELECT unnest(?::VARCHAR[]) AS model, unnest(?::VARCHAR[]) AS compute_precision,
         unnest(?::VARCHAR[]) AS recipe_preset, unnest(?::VARCHAR[]) AS context_policy,
         unnest(?::VARCHAR[]) AS storage_precision
), per_cell AS (
  SELECT r.source, r.protocol_hash, r.model, r.task, r.regime, r.compute_precision,
         r.recipe_preset, r.context_policy, r.storage_precision,
         count(DISTINCT r.seed) FILTER (WHERE {CURRENT}) AS n_seeds,
         coalesce(bool_or(r.seed IS NULL AND {CURRENT}), false) AS seed_means,
         coalesce(bool_or({CURRENT}), false) AS has_current
  FROM {{rows}} r LEFT JOIN {{hashes}} c ON c.task = r.task
                  LEFT JOIN {{revisions}} v ON v.model = r.model
                  LEFT JOIN {{precisions}} p ON p.model = r.model
  WHERE {AT_PRECISION} AND {{where}}
  GROUP BY ALL
)
SELECT q.source, q.protocol_hash, q.model, q.task, q.regime, q.compute_precision,
       q.recipe_preset, q.context_policy, q.storage_precision, q.n_seeds,
       CASE WHEN q.seed_means OR q.n_seeds >= s.n_seeds THEN 'done'
            WHEN q.has_current THEN 'partial' ELSE 'stale' END AS state
FROM per_cell q JOIN _protocol_seeds s ON s.protocol_hash = q.protocol_hash
"""

Run = Callable[[str, list], pl.DataFrame]


def revision_text(revision: str | None) -> str:
    """A model revision as compared and recorded here (None: `NO_REVISION`)."""
    return NO_REVISION if revision is None else revision


def precision_text(precision: str | None) -> str:
    """A compute precision as compared here (None: `NO_PRECISION`)."""
    return NO_PRECISION if precision is None else precision


def preset_text(preset: str | None) -> str:
    """A recipe preset value as compared here (None, normalized: `NO_PRESET`)."""
    return NO_PRESET if preset is None else preset


def context_text(context: str | None) -> str:
    """A context policy value as compared here (None, the default: `NO_CONTEXT`)."""
    return NO_CONTEXT if context is None else context


def storage_text(storage: str | None) -> str:
    """A storage precision value as compared here (None, float32: `NO_STORAGE`)."""
    return NO_STORAGE if storage is None else storage


def cell_states(run: Run, rows: str = "results_latest", *, seeds: Mapping[str, int],
                data_hashes: Mapping[str, str] | None = None,
                revisions: Mapping[str, str | None] | None = None,
                also: Mapping[str, str] | None = None,
                precisions: Mapping[str, str | None] | None = None,
                presets: Mapping[str, str | None] | None = None,
                contexts: Mapping[str, str | None] | None = None,
                storages: Mapping[str, str | None] | None = None, where: str = "true",
                params: list | None = None) -> pl.DataFrame:
    """[source, protocol_hash, model, task, regime, compute_precision, recipe_preset,
    context_policy, storage_precision, n_seeds, state] of every cell with rows in the relation
    `rows` (rows of protocols that `seeds` does not name are ignored).

    `run(sql, params)` runs a query (`store.db.Snapshot.query`). `seeds`: protocol hash -> the
    number of seeds a done cell covers. `data_hashes`: task -> the chosen data hash (tasks not
    named take any data); None: the store's current data (the `current_data` view of
    `store.db`). `revisions`: model -> the chosen revision (models not named take any), `also`:
    model -> a second name of the same revision; None: the store's current revisions (the
    `current_revision` view). `precisions`: model -> the chosen compute precision (a local
    row at another is another cell, left out; models not named: every variant, each its own
    cell), with the recipe preset value `presets` gives it (not named there: normalized), the
    context policy value `contexts` gives it (not named there: the default) and the storage
    precision value `storages` gives it (not named there: float32); None: the store's current
    variants (the `current_precision` view). `where` filters `r.` columns with `?` placeholders
    for `params`.
    """
    hashes = "current_data" if data_hashes is None else "_chosen_data"
    chosen = dict(data_hashes or {})
    revised = "current_revision" if revisions is None else "_chosen_revision"
    models = {m: revision_text(r) for m, r in (revisions or {}).items()}
    seconds = [(also or {}).get(m) for m in models]
    at = "current_precision" if precisions is None else "_chosen_precision"
    exact = {m: precision_text(p) for m, p in (precisions or {}).items()}
    batched = [preset_text((presets or {}).get(m)) for m in exact]
    seen = [context_text((contexts or {}).get(m)) for m in exact]
    stored = [storage_text((storages or {}).get(m)) for m in exact]
    sql = _STATES_SQL.format(rows=rows, hashes=hashes, revisions=revised, precisions=at,
                             where=where)
    return run(sql, [list(seeds), list(seeds.values()), list(chosen), list(chosen.values()),
                     list(models), list(models.values()), seconds, list(exact),
                     list(exact.values()), batched, seen, stored, *(params or [])])


def current_revisions(run: Run, models: list[str]) -> dict[str, str | None]:
    """The store's current revision of each of `models` that has one (`CURRENT_REVISION_SQL`,
    through the `current_revision` view of `store.db`; `NO_REVISION` read back as None)."""
    found = run("SELECT model, model_revision FROM current_revision "
                "WHERE list_contains(?, model)", [models])
    return {m: (None if r == NO_REVISION else r) for m, r in found.iter_rows()}
