"""Read-only DuckDB views over the store.

- `results_all`: every row of every fragment.
- `results`: the latest row per key (`store.results.KEY`).
- `tasks`, `models`: the catalog tables.
A fresh in-memory connection per caller: many readers, no long-lived `.duckdb` file.
"""

from __future__ import annotations

import duckdb
import polars as pl

from store.catalog import models_frame, tasks_frame
from store.paths import StorePaths
from store.results import KEY, RESULT_SCHEMA


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _empty_select(schema) -> str:
    cols = ", ".join(
        f"CAST(NULL AS {_duck_type(f.type)}) AS {f.name}" for f in schema
    )
    return f"SELECT {cols} WHERE false"


def _duck_type(t) -> str:
    import pyarrow as pa

    if pa.types.is_string(t):
        return "VARCHAR"
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ"
    raise TypeError(t)


def connect(paths: StorePaths) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("SET TimeZone = 'UTC'")
    has_fragments = paths.results.exists() and any(paths.results.rglob("*.parquet"))
    if has_fragments:
        glob = _sql_str(str(paths.results / "**" / "*.parquet"))
        con.execute(
            f"CREATE VIEW results_all AS SELECT * EXCLUDE (filename), filename AS fragment "
            f"FROM read_parquet({glob}, union_by_name=true, filename=true)"
        )
    else:
        con.execute(
            f"CREATE VIEW results_all AS SELECT *, CAST(NULL AS VARCHAR) AS fragment "
            f"FROM ({_empty_select(RESULT_SCHEMA)})"
        )
    key = ", ".join(KEY)
    con.execute(
        f"CREATE VIEW results AS SELECT * EXCLUDE (rn, fragment) FROM ("
        f"SELECT *, row_number() OVER (PARTITION BY {key} "
        f"ORDER BY created_at DESC, fragment DESC) AS rn FROM results_all) WHERE rn = 1"
    )
    for name, frame in (("tasks", read_catalog(paths, "tasks")),
                        ("models", read_catalog(paths, "models"))):
        con.register(f"_{name}_frame", frame.to_arrow())
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM _{name}_frame")
    return con


def read_catalog(paths: StorePaths, name: str) -> pl.DataFrame:
    f = paths.catalog / f"{name}.parquet"
    if f.exists():
        return pl.read_parquet(f)
    return (tasks_frame if name == "tasks" else models_frame)([])


def query(paths: StorePaths, sql: str, params: list | None = None) -> pl.DataFrame:
    con = connect(paths)
    try:
        rel = con.sql(sql, params=params) if params else con.sql(sql)
        return rel.pl()
    finally:
        con.close()
