"""Readers of public long-range sets in their own formats, each turning a file into the rows of
a classification or regression task given by genome intervals (`chrom,start,end,label[,split]`,
0-based, end exclusive, as in BED: `engine.task_kinds.read_intervals`, read over a reference
genome by `engine.genome`). `geneb-engine data long-range` writes them as a folder suite
(`engine.variant_sets.suite_files`). What each format is (the facts, from the sets' own pages
and code, are cited in docs/guide/long-range.md):

- `lrb` (the Genomics Long-Range Benchmark, `InstaDeepAI/genomics-long-range-benchmark` on the
  Hugging Face hub, e.g. `regulatory_elements/promoter_dataset.csv`): one row per element, its
  fields found by name, case-insensitively: `chrom` or `chromosome`, `start`, `end` or `stop`,
  `label`, `split`. The set lets its user choose the sequence length (`sequence_length`):
  `--window`, centred on the element.
- `lrb` with `--kind tracks`: the Long-Range Benchmark's bulk RNA expression task, given as its
  folder (`bulk_rna_expression/`, or `hub:bulk_rna_expression`) holding `gene_coordinates.csv`
  (one gene a row: `chrom`, `CAGE_representative_TSS` 1-based, `strand`, `split`) and
  `rna_expression_values.csv` (a header of tissue names, then one row of values per gene, in
  the genes' order: the set's loader pairs them by row). Each gene becomes the 1-base interval
  of its TSS with its strand (a `-` strand's window is read reverse-complemented, as the
  loader does) and its values as the row's targets; `--window` (the set's `sequence_length`,
  100,000 by default there) is centred on the TSS as the loader centres it.
- `lrb` with `--kind multilabel`: the Long-Range Benchmark's chromatin features file
  (`chromatin_features/histones_and_dnase.csv`): a row per 200-base bin, `CHROM`, `POS`
  (1-based, the bin's centre), `split`, and its labels as a list (`[0, 1, 0]`) in the column
  `--labels` names (`HISTONES`: the histone marks task, `DNASE`: DNA accessibility). Each row
  becomes the 1-base interval at `POS` with its labels; `--window` is centred there as the
  loader centres it.
- `dnalongbench` (DNALongBench's enhancer-target gene task): tab-separated with a header,
  columns `gene_chrom gene_start gene_end region_chrom region_start region_end gene_strand
  target subset` (others not read). As its loader does, a row's sequence spans the gene's
  transcription start site (`gene_start` on the + strand, `gene_end - 1` on the -) with
  `TSS_FLANK` bases each side and the candidate region with `REGION_FLANK`; a row whose gene and
  region are on different chromosomes, whose strand is neither + nor -, or whose gap exceeds
  `MAX_GAP` is left out, and counted. Not done here as it does: masking the other enhancers
  between the two with N (its blacklist file), the reverse complement where the gene lies
  downstream, the padding to 450,000 bases. `target` positive/negative is label 1/0;
  `subset` is the split (its `valid` rows are skipped by the task reader, with one warning).

A file given as `hub:<path>` is downloaded as `data variants` does (`engine.variant_sets.
hub_file`); DNALongBench's files are not on the hub. Every problem of a file is listed in one
message; chromosomes and bounds are checked when `fill` reads the suite over its genome.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

from engine.variant_sets import BINARY_LABELS, HUB_PREFIX, column_named, hub_file, read_table
from store.csv_in import RowProblems, not_utf8_message
from store.vocab.errors import GenebError
from store.vocab.kinds import INTERVAL_COLUMNS, STRAND_COLUMN, TARGET_SEPARATOR, TaskKind

FORMATS = ("dnalongbench", "lrb")
"""Each format `data long-range --format` reads (see the module)."""

DNALONGBENCH_DATA = "https://github.com/ericli0419/DNALongBench"
TSS_FLANK = 3000
REGION_FLANK = 500
MAX_GAP = 450_000
"""DNALongBench's enhancer-target gene defaults (its loader's `parse_EPI` arguments)."""

_LRB = {"chrom": ("chrom", "chromosome"), "start": ("start",), "end": ("end", "stop"),
        "label": ("label",), "split": ("split",)}
_ETGP = {name: (name,) for name in ("gene_chrom", "gene_start", "gene_end", "region_chrom",
                                    "region_start", "region_end", "gene_strand", "target",
                                    "subset")}
_TARGETS = {"positive": "1", "negative": "0"}


EXPRESSION_FILES = ("gene_coordinates.csv", "rna_expression_values.csv")
"""The files of the Long-Range Benchmark's bulk RNA expression folder: the genes, their
values."""
EXPRESSION_HUB = "bulk_rna_expression"
_GENES = {"chrom": ("chrom",), "tss": ("cage_representative_tss",), "strand": ("strand",),
          "split": ("split",)}
CHROMATIN_LABELS = ("histones", "dnase")
"""The label columns of the chromatin features file (`--labels`): one task each."""
CHROMATIN_BIN = 200
"""The bases around POS the chromatin features' labels describe (the set's loader refuses a
shorter `sequence_length`)."""
TRACK_COLUMNS = (*INTERVAL_COLUMNS[:3], STRAND_COLUMN, *INTERVAL_COLUMNS[3:])
"""The columns of a tracks task written from the bulk RNA expression folder."""


@dataclass
class Read:
    """A file's task rows (`columns`, without the last, `split`, where held-out chromosomes make
    it) and the rows left out, by reason."""

    rows: list[tuple[str, ...]] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)
    columns: tuple[str, ...] = INTERVAL_COLUMNS


def _label(raw: str, kind: TaskKind) -> str | None:
    """The label as the task file holds it, or None where it is not one of `kind`'s."""
    if kind is TaskKind.REGRESSION:
        try:
            return raw if math.isfinite(float(raw)) else None
        except ValueError:
            return None
    return BINARY_LABELS.get(raw.lower(), raw if raw.isdigit() else None)


def _whole(value: dict, name: str, where: str, problems: list[str]) -> int | None:
    if value[name].isdigit():
        return int(value[name])
    problems.append(f"{where}: {name} {value[name]!r} is not a whole number from 0")
    return None


def _lrb_row(value, kind, where, problems, out: Read, by_chrom: bool) -> None:
    label = _label(value["label"], kind)
    if label is None:
        problems.append(f"{where}: label {value['label']!r} is not "
                        + ("a finite number" if kind is TaskKind.REGRESSION
                           else "a class (0, 1, ... or true/false)"))
    start, end = (_whole(value, n, where, problems) for n in ("start", "end"))
    if label is not None and start is not None and end is not None:
        out.rows.append((value["chrom"], str(start), str(end), label,
                         *(() if by_chrom else (value["split"],))))


def _etgp_row(value, kind, where, problems, out: Read, by_chrom: bool) -> None:
    label = _TARGETS.get(value["target"].lower())
    if label is None:
        problems.append(f"{where}: target {value['target']!r} is not positive or negative")
    bounds = [_whole(value, n, where, problems)
              for n in ("gene_start", "gene_end", "region_start", "region_end")]
    if label is None or None in bounds:
        return
    gene_start, gene_end, region_start, region_end = bounds
    strand = value["gene_strand"]
    reason = ("gene and region on different chromosomes"
              if value["gene_chrom"] != value["region_chrom"] else
              f"gene strand {strand!r}, not + or -" if strand not in ("+", "-") else None)
    if reason is None:
        tss = gene_start if strand == "+" else gene_end - 1
        lo, hi = tss - TSS_FLANK, tss + 1 + TSS_FLANK
        r_lo, r_hi = region_start - REGION_FLANK, region_end + REGION_FLANK
        if max(lo, r_lo) - min(hi, r_hi) > MAX_GAP:
            reason = f"gene and region more than {MAX_GAP:,} bases apart"
    if reason is not None:
        out.left_out[reason] = out.left_out.get(reason, 0) + 1
        return
    out.rows.append((value["region_chrom"], str(max(0, min(lo, r_lo))), str(max(hi, r_hi)),
                     label, *(() if by_chrom else (value["subset"],))))


_READERS = {"lrb": (_LRB, "split", _lrb_row), "dnalongbench": (_ETGP, "subset", _etgp_row)}


def read_long_range(path: Path | str, fmt: str, kind: TaskKind, by_chrom: bool,
                    labels: str | None = None) -> Read:
    """The task rows of a file of format `fmt` (`FORMATS`; `hub:<path>`: of the Long-Range
    Benchmark's dataset); one GenebError listing every problem. `labels`: the chromatin
    features' label column (`CHROMATIN_LABELS`; `--kind multilabel`)."""
    if fmt == "lrb" and kind is TaskKind.TRACKS:
        return read_expression(path, by_chrom)
    if kind is TaskKind.TRACKS:
        raise GenebError(f"{path}: --kind tracks reads the Long-Range Benchmark's bulk RNA "
                         "expression folder (--format lrb); DNALongBench's track tasks are not "
                         "read (docs/guide/long-range-sets.md says why)")
    if kind is TaskKind.MULTILABEL and fmt != "lrb":
        raise GenebError(f"{path}: --kind multilabel reads the Long-Range Benchmark's chromatin "
                         "features file (--format lrb)")
    if str(path).startswith(HUB_PREFIX):
        if fmt != "lrb":
            raise GenebError(f"{path}: {fmt} files are not on the Hugging Face hub; download "
                             f"them as its README says ({DNALONGBENCH_DATA}) and give the file")
        path = hub_file("lrb", str(path)[len(HUB_PREFIX):])
    path = Path(path)
    if fmt == "dnalongbench" and kind is TaskKind.REGRESSION:
        raise GenebError(f"{path}: DNALongBench's enhancer-target gene task is a classification "
                         "task (target positive/negative); leave out --kind regression")
    if kind is TaskKind.MULTILABEL:
        return _read_chromatin(path, by_chrom, labels)
    columns, split, reader = _READERS[fmt]
    wanted = {ours: names for ours, names in columns.items() if not (by_chrom and ours == split)}
    header, rows = read_table(path)
    found = {ours: column_named(header, names) for ours, names in wanted.items()}
    missing = [" or ".join(wanted[c]) for c, name in found.items() if name is None]
    if missing:
        raise GenebError(f"{path}: no column {', '.join(missing)} (found "
                         f"{', '.join(header) or 'no header'}); a {fmt} file has them")
    out, problems = Read(), []
    word = "row" if path.suffix.lower() == ".parquet" else "line"
    for at, row in rows:
        value = {ours: "" if row.get(name) is None else str(row[name]).strip()
                 for ours, name in found.items()}
        reader(value, kind, f"{path}, {word} {at}", problems, out, by_chrom)
    if problems:
        raise RowProblems.of_file(path, problems)
    if not out.rows:
        raise GenebError(f"{path}: no rows to use in it" + (
            f" ({', '.join(f'{n} {r}' for r, n in out.left_out.items())})"
            if out.left_out else ""))
    return out


def _read_chromatin(path: Path, by_chrom: bool, labels: str | None) -> Read:
    """The chromatin features file's rows (see the module), its labels those of column
    `labels`."""
    if labels not in CHROMATIN_LABELS:
        raise GenebError(f"{path}: --kind multilabel: name the label column with --labels "
                         f"{' or --labels '.join(CHROMATIN_LABELS)} (the histone marks or the "
                         "DNA accessibility task)")
    wanted = {"chrom": ("chrom",), "pos": ("pos",), "labels": (labels,), "split": ("split",)}
    header, rows = read_table(path)
    found = {ours: column_named(header, names) for ours, names in wanted.items()
             if not (by_chrom and ours == "split")}
    missing = [wanted[c][0].upper() for c, name in found.items() if name is None]
    if missing:
        raise GenebError(f"{path}: no column {', '.join(missing)} (found "
                         f"{', '.join(header) or 'no header'}); the Long-Range Benchmark's "
                         "histones_and_dnase.csv has them")
    out, problems = Read(), []
    for line, row in rows:
        value = {ours: "" if row.get(name) is None else str(row[name]).strip()
                 for ours, name in found.items()}
        where = f"{path}, line {line}"
        pos = value["pos"]
        if not pos.isdigit() or int(pos) < 1:
            problems.append(f"{where}: column POS: {pos!r} is not a 1-based position")
            continue
        given = value["labels"]
        fields = given.strip().removeprefix("[").removesuffix("]").split(",")
        if not given.startswith("[") or any(f.strip() not in ("0", "1") for f in fields):
            problems.append(f"{where}: column {found['labels']}: {given[:40]!r} is not a list "
                            "of 0s and 1s (e.g. [0, 1, 0])")
            continue
        out.rows.append((value["chrom"], str(int(pos) - 1), pos,
                         TARGET_SEPARATOR.join(f.strip() for f in fields),
                         *(() if by_chrom else (value["split"],))))
    if problems:
        raise RowProblems.of_file(path, problems)
    if not out.rows:
        raise GenebError(f"{path}: no rows in it")
    return out


def _expression_files(path: Path | str) -> tuple[Path, Path]:
    """The genes' and the values' files of a bulk RNA expression folder (`hub:<folder>`: the
    two files of the Long-Range Benchmark's dataset at its pinned revision)."""
    if str(path).startswith(HUB_PREFIX):
        folder = str(path)[len(HUB_PREFIX):].strip("/") or EXPRESSION_HUB
        genes, values = (hub_file("lrb", f"{folder}/{name}", folder) for name in EXPRESSION_FILES)
        return genes, values
    folder = Path(path)
    if not folder.is_dir():
        raise GenebError(f"{folder}: not a folder; --kind tracks reads the Long-Range "
                         "Benchmark's bulk RNA expression folder, which holds "
                         f"{' and '.join(EXPRESSION_FILES)}")
    missing = [name for name in EXPRESSION_FILES if not (folder / name).is_file()]
    if missing:
        raise GenebError(f"{folder}: no {' or '.join(missing)} in it; the bulk RNA expression "
                         f"folder holds {' and '.join(EXPRESSION_FILES)}")
    genes, values = (folder / name for name in EXPRESSION_FILES)
    return genes, values


def _value_rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(the tissue names, (line, values) of each row) of the values' file."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            header = next(reader, [])
            return header, [(reader.line_num, row) for row in reader]
    except UnicodeDecodeError:
        raise GenebError(not_utf8_message(path)) from None
    except (OSError, csv.Error) as exc:
        raise GenebError(f"{path}: cannot read it as CSV ({exc})") from None


def _targets(header: list[str], values: list[str], where: str,
             problems: list[str]) -> str | None:
    """A gene's values as a tracks label (as given, joined by TARGET_SEPARATOR); None, with a
    problem naming each bad column, where one is not a finite number."""
    if len(values) != len(header):
        problems.append(f"{where}: {len(values)} values, the header names {len(header)} "
                        "tissues")
        return None
    bad = []
    for name, value in zip(header, values, strict=True):
        try:
            ok = math.isfinite(float(value))
        except ValueError:
            ok = False
        if not ok:
            bad.append(f"column {name!r}: {value!r}")
    if bad:
        problems.append(f"{where}: {'; '.join(bad[:3])}"
                        + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
                        + " not a finite number")
        return None
    return TARGET_SEPARATOR.join(v.strip() for v in values)


def read_expression(path: Path | str, by_chrom: bool) -> Read:
    """The Long-Range Benchmark's bulk RNA expression folder as tracks rows (`TRACK_COLUMNS`,
    see the module); one GenebError listing every problem of both files."""
    genes_path, values_path = _expression_files(path)
    header, genes = read_table(genes_path)
    wanted = {ours: names for ours, names in _GENES.items() if not (by_chrom and ours == "split")}
    found = {ours: column_named(header, names) for ours, names in wanted.items()}
    missing = [wanted[c][0] for c, name in found.items() if name is None]
    if missing:
        raise GenebError(f"{genes_path}: no column {', '.join(missing)} (found "
                         f"{', '.join(header) or 'no header'}); the Long-Range Benchmark's "
                         "gene_coordinates.csv has them")
    tissues, values = _value_rows(values_path)
    if len(values) != len(genes):
        raise GenebError(f"{values_path}: {len(values)} rows of values for the {len(genes)} "
                         f"genes of {genes_path}; the set pairs them by row, so both files "
                         "have a row per gene in the same order")
    out = Read(columns=TRACK_COLUMNS)
    problems: list[str] = []
    for (line, gene), (value_line, row) in zip(genes, values, strict=True):
        value = {ours: "" if gene.get(name) is None else str(gene[name]).strip()
                 for ours, name in found.items()}
        where = f"{genes_path}, line {line}"
        label = _targets(tissues, row, f"{values_path}, line {value_line}", problems)
        tss = value["tss"]
        if not tss.isdigit() or int(tss) < 1:
            problems.append(f"{where}: column CAGE_representative_TSS: {tss!r} is not a 1-based "
                            "position (a whole number from 1)")
            continue
        if value["strand"] not in ("+", "-"):
            problems.append(f"{where}: column strand: {value['strand']!r} is not + or -")
            continue
        if label is not None:
            out.rows.append((value["chrom"], str(int(tss) - 1), tss, value["strand"], label,
                             *(() if by_chrom else (value["split"],))))
    if problems:
        raise RowProblems.of_file(Path(path), problems)
    if not out.rows:
        raise GenebError(f"{genes_path}: no genes in it")
    return out
