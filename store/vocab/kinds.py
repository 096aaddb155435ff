"""Task kinds: what a task's label is, how it is scored, and which result rows hold it.

- `classification`: a class label per sequence (geneb-v1's 100 tasks, geneb-mini), scored by
  MCC (primary), accuracy and macro-F1: the `mcc`, `acc`, `f1_macro` columns.
- `regression`: a real-valued target per sequence, scored by Pearson r (primary), Spearman rho
  and R^2: the `pearson`, `spearman`, `r2` columns.
- `variant`: a reference and an alternative sequence of one window with a 0/1 label, scored by
  AUROC (primary) and AUPRC: the `auroc`, `auprc` columns.
- `tracks`: several real-valued targets per sequence (one per tissue, cell type or track: the
  Long-Range Benchmark's bulk RNA expression), scored per target by Pearson r, Spearman rho and
  R^2, each averaged over the targets (the mean Pearson r across targets is the primary metric,
  as the Long-Range Benchmark and Enformer report it): the regression kind's columns
  `pearson`, `spearman`, `r2`, in rows whose `kind` says they are means over targets.
- `multilabel`: several 0/1 labels per sequence (one per chromatin mark: the Long-Range
  Benchmark's chromatin features), scored per label by AUROC (primary) and AUPRC, each
  averaged over the labels: the variant kind's columns `auroc`, `auprc`.

A suite declares its tasks' kinds in `manifest.csv`'s optional `kind` column (absent or empty:
classification; `store.manifest`). A result row records its kind in the `kind` column, NULL for
classification, so that a classification row keeps the columns and values it always had
(`stored_kind`); the metric columns of the other kinds are NULL on classification rows and
vice versa. Metrics of different kinds are never averaged together: every reader of the
classification tables reads `CLASSIFICATION_ROWS` only (the `results` view of `store.db`).
"""

from __future__ import annotations

from enum import StrEnum

from store.vocab.errors import GenebError


class TaskKind(StrEnum):
    """What a task's label is (see the module)."""

    CLASSIFICATION = "classification"
    REGRESSION = "regression"
    VARIANT = "variant"
    TRACKS = "tracks"
    MULTILABEL = "multilabel"


CLASSIFICATION = TaskKind.CLASSIFICATION
KIND_NAMES: tuple[str, ...] = tuple(TaskKind)

FILE_COLUMNS: dict[TaskKind, tuple[str, ...]] = {
    TaskKind.CLASSIFICATION: ("text", "label", "split"),
    TaskKind.REGRESSION: ("text", "label", "split"),
    TaskKind.VARIANT: ("ref", "alt", "label", "split"),
    TaskKind.TRACKS: ("text", "label", "split"),
    TaskKind.MULTILABEL: ("text", "label", "split"),
}
"""The columns of each kind's flat task file (`<task>.csv`); a tracks or multilabel task's
`label` holds its targets or labels separated by TARGET_SEPARATOR, as many in every row."""

TARGET_SEPARATOR = ";"
"""What separates a tracks task's targets (`0.5;1.2;-3e-2`) or a multilabel task's labels
(`0;1;1`) in its `label` field."""

SEVERAL_TARGETS: frozenset[TaskKind] = frozenset({TaskKind.TRACKS, TaskKind.MULTILABEL})
"""The kinds with several targets a row (probed by one ridge fit with an output per target,
scored per target and averaged; no per-row predictions stored)."""

DRAWN_FROM_ALL: frozenset[TaskKind] = frozenset(
    {TaskKind.REGRESSION, TaskKind.TRACKS, TaskKind.MULTILABEL})
"""The kinds whose k-shot draws take 2k rows of all (no classes to draw k of each; their
subsamples a uniform share of the rows)."""

REAL_VALUED: frozenset[TaskKind] = frozenset({TaskKind.REGRESSION, TaskKind.TRACKS})
"""The kinds whose labels are real numbers (read as float64; no classes)."""

COORDINATE_COLUMNS: tuple[str, ...] = ("chrom", "pos", "ref", "alt", "label", "split")
"""The columns of a variant task file that gives its variants by their coordinates over a
reference genome (`engine.genome`; `pos` 1-based, `ref` and `alt` the alleles); `split` may be
left out where the suite's manifest gives the task's held-out chromosomes (`test_chroms`)."""

INTERVAL_COLUMNS: tuple[str, ...] = ("chrom", "start", "end", "label", "split")
"""The columns of a classification or regression task file that gives each row's sequence as an
interval of a reference genome (`engine.genome`; `start` 0-based, `end` exclusive, as in BED);
`split` may be left out where the suite's manifest gives the task's held-out chromosomes."""

STRAND_COLUMN = "strand"
"""An interval file's optional column: `-` reads the reverse complement of the interval (or of
its window), `+` or empty the bases as the genome holds them."""

METRICS_OF: dict[TaskKind, tuple[str, ...]] = {
    TaskKind.CLASSIFICATION: ("mcc", "acc", "f1_macro"),
    TaskKind.REGRESSION: ("pearson", "spearman", "r2"),
    TaskKind.VARIANT: ("auroc", "auprc"),
    TaskKind.TRACKS: ("pearson", "spearman", "r2"),
    TaskKind.MULTILABEL: ("auroc", "auprc"),
}
"""Each kind's metric columns, its primary metric first (tracks: the regression columns,
multilabel: the variant ones, each the mean over the targets or labels)."""

METRIC_LABELS: dict[str, str] = {"mcc": "MCC", "acc": "accuracy", "f1_macro": "macro-F1",
                                 "pearson": "Pearson r", "spearman": "Spearman rho",
                                 "r2": "R^2", "auroc": "AUROC", "auprc": "AUPRC"}
"""Each metric column's name in prose (notes, headings)."""

PRIMARY: dict[TaskKind, str] = {kind: metrics[0] for kind, metrics in METRICS_OF.items()}

KIND_METRICS: tuple[str, ...] = tuple(dict.fromkeys(
    m for kind, metrics in METRICS_OF.items() if kind is not CLASSIFICATION for m in metrics))
"""The metric columns of the kinds beyond classification (NULL on classification rows)."""

KIND_COLUMNS: tuple[str, ...] = ("kind", *KIND_METRICS)
"""The result columns a classification row leaves NULL (its data file is written without them:
`store.tables.data_files.Table.sparse`)."""

CLASSIFICATION_ROWS = "kind IS NULL"
"""The SQL predicate of classification result rows (those the classification readers read)."""

ALL_METRICS: tuple[str, ...] = tuple(dict.fromkeys(m for metrics in METRICS_OF.values()
                                                   for m in metrics))
"""Every kind's metric columns (classification's first): what a reader may be asked for."""


EVERY_KIND = "every"
"""A reader of every kind's rows at once, each with its kind (`export --csv`), never averaging
them: the `results` view of a `store.db.Snapshot` of EVERY_KIND."""


def rows_of(kind: str) -> str:
    """The SQL predicate of the result rows of `kind` (what a reader of that kind reads: the
    `results` view of a `store.db.Snapshot` of that kind); every row for EVERY_KIND."""
    if kind == EVERY_KIND:
        return "true"
    kind = TaskKind(kind)
    return CLASSIFICATION_ROWS if kind is CLASSIFICATION else f"kind = '{kind}'"


def kinds_of_metric(metric: str) -> tuple[TaskKind, ...]:
    """The kinds whose metric column `metric` is (one of ALL_METRICS; pearson: regression's and
    tracks', auroc: variant's and multilabel's)."""
    return tuple(k for k, metrics in METRICS_OF.items() if metric in metrics)

ZERO_SHOT = "zeroshot"
"""The regime of a protocol that fits nothing (a variant's cosine distance): one per cell."""


def stored_kind(kind: str) -> str | None:
    """A result row's `kind` value: NULL for classification, the kind's name otherwise."""
    return None if TaskKind(kind) is CLASSIFICATION else str(kind)


def kind_named(text: str | None, where: str) -> TaskKind:
    """The kind a manifest's `kind` field names (empty: classification); a `GenebError` naming
    `where` and the kinds otherwise."""
    value = (text or "").strip()
    if not value:
        return CLASSIFICATION
    if value not in KIND_NAMES:
        raise GenebError(f"{where}: kind {value!r} is not one of {', '.join(KIND_NAMES)}")
    return TaskKind(value)
