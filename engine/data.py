"""Task data: read a task's files in either official layout, validate them, hash them.

Two layouts hold the same data and hash the same (`content_hash`):

- flat (the official harness): `<root>/<task_id>.csv`, columns `text,label,split`;
- hub (dataset `DeepPavlov/geneb-tasks`): `<root>/tasks/<task_id>/{train,test}.csv`, columns
  `text,label` (also accepted without the `tasks/` level: `<root>/<task_id>/train.csv`).

The rows are read as the official harness reads them:

- a flat file's rows are used when their split is exactly `train` or `test` (the harness compares
  `== "train"`: no stripping, no case change); rows of any other split, rows missing a required
  field and rows with more fields than the header are skipped and counted in one warning per
  file (`TaskData.warnings`), which names near misses such as `" train"` or `Train`;
- a sequence is any run of letters (A-Z, either case), kept as the file holds it (only
  whitespace around it dropped): what each encoder makes of lower case, IUPAC codes or U is its
  official extractor's rule (`store.vocab.encoder_kinds`); the number of sequences holding such
  letters is counted per task (`TaskData.letters`); what cannot be a sequence (empty, digits,
  punctuation, whitespace inside, non-ASCII) is refused.

Every problem a user can cause is one line naming the file, the line and the fix: a file's rows
are all checked, and their problems raised together (`store.csv_in.RowProblems`).

Tasks of the other kinds (`store.vocab.kinds`, declared by a suite's manifest) are read by
`engine.task_kinds` from flat files only: a `TaskData` whose splits hold each distinct sequence
once (what is embedded) and whose `targets` say which sequences each row uses and its label.
`engine.task_files` finds a folder's tasks and reads each with its kind's reader.
Files are UTF-8 (a leading BOM is accepted; `store.csv_in`); fields may be as long as genomic
sequences get.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from store.catalog import LetterCounts, TaskProfile
from store.csv_in import RowProblems, read_rows
from store.vocab.encoder_kinds import KINDS, UPPER, UPPER_U_AS_T
from store.vocab.errors import GenebError
from store.vocab.ids import ID_RULE, check_id, shown
from store.vocab.kinds import CLASSIFICATION, DRAWN_FROM_ALL, REAL_VALUED, TaskKind

SPLITS = ("train", "test")
_LETTERS = frozenset(string.ascii_letters)          # what a sequence may hold
_STANDARD = frozenset("ACGTN")                      # what official data holds
_IUPAC = frozenset("RYSWKMBDHVryswkmbdhv")          # ambiguity codes besides N
_U = frozenset("Uu")
_LOWER = frozenset(string.ascii_lowercase)
_NUCLEOTIDE = frozenset("ACGTNUacgtnu") | _IUPAC    # the rest are "other" letters


@dataclass(frozen=True)
class Split:
    sequences: tuple[str, ...]   # letters, as the file holds them
    labels: np.ndarray           # int64, one per sequence

    def __len__(self) -> int:
        return len(self.sequences)


@dataclass(frozen=True)
class KindTargets:
    """What the probes of a regression or variant task need besides the embeddings of its
    splits' distinct sequences: per split, each row's sequence(s), as indices into the split's
    `sequences` (`rows_*`: regression and tracks (n,), the row's sequence; variant (n, 2), its
    reference and alternative), and its label (`y_*`: regression float64 (n,), tracks float64
    (n, targets), multilabel int64 0/1 (n, labels), variant int64 0/1)."""

    kind: TaskKind
    rows_train: np.ndarray
    y_train: np.ndarray
    rows_test: np.ndarray
    y_test: np.ndarray


@dataclass(frozen=True)
class TaskData:
    task_id: str
    train: Split                  # what is embedded: a classification task's rows; a task of
    test: Split                   # another kind's distinct sequences (labels 0, `targets`)
    data_hash: str                # content hash of both splits (layout-independent)
    letters: LetterCounts = LetterCounts()   # sequences holding more than upper-case ACGTN
    warnings: tuple[str, ...] = ()
    kind: TaskKind = CLASSIFICATION
    targets: KindTargets | None = None       # a regression or variant task's rows and labels

    @property
    def n_classes(self) -> int:
        """Classes (a regression task: 0)."""
        if self.targets is not None:
            return 0 if self.kind in REAL_VALUED else int(
                np.unique(np.concatenate([self.targets.y_train, self.targets.y_test])).size)
        return int(np.unique(np.concatenate([self.train.labels, self.test.labels])).size)

    @property
    def shot_groups(self) -> np.ndarray:
        """Train rows of each group a few-shot draw takes k rows from: a class's, a variant
        label's; a regression, tracks or multilabel task's two halves (its draw takes 2k rows
        of all)."""
        if self.targets is None:
            return np.unique(self.train.labels, return_counts=True)[1]
        if self.kind in DRAWN_FROM_ALL:
            n = len(self.targets.y_train)
            return np.array([n - n // 2, n // 2])
        return np.unique(self.targets.y_train, return_counts=True)[1]

    @property
    def profile(self) -> TaskProfile:
        """Its class balance and sequence lengths (`store.catalog.TaskProfile`); rows of a
        task of another kind are its task file's rows (variants, regression rows), a
        regression task's class share 1."""
        lengths = np.array([len(s) for s in (*self.train.sequences, *self.test.sequences)])
        counts = self.shot_groups if self.kind not in DRAWN_FROM_ALL else np.array([1])
        rows = ((len(self.train), len(self.test)) if self.targets is None
                else (len(self.targets.y_train), len(self.targets.y_test)))
        return TaskProfile(*rows, self.n_classes,
                           round(float(counts.min() / counts.sum()), 4), int(lengths.min()),
                           float(np.median(lengths)), int(lengths.max()))


class Sample:
    """A uniform draw of `size` sequences over every sequence shown to it: each gets a random
    key (numpy's RandomState(seed)), the smallest keys are kept; the same files give the same
    draw. `of` names what they were drawn from (a suite), for messages."""

    def __init__(self, size: int, seed: int = 0, of: str = ""):
        self.size, self.rng, self.of = size, np.random.RandomState(seed), of
        self.keys = np.empty(0)
        self.sequences: list[str] = []
        self.origin = "sequences of the suite"   # how the dry run's calibration note names them

    def random(self, length: int) -> None:
        """`size` random sequences of `length` nucleotides (A, C, G, T equally likely): the
        draw where no task's data is here."""
        letters = np.array(list("ACGT"))[self.rng.randint(0, 4, (self.size, length))]
        self.sequences = ["".join(row) for row in letters]
        self.origin = f"random sequences of {length} nucleotides (no task's data is here)"

    def add(self, sequences) -> None:
        keys = self.rng.random_sample(len(sequences))
        new = np.argsort(keys, kind="stable")[:self.size]
        keys = np.concatenate([self.keys, keys[new]])
        pool = self.sequences + [sequences[i] for i in new]
        keep = np.argsort(keys, kind="stable")[:self.size]
        self.keys, self.sequences = keys[keep], [pool[i] for i in keep]


def read_sequence(raw: str | None, where: str, column: str = "text") -> str:
    if raw is None or raw.strip() == "":
        raise GenebError(f"{where}: empty sequence in column '{column}'; remove the row or give "
                         "the sequence")
    seq = raw.strip()
    if not _LETTERS.issuperset(seq):
        bad = sorted(set(seq) - _LETTERS)
        shown = ", ".join(repr(c) for c in bad[:5])
        raise GenebError(f"{where}: character(s) {shown} in column '{column}' cannot be part of a "
                         "sequence; a sequence is letters only (A-Z in either case: "
                         "nucleotides, IUPAC codes, U)")
    return seq


def letter_counts(sequences: Iterable[str]) -> LetterCounts:
    """How many sequences hold IUPAC codes, U, lower case or other letters (`LetterCounts`)."""
    iupac = u = lower = other = 0
    for seq in sequences:
        chars = set(seq)
        if chars <= _STANDARD:
            continue
        iupac += not chars.isdisjoint(_IUPAC)
        u += not chars.isdisjoint(_U)
        lower += not chars.isdisjoint(_LOWER)
        other += not chars <= _NUCLEOTIDE
    return LetterCounts(iupac, u, lower, other)


def as_read_by(kind: str, sequences: Sequence[str]) -> Sequence[str]:
    """`sequences` as the official extractor of encoder kind `kind` received and transformed them
    (its `store.vocab.encoder_kinds` rule); the same object where the rule changes nothing."""
    rule = KINDS[kind].sequences
    if rule == UPPER:
        return [s.upper() for s in sequences]
    if rule == UPPER_U_AS_T:
        return [s.upper().replace("U", "T") for s in sequences]
    return sequences                                    # AS_GIVEN


def class_label(raw: str | None, where: str) -> int:
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


def skip_reason(row: dict, columns: tuple[str, ...]) -> str | None:
    """Why a row cannot be used ('with extra fields', 'with missing fields'), or None."""
    if None in row:
        return "with extra fields"
    if any(row.get(c) is None for c in columns):
        return "with missing fields"
    return None


def near_miss(split: str) -> bool:
    """A split that is `train` or `test` but for case or surrounding whitespace."""
    return split not in SPLITS and split.strip().lower() in SPLITS


def skipped_warning(path: Path, skipped: dict[str, int],
                    near: Iterable[str] = ()) -> tuple[str, ...]:
    """One warning for all the rows of a file that were skipped, by reason; `near`: the
    near-miss splits among them (`near_miss`), named with what to do."""
    if not skipped:
        return ()
    order = sorted(skipped, key=lambda r: (not r.startswith("with split"), r))
    parts = ", ".join(f"{skipped[r]} {r}" for r in order)
    near = sorted(set(near))
    hint = ("; the official harness compares the split exactly: correct "
            f"{', '.join(repr(s) for s in near)} to use those rows" if near else "")
    return (f"{path}: skipped {sum(skipped.values())} row(s): {parts} (only rows with every "
            f"field and split 'train' or 'test' are used{hint})",)


def build_split(rows: list[tuple[str, str | None, str]], problems: list[str]) -> Split:
    """From (where, text, label) triples: validated sequences and integer labels; what is
    wrong with a row is added to `problems` (one line each) and the row left out."""
    seqs, labels = [], []
    for where, text, lab in rows:
        try:
            seq = read_sequence(text, where)
        except GenebError as exc:
            problems.append(str(exc))
            seq = None
        try:
            label = class_label(lab, where)
        except GenebError as exc:
            problems.append(str(exc))
            continue
        if seq is not None:
            seqs.append(seq)
            labels.append(label)
    return Split(tuple(seqs), np.array(labels, dtype=np.int64))


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
    return TaskData(task_id, train, test, content_hash(train, test),
                    letter_counts(train.sequences + test.sequences), warnings)


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
    near: set[str] = set()
    for line, row in read_rows(path, columns):
        reason = skip_reason(row, columns)
        if reason is None:
            split = row["split"]
            if split in by_split:
                by_split[split].append((f"{path}, line {line}", row["text"], row["label"]))
                continue
            reason = f"with split {split!r}"
            if near_miss(split):
                near.add(split)
        skipped[reason] = skipped.get(reason, 0) + 1
    problems: list[str] = []
    train, test = (build_split(by_split[name], problems) for name in SPLITS)
    if problems:
        raise RowProblems.of_file(path, problems)
    return assemble_task(task_id, train, test, str(path), skipped_warning(path, skipped, near))


def read_hub_task(folder: Path, task_id: str | None = None) -> TaskData:
    """One task from `<folder>/{train,test}.csv` (columns text,label)."""
    folder = Path(folder)
    task_id = task_id_of(folder.name if task_id is None else task_id, folder)
    columns = ("text", "label")
    splits: dict[str, Split] = {}
    warnings: tuple[str, ...] = ()
    found: list[tuple[Path, list[str]]] = []      # each file's row problems
    for name in SPLITS:
        path = folder / f"{name}.csv"
        if not path.is_file():
            raise GenebError(f"{path}: missing; a task in the hub layout needs both "
                             f"{folder}/train.csv and {folder}/test.csv (columns text,label)")
        rows, skipped, problems = [], {}, []
        for line, row in read_rows(path, columns):
            reason = skip_reason(row, columns)
            if reason is None:
                rows.append((f"{path}, line {line}", row["text"], row["label"]))
            else:
                skipped[reason] = skipped.get(reason, 0) + 1
        splits[name] = build_split(rows, problems)
        found.append((path, problems))
        warnings += skipped_warning(path, skipped)
    if any(problems for _, problems in found):
        raise RowProblems.merged(RowProblems.of_file(path, problems)
                                 for path, problems in found if problems)
    return assemble_task(task_id, splits["train"], splits["test"], str(folder), warnings)
