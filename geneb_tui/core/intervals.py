"""The main table's rank intervals as the cells read them (computed in a worker by
`geneb_tui.core.significance.table_intervals`; no polars import here: the first frame paints
without them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from store.analyses.presets import LEVEL, SEED, TABLE_RESAMPLES
from store.vocab.bootstrap import ONE_TASK_NOTE

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class CellInterval:
    """One score cell's interval: the score's (low, high), the rank's [rank_low, rank_high]
    (None in a column of one task, which has none: `store.vocab.bootstrap.ONE_TASK_NOTE`) and
    whether the entry is in the leader's tie group of that column (the one rule,
    `store.analyses.differ`: in a column of one task every entry is)."""

    low: float | None
    high: float | None
    rank_low: int | None
    rank_high: int | None
    tied: bool

    @property
    def label(self) -> str:
        return "—" if self.rank_low is None else f"[{self.rank_low}-{self.rank_high}]"


@dataclass
class Intervals:
    """`table_intervals`' frame with a lookup by (scope, model, source)."""

    frame: pl.DataFrame
    n: int = TABLE_RESAMPLES
    seed: int = SEED
    level: float = LEVEL
    seeds_resampled: bool = False
    _cells: dict = field(default_factory=dict, init=False, repr=False)
    # The scopes the frame holds and the characters of the widest rank interval label (the
    # cells pad to it): taken once here, read for every cell painted.
    scopes: frozenset[str] = field(default=frozenset(), init=False)
    width: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._cells = {
            (r["scope"], r["model"], r["source"]): CellInterval(
                r["low"], r["high"], r["rank_low"], r["rank_high"], bool(r["tied_with_leader"]))
            for r in self.frame.iter_rows(named=True)}
        self.scopes = frozenset(scope for scope, _, _ in self._cells)
        top = int(self.frame["rank_high"].max() or 1) if self.frame.height else 1
        self.width = len(f"[{top}-{top}]")

    def get(self, scope: str, model: str, source: str) -> CellInterval | None:
        return self._cells.get((scope, model, source))

    def describe(self) -> str:
        seeds = " and seeds" if self.seeds_resampled else ""
        none = "; — where " + ONE_TASK_NOTE if self.frame["rank_low"].null_count() else ""
        return (f"{round(self.level * 100)}% bootstrap over tasks{seeds}, "
                f"{self.n:,} resamples, seed {self.seed}{none}")
