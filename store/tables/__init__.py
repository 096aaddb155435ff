"""The store's Delta Lake tables and what their rows are.

- `schema`: a result row's columns and key;
- `results`: the results table (`<store>/results`), written only through this module;
- `predictions`: each local result row's test-set predictions (`<store>/predictions`);
- `telemetry`: the runs table (`<store>/runs`), how fast each split was encoded;
- `migrate`: results kept as Parquet fragments (geneb 0.1) become the Delta table, once;
- `delta_log`: a table's versions from its log folder's listing (standard library only).
"""
