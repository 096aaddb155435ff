"""The one standard form of a sequence for the audit, its reverse complement and its hash.

Case is soft-masking in genomic data, not a different sequence, and U is T: a sequence is
compared upper-cased with U read as T (`standard`). N and the IUPAC codes are kept as letters
and complemented by the IUPAC rule (N stays N, R and Y swap...), so `ACGN` and `acgn` are one
sequence and `NCGT` is the reverse complement of `ACGN`. A sequence and its reverse complement
are one molecule: its canonical form is the smaller of the two (`canonical`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

_COMPLEMENT = str.maketrans("ACGTRYKMSWBDHVN", "TGCAYRMKSWVHDBN")
CODES = np.full(256, 4, dtype=np.uint8)
"""Byte -> nucleotide code of a standard sequence: A C G T -> 0..3, any other letter 4."""
for _i, _c in enumerate(b"ACGT"):
    CODES[_c] = _i


def standard(seq: str) -> str:
    """Upper case, U as T."""
    return seq.upper().replace("U", "T")


def reverse_complement(seq: str) -> str:
    """The reverse complement of a standard sequence (letters outside IUPAC kept as they are)."""
    return seq.translate(_COMPLEMENT)[::-1]


def canonical(seq: str) -> str:
    """The smaller of a standard sequence and its reverse complement."""
    return min(seq, reverse_complement(seq))


def key(seq: str) -> int:
    """A 64-bit hash of a sequence (blake2b: the same on every machine and run)."""
    return int.from_bytes(hashlib.blake2b(seq.encode("ascii"), digest_size=8).digest(), "little")


def keys(seqs: Sequence[str], *, reverse: bool = False) -> np.ndarray:
    """uint64 hashes of the standard forms of `seqs` (`reverse`: of their canonical forms)."""
    form = (lambda s: canonical(standard(s))) if reverse else standard
    return np.fromiter((key(form(s)) for s in seqs), dtype=np.uint64, count=len(seqs))


def codes(seqs: Sequence[str]) -> np.ndarray:
    """The nucleotide codes (`CODES`) of standard sequences, concatenated."""
    return CODES[np.frombuffer("".join(seqs).encode("ascii"), dtype=np.uint8)]
