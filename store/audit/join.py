"""Equal keys between two arrays: the one join of the audit (LSH buckets, sequences shared
between tasks), sort and binary search in numpy."""

from __future__ import annotations

import numpy as np


def equal_pairs(keys: np.ndarray, queries: np.ndarray,
                cap: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(query index, key index) of every pair with `queries[q] == keys[k]`, by query; `cap`:
    at most that many keys per query (the first in `keys`' order)."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    left = np.searchsorted(ordered, queries, "left")
    counts = np.searchsorted(ordered, queries, "right") - left
    if cap is not None:
        counts = np.minimum(counts, cap)
    total = int(counts.sum())
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return (np.repeat(np.arange(queries.size), counts),
            order[np.repeat(left, counts) + offsets])
