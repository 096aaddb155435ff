"""Exact copies in a task's data: within train, within test, across the splits, and the copies
whose labels disagree.

Over hashes of sequences (`store.audit.sequences.keys`): the standard form for exact copies,
the canonical form (a sequence or its reverse complement) for reverse-complement ones, which are
reported apart as the copies the canonical form finds beyond the exact ones.

- within a split: the rows that repeat an earlier row of the same split;
- across: the test rows whose sequence is in the train split;
- conflicting: the rows (of either split) whose sequence occurs with more than one label.

Example rows are numbered from 1 within their split, in file order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EXAMPLES = 3        # example rows kept per count


@dataclass(frozen=True)
class Copies:
    within_train: int = 0
    within_test: int = 0
    across: int = 0                 # test rows whose sequence is in train
    conflicting: int = 0            # rows whose sequence carries more than one label
    # a few (test row, train row) pairs of `across`, and rows of `conflicting` ("train 4")
    across_examples: list[list[int]] = field(default_factory=list)
    conflicting_examples: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Rows:
    """The rows behind a `Copies` (0-based; conflicting rows of test after those of train)."""
    within_train: int
    within_test: int
    across: np.ndarray              # test rows in train
    first: np.ndarray               # the first train row of each
    conflicting: np.ndarray

    def copies(self, n_train: int, examples: int, leave_out: _Rows | None = None) -> Copies:
        """The counts (beyond `leave_out`'s, which they include) and a few example rows."""
        across, first, conflicting = self.across, self.first, self.conflicting
        base = (0, 0, 0, 0)
        if leave_out is not None:
            new = ~np.isin(across, leave_out.across)
            across, first = across[new], first[new]
            conflicting = conflicting[~np.isin(conflicting, leave_out.conflicting)]
            base = (leave_out.within_train, leave_out.within_test, 0, 0)
        return Copies(self.within_train - base[0], self.within_test - base[1], int(across.size),
                      int(conflicting.size),
                      [[int(t) + 1, int(r) + 1] for t, r in zip(across[:examples],
                                                                first[:examples], strict=True)],
                      [f"train {i + 1}" if i < n_train else f"test {i - n_train + 1}"
                       for i in conflicting[:examples].tolist()])


def _repeats(keys: np.ndarray) -> int:
    return int(keys.size - np.unique(keys).size)


def _rows(train: np.ndarray, test: np.ndarray, y_train: np.ndarray,
          y_test: np.ndarray) -> _Rows:
    across = np.flatnonzero(np.isin(test, train))
    order = np.argsort(train, kind="stable")          # the first train row of each hash
    first = order[np.searchsorted(train[order], test[across])]
    _, group = np.unique(np.concatenate([train, test]), return_inverse=True)
    pairs = np.unique(np.stack([group, np.concatenate([y_train, y_test])]), axis=1)
    n_labels = np.bincount(pairs[0], minlength=group.max() + 1)
    return _Rows(_repeats(train), _repeats(test), across, first,
                 np.flatnonzero(n_labels[group] > 1))


def copies(exact: tuple[np.ndarray, np.ndarray], canonical: tuple[np.ndarray, np.ndarray],
           y_train: np.ndarray, y_test: np.ndarray,
           examples: int = EXAMPLES) -> tuple[Copies, Copies]:
    """(exact copies, reverse-complement copies beyond them) among rows whose hashes are
    `exact` and `canonical` ((train, test) uint64 arrays each, file order)."""
    by_exact = _rows(*exact, y_train, y_test)
    by_canonical = _rows(*canonical, y_train, y_test)
    n_train = exact[0].size
    return (by_exact.copies(n_train, examples),
            by_canonical.copies(n_train, examples, leave_out=by_exact))
