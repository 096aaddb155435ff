"""Task files of the kinds beyond classification (`store.vocab.kinds`), read with the rules of
`engine.data` (splits compared exactly, skipped rows counted in one warning, a sequence is
letters only, every row problem of a file raised together):

- regression: `<task>.csv`, columns `text,label,split`, the label a finite real number; the
  targets of each split must vary (a constant target has no Pearson r);
- tracks: `<task>.csv`, columns `text,label,split`, the label the row's targets, finite real
  numbers separated by `;` (`store.vocab.kinds.TARGET_SEPARATOR`), as many in every row of the
  file; each split's rows must not all have the same targets;
- multilabel: `<task>.csv`, columns `text,label,split`, the label the row's labels, each 0 or
  1, separated by `;`, as many in every row; in each split some label must take both values
  (AUROC needs both);
- variant: `<task>.csv`, columns `ref,alt,label,split`: the reference and the alternative
  sequence of one window (different sequences), the label 0 (neutral) or 1 (an effect); each
  split holds both labels (AUROC needs both, the probe fits both).

Each split's distinct sequences are embedded once (a reference window shared by several
variants, a sequence repeated in a regression file), in the order they first appear; the
`KindTargets` say which of them each row uses. The content hash covers the kind, then each row
(split, label, sequence or reference and alternative) in file order.

A variant file may instead give its variants by their coordinates, columns
`chrom,pos,ref,alt,label,split` (`store.vocab.kinds.COORDINATE_COLUMNS`), over the reference
genome the suite is given (`--reference`, `engine.genome`: 1-based positions, the reference
allele checked, windows of the width the suite's manifest declares, padded with N off a
chromosome end) with `Coordinates`; where the manifest names the task's held-out chromosomes
(`test_chroms`), they make its test split (the file's split column is then not read, and may
be left out). Each row's problems (an unknown chromosome, a position that is no 1-based
position or lies beyond its chromosome, a reference allele the genome does not hold) are
listed with the others. Such a task's content hash also covers the genome's identity
(`engine.genome.Genome.identity`), the window width and each variant's coordinates.

A file of a kind with one sequence a row (all but variant) may instead give each row's sequence
as an interval of the same reference genome, columns `chrom,start,end,label,split`
(`store.vocab.kinds.INTERVAL_COLUMNS`; `start` 0-based, `end` exclusive, as in BED), with
`read_intervals`: the sequence is the genome's bases [start, end), or, where the manifest gives
the task a `window`, that many bases centred on the interval (the Long-Range Benchmark's
`sequence_length`), padded with N off a chromosome end and counted in one warning; an optional
`strand` column's `-` takes the reverse complement of those bases (the Long-Range Benchmark's
genes on the minus strand), `+` or empty the bases as they are. An unknown chromosome, a start
or end that is no whole number, start >= end, an interval beyond its chromosome's end: one line
each, naming the file, line and interval, all in one message. `test_chroms` makes the split as
for variants. The content hash covers the genome's identity, the window, the held-out
chromosomes, each row's interval and the bases read. The sequences are held in memory as text
(`TaskData`), one byte a base: 1,000 intervals of 100 kb are about 100 MB.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine.data import (
    SPLITS,
    KindTargets,
    Split,
    TaskData,
    assemble_task,
    class_label,
    flat_task_name,
    letter_counts,
    near_miss,
    read_sequence,
    skip_reason,
    skipped_warning,
    task_id_of,
)
from engine.genome import Genome
from store.audit.sequences import reverse_complement
from store.csv_in import RowProblems, header_of, read_rows
from store.vocab.errors import GenebError
from store.vocab.kinds import (
    CLASSIFICATION,
    COORDINATE_COLUMNS,
    FILE_COLUMNS,
    INTERVAL_COLUMNS,
    REAL_VALUED,
    STRAND_COLUMN,
    TARGET_SEPARATOR,
    TaskKind,
)

# (the row's sequences, its label (a tracks row's: its targets), its coordinates:
# `chrom:pos:ref:alt`, or "" in a file of sequences)
_Row = tuple[tuple[str, ...], float | int | tuple[float, ...], str]


@dataclass(frozen=True)
class Coordinates:
    """What a suite gives its variant tasks read by coordinates: the reference genome (opened
    on first use; None: no `--reference`), and each task's window width and held-out
    chromosomes from its manifest (`store.manifest.variant_settings`)."""

    genome: Callable[[], Genome] | None = None
    window: int | None = None
    test_chroms: frozenset[str] | None = None


def _regression_label(raw: str | None, where: str) -> float:
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise GenebError(f"{where}: label {raw!r} is not a number; a regression task's label "
                         "is a real number (e.g. 0.73, -1.2e-3)") from None
    if not math.isfinite(value):
        raise GenebError(f"{where}: label {raw!r} is not a finite number; give a real number")
    return value


def _tracks_label(raw: str | None, where: str) -> tuple[float, ...]:
    fields = str(raw).split(TARGET_SEPARATOR)
    values = []
    for i, field in enumerate(fields, 1):
        try:
            value = float(field.strip())
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise GenebError(f"{where}: column label, target {i} of {len(fields)}: {field!r} is "
                             "not a finite number; a tracks task's label is its targets, real "
                             f"numbers separated by {TARGET_SEPARATOR!r} (e.g. 0.5;1.2;-3e-2)")
        values.append(value)
    return tuple(values)


def _multilabel_label(raw: str | None, where: str) -> tuple[int, ...]:
    fields = str(raw).split(TARGET_SEPARATOR)
    for i, field in enumerate(fields, 1):
        if field.strip() not in ("0", "1"):
            raise GenebError(f"{where}: column label, label {i} of {len(fields)}: {field!r} is "
                             "not 0 or 1; a multilabel task's label is its labels, each 0 or "
                             f"1, separated by {TARGET_SEPARATOR!r} (e.g. 0;1;1)")
    return tuple(int(f) for f in fields)


def _variant_label(raw: str | None, where: str) -> int:
    text = str(raw).strip()
    if text not in ("0", "1"):
        raise GenebError(f"{where}: label {raw!r} is not 0 or 1; a variant's label is 1 (it "
                         "has an effect) or 0 (neutral)")
    return int(text)


_LABEL_OF: dict[TaskKind, Callable[[str | None, str], float | int | tuple[float, ...]]] = {
    CLASSIFICATION: class_label, TaskKind.REGRESSION: _regression_label,
    TaskKind.VARIANT: _variant_label, TaskKind.TRACKS: _tracks_label,
    TaskKind.MULTILABEL: _multilabel_label}
"""How each kind's label field is read (a GenebError naming `where` when it is not one)."""


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
        label = _LABEL_OF[kind](row["label"], where)
    except GenebError as exc:
        problems.append(str(exc))
        return None
    if len(seqs) != len(columns):
        return None
    if kind is TaskKind.VARIANT and seqs[0] == seqs[1]:
        problems.append(f"{where}: ref and alt are the same sequence; a variant changes its "
                        "window")
        return None
    return tuple(seqs), label, ""


def _chrom(genome: Genome, given: str, where: str, problems: list[str]) -> str | None:
    """The genome's name of chromosome `given`; None, with a problem added, where it has none."""
    chrom = genome.chrom_named(given)
    if chrom is None:
        names = list(genome.lengths)
        some = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        problems.append(f"{where}: chromosome {given!r} is not in the reference genome "
                        f"{genome.path} (its sequences: {some})")
    return chrom


def _fields(genome: Genome, row: dict, where: str, problems: list[str], reads):
    """(the chromosome as given, the genome's name of it, each of `reads`' values) of a row
    read over a genome; None, with every problem added to `problems`, where any fails."""
    before = len(problems)
    given = (row["chrom"] or "").strip()
    chrom = _chrom(genome, given, where, problems)
    values = []
    for read in reads:
        try:
            values.append(read())
        except GenebError as exc:
            problems.append(str(exc))
    return None if len(problems) > before else (given, chrom, values)


def _position(raw: str | None, where: str) -> int:
    text = str(raw).strip()
    if not text.isdigit() or int(text) < 1:
        raise GenebError(f"{where}: pos {raw!r} is not a 1-based position (a whole number from "
                         "1, as in VCF)")
    return int(text)


def _coordinate_row(genome: Genome, width: int, row: dict, where: str,
                    problems: list[str]) -> tuple[_Row, bool] | None:
    """A variant given by coordinates: (its row, whether its window was padded); its problems
    added to `problems` (None: unusable)."""
    fields = _fields(genome, row, where, problems, (
        lambda: _position(row["pos"], where), lambda: read_sequence(row["ref"], where, "ref"),
        lambda: read_sequence(row["alt"], where, "alt"),
        lambda: _variant_label(row["label"], where)))
    if fields is None:
        return None
    given, chrom, (pos, ref, alt, label) = fields
    ref, alt = ref.upper(), alt.upper()
    n = genome.lengths[chrom]
    if pos - 1 + len(ref) > n:
        problems.append(f"{where}: {given}:{pos} lies beyond the end of {chrom} ({n:,} bases); "
                        "positions are 1-based")
        return None
    found = genome.bases(chrom, pos - 1, pos - 1 + len(ref))
    if found != ref:
        problems.append(f"{where}: ref {ref!r} does not match the reference genome at "
                        f"{given}:{pos}: expected {ref!r}, found {found!r} (positions are "
                        "1-based, as in VCF; is the genome the build the file was made on?)")
        return None
    if ref == alt:
        problems.append(f"{where}: ref and alt are the same allele; a variant changes its "
                        "window")
        return None
    w = genome.window(chrom, pos, ref, alt, width)
    return ((w.ref, w.alt), label, f"{chrom}:{pos}:{ref}:{alt}"), w.padded


def _split(kind: TaskKind, rows: list[_Row]) -> tuple[Split, np.ndarray, np.ndarray]:
    """A split's distinct sequences (labels 0), each row's indices into them, its labels."""
    index: dict[str, int] = {}
    used = [[index.setdefault(s, len(index)) for s in seqs] for seqs, _, _ in rows]
    at = np.array(used, dtype=np.int64).reshape(len(rows), -1)
    labels = np.array([label for _, label, _ in rows],
                      dtype=np.float64 if kind in REAL_VALUED else np.int64)
    return (Split(tuple(index), np.zeros(len(index), dtype=np.int64)),
            at if kind is TaskKind.VARIANT else at[:, 0], labels)


def _check(kind: TaskKind, origin: str, name: str, labels: np.ndarray) -> None:
    """The task-level rules of one split's labels."""
    if labels.size == 0:
        raise GenebError(f"{origin}: the {name} split has no rows; a task needs both a train "
                         "and a test split")
    if kind is TaskKind.REGRESSION and np.unique(labels).size < 2:
        raise GenebError(f"{origin}: every {name} label is {labels[0]:g}; a regression task's "
                         "targets must vary in both splits (Pearson r and the ridge fit need "
                         "it)")
    if kind is TaskKind.TRACKS and np.unique(labels, axis=0).shape[0] < 2:
        raise GenebError(f"{origin}: every {name} row has the same targets; a tracks task's "
                         "targets must vary in both splits (Pearson r and the ridge fit need "
                         "it)")
    if kind is TaskKind.MULTILABEL and not any(np.unique(c).size > 1 for c in labels.T):
        raise GenebError(f"{origin}: no label of the {name} split takes both values 0 and 1; a "
                         "multilabel task needs a label with both in each split (AUROC and "
                         "the fit need it)")
    if kind is TaskKind.VARIANT and np.unique(labels).size < 2:
        raise GenebError(f"{origin}: the {name} split holds label {int(labels[0])} only; a "
                         "variant task needs variants of label 0 and of label 1 in both splits "
                         "(AUROC and the probe need both)")


def _hash(kind: TaskKind, by_split: dict[str, list[_Row]], source: str = "") -> str:
    """The content hash; `source`: a line naming what the windows were read from (a genome's
    identity and the window width; empty for a file of sequences, whose hash stays as it
    was)."""
    h = hashlib.sha256(f"#kind {kind}\n{source}".encode())
    for name in SPLITS:
        h.update(f"#{name}\n".encode())
        for seqs, label, at in by_split[name]:
            h.update(f"{label!r}\t{at + chr(9) if at else ''}{chr(9).join(seqs)}\n".encode())
    return h.hexdigest()[:16]


def by_intervals(path: Path, kind: TaskKind) -> bool:
    """Whether a task file gives its sequences as genome intervals (a file of a kind with one
    sequence a row, with `chrom`, `start` and `end` columns)."""
    return kind is not TaskKind.VARIANT and {"chrom", "start", "end"} <= set(header_of(path))


def by_coordinates(path: Path, kind: TaskKind) -> bool:
    """Whether a task file gives variants by their coordinates (a variant file with `chrom`
    and `pos` columns)."""
    return kind is TaskKind.VARIANT and {"chrom", "pos"} <= set(header_of(path))


def read_kind_csv(path: Path, task_id: str | None, kind: TaskKind,
                  coordinates: Coordinates | None = None) -> TaskData:
    """One task of a kind beyond classification from its flat file (see the module); a variant file
    with `chrom` and `pos` columns is read by coordinates (`coordinates`: what the suite
    gives it)."""
    path = Path(path)
    task_id = task_id_of(flat_task_name(path) if task_id is None else task_id, path)
    if by_coordinates(path, kind):
        return _read_by_coordinates(path, task_id, coordinates or Coordinates())
    if by_intervals(path, kind):
        return read_intervals(path, task_id, kind, coordinates or Coordinates())
    columns = FILE_COLUMNS[kind]
    rows = _Rows()
    for line, row in read_rows(path, columns,
                               hint=f"a {kind} task file needs the columns {','.join(columns)}"):
        reason = skip_reason(row, columns)
        if reason is None and row["split"] in rows.by_split:
            where = f"{path}, line {line}"
            if (parsed := _row(kind, row, where, rows.problems)) is not None:
                rows.add(row["split"], parsed, where)
            continue
        rows.skip(reason, row["split"])
    return rows.task(path, task_id, kind)


class _Rows:
    """A task file's rows as they are read: by split, the rows skipped, the problems."""

    def __init__(self):
        self.by_split: dict[str, list[_Row]] = {s: [] for s in SPLITS}
        self.skipped: dict[str, int] = {}
        self.near: set[str] = set()
        self.problems: list[str] = []
        self.targets: int | None = None   # a tracks file's targets a row (its first row's)

    def add(self, split: str, row: _Row, where: str) -> None:
        """Keep a row of `split`; a tracks row whose targets are not as many as the file's
        first row's is a problem instead."""
        label = row[1]
        if isinstance(label, tuple):
            if self.targets is None:
                self.targets = len(label)
            elif len(label) != self.targets:
                self.problems.append(
                    f"{where}: column label holds {len(label)} values, the file's first row "
                    f"{self.targets}; every row gives the same targets, in the same order")
                return
        self.by_split[split].append(row)

    def skip(self, reason: str | None, split: str | None) -> None:
        if reason is None:
            reason = f"with split {split!r}"
            if near_miss(split):
                self.near.add(split)
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def task(self, path: Path, task_id: str, kind: TaskKind, source: str = "",
             warnings: tuple[str, ...] = ()) -> TaskData:
        if self.problems:
            raise RowProblems.of_file(path, self.problems)
        by_split = self.by_split
        for name in SPLITS:
            _check(kind, str(path), name, np.array([label for _, label, _ in by_split[name]]))
        (train, rows_train, y_train), (test, rows_test, y_test) = (
            _split(kind, by_split[name]) for name in SPLITS)
        return TaskData(task_id, train, test, _hash(kind, by_split, source),
                        letter_counts(train.sequences + test.sequences),
                        skipped_warning(path, self.skipped, self.near) + warnings, kind,
                        KindTargets(kind, rows_train, y_train, rows_test, y_test))


def _read_by_coordinates(path: Path, task_id: str, given: Coordinates) -> TaskData:
    """A variant task given by coordinates over the suite's reference genome (see the
    module)."""
    if given.genome is None:
        raise GenebError(f"{path}: its variants are given by chrom,pos; give the reference "
                         "genome they are on with --reference genome.fa[.gz]")
    if given.window is None:
        raise GenebError(f"{path}: its variants are given by chrom,pos; give the window width "
                         "in bases in the suite's manifest.csv (column window, e.g. 512)")
    genome, width = given.genome(), given.window
    rows, padded = _Rows(), 0
    for line, row, split in _genome_rows(path, genome, given, COORDINATE_COLUMNS, rows,
                                         "a variant task file given by coordinates"):
        parsed = _coordinate_row(genome, width, row, f"{path}, line {line}", rows.problems)
        if parsed is not None:
            rows.by_split[split].append(parsed[0])
            padded += parsed[1]
    warnings = ((f"{path}: {padded} variant window(s) run off a chromosome end, padded with N "
                 f"to {width} bases",) if padded else ())
    return rows.task(path, task_id, TaskKind.VARIANT, _source(genome, given), warnings)


def _held_out(genome: Genome, given: Coordinates) -> set[str] | None:
    """The genome's names of the held-out chromosomes (None: the file's split column)."""
    if given.test_chroms is None:
        return None
    return {genome.chrom_named(c) or c for c in given.test_chroms}


def _source(genome: Genome, given: Coordinates) -> str:
    """The hash's line on what a task was read from: the genome, the window, the held-out
    chromosomes."""
    held_out = _held_out(genome, given)
    return (f"#genome {genome.identity} window {given.window}"
            + (f" test_chroms {' '.join(sorted(held_out))}" if held_out is not None else "")
            + "\n")


def _genome_rows(path: Path, genome: Genome, given: Coordinates, columns: tuple[str, ...],
                 rows: _Rows, what: str):
    """(line, row, split) of each usable row of a task file read over a genome, its split
    from the file or, with held-out chromosomes, from its chromosome; the rows skipped are
    counted in `rows`."""
    held_out = _held_out(genome, given)
    columns = columns[:-1] if held_out is not None else columns
    for line, row in read_rows(path, columns, hint=f"{what} needs the columns "
                               f"{','.join(columns)}"):
        reason = skip_reason(row, columns)
        split = (("test" if genome.chrom_named((row["chrom"] or "").strip()) in held_out
                  else "train") if held_out is not None else row["split"]) \
            if reason is None else None
        if split in rows.by_split:
            yield line, row, split
        else:
            rows.skip(reason, split)


def _bound(raw: str | None, column: str, where: str) -> int:
    text = str(raw).strip()
    if not text.isdigit():
        raise GenebError(f"{where}: {column} {raw!r} is not a whole number from 0 (intervals "
                         "are 0-based, end exclusive, as in BED)")
    return int(text)


def _interval_row(genome: Genome, kind: TaskKind, window: int | None, row: dict, where: str,
                  problems: list[str]) -> tuple[_Row, bool] | None:
    """A row given by an interval: (its row, whether its window was padded); its problems
    added to `problems` (None: unusable)."""
    fields = _fields(genome, row, where, problems, (
        lambda: _bound(row["start"], "start", where), lambda: _bound(row["end"], "end", where),
        lambda: _LABEL_OF[kind](row["label"], where)))
    if fields is None:
        return None
    given, chrom, (start, end, label) = fields
    at = f"{given}:{start}-{end}"
    strand = (row.get(STRAND_COLUMN) or "").strip()
    if strand not in ("", "+", "-"):
        problems.append(f"{where}: column {STRAND_COLUMN}: {strand!r} is not +, - or empty")
        return None
    n = genome.lengths[chrom]
    if start >= end:
        problems.append(f"{where}: interval {at} is empty (start >= end); intervals are "
                        "0-based, end exclusive, as in BED")
        return None
    if end > n:
        problems.append(f"{where}: interval {at} runs beyond the end of {chrom} ({n:,} bases); "
                        "is the genome the build the file was made on?")
        return None
    if window is not None:
        start = start + (end - start) // 2 - window // 2
        end = start + window
    padded = start < 0 or end > n
    bases = genome.bases(chrom, start, end)
    if strand == "-":
        return ((reverse_complement(bases),), label, f"{chrom}:{start}-{end}:-"), padded
    return ((bases,), label, f"{chrom}:{start}-{end}"), padded


def read_intervals(path: Path, task_id: str, kind: TaskKind, given: Coordinates) -> TaskData:
    """A task of a kind with one sequence a row whose rows are genome intervals (see the
    module)."""
    if given.genome is None:
        raise GenebError(f"{path}: its sequences are given by chrom,start,end; give the "
                         "reference genome they are on with --reference genome.fa[.gz]")
    genome, rows, padded = given.genome(), _Rows(), 0
    for line, row, split in _genome_rows(path, genome, given, INTERVAL_COLUMNS, rows,
                                         f"a {kind} task file given by intervals"):
        where = f"{path}, line {line}"
        parsed = _interval_row(genome, kind, given.window, row, where, rows.problems)
        if parsed is not None:
            rows.add(split, parsed[0], where)
            padded += parsed[1]
    warnings = ((f"{path}: {padded} window(s) of {given.window} bases run off a chromosome "
                 "end, padded with N",) if padded else ())
    source = _source(genome, given)
    if kind is not CLASSIFICATION:
        return rows.task(path, task_id, kind, source, warnings)
    if rows.problems:
        raise RowProblems.of_file(path, rows.problems)
    train, test = (Split(tuple(seqs[0] for seqs, _, _ in rows.by_split[name]),
                         np.array([label for _, label, _ in rows.by_split[name]],
                                  dtype=np.int64)) for name in SPLITS)
    task = assemble_task(task_id, train, test, str(path),
                         skipped_warning(path, rows.skipped, rows.near) + warnings)
    return replace(task, data_hash=_hash(kind, rows.by_split, source))
