"""Task data: read the official flat CSV layout (`text,label,split`), validate it, hash it.

Every problem a user can cause raises one `GenebError` naming the file, the line and the fix.
Split values other than `train` and `test` are skipped with a warning, as the official harness
skips them.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from store.errors import GenebError

ALPHABET = frozenset("ACGTN")
SPLITS = ("train", "test")
_ALLOWED = frozenset("ACGTNacgtn")


@dataclass(frozen=True)
class Split:
    sequences: tuple[str, ...]   # upper case, ACGTN only
    labels: np.ndarray           # int64, one per sequence

    def __len__(self) -> int:
        return len(self.sequences)


@dataclass(frozen=True)
class TaskData:
    task_id: str
    train: Split
    test: Split
    data_hash: str                # content hash of both splits (layout-independent)
    warnings: tuple[str, ...] = ()

    @property
    def n_classes(self) -> int:
        return int(np.unique(np.concatenate([self.train.labels, self.test.labels])).size)


def _sequence(raw: str | None, where: str) -> str:
    if raw is None or raw.strip() == "":
        raise GenebError(f"{where}: empty sequence in column 'text'; remove the row or give the "
                         "sequence")
    seq = raw.strip()
    if not _ALLOWED.issuperset(seq):
        bad = sorted(set(seq) - _ALLOWED)
        shown = ", ".join(repr(c) for c in bad[:5])
        raise GenebError(f"{where}: character(s) {shown} outside ACGTN in column 'text'; "
                         "sequences may hold only A, C, G, T, N (lower case is accepted)")
    return seq.upper()


def _label(raw: str | None, where: str) -> int:
    try:
        return int(str(raw).strip())
    except ValueError:
        raise GenebError(f"{where}: label {raw!r} is not an integer; class labels must be "
                         "integers (0, 1, ...)") from None


def read_rows(path: Path, columns: tuple[str, ...]) -> Iterable[tuple[int, dict[str, str]]]:
    """(line number, row) pairs of a CSV file, after checking its header has `columns`."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise GenebError(f"{path}: cannot read ({exc.strerror})") from None
    with f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        missing = [c for c in columns if c not in header]
        if missing:
            raise GenebError(f"{path}: missing column(s) {', '.join(missing)} (found "
                             f"{', '.join(header) or 'no header'}); a task file needs the "
                             f"columns {','.join(columns)}")
        for row in reader:
            yield reader.line_num, row


def build_split(rows: list[tuple[str, str | None, str]]) -> Split:
    """From (where, text, label) triples: validated sequences and integer labels."""
    seqs = tuple(_sequence(text, where) for where, text, _ in rows)
    labels = np.array([_label(lab, where) for where, _, lab in rows], dtype=np.int64)
    return Split(seqs, labels)


def assemble_task(task_id: str, train: Split, test: Split, origin: str,
                  warnings: tuple[str, ...] = ()) -> TaskData:
    """Check the task-level rules and hash the content."""
    for name, split in (("train", train), ("test", test)):
        if len(split) == 0:
            raise GenebError(f"{origin}: the {name} split has no rows; a task needs both a "
                             "train and a test split")
    test_classes = np.unique(test.labels)
    if test_classes.size < 2:
        raise GenebError(f"{origin}: the test split holds a single class "
                         f"(label {int(test_classes[0])}); MCC needs at least two classes")
    if np.unique(train.labels).size < 2:
        raise GenebError(f"{origin}: the train split holds a single class; a probe needs at "
                         "least two classes to fit")
    return TaskData(task_id, train, test, content_hash(train, test), warnings)


def content_hash(train: Split, test: Split) -> str:
    """sha256 over (split, label, sequence) in file order: equal for the flat and hub layouts."""
    h = hashlib.sha256()
    for name, split in (("train", train), ("test", test)):
        h.update(f"#{name}\n".encode())
        for seq, lab in zip(split.sequences, split.labels.tolist(), strict=True):
            h.update(f"{lab}\t{seq}\n".encode())
    return h.hexdigest()[:16]


def read_flat_csv(path: Path, task_id: str | None = None) -> TaskData:
    """One task from a flat `<task_id>.csv` with columns text,label,split."""
    path = Path(path)
    task_id = task_id or path.stem
    by_split: dict[str, list[tuple[str, str | None, str]]] = {s: [] for s in SPLITS}
    skipped: dict[str, int] = {}
    for line, row in read_rows(path, ("text", "label", "split")):
        split = (row["split"] or "").strip()
        if split in by_split:
            by_split[split].append((f"{path}, line {line}", row["text"], row["label"]))
        else:
            skipped[split] = skipped.get(split, 0) + 1
    warnings = tuple(
        f"{path}: skipped {n} row(s) with split {name!r} (only 'train' and 'test' are used)"
        for name, n in sorted(skipped.items())
    )
    return assemble_task(task_id, build_split(by_split["train"]), build_split(by_split["test"]),
                         str(path), warnings)
