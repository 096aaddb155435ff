"""A Delta table's commit log as a directory listing: its version numbers, with the standard
library only (no log file is read), so that the dashboard's first-view cache can tell a table's
version before pyarrow or deltalake is imported."""

from __future__ import annotations

import os
from pathlib import Path


def log_versions(root: Path) -> list[int]:
    """The commit numbers in `<root>/_delta_log`, ascending (none where it cannot be listed)."""
    try:
        names = os.listdir(root / "_delta_log")
    except OSError:
        return []
    return sorted(int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit())


def newest_version(root: Path) -> int | None:
    """The newest commit number of the table at `root`, or None without a log."""
    versions = log_versions(root)
    return versions[-1] if versions else None
