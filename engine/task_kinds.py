"""Task files of the kinds beyond classification (`store.vocab.kinds`), read with the rules of
`engine.data` (splits compared exactly, skipped rows counted in one warning, a sequence is
letters only, every row problem of a file raised together):

- regression: `<task>.csv`, columns `text,label,split`, the label a finite real number; the
  targets of each split must vary (a constant target has no Pearson r);
- variant: `<task>.csv`, columns `ref,alt,label,split`: the reference and the alternative
  sequence of one window (different sequences), the label 0 (neutral) or 1 (an effect); each
  split holds both labels (AUROC needs both, the probe fits both).

Each split's distinct sequences are embedded once (a reference window shared by several
variants, a sequence repeated in a regression file), in the order they first appear; the
`KindTargets` say which of them each row uses. The content hash covers the kind, then each row
(split, label, sequence or reference and alternative) in file order.

Variants given as `chrom,pos,ref,alt` over a reference genome, and the public sets' own formats
(TraitGym, BEND, the Genomics Long-Range Benchmark), are not read yet.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np

from engine.data import (
    SPLITS,
    KindTargets,
    Split,
    TaskData,
    flat_task_name,
    letter_counts,
    near_miss,
    read_sequence,
    skip_reason,
    skipped_warning,
    task_id_of,
)
from store.csv_in import RowProblems, read_rows
from store.vocab.errors import GenebError
from store.vocab.kinds import FILE_COLUMNS, TaskKind

_Row = tuple[tuple[str, ...], float | int]   # (the row's sequences, its label)


def _regression_label(raw: str | None, where: str) -> float:
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise GenebError(f"{where}: label {raw!r} is not a number; a regression task's label "
                         "is a real number (e.g. 0.73, -1.2e-3)") from None
    if not math.isfinite(value):
        raise GenebError(f"{where}: label {raw!r} is not a finite number; give a real number")
    return value


def _variant_label(raw: str | None, where: str) -> int:
    text = str(raw).strip()
    if text not in ("0", "1"):
        raise GenebError(f"{where}: label {raw!r} is not 0 or 1; a variant's label is 1 (it "
                         "has an effect) or 0 (neutral)")
    return int(text)


def _row(kind: TaskKind, row: dict, where: str, problems: list[str]) -> _Row | None:
    """The row's sequences and label; its problems added to `problems` (None: unusable)."""
    columns = FILE_COLUMNS[kind][:-2]
    seqs: list[str] = []
    for column in columns:
        try:
            seqs.append(read_sequence(row[column], where, column))
        except GenebError as exc:
            problems.append(str(exc))
    try:
        label = (_regression_label if kind is TaskKind.REGRESSION else _variant_label)(
            row["label"], where)
    except GenebError as exc:
        problems.append(str(exc))
        return None
    if len(seqs) != len(columns):
        return None
    if kind is TaskKind.VARIANT and seqs[0] == seqs[1]:
        problems.append(f"{where}: ref and alt are the same sequence; a variant changes its "
                        "window")
        return None
    return tuple(seqs), label


def _split(kind: TaskKind, rows: list[_Row]) -> tuple[Split, np.ndarray, np.ndarray]:
    """A split's distinct sequences (labels 0), each row's indices into them, its labels."""
    index: dict[str, int] = {}
    used = [[index.setdefault(s, len(index)) for s in seqs] for seqs, _ in rows]
    at = np.array(used, dtype=np.int64).reshape(len(rows), -1)
    labels = np.array([label for _, label in rows],
                      dtype=np.float64 if kind is TaskKind.REGRESSION else np.int64)
    return (Split(tuple(index), np.zeros(len(index), dtype=np.int64)),
            at[:, 0] if kind is TaskKind.REGRESSION else at, labels)


def _check(kind: TaskKind, origin: str, name: str, labels: np.ndarray) -> None:
    """The task-level rules of one split's labels."""
    if labels.size == 0:
        raise GenebError(f"{origin}: the {name} split has no rows; a task needs both a train "
                         "and a test split")
    if kind is TaskKind.REGRESSION and np.unique(labels).size < 2:
        raise GenebError(f"{origin}: every {name} label is {labels[0]:g}; a regression task's "
                         "targets must vary in both splits (Pearson r and the ridge fit need "
                         "it)")
    if kind is TaskKind.VARIANT and np.unique(labels).size < 2:
        raise GenebError(f"{origin}: the {name} split holds label {int(labels[0])} only; a "
                         "variant task needs variants of label 0 and of label 1 in both splits "
                         "(AUROC and the probe need both)")


def _hash(kind: TaskKind, by_split: dict[str, list[_Row]]) -> str:
    h = hashlib.sha256(f"#kind {kind}\n".encode())
    for name in SPLITS:
        h.update(f"#{name}\n".encode())
        for seqs, label in by_split[name]:
            h.update(f"{label!r}\t{chr(9).join(seqs)}\n".encode())
    return h.hexdigest()[:16]


def read_kind_csv(path: Path, task_id: str | None, kind: TaskKind) -> TaskData:
    """One regression or variant task from its flat file (see the module)."""
    path = Path(path)
    columns = FILE_COLUMNS[kind]
    task_id = task_id_of(flat_task_name(path) if task_id is None else task_id, path)
    by_split: dict[str, list[_Row]] = {s: [] for s in SPLITS}
    skipped: dict[str, int] = {}
    near: set[str] = set()
    problems: list[str] = []
    for line, row in read_rows(path, columns,
                               hint=f"a {kind} task file needs the columns {','.join(columns)}"):
        reason = skip_reason(row, columns)
        if reason is None:
            split = row["split"]
            if split in by_split:
                if (parsed := _row(kind, row, f"{path}, line {line}", problems)) is not None:
                    by_split[split].append(parsed)
                continue
            reason = f"with split {split!r}"
            if near_miss(split):
                near.add(split)
        skipped[reason] = skipped.get(reason, 0) + 1
    if problems:
        raise RowProblems.of_file(path, problems)
    for name in SPLITS:
        _check(kind, str(path), name, np.array([label for _, label in by_split[name]]))
    (train, rows_train, y_train), (test, rows_test, y_test) = (
        _split(kind, by_split[name]) for name in SPLITS)
    return TaskData(task_id, train, test, _hash(kind, by_split),
                    letter_counts(train.sequences + test.sequences),
                    skipped_warning(path, skipped, near), kind,
                    KindTargets(kind, rows_train, y_train, rows_test, y_test))
