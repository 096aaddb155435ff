"""The main table as plain data: its columns, its rows (values and both ranks per score cell), the
text each cell shows and the CSV export. No polars and no store reads here: the first-view cache
(`geneb_tui.core.first_view`) rebuilds a `TableView` from JSON before the store stack is imported,
and `geneb_tui.core.query.build_view` builds one from a snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from geneb_tui.core.filters import METRIC_LABELS, Filters
from geneb_tui.core.intervals import CellInterval, Intervals
from store.catalog import params_text
from store.domains import IN, OUT, UNKNOWN
from store.vocab.protocol import GENEB_V1

META_COLUMNS: tuple[tuple[str, str], ...] = (
    ("display", "Model"),
    ("source", "Source"),
    ("params", "Params"),
)
TRAILING_META: tuple[tuple[str, str], ...] = (
    ("architecture", "Arch"),
    ("tokenization", "Tok"),
    ("pretraining_data", "Pretraining"),
    ("licence", "Licence"),      # weights and code (`store.licences.licence_text`)
)

RANK_SCOPES: tuple[str, ...] = ("store", "shown")
TIE_MARK = "≈"   # before the rank of an entry in the leader's tie group (rank intervals shown)
# After a task cell's rank: its (model, task) pair's domain (`store.domains.DOMAINS`)
DOMAIN_MARKS: dict[str, str] = {IN: " in", OUT: "out", UNKNOWN: "  ?"}


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str  # "meta" or "score"


@dataclass
class Row:
    model: str
    source: str
    meta: dict
    values: dict[str, float | None] = field(default_factory=dict)
    ranks: dict[str, int | None] = field(default_factory=dict)     # among the rows shown
    overall: dict[str, int | None] = field(default_factory=dict)   # among all in the store
    # per task column: the pair's domain ("in", "out", "unknown": `store.domains.domain`)
    domains: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.model}\u241f{self.source}"



@dataclass
class TableView:
    """The main table as shown: columns, rows (in display order), values and ranks."""

    filters: Filters
    columns: tuple[Column, ...]
    rows: list[Row]
    sort_key: str
    descending: bool
    n_rows_unfiltered: int         # entries of this suite in the store (no model filter)
    rank_scope: str = "store"      # the rank a cell shows: "store" (all entries) or "shown"
    protocol: str = GENEB_V1.name
    protocol_hash: str = GENEB_V1.hash
    # The rank intervals and tie groups (`geneb_tui.core.significance.table_intervals`) over
    # the entries the ranks are taken among; None until the app's worker has computed them.
    intervals: Intervals | None = None
    flagged_left_out: int = 0      # tasks the selection leaves out as flagged (`Filters`)

    @property
    def is_filtered(self) -> bool:
        """Do the rows shown leave entries of the store out (a model or source filter)?"""
        return len(self.rows) < self.n_rows_unfiltered

    def rank(self, row: Row, col: Column) -> int | None:
        return (row.overall if self.rank_scope == "store" else row.ranks).get(col.key)

    def has_interval(self, col: Column) -> bool:
        """Does this score column carry rank intervals (macro, micro and the categories once
        computed; a task column never: one task has no task bootstrap)?"""
        return (self.intervals is not None and col.kind == "score"
                and not col.key.startswith("task:")
                and score_field(col) in self.intervals.scopes)

    def interval(self, row: Row, col: Column) -> CellInterval | None:
        if not self.has_interval(col):
            return None
        return self.intervals.get(score_field(col), row.model, row.source)

    @property
    def score_columns(self) -> list[Column]:
        return [c for c in self.columns if c.kind == "score"]

    def cell(self, row: Row, col: Column):
        """The raw value of one cell (a float/None for scores, plain data for meta)."""
        if col.kind == "score":
            return row.values.get(col.key)
        if col.key == "source":
            return row.source
        return row.meta.get(col.key)

    def cell_text(self, row: Row, col: Column) -> str:
        v = self.cell(row, col)
        if col.kind == "score":
            if v is None:
                return "—"
            rank = "#" + str(self.rank(row, col))
            iv = self.interval(row, col)
            if iv is None:
                flag = row.domains.get(col.key)        # task columns: the pair's domain
                return f"{v:.3f} {rank:>3}" + (f" {DOMAIN_MARKS[flag]}" if flag else "")
            # `0.573  #4 [2-7]`; `≈#1`: in the leader's tie group. Right-justified cells end at
            # the interval, so the padding goes before the rank.
            pad = " " * (self.intervals.width - len(iv.label))
            return f"{v:.3f} {pad}{(TIE_MARK if iv.tied else '') + rank:>4} {iv.label}"
        if col.key == "params":
            return params_text(v)
        return "" if v is None else str(v)

    # -- CSV export: the table as shown, plus what identifies it -----------------------------
    SELECTION_HEADER: ClassVar[tuple[str, ...]] = (
        "Suite", "Category", "Regime", "Metric", "Protocol", "Protocol hash", "Filters")

    def export_header(self) -> list[str]:
        """Each column as shown; `Model ID` after `Model`; after each score its rank among the
        rows shown and its rank among all entries in the store; once the intervals are
        computed, after those the score's 95 % interval and the rank interval (over the entries
        the intervals were drawn among: `store` or `shown`); then the selection (suite,
        category, regime, metric, protocol, the active model filters) on every line."""
        header = []
        for c in self.columns:
            header.append(c.label)
            if c.key == "display":
                header.append("Model ID")
            if c.kind == "score":
                header += [f"{c.label} rank (shown)", f"{c.label} rank (store)"]
            if self.has_interval(c):
                level = f"{round(self.intervals.level * 100)}%"
                scope = self.rank_scope
                header += [f"{c.label} {level} low", f"{c.label} {level} high",
                           f"{c.label} rank {level} low ({scope})",
                           f"{c.label} rank {level} high ({scope})"]
        return header + list(self.SELECTION_HEADER)

    def selection_cells(self) -> list:
        f = self.filters
        return [f.suite, f.category or "all", f.regime, METRIC_LABELS.get(f.metric, f.metric),
                self.protocol, self.protocol_hash, f.describe_model_filters() or "none"]

    def export_rows(self) -> list[list]:
        out = []
        tail = self.selection_cells()
        for r in self.rows:
            line = []
            for c in self.columns:
                v = self.cell(r, c)
                line.append(v)
                if c.key == "display":
                    line.append(r.model)
                if c.kind == "score":
                    line += [r.ranks.get(c.key), r.overall.get(c.key)]
                if self.has_interval(c):
                    iv = self.interval(r, c)
                    line += ([iv.low, iv.high, iv.rank_low, iv.rank_high] if iv is not None
                             else [None] * 4)
            out.append(line + tail)
        return out



def score_field(col: Column) -> str:
    """The column of the analyses' frames behind a score column."""
    return col.key.split(":", 1)[1] if ":" in col.key else col.key


