"""Probe machinery beyond the exact geneb-v1 path: batched torch solvers and protocol variants.

Modules import only numpy, torch, scikit-learn and the standard library at import time, so they
run on a bare GPU machine (no polars, zarr or duckdb there).
"""
