"""Read-only DuckDB views over one snapshot of the store.

A `Snapshot` opens the newest version of the results table once (`store.tables.results.read_state`);
every query through it sees that version, whatever is committed or compacted meanwhile. Its
views:

- `results_all`: every row of the version (a local row written before the compute precision was
  recorded reads as its run's: `store.tables.migrate.LEGACY_PRECISION_SQL`);
- `results_latest`: the newest row per key (`store.tables.schema.KEY`, which includes the data
hash and the variant);
- `current_data`, `current_revision`, `current_precision`: the store's current data hash per
  task, revision per model (a checkpoint folder's as its files are now: `store.current`) and
  compute precision per model;
- `current_rows`, `stale_results`: the latest rows that are current (on current data and, for
  local rows, of the model's current revision) and the others (`store.cells` decides which is
  which);
- `results`: what every reader shows, the current rows of the snapshot's task kind
  (`store.vocab.kinds`; classification unless asked) each as its entry (a model's rows at
  another precision than its current one as `<model> [<precision>]`); rows of the other kinds
  are left out, so that no reader averages metrics of different kinds; `entries`: those
  entries;
- `tasks`, `models`: the catalogs.

`Snapshot.notes` says what the current revisions leave out and what they could not check (a
checkpoint folder that is gone), one line per model, for every reader to show.

Damage is contained: a data file the version lists but that is missing or has the wrong size is
left out when the snapshot opens; one that fails while a query reads it (garbled bytes, a bad
page checksum) is found by reading each file, left out, and the query runs again. Each is
reported once per process (`damage()`), naming the file and the cells it held, which read as
missing. Many readers, no writer here, no `.duckdb` file.
"""

from __future__ import annotations

import copy
import struct
from collections.abc import Iterable

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from store import current
from store.cells import (
    CURRENT_DATA_SQL,
    CURRENT_PRECISION_SQL,
    CURRENT_RESULTS_SQL,
    CURRENT_REVISION_SQL,
    CURRENT_ROWS_SQL,
    ENTRIES_SQL,
    SEVERAL_PRECISIONS_SQL,
    STALE_RESULTS_SQL,
)
from store.damage import REPAIR, note
from store.paths import StorePaths
from store.tables.catalogs import read_catalog
from store.tables.migrate import LEGACY_PRECISION_SQL
from store.tables.results import DataFile, read_files, read_state
from store.tables.schema import KEY, RESULT_SCHEMA
from store.tables.telemetry import read_runs
from store.vocab.kinds import CLASSIFICATION, EVERY_KIND, TaskKind, rows_of
from store.vocab.sources import LOCAL


def _constant(value: str, n: int):
    """`value` n times, dictionary-encoded, built from buffers (`pa.array` and `pa.repeat`
    import pandas to check their input)."""
    data = value.encode()
    values = pa.StringArray.from_buffers(1, pa.py_buffer(struct.pack("<ii", 0, len(data))),
                                         pa.py_buffer(data))
    zeros = pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(bytes(4 * n))])
    return pa.DictionaryArray.from_arrays(zeros, values)


class Snapshot:
    """One version of the store's results, queried through DuckDB (see the module docstring)."""

    def __init__(self, paths: StorePaths, kind: str = CLASSIFICATION):
        """`kind`: whose rows the `results` view holds (`store.vocab.kinds.rows_of`: a task
        kind, or EVERY_KIND)."""
        self.paths = paths
        self.kind = kind if kind == EVERY_KIND else TaskKind(kind)
        state = read_state(paths)
        self.version: int | None = state.version if state else None
        for problem in state.problems if state else ():
            note(problem, problem)
        self._files: list[DataFile] = []
        for f in state.files if state else ():
            full = paths.results / f.path
            try:
                size = full.stat().st_size
            except OSError:
                note(str(full), f"{full}: missing; it held {f.held()}, which read as missing; "
                                 f"{REPAIR}")
                continue
            if size != f.size:
                note(str(full), f"{full}: {size} bytes instead of {f.size} (truncated or "
                                 f"overwritten); it held {f.held()}, which read as missing; "
                                 f"{REPAIR}")
                continue
            self._files.append(f)
        self._con: duckdb.DuckDBPyConnection | None = None
        self._folders: dict[str, current.FolderRevision] = {}
        self._runs: bool = False
        self._kinds: list[TaskKind] | None = None     # `kinds()`: fixed for the version

    @property
    def label(self) -> str:
        """`as of version N` (what exports and reports record)."""
        return "empty" if self.version is None else f"as of version {self.version}"

    def _rows(self):
        """Every row of the version's readable files, read once (page checksums verified),
        strings dictionary-encoded: one decode for all the queries of the snapshot. Each file
        is read with `pyarrow.parquet` and its partition (source, model) added as a constant
        dictionary column (`pyarrow.dataset` would import pandas, ~250 ms)."""
        if not self._files:
            return RESULT_SCHEMA.empty_table()
        strings = [f.name for f in RESULT_SCHEMA if pa.types.is_string(f.type)]
        schema = pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), pa.string()))
                            if f.name in strings else f for f in RESULT_SCHEMA])
        tables = []
        for f in self._files:
            path = self.paths.results / f.path
            stored = set(pq.read_schema(path).names)
            part = pq.ParquetFile(path, read_dictionary=[c for c in strings if c in stored],
                                  page_checksum_verification=True).read()
            n = part.num_rows
            columns = {"source": _constant(f.source, n), "model": _constant(f.model, n)}
            tables.append(pa.Table.from_arrays(
                [part[name] if name in part.column_names else
                 columns.get(name, pa.nulls(n, field.type)) for name, field in
                 zip(schema.names, schema, strict=True)], schema=schema))
        return pa.concat_tables(tables)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            con = duckdb.connect(":memory:")
            con.execute("SET TimeZone = 'UTC'")
            con.register("_results_rows", self._rows())
            con.execute("CREATE VIEW results_all AS "
                        + self.recorded_precision(con, "_results_rows"))
            key = ", ".join(KEY)
            # Latest row per key. Keys are unique unless a key was written again (a changed
            # import, rows of an older version): only then is the (wide, memory-hungry) window
            # needed. Equal keys hash equal, so a hash collision can only choose the window.
            repeated = con.sql(f"SELECT count(*) - count(DISTINCT hash({key})) "
                               "FROM results_all").fetchall()[0][0]
            con.execute(
                "CREATE VIEW results_latest AS SELECT * FROM results_all" if not repeated else
                f"CREATE VIEW results_latest AS SELECT * EXCLUDE (rn) FROM ("
                f"SELECT *, row_number() OVER (PARTITION BY {key} ORDER BY created_at DESC, "
                f"mcc DESC NULLS LAST, acc DESC NULLS LAST) AS rn FROM results_all) "
                f"WHERE rn = 1")
            catalogs = {name: read_catalog(self.paths, name) for name in ("tasks", "models")}
            for name, frame in catalogs.items():
                con.register(f"_{name}_frame", frame.to_arrow())
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM _{name}_frame")
            con.execute(f"CREATE VIEW current_data AS {CURRENT_DATA_SQL}")
            self._told_revisions(con, catalogs["models"])
            con.execute(f"CREATE VIEW current_rows AS {CURRENT_ROWS_SQL}")
            con.execute(f"CREATE VIEW current_precision AS {CURRENT_PRECISION_SQL}")
            apart = con.sql(SEVERAL_PRECISIONS_SQL).fetchall()[0][0]
            shown = CURRENT_RESULTS_SQL if apart else "SELECT * FROM current_rows"
            con.execute(f"CREATE VIEW results AS SELECT * FROM ({shown}) "
                        f"WHERE {rows_of(self.kind)}")
            con.execute("CREATE VIEW entries AS "
                        + (ENTRIES_SQL if apart else f"{ENTRIES_SQL} LIMIT 0"))
            con.execute(f"CREATE VIEW stale_results AS {STALE_RESULTS_SQL}")
            self._con = con
        return self._con

    def recorded_precision(self, con: duckdb.DuckDBPyConnection, rows: str) -> str:
        """The SQL of the relation `rows` (result or prediction rows registered in `con`) with
        the local rows written before the compute precision was recorded read as their run's
        (`store.tables.migrate.LEGACY_PRECISION_SQL`; the runs table read only when such rows
        are there)."""
        older = con.sql(f"SELECT count(*) FROM {rows} WHERE source = '{LOCAL}' "
                        "AND compute_precision IS NULL").fetchall()[0][0]
        if not older:
            return f"SELECT * FROM {rows}"
        if not self._runs:
            con.register("_runs_rows", read_runs(self.paths).to_arrow())
            self._runs = True
        return LEGACY_PRECISION_SQL.format(rows=rows, runs="_runs_rows")

    def _told_revisions(self, con: duckdb.DuckDBPyConnection, models: pl.DataFrame) -> None:
        """The `current_revision` view: each checkpoint folder's revision as its files are
        now (`store.current.reader_revisions` over the model catalog `models`; a folder that
        is gone keeps its last run's), every other model's registered one
        (`store.cells.CURRENT_REVISION_SQL`)."""
        def run(sql: str, params: list) -> pl.DataFrame:
            return con.sql(sql, params=params).pl()

        self._folders = current.reader_revisions(run, models)
        told = pl.DataFrame([(m, f.revision, f.also) for m, f in self._folders.items()
                             if f.revision is not None],
                            schema={"model": pl.String, "model_revision": pl.String,
                                    "also_revision": pl.String}, orient="row")
        con.register("_told_revision", told.to_arrow())
        con.execute("CREATE VIEW current_revision AS SELECT * FROM _told_revision UNION ALL "
                    f"SELECT * FROM ({CURRENT_REVISION_SQL}) "
                    "WHERE model NOT IN (SELECT model FROM _told_revision)")

    @property
    def notes(self) -> list[str]:
        """What the store's current revisions leave out and what they could not check, one
        line per model (`store.current.notes`): every reader shows them."""
        self.con  # noqa: B018 - the views (and the folders' revisions) are built once
        return current.notes(self.query, self._folders, self.kind)

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame:
        try:
            return self._run(sql, params)
        except Exception:   # a file that fails to decode (DuckDB or Arrow raises), or a bug
            if not self._leave_out_broken():
                raise
            return self._run(sql, params)

    def _run(self, sql: str, params: list | None) -> pl.DataFrame:
        rel = self.con.sql(sql, params=params) if params else self.con.sql(sql)
        return rel.pl()

    def _leave_out_broken(self) -> bool:
        """Read every file; leave out those that fail. True when some were left out."""
        _, broken = read_files(self.paths, self._files)
        for f in broken:
            full = self.paths.results / f.path
            note(str(full), f"{full}: cannot be read (garbled; its checksums or structure do "
                             f"not hold); it held {f.held()}, which read as missing; {REPAIR}")
        if not broken:
            return False
        self._files = [f for f in self._files if f not in broken]
        if self._con is not None:
            self._con.close()
            self._con = None
            self._runs = False
        return True

    def of_kind(self, kind: str) -> Snapshot:
        """A snapshot of the same version whose `results` view holds `kind`'s rows."""
        other = copy.copy(self)
        other.kind = kind if kind == EVERY_KIND else TaskKind(kind)
        other._con, other._folders, other._runs = None, {}, False
        return other

    def kinds(self, tasks: Iterable[str] | None = None) -> list[TaskKind]:
        """The task kinds of the version's current rows (on `tasks` where given; whatever
        kind the snapshot reads), classification first (where any). The store's are read once
        per version: the reading commands ask several times (which suite, which kind)."""
        if tasks is None and self._kinds is not None:
            return self._kinds
        on, given = ("", []) if tasks is None else (" WHERE list_contains(?, task)", [list(tasks)])
        found = set(self.query(f"SELECT DISTINCT coalesce(kind, ?) AS kind FROM current_rows{on}",
                               [str(CLASSIFICATION), *given])["kind"])
        kinds = [k for k in TaskKind if k in found]
        if tasks is None:
            self._kinds = kinds
        return kinds

    def close(self) -> None:
        """Free the DuckDB connection and the rows it holds; a later query opens them again
        on the same version (its files never change)."""
        if self._con is not None:
            self._con.close()
            self._con = None
            self._runs = False


Source = StorePaths | Snapshot


def snapshot_of(source: Source, kind: str | None = None) -> Snapshot:
    """`source` itself (a snapshot, which must be of `kind` where given), or a snapshot of
    `kind` (classification where None) of it."""
    if not isinstance(source, Snapshot):
        return Snapshot(source, kind or CLASSIFICATION)
    if kind is not None and source.kind != kind:
        raise ValueError(f"a snapshot of {source.kind} results, asked for {kind} ones")
    return source


def query(source: Source, sql: str, params: list | None = None) -> pl.DataFrame:
    """One query; on a `StorePaths`, through a snapshot of its own."""
    snap = snapshot_of(source)
    try:
        return snap.query(sql, params)
    finally:
        if snap is not source:
            snap.close()
