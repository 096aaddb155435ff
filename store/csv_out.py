"""CSV output of the dashboard's export and `geneb-engine export --csv`: full precision,
formula-safe, header-only when empty, written atomically (`store.atomic`).

Free of Textual, torch and transformers (the dashboard and the engine both import it).
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from pathlib import Path

from store.atomic import write_atomic

# Leading characters a spreadsheet takes for a formula (OWASP "CSV injection").
_FORMULA_LEAD = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value) -> str:
    """The text written for one cell: numbers in Python's notation (floats at full precision,
    via repr; negatives never quoted); strings that look like formulas get a `'`; None and
    non-finite floats are empty; dates are ISO."""
    if value is None:
        return ""
    if isinstance(value, int):   # bool included: True, False
        return str(value)
    if isinstance(value, float):
        return "" if not math.isfinite(value) else repr(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    text = str(value)
    if text.startswith(_FORMULA_LEAD):
        return "'" + text
    return text


def write_csv(path: str | os.PathLike, header: Sequence[str], rows: Iterable[Sequence]) -> int:
    """Write atomically (a temporary file beside it, then rename; the folder is created when
    missing); returns the number of data rows written. A folder as `path` is IsADirectoryError."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; give a file name such as {path}/geneb.csv")
    n = 0

    def write(tmp: Path) -> None:
        nonlocal n
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow([safe_cell(h) for h in header])
            for r in rows:
                w.writerow([safe_cell(v) for v in r])
                n += 1

    write_atomic(path, write)
    return n
