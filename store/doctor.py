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
- **embeddings**: every split is complete, its chunks and checksums hold and its values are
  finite numbers (`store.embeddings`). Repair: incomplete and damaged splits are dropped (the
  next `fill` recomputes them; an imported one is imported again).
- **imports** (`store.embedding_imports`): every `imports/<model>/import.json` reads and holds
  together, its splits' folder holds every split it names, the submission copy is the one it
  names, and the model catalog has its revision; no folder of imported splits is left that no
  record names (an import interrupted or replaced). Repair: an unreadable record is kept aside
  with its model's splits (import them again), a leftover folder removed, the catalog row set
  to the import's revision; a missing split or submission is not repaired here: the finding
  names the import to run again.
- **catalogs**: `catalog/tasks.parquet` and `models.parquet` exist and read. Repair: rebuilt from
  the built-in catalogs, the suites in the store and the results (an unreadable one kept aside).
  `catalog/audit.parquet` reads. Repair: removed (`geneb-engine audit` measures its tasks
  again).
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
from store.embedding_imports import (
    RECORD,
    SPLITS_FOLDER,
    EmbeddingImport,
    record_problem,
    submission_problem,
)
from store.paths import StorePaths
from store.vocab.errors import GenebError, brief
from store.vocab.ids import path_part


@dataclass(frozen=True)
class Finding:
    part: str       # results, predictions, embeddings, imports, catalog, reference or temp
    path: str
    problem: str    # one line
    repair: str     # what `repair` does about it, or the command that fixes it
    repaired: bool = True   # False: `repair` leaves it (`repair` names what to run)

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


@dataclass(frozen=True)
class _Imports:
    """The imports of a store as doctor sees them: by folder of `embeddings.zarr`, the record
    whose splits it holds; the records that cannot be read; the folders no record names."""

    current: dict[str, EmbeddingImport]   # folder of embeddings.zarr -> its record
    damaged: dict[str, str]               # imports/<model> folder -> why its record is not read
    leftovers: list[str]                  # folders of embeddings.zarr that no record names


def _imports(paths: StorePaths) -> _Imports:
    records, damaged = {}, {}
    if paths.imports.is_dir():
        for folder in sorted(p for p in paths.imports.iterdir() if (p / RECORD).is_file()):
            record, problem = record_problem(folder / RECORD)
            if record is None:
                damaged[folder.name] = problem
            else:
                records[folder.name] = record
    current = {r.embeddings: r for r in records.values()}
    leftovers = []
    names = sorted(p.name for p in paths.embeddings.iterdir() if p.is_dir()
                   and not p.name.startswith(".")) if paths.embeddings.is_dir() else []
    for name in names:
        match = SPLITS_FOLDER.match(name)
        base = match["model"] if match else name
        if name in current or base in damaged or (not match and base not in records):
            continue        # an import's, a damaged record's (kept aside with it), a model's
        leftovers.append(name)
    return _Imports(current, damaged, leftovers)


def _import_again(record: EmbeddingImport, what: str = "") -> str:
    """The command that imports `record`'s embeddings again (what only that fixes)."""
    return (f"import {what or 'them'} again: `geneb-engine import-embeddings {record.model} "
            f"{record.folder}` with the --suite of that import ({record.suite})")


def _not_here(record: EmbeddingImport, what: str = "") -> str:
    return f"not repaired here; {_import_again(record, what)}"


def check_embeddings(paths: StorePaths, imports: _Imports | None = None) -> list[Finding]:
    from store.embeddings import EmbeddingStore  # lazy: zarr, numpy

    imports = imports or _imports(paths)
    store = EmbeddingStore(paths)
    out = []
    for entry in store.splits():
        if entry.model_dir in imports.leftovers:
            continue       # removed whole (`check_imports`)
        check = store.inspect(entry.path)
        if check.state == "complete":
            continue
        record = imports.current.get(entry.model_dir)
        if record is None:
            problem = f"{check.state} split: {check.reason}" + (
                "" if check.state != "partial" else
                "; the next fill resumes it" if check.resumable else "; the next fill rebuilds it")
            out.append(Finding("embeddings", str(entry.path), problem,
                               "dropped; the next fill recomputes it"))
        elif check.state == "partial":
            out.append(Finding("embeddings", str(entry.path),
                               f"partial split of imported embeddings ({check.reason}), left by "
                               "an import that was stopped; no fill resumes it", "removed"))
        else:
            out.append(Finding("embeddings", str(entry.path),
                               f"corrupt split of imported embeddings: {check.reason}",
                               f"dropped; {_import_again(record)}"))
    return out


def check_imports(paths: StorePaths, imports: _Imports | None = None) -> list[Finding]:
    """The import records, their splits and submission copies, the catalog's revision of each
    imported model, and the folders of splits no record names (see the module)."""
    from store.embeddings import EmbeddingStore  # lazy: zarr, numpy
    from store.tables.catalogs import REVISION, read_catalog  # lazy: polars

    imports = imports or _imports(paths)
    revisions = dict(read_catalog(paths, "models").select("model_id", REVISION).iter_rows())
    ids = {path_part(m): m for m in revisions}
    out = [Finding("imports", str(paths.imports / folder / RECORD), why,
                   f"kept aside in {paths.aside.name}/, with the model's imported splits; "
                   "import the embeddings again (`geneb-engine import-embeddings "
                   f"{ids.get(folder, 'MODEL')} DIR`)")
           for folder, why in imports.damaged.items()]
    store = EmbeddingStore(paths)
    for folder, record in imports.current.items():
        where = store.root / folder
        if not where.is_dir():
            out.append(Finding("imports", str(where), f"missing: the folder of the splits "
                               f"{record.model}'s import record names", _not_here(record),
                               repaired=False))
        else:
            for f in record.files:
                split = where / path_part(f.task) / f.split
                if not split.is_dir():
                    out.append(Finding("imports", str(split), f"missing: the {f.split} split of "
                                       f"task {f.task}, which {record.model}'s import record "
                                       "names", _not_here(record, "the embeddings"),
                                       repaired=False))
        if problem := submission_problem(paths, record):
            out.append(Finding("imports", str(paths.embedding_import(record.model)), problem,
                               _not_here(record, "the embeddings with --submission FILE"),
                               repaired=False))
        if revisions.get(record.model, record.revision) != record.revision:
            out.append(Finding("imports", str(paths.catalog_table("models")),
                               f"model {record.model}: the catalog records revision "
                               f"{str(revisions[record.model])[:12]}, its import "
                               f"{record.revision[:12]} (an import stopped before the catalog)",
                               "the catalog row takes the import's revision"))
    out += [Finding("imports", str(store.root / name), "splits of an import that is not the "
                    "model's (one that was stopped, or one replaced since)", "removed")
            for name in imports.leftovers]
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
    audit = paths.catalog_table("audit")
    if audit.exists():
        try:
            pq.read_table(audit)
        except Exception as exc:
            out.append(Finding("catalog", str(audit), f"cannot be read ({brief(exc)})",
                               "removed: `geneb-engine audit` measures its tasks again"))
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


def _check_parts(paths: StorePaths) -> list[Finding]:
    """Every check but the temporary files'."""
    imports = _imports(paths)
    return (_check_tables(paths) + check_embeddings(paths, imports)
            + check_imports(paths, imports) + check_catalogs(paths) + check_reference(paths))


def examine(paths: StorePaths) -> list[Finding]:
    """Every problem of the store, one finding each; changes nothing."""
    from store.locks import StoreSession  # lazy: filelock

    if not paths.root.exists():
        return []
    findings = _check_parts(paths)
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
        imports = _imports(paths)
        findings = check_imports(paths, imports)
        _repair_imports(paths, imports, aside)
        done += [f for f in findings if f.repaired]
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
        left = _check_parts(paths)
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


def _repair_imports(paths: StorePaths, imports: _Imports, aside: Path) -> None:
    """An unreadable record kept aside with its model's splits, leftover folders removed, the
    catalog's revision of each imported model set to its import's (`check_imports`)."""
    from store.embeddings import EmbeddingStore  # lazy: zarr, numpy

    # lazy: polars, pyarrow, filelock
    from store.tables.catalogs import REVISION, imported_models, read_catalog, register_models

    store = EmbeddingStore(paths)
    for folder in imports.damaged:
        _keep_aside(paths.imports / folder, aside, paths.root)
        for split_folder in sorted(store.root.iterdir()) if store.root.is_dir() else ():
            match = SPLITS_FOLDER.match(split_folder.name)
            if (match["model"] if match else split_folder.name) == folder:
                _keep_aside(split_folder, aside, paths.root)
    for name in imports.leftovers:
        store.drop_folder(name)
    revisions = dict(read_catalog(paths, "models").select("model_id", REVISION).iter_rows())
    models = imported_models(paths)          # each with its import record's revision
    behind = [models[r.model] for r in imports.current.values()
              if r.model in models and revisions.get(r.model) != r.revision]
    register_models(paths, behind, {m.model_id: m.revision for m in behind})


def _repair_catalogs(paths: StorePaths, findings: list[Finding], aside: Path) -> None:
    audit = paths.catalog_table("audit")
    for f in findings:
        if Path(f.path) == audit:
            audit.unlink(missing_ok=True)       # `audit` measures again what it held
        elif Path(f.path).exists():
            _keep_aside(Path(f.path), aside, paths.root)
    if names := {Path(f.path).stem for f in findings if Path(f.path) != audit}:
        rebuild_catalogs(paths, names)


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
