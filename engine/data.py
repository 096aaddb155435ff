"""Task data: read the official flat CSV layout (`text,label,split`), validate it, hash it.

Every problem a user can cause raises one `GenebError` naming the file, the line and the fix.
Files are UTF-8 (a leading BOM is accepted); fields may be as long as genomic sequences get.
Rows whose split is neither `train` nor `test` (as the official harness skips them), rows missing
a required field and rows with more fields than the header are skipped and counted in one
warning per file (`TaskData.warnings`).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from store.errors import GenebError
from store.ids import ID_RULE, check_id, shown

ALPHABET = frozenset("ACGTN")
SPLITS = ("train", "test")
_ALLOWED = frozenset("ACGTNacgtn")
# Characters one CSV field may hold (the csv module's default, 131072, is below the length of
# many genomic sequences).
FIELD_LIMIT = 1 << 30


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


def task_id_of(name: str, path: Path) -> str:
    """A task id taken from a file or folder name, checked by the one id rule."""
    return check_id("task", name, shown(str(path)),
                    fix=f"rename it (the task id is the file name without .csv, or the task "
                        f"folder's name); {ID_RULE}")


def flat_task_name(path: Path) -> str:
    """The task id a flat file's name gives: the name without `.csv` (`.csv` alone gives '')."""
    return path.name[:-4] if path.name.endswith(".csv") else path.stem


def invalid_utf8(path: Path) -> tuple[int, int, int] | None:
    """(absolute byte offset, byte, line) of the first byte that is not UTF-8, or None."""
    base = lines = 0            # offset of data[0] in the file, newlines before it
    data = b""
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            data += block
            try:
                _, used = codecs.utf_8_decode(data, "strict", not block)
            except UnicodeDecodeError as exc:
                return base + exc.start, data[exc.start], lines + data.count(b"\n", 0,
                                                                               exc.start) + 1
            if not block:
                return None
            lines += data.count(b"\n", 0, used)
            base += used
            data = data[used:]


def not_utf8_message(path: Path) -> str:
    try:
        found = invalid_utf8(path)
    except OSError:
        found = None
    where = (f": byte 0x{found[1]:02x} at byte offset {found[0]} (line {found[2]}) is invalid"
             if found else "")
    return f"{path}: not UTF-8 text{where}; save the file as UTF-8"


def read_rows(path: Path, columns: tuple[str, ...],
              hint: str | None = None) -> Iterable[tuple[int, dict[str, str]]]:
    """(line number, row) pairs of a CSV file, after checking its header has `columns`.

    UTF-8 with or without a BOM; a short row has None for its missing fields, a long one its
    extra fields under the key None (see `skip_reason`). `hint`: what the missing-columns
    message says the file needs (default: a task file's columns)."""
    path = Path(path)
    if csv.field_size_limit() < FIELD_LIMIT:
        csv.field_size_limit(FIELD_LIMIT)
    try:
        f = open(path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise GenebError(f"{path}: cannot read ({exc.strerror})") from None
    with f:
        reader = csv.DictReader(f)
        try:
            header = reader.fieldnames or []
            missing = [c for c in columns if c not in header]
            if missing:
                raise GenebError(f"{path}: missing column(s) {', '.join(missing)} (found "
                                 f"{', '.join(header) or 'no header'}); "
                                 + (hint or f"a task file needs the columns {','.join(columns)}"))
            for row in reader:
                yield reader.line_num, row
        except UnicodeDecodeError:
            raise GenebError(not_utf8_message(path)) from None
        except csv.Error as exc:
            raise GenebError(f"{path}, line {reader.reader.line_num}: not a valid CSV row ({exc}); "
                             "fix that line") from None
        except OSError as exc:
            raise GenebError(f"{path}: cannot read ({exc.strerror or exc})") from None


def skip_reason(row: dict, columns: tuple[str, ...]) -> str | None:
    """Why a row cannot be used ('with extra fields', 'with missing fields'), or None."""
    if None in row:
        return "with extra fields"
    if any(row.get(c) is None for c in columns):
        return "with missing fields"
    return None


def skipped_warning(path: Path, skipped: dict[str, int]) -> tuple[str, ...]:
    """One warning for all the rows of a file that were skipped, by reason."""
    if not skipped:
        return ()
    order = sorted(skipped, key=lambda r: (not r.startswith("with split"), r))
    parts = ", ".join(f"{skipped[r]} {r}" for r in order)
    return (f"{path}: skipped {sum(skipped.values())} row(s): {parts} (only rows with every "
            "field and split 'train' or 'test' are used)",)


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
    columns = ("text", "label", "split")
    task_id = task_id_of(flat_task_name(path) if task_id is None else task_id, path)
    by_split: dict[str, list[tuple[str, str | None, str]]] = {s: [] for s in SPLITS}
    skipped: dict[str, int] = {}
    for line, row in read_rows(path, columns):
        reason = skip_reason(row, columns)
        if reason is None:
            split = row["split"].strip()
            if split in by_split:
                by_split[split].append((f"{path}, line {line}", row["text"], row["label"]))
                continue
            reason = f"with split {split!r}"
        skipped[reason] = skipped.get(reason, 0) + 1
    return assemble_task(task_id, build_split(by_split["train"]), build_split(by_split["test"]),
                         str(path), skipped_warning(path, skipped))
