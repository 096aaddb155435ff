"""A Delta table of the store: its spec (`Table`; the results table's, `RESULTS`), its
configuration, and how one data file of it is written. Below `store.tables.results` (which
writes through these) and `store.tables.migrate` (which builds the results table from geneb
0.1's fragments with them)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from store.atomic import write_atomic
from store.failpoints import reach
from store.paths import StorePaths
from store.tables.schema import PARTITIONS, RESULT_SCHEMA
from store.vocab.ids import path_part
from store.vocab.kinds import KIND_COLUMNS
from store.vocab.variant import CONTEXT_COLUMN

TABLE_CONFIG = {"delta.logRetentionDuration": "interval 1 minute",
                "delta.checkpointInterval": "100"}


@dataclass(frozen=True)
class Table:
    """One Delta table of the store (written through `store.tables.results`): its folder (a
    `StorePaths` property of that name), its row schema (partitioned by `PARTITIONS`) and its
    Delta name. `sparse`: columns a data file holds only where one of its rows has a value
    (the results table's task-kind columns and both tables' context policy: a classification
    row's file at the default context is written with the columns it always had; readers read
    a column a file lacks as NULL)."""

    name: str
    schema: pa.Schema
    delta_name: str
    sparse: tuple[str, ...] = ()

    def root(self, paths: StorePaths) -> Path:
        return getattr(paths, self.name)

    @property
    def file_schema(self) -> pa.Schema:
        return pa.schema([f for f in self.schema if f.name not in PARTITIONS])

    def file_schema_of(self, table: pa.Table) -> pa.Schema:
        """The columns of the data file holding `table`'s rows (`sparse` ones where set)."""
        empty = {c for c in self.sparse if c not in table.column_names
                 or table.column(c).null_count == table.num_rows}
        return pa.schema([f for f in self.file_schema if f.name not in empty])

    def point(self, name: str) -> str:
        """The crash point `name` of this table (`store.failpoints`): the results table's own
        names, `predictions-<name>` for the predictions table."""
        return name if self.name == "results" else f"{self.name}-{name}"

    @property
    def lock(self) -> str:
        """The compaction lock's name."""
        return "compact" if self.name == "results" else f"compact-{self.name}"


# the context policy and the storage precision are written only where a row has one (a default
# row's file is as before)
RESULTS = Table("results", RESULT_SCHEMA, "geneb-results",
                (*KIND_COLUMNS, CONTEXT_COLUMN, "storage_precision"))


def write_data_file(root: Path, table: pa.Table, source: str, model: str,
                    spec: Table = RESULTS):
    """Write one partition's rows of the table `spec` as a data file under its folder `root`;
    its AddAction."""
    from deltalake.transaction import AddAction  # lazy: deltalake

    rel = (f"source={path_part(source)}/model={path_part(model)}/"
           f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{uuid.uuid4().hex[:12]}.parquet")
    final = root / rel

    def write(tmp: Path) -> None:
        schema = spec.file_schema_of(table)
        pq.write_table(table.select(schema.names).cast(schema), tmp, write_page_checksum=True)
        reach(spec.point("data-file-temp"))

    write_atomic(final, write)
    reach(spec.point("data-file-renamed"))
    tasks = table.column("task")
    stats = {"numRecords": table.num_rows,
             "minValues": {"task": pc.min(tasks).as_py()},
             "maxValues": {"task": pc.max(tasks).as_py()},
             "nullCount": {"task": tasks.null_count}}
    st = final.stat()
    return AddAction(rel, st.st_size, {"source": source, "model": model},
                     int(st.st_mtime * 1000), True, json.dumps(stats))
