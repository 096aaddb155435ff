"""Near duplicates across a task's splits: test rows with a train row whose k-mer set is at
least `THRESHOLD` Jaccard-similar to theirs.

k-mer sets: the `K`-mers of the standard form (`store.audit.sequences.standard`) made of A, C,
G and T only (a k-mer holding N or another IUPAC code is left out); a sequence with no such
k-mer takes no part. At K = 10 a 400 bp sequence has about 391 k-mers, two unrelated ones share
almost none (Jaccard ~0.0003), and one substitution leaves a Jaccard of about 0.95: 0.9 is
about two substitutions per 400 bp.

Search: a MinHash sketch of `N_HASHES` values per sequence by one-permutation hashing (one
multiply-shift hash per k-mer; its top 7 bits pick one of 128 bins, the rest is the value, the
bin keeps its minimum), cut into `BANDS` bands of `ROWS` values; a train and a test row that
agree on every value of some band are candidates (a band whose bins are all empty is no key).
Two sets of Jaccard J agree on a bin with probability about J, so a pair becomes a candidate
with probability 1 - (1 - J^8)^16: 0.99988 at J = 0.9 (a false-negative rate of 1.2e-4 for a
pair right at the threshold, less above it: 3e-8 at 0.95), 0.95 at 0.8, 0.06 at 0.5. Each
test row's candidates (at most `BUCKET_CAP` train rows per band: a bucket of many identical
low-complexity sequences is not compared pair by pair) are verified by their exact Jaccard, so
every pair reported is truly >= `THRESHOLD`; numpy throughout, sketches built in chunks of
about `CHUNK_POSITIONS` sequence positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from store.audit.join import equal_pairs
from store.audit.sequences import codes as codes_of
from store.audit.sequences import standard

K = 10
N_HASHES = 128
BANDS = 16
ROWS = N_HASHES // BANDS
THRESHOLD = 0.9
BUCKET_CAP = 64
CHUNK_POSITIONS = 4_000_000
EXAMPLES = 3

_BIN_BITS = 7                                   # 2**7 = N_HASHES bins
_VALUE_MASK = np.uint64((1 << (32 - _BIN_BITS)) - 1)
_EMPTY = np.iinfo(np.uint32).max
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)     # odd: multiply-shift hashing
_BAND_MIXERS = np.random.default_rng(20260).integers(1, 2**63, ROWS, dtype=np.uint64) | 1


@dataclass(frozen=True)
class NearDuplicates:
    test_rows: int = 0              # test rows with a train row at Jaccard >= THRESHOLD
    examples: list[list[float]] = field(default_factory=list)   # [test row, train row, J]


def kmers(seqs: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(k-mer codes, the index in `seqs` of each) of standard sequences, in order."""
    lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
    codes = codes_of(seqs)
    n = codes.size - K + 1
    if n <= 0:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    values = np.zeros(n, dtype=np.uint64)
    wide = codes.astype(np.uint64)
    for j in range(K):
        values = (values << np.uint64(2)) | wide[j:j + n]
    bad = np.concatenate([[0], np.cumsum(codes == 4)])
    row = np.repeat(np.arange(len(seqs)), lengths)[:n]
    ends = np.cumsum(lengths)
    valid = (bad[K:] == bad[:-K]) & (np.arange(n) + K <= ends[row])
    return values[valid], row[valid]


def kmer_set(seq: str) -> np.ndarray:
    """The sorted k-mer codes of one standard sequence."""
    return np.unique(kmers([seq])[0])


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard similarity of two sorted k-mer sets (0 where both are empty)."""
    inter = np.intersect1d(a, b, assume_unique=True).size
    union = a.size + b.size - inter
    return inter / union if union else 0.0


def sketches(seqs: Sequence[str]) -> np.ndarray:
    """(len(seqs), N_HASHES) uint32 one-permutation MinHash sketches of standard sequences;
    an empty bin holds the largest uint32."""
    out = np.full((len(seqs), N_HASHES), _EMPTY, dtype=np.uint32)
    start = 0
    while start < len(seqs):
        stop, size = start, 0
        while stop < len(seqs) and (size == 0 or size + len(seqs[stop]) <= CHUNK_POSITIONS):
            size += len(seqs[stop])
            stop += 1
        values, row = kmers(seqs[start:stop])
        h = (values * _MULTIPLIER) >> np.uint64(32)
        np.minimum.at(out, (row + start, (h >> np.uint64(32 - _BIN_BITS)).astype(np.int64)),
                      (h & _VALUE_MASK).astype(np.uint32))
        start = stop
    return out


def band_keys(sketch: np.ndarray, band: int) -> tuple[np.ndarray, np.ndarray]:
    """(the rows with a key in `band`, their keys): rows whose band is not all empty."""
    part = sketch[:, band * ROWS:(band + 1) * ROWS]
    rows = np.flatnonzero((part != _EMPTY).any(axis=1))
    mixed = part[rows].astype(np.uint64) * _BAND_MIXERS
    keys = np.zeros(rows.size, dtype=np.uint64)
    for j in range(ROWS):
        keys = (keys * np.uint64(1_000_003)) ^ mixed[:, j]
    return rows, keys


def candidates(train: np.ndarray, test: np.ndarray) -> np.ndarray:
    """(n, 2) unique (test row, train row) pairs that agree on some band, by test row."""
    found = []
    for band in range(BANDS):
        train_rows, train_keys = band_keys(train, band)
        test_rows, test_keys = band_keys(test, band)
        query, match = equal_pairs(train_keys, test_keys, BUCKET_CAP)
        found.append(np.stack([test_rows[query], train_rows[match]], axis=1))
    return np.unique(np.concatenate(found), axis=0)


def near_duplicates(train: Sequence[str], test: Sequence[str],
                    skip: np.ndarray | None = None) -> NearDuplicates:
    """The test rows with a train row at Jaccard >= THRESHOLD; `skip`: a mask of test rows not
    to look at (those already copies of a train row)."""
    train = [standard(s) for s in train]
    test = [standard(s) for s in test]
    pairs = candidates(sketches(train), sketches(test))
    if skip is not None and pairs.size:
        pairs = pairs[~skip[pairs[:, 0]]]
    sets: dict[tuple[str, int], np.ndarray] = {}

    def set_of(split: str, seqs: list[str], i: int) -> np.ndarray:
        if (split, i) not in sets:
            sets[split, i] = kmer_set(seqs[i])
        return sets[split, i]

    hits: list[list[float]] = []
    done = -1
    for t, r in pairs.tolist():
        if t == done:
            continue
        j = jaccard(set_of("test", test, t), set_of("train", train, r))
        if j >= THRESHOLD:
            hits.append([t + 1, r + 1, round(j, 4)])
            done = t
    return NearDuplicates(len(hits), hits[:EXAMPLES])
