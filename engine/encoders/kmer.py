"""Weight-free k-mer spectrum baselines, as the official example extractor computes them.

Each sequence upper-cased (`engine.data.as_read_by`), then its overlapping windows counted; a
window holding any letter but A, C, G, T (N, IUPAC codes, U, ...) is skipped; counts are indexed
lexicographically (A<C<G<T, base 4) and normalised to sum 1; float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.data import as_read_by
from store.embeddings import SplitWriter
from store.vocab.encoder_kinds import KINDS

if TYPE_CHECKING:
    from engine.encoders import EncoderOptions
    from store.catalog import ModelMeta

_CODE = np.full(256, 4, dtype=np.int64)
for _i, _c in enumerate(b"ACGT"):
    _CODE[_c] = _i


def build(model: ModelMeta, options: EncoderOptions) -> KmerEncoder:
    """The baseline of a catalog entry that passed `preflight` (weight-free: no options)."""
    return KmerEncoder(model.encoder_k)


@dataclass(frozen=True)
class KmerEncoder:
    k: int

    @property
    def dim(self) -> int:
        return 4 ** self.k

    revision = None
    precision = KINDS["kmer"].precision[0]     # float32 spectra, whatever `--dtype` says

    @property
    def settings(self) -> dict:
        return {"encoder": "kmer", "k": self.k, "alphabet": "ACGT", "normalise": "sum"}

    def encode_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict:
        rows = writer.pending()
        writer.write(rows, self.encode([sequences[i] for i in rows]))
        return {"n_truncated": 0, "n_encoded": int(rows.size), "device": "cpu",
                "dtype": "float32"}

    def encode(self, sequences: Sequence[str]) -> np.ndarray:
        """(n, 4**k) float32 spectra, vectorised over all windows of all sequences at once."""
        sequences = as_read_by("kmer", sequences)
        k, n = self.k, len(sequences)
        out = np.zeros((n, self.dim), dtype=np.float32)
        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=n)
        if n == 0 or lengths.max(initial=0) < k:
            return out
        codes = _CODE[np.frombuffer("".join(sequences).encode("ascii", "replace"), np.uint8)]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        n_win = np.maximum(lengths - k + 1, 0)
        total = int(n_win.sum())
        owner = np.repeat(np.arange(n), n_win)
        pos = np.arange(total) - np.repeat(np.cumsum(n_win) - n_win, n_win) + starts[owner]
        index = np.zeros(total, dtype=np.int64)
        valid = np.ones(total, dtype=bool)
        for j in range(k):
            c = codes[pos + j]
            valid &= c < 4
            index = index * 4 + np.minimum(c, 3)
        counts = np.bincount(owner[valid] * self.dim + index[valid], minlength=n * self.dim)
        out[:] = counts.reshape(n, self.dim)
        sums = out.sum(axis=1, keepdims=True)
        np.divide(out, sums, out=out, where=sums > 0)
        return out
