"""A (model, task) pair's commit: its test-set predictions, then its result rows, each ONE
commit, under the pair's commit lock, leaving out the cells already done (so a retry, a second
`fill` or a resumed run never adds a cell twice); and which of a pair's cells are done."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from store.cells import cell_states
from store.locks import commit_lock
from store.paths import StorePaths
from store.tables.predictions import PREDICTIONS, predictions_table
from store.tables.results import (
    COMPACT_AT,
    DataFile,
    append_table,
    compact,
    has_table,
    listed_files,
    read_files,
    table_handle,
)
from store.tables.schema import rows_table
from store.vocab.sources import LOCAL

_CHECKS: dict[int, object] = {}   # one in-memory DuckDB connection per process


def append_pair(paths: StorePaths, rows: list[dict], *, model: str, task: str,
                data_hash: str | None, revision: str | None, seeds: Mapping[str, int],
                precision: str | None = None, preset: str | None = None,
                predictions: list[dict] | None = None, context: str | None = None,
                storage: str | None = None) -> int:
    """Append one pair's local rows (on `data_hash`, computed with the model's `revision` at
    the compute `precision`, recipe `preset`, `context` policy and `storage` precision,
    `store.vocab.variant`) in one commit, except
    those of cells already done on that data with that revision at that variant (under the
    pair's commit
    lock, so no cell is ever written twice); returns the rows written.

    `predictions` (`store.tables.predictions.prediction_rows`: keyed like `rows`, plus the pair's
    labels row) are committed to the predictions table first, for the same cells, so a
    committed result always has its predictions."""
    with commit_lock(paths, model, task):
        files = listed_files(table_handle(paths))
        done = _done_cells(paths, files, model, task, data_hash, revision, precision, seeds,
                           preset, context, storage)
        todo = [r for r in rows if (r["protocol_hash"], r["regime"]) not in done]
        pred_files = None
        if todo and predictions:
            keep = [p for p in predictions if p["kind"] == "labels"
                    or (p["protocol_hash"], p["regime"]) not in done]
            pred_files = listed_files(table_handle(paths, table=PREDICTIONS))
            append_table(paths, predictions_table(keep), "fill", PREDICTIONS, model=model,
                         task=task)
        written = (append_table(paths, rows_table(todo), "fill", model=model, task=task)
                   if todo else 0)
    in_partition = sum(f.source == LOCAL and f.model == model for f in files)
    if written and in_partition + 1 >= COMPACT_AT:
        compact(paths, {(LOCAL, model)})
    if pred_files is not None and \
            sum(f.source == LOCAL and f.model == model for f in pred_files) + 1 >= COMPACT_AT:
        compact(paths, {(LOCAL, model)}, PREDICTIONS)
    return written


def done_in_table(paths: StorePaths, model: str, task: str, data_hash: str | None,
                  revision: str | None, precision: str | None,
                  seeds: Mapping[str, int], preset: str | None = None,
                  context: str | None = None,
                  storage: str | None = None) -> set[tuple[str, str]]:
    """(protocol hash, regime) of the pair's local cells done on `data_hash` with the model's
    `revision` at `precision`, recipe `preset`, `context` policy and `storage` precision, read
    from the newest version (only the files whose task range holds `task`). A row written before
    the precision was recorded counts at none (the plan, which reads it as its run's, decided
    that its cells are not to be computed again)."""
    if not has_table(paths) and not paths.results.exists():
        return set()
    return _done_cells(paths, listed_files(table_handle(paths)), model, task, data_hash,
                       revision, precision, seeds, preset, context, storage)


def _done_cells(paths: StorePaths, files: Iterable[DataFile], model: str, task: str,
                data_hash: str | None, revision: str | None, precision: str | None,
                seeds: Mapping[str, int], preset: str | None,
                context: str | None, storage: str | None = None) -> set[tuple[str, str]]:
    import duckdb  # lazy: duckdb, only when a pair's done cells are checked

    files = [f for f in files if f.source == LOCAL and f.model == model
             and (f.tasks[0] is None or f.tasks[0] <= task <= (f.tasks[1] or task))]
    rows, _ = read_files(paths, files)
    con = _CHECKS.get(os.getpid())
    if con is None:
        con = _CHECKS[os.getpid()] = duckdb.connect(":memory:")
    con.register("_pair_rows", rows)
    try:
        states = cell_states(lambda sql, params: con.sql(sql, params=params).pl(), "_pair_rows",
                             seeds=seeds, data_hashes={task: data_hash} if data_hash else {},
                             revisions={model: revision}, precisions={model: precision},
                             presets={model: preset}, contexts={model: context},
                             storages={model: storage},
                             where=f"r.task = ? AND r.source = '{LOCAL}'", params=[task])
    finally:
        con.unregister("_pair_rows")
    return {(r["protocol_hash"], r["regime"])
            for r in states.iter_rows(named=True) if r["state"] == "done"}
