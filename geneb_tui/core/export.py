"""CSV export of what the table shows: `store.csv_out` (full precision, formula-safe,
header-only when empty, atomic), shared with `geneb-engine export --csv`."""

from __future__ import annotations

from store.csv_out import safe_cell, write_csv

__all__ = ["safe_cell", "write_csv"]
