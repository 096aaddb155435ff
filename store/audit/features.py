"""The shortcut features: what a probe can separate classes by without any model.

- `length`: the sequence's length in letters;
- `gc`: the share of G and C among its A, C, G and T (0 where it has none);
- `composition`: the shares of the 4 nucleotides among its A, C, G, T and of the 16
  dinucleotides among its adjacent pairs of them (20 features).

Over the standard form (`store.audit.sequences.standard`); other letters (N, IUPAC) count in the
length only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from store.audit.sequences import codes as codes_of
from store.audit.sequences import standard

FEATURES: tuple[str, ...] = ("length", "gc", "composition")


def _shares(counts: np.ndarray) -> np.ndarray:
    total = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, total, out=np.zeros(counts.shape), where=total > 0)


def shortcut_features(seqs: Sequence[str]) -> dict[str, np.ndarray]:
    """Feature name -> (len(seqs), d) float32 matrix, in `FEATURES` order."""
    seqs = [standard(s) for s in seqs]
    n = len(seqs)
    lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=n)
    codes = codes_of(seqs).astype(np.int64)
    row = np.repeat(np.arange(n), lengths)
    ok = codes < 4
    mono = np.bincount(row[ok] * 4 + codes[ok], minlength=n * 4).reshape(n, 4)
    pair_ok = ok[:-1] & ok[1:] & (row[:-1] == row[1:])
    di = np.bincount(row[:-1][pair_ok] * 16 + codes[:-1][pair_ok] * 4 + codes[1:][pair_ok],
                     minlength=n * 16).reshape(n, 16)
    gc = _shares(np.stack([mono[:, 1] + mono[:, 2], mono[:, 0] + mono[:, 3]], axis=1))[:, :1]
    return {"length": lengths[:, None].astype(np.float32), "gc": gc.astype(np.float32),
            "composition": np.hstack([_shares(mono), _shares(di)]).astype(np.float32)}
