"""What rows written by an older geneb mean today.

**Fragments.** Once per store: results kept as Parquet fragments (geneb 0.1:
`results/<group>/*.parquet`) become the Delta Lake table of `store.tables.results`.

Under `locks/migrate.lock`: every fragment is read (one that cannot be read is reported and stays
in the old folder); the table is built in `results.migrating/` with all rows in ONE commit
(version 0); the old folder moves to `aside/<stamp>-results-fragments/` (kept, never deleted);
`results.migrating/` becomes `results/`. A crash before the last rename leaves either the old
folder (the migration starts again) or `results.migrating/` alone (the next open finishes it).

**The compute precision** (`store.vocab.variant`). A local result or prediction row written
before the precision was recorded (its `compute_precision` NULL: the column is NULL where a data
file lacks it) was computed at `fill --dtype auto`, the only precision there was until
`--dtype`, or at the `--dtype` its run was given; what that was on its device (float32 on the
CPU, bfloat16-autocast on CUDA...) the runs table recorded (`store.tables.telemetry`, `dtype`)
for every split the run encoded. So such a row reads as the `dtype` of the newest split of its
(model, task, data hash) encoded before the row was written (`LEGACY_PRECISION_SQL`, applied by
every reader: `store.db` and the predictions table); it stays NULL ("precision not recorded")
where no encoding of its pair was recorded (a store older than the runs table, a run killed
between its embeddings and the runs table's commit), and so for the kinds that record none (an
official extractor, imported embeddings). Nothing is rewritten: the rows keep their bytes, their
protocol hash and their cells; imported rows (other sources) carry no precision and stay NULL.
"""

from __future__ import annotations

import os
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from store.paths import StorePaths
from store.tables.data_files import TABLE_CONFIG, write_data_file
from store.tables.schema import PARTITIONS, RESULT_SCHEMA
from store.vocab.errors import brief
from store.vocab.sources import LOCAL

# A relation `{rows}` of result or prediction rows, each local row without a precision read as
# its pair's newest recorded encoding's before it (`{runs}`: the runs table's rows); see the
# module.
LEGACY_PRECISION_SQL = f"""
SELECT r.* REPLACE (CASE WHEN r.source = '{LOCAL}' THEN coalesce(r.compute_precision, u.dtype)
                         ELSE r.compute_precision END AS compute_precision)
FROM {{rows}} r ASOF LEFT JOIN {{runs}} u
  ON u.model = r.model AND u.task = r.task AND u.data_hash = r.data_hash
 AND r.created_at >= u.created_at
"""


def _migrating(paths: StorePaths) -> Path:
    return paths.results.with_name("results.migrating")


def _fragments(folder: Path) -> list[Path]:
    out = []
    for base, _dirs, names in os.walk(folder):   # no globbing: the store path is literal
        out += [Path(base) / n for n in names if n.endswith(".parquet")]
    return sorted(out)


def needs_migration(paths: StorePaths) -> bool:
    results = paths.results
    if _migrating(paths).is_dir() and not results.exists():
        return True
    return (results.is_dir() and not (results / "_delta_log").exists()
            and bool(_fragments(results)))


def _as_result_table(table: pa.Table) -> pa.Table:
    cols = [table.column(f.name).cast(f.type) if f.name in table.column_names
            else pa.nulls(table.num_rows, f.type) for f in RESULT_SCHEMA]
    return pa.Table.from_arrays(cols, schema=RESULT_SCHEMA)


def migrate_fragments(paths: StorePaths) -> bool:
    """Migrate a fragment store (no-op otherwise); True when this call migrated it."""
    if not needs_migration(paths):
        return False
    from store.locks import named_lock  # lazy: filelock

    with named_lock(paths, "migrate"):
        if not needs_migration(paths):
            return False
        target = _migrating(paths)
        if not paths.results.exists():       # the last rename was interrupted
            target.rename(paths.results)
            return True
        shutil.rmtree(target, ignore_errors=True)
        tables, unreadable = [], []
        for frag in _fragments(paths.results):
            try:
                tables.append(_as_result_table(pq.read_table(frag)))
            except Exception as exc:
                unreadable.append(f"{frag} ({brief(exc)})")
        _build(target, pa.concat_tables(tables) if tables else RESULT_SCHEMA.empty_table())
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        aside = paths.aside / f"{stamp}-results-fragments"
        aside.parent.mkdir(parents=True, exist_ok=True)
        paths.results.rename(aside)
        target.rename(paths.results)
        n = sum(t.num_rows for t in tables)
        print(f"geneb: migrated {n} result rows from {len(tables)} fragment(s) to the results "
              f"table in {paths.results} (one commit); the fragments are kept in {aside}"
              + (f"; {len(unreadable)} unreadable fragment(s) not migrated: "
                 + "; ".join(unreadable) if unreadable else ""), file=sys.stderr)
        return True


def _build(folder: Path, table: pa.Table) -> None:
    from deltalake import Schema  # lazy: deltalake
    from deltalake.transaction import create_table_with_add_actions  # lazy: deltalake


    folder.mkdir(parents=True)
    actions = []
    keys = sorted({(s, m) for s, m in zip(table.column("source").to_pylist(),
                                          table.column("model").to_pylist(), strict=True)})
    for source, model in keys:
        part = table.filter(pc.and_(pc.equal(table.column("source"), source),
                                    pc.equal(table.column("model"), model)))
        actions.append(write_data_file(folder, part, source, model))
    create_table_with_add_actions(str(folder), Schema.from_arrow(RESULT_SCHEMA), actions,
                                  mode="error", partition_by=list(PARTITIONS),
                                  name="geneb-results", configuration=TABLE_CONFIG)
