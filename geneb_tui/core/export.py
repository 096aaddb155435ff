"""CSV export of what the table shows: full precision, formula-safe, header-only when empty."""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

# Leading characters a spreadsheet takes for a formula (OWASP "CSV injection").
_FORMULA_LEAD = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value) -> str | int | float:
    """Numbers stay numbers (negatives included); strings that look like formulas get a `'`."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return "" if not math.isfinite(value) else repr(value)
    text = str(value)
    if text.startswith(_FORMULA_LEAD):
        return "'" + text
    return text


def write_csv(path: str | os.PathLike, header: Sequence[str], rows: Iterable[Sequence]) -> int:
    """Write atomically (temp file, then rename); returns the number of data rows written."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; give a file name such as {path}/geneb.csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([safe_cell(h) for h in header])
        for r in rows:
            w.writerow([safe_cell(v) for v in r])
            n += 1
    os.replace(tmp, path)
    return n
