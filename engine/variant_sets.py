"""Readers of public variant-effect sets in their own formats, each turning a file into the rows
of a variant task given by coordinates (`chrom,pos,ref,alt,label[,split]`: `engine.task_kinds`,
read over a reference genome by `engine.genome`). `geneb-engine data variants` writes them as a
folder suite (`suite_files`). What each format is (the facts, from the sets' own pages, are
cited in docs/guide/task-kinds.md):

- `traitgym` (TraitGym, `songlab/TraitGym` on the Hugging Face hub): a table per dataset,
  `{dataset}/test.parquet`, columns `chrom` (no `chr` prefix), `pos` (1-based), `ref`, `alt`,
  `label` (a boolean), and others (trait, consequence, match_group...), which are not read.
  There is no train split: the probe needs held-out chromosomes (`test_chroms`).
- `bend` (BEND's variant-effect files, `variant_effects_*.bed`): tab-separated with a header,
  columns `chromosome`, `start`, `end` (BED: `start` is 0-based, so `pos` = `start` + 1), `ref`,
  `alt`, `label`, `split`.
- `lrb` (the Genomics Long-Range Benchmark's variant tasks, `InstaDeepAI/genomics-long-range-
  benchmark`, e.g. `variant_effect_causal_eqtl/All_Tissues.csv`): its fields chromosome,
  position, label, the alleles and optionally a split, found by name, case-insensitively
  (`chrom` or `chromosome`, `pos` or `position`, `ref` or `ref_allele`, `alt` or `alt_allele`);
  positions 1-based. Other columns (tissue, distance to the nearest TSS) are not read.

Files are CSV (comma), TSV or BED (tab: by the name's `.tsv`, `.bed`, `.txt` ending) or Parquet
(`.parquet`). A file given as `hub:<path in the dataset>` is downloaded from the set's Hugging
Face dataset at its pinned revision (`HUB`; `hub_file`), with the rules of geneb-v1's
`data download` (`engine.encoders.hub.hub_problem`: asked only once one short request was
answered, else the file as the hub cache holds it, else one message saying what to download
where); BEND's files are on its own data share, not the hub.

A label is 0/1 or a boolean (true/false, as pandas or Parquet write it); a row's other problems
(an unknown chromosome, a reference allele the genome does not hold) are the task reader's, when
`fill` reads the suite over its genome. Every problem of a file is listed in one message.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from engine.encoders.hub import hub_problem
from store.csv_in import RowProblems
from store.vocab.errors import GenebError
from store.vocab.kinds import COORDINATE_COLUMNS, INTERVAL_COLUMNS, TaskKind


@dataclass(frozen=True)
class Format:
    """A set's file format: the names each of our columns may have there (None: absent), and
    the base of its positions."""

    chrom: tuple[str, ...]
    pos: tuple[str, ...]
    ref: tuple[str, ...]
    alt: tuple[str, ...]
    label: tuple[str, ...]
    split: tuple[str, ...] | None
    zero_based: bool = False


FORMATS: dict[str, Format] = {
    "traitgym": Format(("chrom",), ("pos",), ("ref",), ("alt",), ("label",), None),
    "bend": Format(("chromosome",), ("start",), ("ref",), ("alt",), ("label",), ("split",),
                   zero_based=True),
    "lrb": Format(("chrom", "chromosome"), ("pos", "position"), ("ref", "ref_allele"),
                  ("alt", "alt_allele"), ("label",), ("split",)),
}
"""Each format `data variants --format` reads (see the module)."""

HUB: dict[str, tuple[str, str]] = {
    "traitgym": ("songlab/TraitGym", "349e9985be8f9be04d13dab52dbc9676bfd0683f"),
    "lrb": ("InstaDeepAI/genomics-long-range-benchmark",
            "461969927800e16441b1362f60613ed4cb74f12f"),
}
"""The Hugging Face dataset and pinned revision of each format's set (`hub:` files)."""

HUB_PREFIX = "hub:"
BEND_DATA = "https://sid.erda.dk/cgi-sid/ls.py?share_id=eXAmVvbRSW"

BINARY_LABELS = {"1": "1", "0": "0", "true": "1", "false": "0", "1.0": "1", "0.0": "0"}
_TAB = (".tsv", ".bed", ".txt")


def read_table(path: Path) -> tuple[list[str], list[tuple[int, dict]]]:
    """(its column names, (line or row number, row) pairs) of a CSV/TSV/BED or Parquet file."""
    if not path.is_file():     # pyarrow reads a folder as a dataset, a missing file as junk
        raise GenebError(f"{path}: {'a folder, not a file' if path.is_dir() else 'no such file'}"
                         "; give a file of the format")
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq  # lazy: pyarrow

        try:
            table = pq.read_table(path)
        except (OSError, ValueError) as exc:
            raise GenebError(f"{path}: not a Parquet file that can be read ({exc})") from None
        return table.column_names, [(i + 1, row) for i, row in enumerate(table.to_pylist())]
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f, delimiter="\t" if path.suffix.lower() in _TAB else ",")
            rows = [(reader.line_num, row) for row in reader]
            return list(reader.fieldnames or []), rows
    except OSError as exc:
        raise GenebError(f"{path}: cannot read ({exc.strerror})") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise GenebError(f"{path}: not a UTF-8 CSV/TSV file that can be read ({exc})") from None


def hub_file(fmt: str, name: str, folder: str | None = None) -> Path:
    """The local copy of file `name` of format `fmt`'s dataset at its pinned revision (`HUB`),
    downloaded when the hub may be asked (see the module); one GenebError otherwise. `folder`:
    the dataset's folder the task is given as (its offline message downloads all of it)."""
    if fmt not in HUB:
        raise GenebError(f"{HUB_PREFIX}{name}: {fmt} files are not on the Hugging Face hub; "
                         f"download them from its data share ({BEND_DATA}) and give the file")
    from huggingface_hub import errors, hf_hub_download  # lazy: huggingface_hub

    repo, revision = HUB[fmt]
    problem = hub_problem()
    try:
        return Path(hf_hub_download(repo, name, repo_type="dataset", revision=revision,
                                    local_files_only=problem is not None))
    except (errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled) as exc:  # first:
        reason = problem or str(exc).splitlines()[0]          # an EntryNotFoundError too
        what = name if folder is None else f"--include '{folder}/*'"
        raise GenebError(f"{HUB_PREFIX}{name}: cannot download it from dataset {repo} at "
                         f"revision {revision} ({reason}); on a machine with internet run `hf "
                         f"download {repo} {what} --repo-type dataset --revision {revision} "
                         f"--local-dir <folder>` and give TASK=<folder>/{folder or name}"
                         ) from None
    except (errors.EntryNotFoundError, errors.RevisionNotFoundError,
            errors.RepositoryNotFoundError) as exc:
        raise GenebError(f"{HUB_PREFIX}{name}: no such file in dataset {repo} at revision "
                         f"{revision[:12]} ({type(exc).__name__}); e.g. "
                         "mendelian_traits_matched_9/test.parquet") from None
    except (OSError, errors.HfHubHTTPError) as exc:
        raise GenebError(f"{HUB_PREFIX}{name}: cannot download it from dataset {repo} at "
                         f"revision {revision} ({str(exc).splitlines()[0]}); run again (a "
                         "download resumes)") from None


def column_named(header: list[str], names: tuple[str, ...]) -> str | None:
    lower = {h.lower(): h for h in header}
    return next((lower[n] for n in names if n in lower), None)


def read_variants(path: Path | str, fmt: str, by_chrom: bool) -> list[tuple[str, ...]]:
    """The rows (`COORDINATE_COLUMNS`, without `split` where `by_chrom`: the held-out
    chromosomes make the splits) of a file of format `fmt` (`FORMATS`; `hub:<path>`: of its
    dataset, `hub_file`); one GenebError listing every problem."""
    spec = FORMATS[fmt]
    path = hub_file(fmt, str(path)[len(HUB_PREFIX):]) if str(path).startswith(HUB_PREFIX) \
        else Path(path)
    header, rows = read_table(path)
    wanted = {"chrom": spec.chrom, "pos": spec.pos, "ref": spec.ref, "alt": spec.alt,
              "label": spec.label}
    if not by_chrom:
        if spec.split is None:
            raise GenebError(f"{path}: a {fmt} table has no train/test split; give the "
                             "chromosomes to hold out as the test split with --test-chroms")
        wanted["split"] = spec.split
    found = {ours: column_named(header, names) for ours, names in wanted.items()}
    missing = [" or ".join(wanted[c]) for c, name in found.items() if name is None]
    if missing:
        raise GenebError(f"{path}: no column {', '.join(missing)} (found "
                         f"{', '.join(header) or 'no header'}); a {fmt} file has them")
    out, problems = [], []
    word = "row" if path.suffix.lower() == ".parquet" else "line"
    for at, row in rows:
        value = {ours: "" if row.get(name) is None else str(row[name]).strip()
                 for ours, name in found.items()}
        where = f"{path}, {word} {at}"
        label = BINARY_LABELS.get(value["label"].lower())
        if label is None:
            problems.append(f"{where}: label {value['label']!r} is not 0/1 or true/false")
        pos = value["pos"]
        if not pos.isdigit():
            problems.append(f"{where}: {found['pos']} {pos!r} is not a whole number")
        elif spec.zero_based:
            pos = str(int(pos) + 1)
        if label is not None and pos.isdigit():
            out.append((value["chrom"], pos, value["ref"], value["alt"], label,
                        *(() if by_chrom else (value["split"],))))
    if problems:
        raise RowProblems.of_file(path, problems)
    if not out:
        raise GenebError(f"{path}: no variants in it")
    return out


def suite_files(tasks: dict[str, list[tuple[str, ...]]], window: int | None,
                test_chroms: tuple[str, ...] | None, described: dict[str, str],
                kind: TaskKind = TaskKind.VARIANT,
                columns: tuple[str, ...] | None = None) -> dict[str, bytes]:
    """The files of a folder suite of tasks given by coordinates over a reference genome:
    `<task>.csv` each (`columns`, by default variants' `COORDINATE_COLUMNS`, another kind's
    `INTERVAL_COLUMNS`; without the last, `split`, where held-out chromosomes make it), and
    `manifest.csv` (the kind, the window width, the held-out chromosomes); `described`: each
    task's label in the manifest."""
    if columns is None:
        columns = COORDINATE_COLUMNS if kind is TaskKind.VARIANT else INTERVAL_COLUMNS
    columns = columns[:-1] if test_chroms else columns
    category = "Variant effect" if kind is TaskKind.VARIANT else "Long range"
    files = {f"{task}.csv": task_csv([columns, *rows]) for task, rows in tasks.items()}
    files["manifest.csv"] = task_csv([("task_id", "category", "label", "kind", "window",
                                       "test_chroms"),
                                      *((task, category, described[task], str(kind),
                                         "" if window is None else str(window),
                                         " ".join(test_chroms or ()))
                                        for task in tasks)])
    return files


def task_csv(rows) -> bytes:
    """The rows as a task file (values as read: a task file is data for geneb, not a sheet)."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()
