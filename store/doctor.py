"""`geneb-engine doctor`: check every part of a store, one finding per problem; `repair` puts
each right without deleting data it cannot recompute (that is kept in `aside/<stamp>-doctor/`).

- **results**: every log entry parses; every data file the newest version lists exists, has its
  recorded size, reads with valid page checksums and holds its recorded row count; a fragment
  store of geneb 0.1. Repair: the log goes back to the version before its first damaged entry
  (the later entries kept aside); broken files leave the table in one commit (kept aside);
  fragments are migrated.
- **predictions** (`store.tables.predictions`): the same checks and repairs on the predictions
table;
  a removed file's cells read as having no predictions until they are computed again.
- **embeddings**: every split is complete and its chunks and checksums hold
  (`store.embeddings`). Repair: incomplete and damaged splits are dropped (the next `fill`
  recomputes them).
- **catalogs**: `catalog/tasks.parquet` and `models.parquet` exist and read. Repair: rebuilt from
  the built-in catalogs, the suites in the store and the results (an unreadable one kept aside).
- **temporary files** left by writers that are gone (`store.sweep`). Repair: removed.

Repairs need the store to themselves: they refuse while another process writes to it.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from store.catalog import ModelMeta, TaskMeta, load_models, source_benchmark
from store.paths import StorePaths
from store.vocab.errors import GenebError, brief


@dataclass(frozen=True)
class Finding:
    part: str       # results, predictions, embeddings, catalog, reference or temp
    path: str
    problem: str    # one line
    repair: str     # what `repair` does about it

    def to_dict(self) -> dict:
        return asdict(self)


# ---- checks ---------------------------------------------------------------------------

def _log_entries(paths: StorePaths, table=None) -> list[tuple[int, Path]]:
    log = (paths.results if table is None else table.root(paths)) / "_delta_log"
    if not log.is_dir():
        return []
    return sorted((int(p.name[:-5]), p) for p in log.iterdir()
                  if p.name.endswith(".json") and p.name[:-5].isdigit())


def _damaged_entry(path: Path) -> str | None:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        if not lines:
            return "empty"
        for line in lines:
            if not isinstance(json.loads(line), dict):
                return "not a JSON object per line"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return brief(exc)
    return None


def check_results(paths: StorePaths, table=None) -> list[Finding]:
    """The results table's log and data files (`table`: another table of `store.tables.results`,
    e.g.
    `store.tables.predictions.PREDICTIONS`, checked the same way)."""
    from store.tables.data_files import RESULTS  # lazy: pyarrow
    from store.tables.migrate import needs_migration  # lazy: pyarrow
    from store.tables.results import read_files, read_state  # lazy: pyarrow

    table = table or RESULTS
    kind, root = table.name, table.root(paths)
    if table is RESULTS and needs_migration(paths):
        return [Finding("results", str(paths.results), "results kept as Parquet fragments (an "
                        "older version of geneb)", "migrated to the results table in one "
                        "commit; the fragments kept aside")]
    out = []
    damaged = [(v, p, why) for v, p in _log_entries(paths, table)
               if (why := _damaged_entry(p))]
    for version, path, why in damaged:
        out.append(Finding(kind, str(path), f"log entry {version} cannot be read ({why})",
                           f"the table goes back to version {version - 1}; this entry and "
                           "the later ones are kept aside (re-run what they held)"))
    if damaged:
        return out   # the files are checked again once the log is repaired
    fix = "removed from the table in one commit (the file kept aside); " + {
        "results": "`fill` recomputes local cells, import again for imported ones",
        "predictions": "its cells read as having no predictions (no per-example tests) until "
                       "they are computed again",
        "runs": "the telemetry of its splits is gone (embeddings and results are untouched)",
    }[table.name]
    state = read_state(paths, table)
    for f in state.files if state else ():
        full = root / f.path
        if not full.exists():
            why = "missing"
        elif full.stat().st_size != f.size:
            why = f"{full.stat().st_size} bytes instead of {f.size}"
        else:
            rows, broken = read_files(paths, [f], table)
            why = ("cannot be read (garbled)" if broken else
                   f"{rows.num_rows} rows instead of {f.num_records}"
                   if f.num_records is not None and rows.num_rows != f.num_records else None)
        if why:
            out.append(Finding(kind, str(full), f"data file {why}; it held {f.held()}", fix))
    return out


def _tables() -> tuple:
    """The store's Delta tables, in the order they are checked and repaired."""
    from store.tables.data_files import RESULTS  # lazy: pyarrow
    from store.tables.predictions import PREDICTIONS  # lazy: polars, pyarrow, numpy
    from store.tables.telemetry import RUNS  # lazy: polars, pyarrow

    return RESULTS, PREDICTIONS, RUNS


def _check_tables(paths: StorePaths) -> list[Finding]:
    """The results table, then the predictions and runs tables."""
    return [f for table in _tables() for f in check_results(paths, table)]


def check_embeddings(paths: StorePaths) -> list[Finding]:
    from store.embeddings import EmbeddingStore  # lazy: zarr, numpy

    store = EmbeddingStore(paths)
    out = []
    for entry in store.splits():
        check = store.inspect(entry.path)
        if check.state != "complete":
            out.append(Finding("embeddings", str(entry.path),
                               f"{check.state} split: {check.reason}",
                               "dropped; the next fill recomputes it"))
    return out


def check_catalogs(paths: StorePaths) -> list[Finding]:
    import pyarrow.parquet as pq  # lazy: pyarrow

    out = []
    has_results = paths.results.exists()
    for name in ("tasks", "models"):
        f = paths.catalog_table(name)
        if not f.exists():
            if has_results:
                out.append(Finding("catalog", str(f), "missing",
                                   "rebuilt from the built-in catalogs, the store's suites and "
                                   "the results"))
            continue
        try:
            pq.read_table(f)
        except Exception as exc:
            out.append(Finding("catalog", str(f),
                               f"cannot be read ({brief(exc)})",
                               "kept aside and rebuilt from the built-in catalogs, the store's "
                               "suites and the results"))
    return out


def check_reference(paths: StorePaths) -> list[Finding]:
    """The tables only an import writes (the leaderboard's aggregates, the submissions'
    headers): one that cannot be read is kept aside; importing the files again restores it."""
    import pyarrow.parquet as pq  # lazy: pyarrow

    out = []
    for f in (paths.leaderboard, paths.submission_headers):
        if not f.exists():
            continue
        try:
            pq.read_table(f)
        except Exception as exc:
            out.append(Finding("reference", str(f), f"cannot be read ({brief(exc)})",
                               "kept aside; import the official files again to restore it"))
    return out


def check_temps(paths: StorePaths, alone: bool) -> list[Finding]:
    from store.sweep import stale_temps  # lazy: filelock

    return [Finding("temp", str(p), "temporary file of a writer that is gone", "removed")
            for p in stale_temps(paths, alone)]


def examine(paths: StorePaths) -> list[Finding]:
    """Every problem of the store, one finding each; changes nothing."""
    from store.locks import StoreSession  # lazy: filelock

    if not paths.root.exists():
        return []
    findings = (_check_tables(paths) + check_embeddings(paths) + check_catalogs(paths)
                + check_reference(paths))
    if os.access(paths.root, os.W_OK):
        with StoreSession(paths) as session, session.exclusive() as alone:
            findings += check_temps(paths, alone)
    else:
        findings += check_temps(paths, alone=False)
    return findings


# ---- repairs ----------------------------------------------------------------------------

def repair(paths: StorePaths) -> tuple[list[Finding], list[Finding]]:
    """Repair every finding; (what was repaired, what is still wrong afterwards)."""
    from store.locks import StoreSession  # lazy: filelock

    with StoreSession(paths) as session, session.exclusive() as alone:
        if not alone:
            raise GenebError(f"{paths.root}: another geneb process is writing to this store; "
                             "run `geneb-engine doctor --repair` when it has finished")
        aside = paths.aside / f"{datetime.now(UTC):%Y%m%dT%H%M%S}-doctor"
        done: list[Finding] = []
        for table in _tables():
            for _ in range(3):   # a repaired log can reveal broken files of the older version
                findings = check_results(paths, table)
                if not findings:
                    break
                _repair_results(paths, findings, aside, table)
                done += findings
        findings = check_embeddings(paths)
        _repair_embeddings(paths, findings)
        done += findings
        findings = check_catalogs(paths)
        _repair_catalogs(paths, findings, aside)
        done += findings
        findings = check_reference(paths)
        for f in findings:
            _keep_aside(Path(f.path), aside, paths.root)
        done += findings
        findings = check_temps(paths, alone=True)
        _remove_temps(findings)
        done += findings
        left = (_check_tables(paths) + check_embeddings(paths) + check_catalogs(paths)
                + check_reference(paths))
    return done, left


def _keep_aside(path: Path, aside: Path, root: Path) -> None:
    target = aside / path.relative_to(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(path, target)


def _repair_results(paths: StorePaths, findings: list[Finding], aside: Path,
                    table=None) -> None:
    from deltalake.transaction import RemoveAction  # lazy: deltalake

    from store.tables.data_files import RESULTS  # lazy: pyarrow
    from store.tables.migrate import migrate_fragments, needs_migration  # lazy: pyarrow
    from store.tables.results import commit_actions, read_state  # lazy: pyarrow

    table = table or RESULTS
    root = table.root(paths)
    if table is RESULTS and needs_migration(paths):
        migrate_fragments(paths)
        return
    entries = _log_entries(paths, table)
    damaged = [v for v, p in entries if _damaged_entry(p)]
    if damaged:
        first = min(damaged)
        for version, path in entries:
            if version >= first:
                _keep_aside(path, aside, paths.root)
        log = root / "_delta_log"
        for path in list(log.iterdir()):   # checkpoints of the versions cut off
            head = path.name.split(".")[0]
            if (head.isdigit() and int(head) >= first) or path.name == "_last_checkpoint":
                _keep_aside(path, aside, paths.root)
        return
    broken = {f.path for f in findings}
    state = read_state(paths, table)
    now = int(time.time() * 1000)
    removes = []
    for f in state.files:
        full = root / f.path
        if str(full) in broken:
            if full.exists():
                _keep_aside(full, aside, paths.root)
            removes.append(RemoveAction(f.path, True, now, f.size,
                                        {"source": f.source, "model": f.model}))
    if removes:
        commit_actions(paths, removes, "repair", table, removed=len(removes))


def _repair_embeddings(paths: StorePaths, findings: list[Finding]) -> None:
    from store.embeddings import EmbeddingStore  # lazy: zarr, numpy

    store = EmbeddingStore(paths)
    for f in findings:
        store.drop(Path(f.path))


def _repair_catalogs(paths: StorePaths, findings: list[Finding], aside: Path) -> None:
    if not findings:
        return
    for f in findings:
        if Path(f.path).exists():
            _keep_aside(Path(f.path), aside, paths.root)
    rebuild_catalogs(paths, {Path(f.path).stem for f in findings})


def rebuild_catalogs(paths: StorePaths, names: set[str]) -> None:
    """Rebuild the named catalogs from what the store knows without them."""
    from store.db import query  # lazy: polars, duckdb, pyarrow

    # lazy: polars, pyarrow, filelock
    from store.tables.catalogs import built_in_tasks, register_models, register_tasks

    used = query(paths, "SELECT DISTINCT model, task, source FROM results_all")
    if "tasks" in names:
        known = {t.task_id: t for t in built_in_tasks(paths)}
        for task in sorted(set(used["task"].to_list()) - set(known)):
            known[task] = TaskMeta(task, task, task, "unknown", source_benchmark(task))
        register_tasks(paths, [known[t] for t in sorted(known)])
    if "models" in names:
        catalog = load_models(paths.user_models)
        models = []
        for model, source in sorted(set(zip(used["model"], used["source"], strict=True))):
            if model in catalog:
                models.append(catalog[model])
            elif model not in {m.model_id for m in models}:
                models.append(ModelMeta.one_off(model, provenance=source, encoder="external"))
        register_models(paths, list({m.model_id: m for m in models}.values()))


def _remove_temps(findings: list[Finding]) -> None:
    from store.sweep import remove  # lazy: filelock

    remove([Path(f.path) for f in findings])
