"""How large a task is when its data is not at hand (`fill --dry-run` of a suite not downloaded),
each number with where it comes from, best first:

1. recorded: the profile `fill` or `data verify` recorded in the store's task catalog when they
   read the data (`store.catalog.TaskProfile`: rows per split, classes, median length);
2. geneb-v1's test rows, derived: every official full-regime accuracy is (correct predictions)
   / (test rows), so the test rows are the least common multiple of the denominators of the 41
   published accuracies of the task (each the exact fraction its float64 value is, denominator
   at most MAX_TEST_ROWS; `official_test_rows`);
3. assumed, where neither tells: ASSUMED_TRAIN_PER_TEST training rows per test row,
   ASSUMED_CLASSES classes of equal size, ASSUMED_LENGTH nucleotides per sequence.

A task none of them sizes (not recorded, not a geneb-v1 task) is refused in one line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from store.catalog import TaskProfile
from store.official.data import score_columns
from store.vocab.errors import GenebError

ASSUMED_TRAIN_PER_TEST = 4      # an 80/20 split
ASSUMED_CLASSES = 2
ASSUMED_LENGTH = 400            # nucleotides per sequence
MAX_TEST_ROWS = 1_000_000       # the largest denominator an official accuracy is read with

RECORDED = ("rows per split, classes and median length as the store recorded them from the "
            "data (fill, data verify)")
DERIVED = (f"test rows from the official full-regime accuracies (their common denominator), "
           f"train rows assumed {ASSUMED_TRAIN_PER_TEST} x test, {ASSUMED_CLASSES} classes and "
           f"{ASSUMED_LENGTH} nucleotides per sequence assumed")


@dataclass(frozen=True)
class TaskSize:
    n_train: int
    n_test: int
    n_classes: int
    length: float           # nucleotides per sequence (the median)
    basis: str              # RECORDED or DERIVED


@cache
def official_test_rows() -> dict[str, int]:
    """geneb-v1 task -> its test rows, derived from the shipped official accuracies (see the
    module)."""
    scores = score_columns()
    rows: dict[str, int] = {}
    for regime, task, acc in zip(scores["regime"], scores["task"], scores["Acc"], strict=True):
        if regime == "full" and acc is not None:
            rows[task] = math.lcm(rows.get(task, 1),
                                  Fraction(acc).limit_denominator(MAX_TEST_ROWS).denominator)
    return rows


def task_sizes(task_ids: Iterable[str], recorded: Mapping[str, TaskProfile]
               ) -> dict[str, TaskSize]:
    """Each task's size (see the module); `recorded`: the store's profiles by task."""
    out: dict[str, TaskSize] = {}
    unsized = []
    for task in task_ids:
        if (p := recorded.get(task)) is not None:
            out[task] = TaskSize(p.n_train, p.n_test, p.n_classes, p.length_median, RECORDED)
        elif (n_test := official_test_rows().get(task)) is not None:
            out[task] = TaskSize(ASSUMED_TRAIN_PER_TEST * n_test, n_test, ASSUMED_CLASSES,
                                 ASSUMED_LENGTH, DERIVED)
        else:
            unsized.append(task)
    if unsized:
        raise GenebError(f"task(s) {', '.join(unsized)}: no data here and no recorded size "
                         "to estimate them from; give the folder of their task files (a "
                         "fill or `geneb-engine data verify` records the sizes)")
    return out


def basis_lines(sizes: Mapping[str, TaskSize]) -> list[str]:
    """Where the sizes come from, one line per basis with its task count."""
    counts: dict[str, int] = {}
    for size in sizes.values():
        counts[size.basis] = counts.get(size.basis, 0) + 1
    return [f"{n} task(s) without data here: {basis}" for basis, n in counts.items()]
