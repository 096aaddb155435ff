"""The results table: `<store>/results` is a Delta Lake table (the `deltalake` package), written
only through this module (a pair's commit through `store.tables.pair_commit`). So are the
predictions table (`<store>/predictions`, `store.tables.predictions`) and the runs table
(`store.tables.telemetry`): every function below takes the table it works on (`table`, default
`RESULTS`), with the same files, commits, compaction and vacuum.

- **One commit per write.** A (model, task) pair's rows (`append_pair`) or a whole import
  (`append_rows`) land together in one commit or not at all. A data file is Parquet with page
  checksums, written under a temporary name, fsynced and renamed, then committed; an interrupted
  write leaves at most a file no version lists (no reader sees it; `vacuum` removes it).
- **No duplicates.** `append_pair` holds the pair's commit lock, asks `store.cells` which cells
  are done now and appends only the others, so a retry, a second `fill` or a resumed run can
  never add a cell twice.
- **Snapshots.** A reader opens one version (`read_state`) and reads exactly the files its log
  lists, by their recorded paths: nothing globs, so a store path with `*` or `[` in it reads
  only itself.
- **Compaction.** When a partition (one source and model) holds `COMPACT_AT` files, its files are
  merged into one, committed as one transaction (add the new file, remove the old ones). Removed
  files stay on disk for `RETENTION_HOURS` (far longer than any reader holds a snapshot: every
  reader materialises its query at once), then `vacuum` deletes them. One process compacts at a
  time (`locks/compact.lock`); appends and compactions never conflict.
- **Predictions before results.** `append_pair` commits a pair's test-set predictions, then its
  results, under the same pair commit lock: a committed result always has its predictions; a
  predictions commit without results (a kill in between) is superseded when the pair is
  computed again (readers take the newest row per key).
- The log is checkpointed every 100 commits; entries older than a minute before the newest
  checkpoint are removed by the compaction (one process at a time), so opening the table and
  committing stay fast however many commits it has seen. A handle or reader that meets a
  removed entry opens the table again (`commit_actions` never applies a transaction twice).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from store.failpoints import reach
from store.paths import StorePaths
from store.tables.data_files import RESULTS, TABLE_CONFIG, Table, write_data_file
from store.tables.delta_log import log_versions
from store.tables.migrate import migrate_fragments
from store.tables.schema import PARTITIONS, rows_table
from store.vocab.errors import GenebError, brief

COMPACT_AT = 16          # files in one partition that trigger its compaction
RETENTION_HOURS = 24     # removed files outlive every reader's snapshot by far
_FALLBACK_VERSIONS = 20  # how far back a reader looks for a loadable version


@dataclass(frozen=True)
class DataFile:
    """One data file a table version lists."""

    path: str            # relative to the table folder
    size: int
    source: str
    model: str
    num_records: int | None
    tasks: tuple[str | None, str | None]   # (min, max) task id of its rows, when recorded

    def held(self) -> str:
        """What the file held, for messages: rows, source, model and tasks."""
        lo, hi = self.tasks
        tasks = f"task {lo}" if lo == hi else f"tasks {lo} .. {hi}"
        rows = f"{self.num_records} rows" if self.num_records is not None else "rows"
        return f"{rows} of model {self.model} (source {self.source}), {tasks}"


@dataclass(frozen=True)
class TableState:
    """One version of the table: its number, its files and what went wrong reading its log."""

    version: int
    files: tuple[DataFile, ...]
    problems: tuple[str, ...] = ()


def table_uri(paths: StorePaths, table: Table = RESULTS) -> str:
    return str(table.root(paths))


def has_table(paths: StorePaths, table: Table = RESULTS) -> bool:
    return (table.root(paths) / "_delta_log").is_dir()


def listed_files(dt) -> tuple[DataFile, ...]:
    # read as a stream: `pa.table` would import pandas (~250 ms) to check for a DataFrame
    actions = pa.RecordBatchReader.from_stream(dt.get_add_actions(flatten=True)).read_all() \
        .to_pydict()
    n = len(actions["path"])
    lo = actions.get("min.task", [None] * n)
    hi = actions.get("max.task", [None] * n)
    return tuple(
        DataFile(actions["path"][i], actions["size_bytes"][i], actions["partition.source"][i],
                 actions["partition.model"][i], actions["num_records"][i], (lo[i], hi[i]))
        for i in range(n))


def _open(paths: StorePaths, version: int | None = None, table: Table = RESULTS):
    from deltalake import DeltaTable  # lazy: deltalake

    return DeltaTable(table_uri(paths, table), version=version)


def read_state(paths: StorePaths, table: Table = RESULTS) -> TableState | None:
    """The newest loadable version (None: the store has no rows in `table` yet). A damaged log
    entry is reported and the newest version before it is read instead."""
    if table is RESULTS:
        migrate_fragments(paths)
    if not has_table(paths, table):
        return None
    root = table.root(paths)
    first = ""
    for attempt in range(3):   # an open racing with the log's clean-up opens again
        try:
            dt = _open(paths, table=table)
            return TableState(dt.version(), listed_files(dt))
        except Exception as exc:
            first = brief(exc)
            time.sleep(0.05 * attempt)
    for version in reversed(log_versions(table.root(paths))[-_FALLBACK_VERSIONS:]):
        try:
            dt = _open(paths, version, table)
            files = listed_files(dt)
        except Exception:
            continue
        note = (f"{root / '_delta_log'}: the {table.name} table's log cannot be read past "
                f"version {version} ({first}); showing version {version}. Run "
                "`geneb-engine doctor --repair`")
        return TableState(version, files, (note,))
    raise GenebError(f"{root}: the {table.name} table's log cannot be read ({first}); "
                     "run `geneb-engine doctor --repair`")


# ---- writing ------------------------------------------------------------------------------

_HANDLES: dict[str, object] = {}


def table_handle(paths: StorePaths, update: bool = True, table: Table = RESULTS):
    """This process's table handle (created when missing), brought up to date unless `update`
    is False (a commit needs no fresh handle: delta-rs checks the commits it has not seen)."""
    from deltalake import DeltaTable  # lazy: deltalake

    key = table_uri(paths, table)
    root = table.root(paths)
    dt = _HANDLES.get(key)
    if dt is not None:
        try:
            if update:
                dt.update_incremental()
            return dt
        except Exception:
            _HANDLES.pop(key, None)
    if table is RESULTS:
        migrate_fragments(paths)
    if not has_table(paths, table):
        from store.locks import named_lock  # lazy: filelock

        with named_lock(paths, "create"):
            if not has_table(paths, table):
                root.mkdir(parents=True, exist_ok=True)
                DeltaTable.create(key, schema=table.schema, partition_by=list(PARTITIONS),
                                  configuration=TABLE_CONFIG, name=table.delta_name)
    try:
        dt = _open(paths, table=table)
    except Exception as exc:
        raise GenebError(f"{root}: the {table.name} table's log cannot be read "
                         f"({brief(exc)}); "
                         "nothing was written; run `geneb-engine doctor --repair`") from None
    _HANDLES[key] = dt
    return dt


def open_for_writing(paths: StorePaths, table: Table = RESULTS) -> None:
    """Make sure the table can take commits (created when missing); a `GenebError` naming the
    fix when its log cannot be read. Writers call it before they change anything else."""
    table_handle(paths, table=table)


def _partitions(table: pa.Table) -> dict[tuple[str, str], pa.Table]:
    keys = {(s, m) for s, m in zip(table.column("source").to_pylist(),
                                   table.column("model").to_pylist(), strict=True)}
    for source, model in keys:
        if source is None or model is None:
            raise GenebError("a result row needs a source and a model")
    return {(s, m): table.filter(pc.and_(pc.equal(table.column("source"), s),
                                         pc.equal(table.column("model"), m)))
            for s, m in sorted(keys)}


def _landed(paths: StorePaths, actions: list, table: Table = RESULTS) -> bool:
    """Whether a transaction of `actions` is in the newest version (its first file added, or,
    without adds, its removed files gone): how a commit that raised is told from one that
    failed."""
    from deltalake.transaction import AddAction  # lazy: deltalake

    _HANDLES.pop(table_uri(paths, table), None)
    present = {f.path for f in listed_files(table_handle(paths, table=table))}
    adds = [a.path for a in actions if isinstance(a, AddAction)]
    if adds:
        return adds[0] in present
    return not any(a.path in present for a in actions)


def commit_actions(paths: StorePaths, actions: list, operation: str, table: Table = RESULTS,
                   **info) -> None:
    """Commit Add/Remove actions as ONE transaction. A commit that raises (a concurrent commit
    won the version, the log moved under a stale handle) is retried only when the newest version
    does not hold it, so a retry can never apply a transaction twice."""
    from deltalake.transaction import CommitProperties, PostCommitHookProperties  # lazy: deltalake

    properties = CommitProperties(custom_metadata={"geneb": {"operation": operation, **info}},
                                  max_commit_retries=100)
    hooks = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=False)
    for attempt in range(5):
        try:
            table_handle(paths, update=attempt > 0, table=table).create_write_transaction(
                actions, "append", table.schema, partition_by=list(PARTITIONS),
                commit_properties=properties, post_commithook_properties=hooks)
            break
        except Exception:
            if _landed(paths, actions, table):
                break
            if attempt == 4:
                raise
            time.sleep(0.05 * (attempt + 1))
    reach(table.point("committed"))


def append_rows(paths: StorePaths, rows: Iterable[Mapping] | pa.Table, operation: str = "append",
                table: Table = RESULTS, **info) -> int:
    """Append rows (dicts or an Arrow table of `table`'s schema) to `table` in ONE commit;
    returns the rows written."""
    data = (rows if isinstance(rows, pa.Table) else rows_table(rows) if table is RESULTS
            else pa.Table.from_pylist(list(rows), schema=table.schema))
    if data.num_rows == 0:
        return 0
    table_handle(paths, table=table)   # up to date, or the GenebError of a damaged log, first
    return append_table(paths, data, operation, table, **info)


def append_table(paths: StorePaths, table: pa.Table, operation: str, spec: Table = RESULTS,
            **info) -> int:
    """Write the data files of `table` (rows of the table `spec`) and commit them (the handle is
    already up to date)."""
    actions = [write_data_file(spec.root(paths), part, source, model, spec)
               for (source, model), part in _partitions(table).items()]
    commit_actions(paths, actions, operation, spec, **info)
    return table.num_rows


def read_files(paths: StorePaths, files: Iterable[DataFile],
               table: Table = RESULTS) -> tuple[pa.Table, list[DataFile]]:
    """The rows of `files` (partition columns added; a column a file written before it lacks
    is NULL) and the files that could not be read."""
    tables, broken = [], []
    root, schema = table.root(paths), table.schema
    for f in files:
        try:
            t = pq.read_table(root / f.path, page_checksum_verification=True)
        except Exception:
            broken.append(f)
            continue
        n = t.num_rows
        partition = {"source": pa.array([f.source] * n, pa.string()),
                     "model": pa.array([f.model] * n, pa.string())}
        tables.append(pa.Table.from_arrays(
            [t.column(c.name).cast(c.type) if c.name in t.column_names else
             partition.get(c.name, pa.nulls(n, c.type)) for c in schema], schema=schema))
    if not tables:
        return schema.empty_table(), broken
    return pa.concat_tables(tables), broken




# ---- compaction and vacuum ----------------------------------------------------------------

def compact(paths: StorePaths, partitions: set[tuple[str, str]] | None = None,
            table: Table = RESULTS) -> int:
    """Merge the files of each partition (all, or those named) holding more than one; one
    commit per partition. Skipped (0) while another process compacts. Unreadable files are
    left as they are (`geneb-engine doctor` reports them)."""
    from deltalake.transaction import RemoveAction  # lazy: deltalake

    from store.locks import named_lock, try_acquire  # lazy: filelock

    lock = named_lock(paths, table.lock)
    if not try_acquire(lock):
        return 0
    merged = 0
    try:
        state = read_state(paths, table)
        if state is None:
            return 0
        groups: dict[tuple[str, str], list[DataFile]] = {}
        for f in state.files:
            groups.setdefault((f.source, f.model), []).append(f)
        for key, files in sorted(groups.items()):
            if len(files) < 2 or (partitions is not None and key not in partitions):
                continue
            rows, broken = read_files(paths, files, table)
            good = [f for f in files if f not in broken]
            if len(good) < 2:
                continue
            add = write_data_file(table.root(paths), rows, *key, table)
            now = int(time.time() * 1000)
            removes = [RemoveAction(f.path, False, now, f.size, {"source": f.source,
                                                                  "model": f.model})
                       for f in good]
            commit_actions(paths, [add, *removes], "compact", table, files=len(good))
            merged += len(good)
        if merged:
            table_handle(paths, table=table).cleanup_metadata()   # expired log entries
    finally:
        lock.release()
    return merged


def vacuum(paths: StorePaths, retention_hours: int = RETENTION_HOURS,
           full: bool = False, table: Table = RESULTS) -> list[str]:
    """Delete files removed more than `retention_hours` ago (`full`: also files no version
    ever listed, left by interrupted writes); returns what was deleted."""
    if not has_table(paths, table):
        return []
    return list(table_handle(paths, table=table).vacuum(
        retention_hours=retention_hours, dry_run=False, enforce_retention_duration=False,
        full=full))
