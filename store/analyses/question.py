"""The question the analysis layer answers (`store.analyses.compute.compute`): which results
(the suite's tasks in scope, the source, the models, the domain), which regime and metric, and
how much uncertainty (resamples, level, seed). Plain data; its defaults are the presets'
(`store.analyses.presets`) except `resamples`, whose 0 gives the point analyses alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from store.analyses.presets import LEVEL, SEED
from store.catalog import TaskMeta
from store.vocab.kinds import CLASSIFICATION, TaskKind
from store.vocab.protocol import Protocol, read_protocol

if TYPE_CHECKING:
    import polars as pl

# The frames of an answer by name, in the order `report --json` prints them.
Frames = dict[str, "pl.DataFrame"]


@dataclass(frozen=True)
class Question:
    """What `report` (and `site`, `report --figures`) asks of the store's geneb-v1 results.

    - `tasks`: the suite's tasks in the scope (None: every task of the results);
    - `source`: only this source (None: every source, entries keyed by model and source);
    - `models`: only these models' results (None: all); ranks, intervals and tests are among
      them;
    - `regime`, `metric`: of the single-regime analyses (the cross-regime ones use all three);
    - `resamples`: task bootstrap resamples of the intervals, P(A > B), the tie group and the
      claims, and with them the rank tests (0: none of them);
    - `level`: of the intervals and claims (the rank tests' alpha is `presets.alpha(level)`);
    - `seed`: of the resamples;
    - `published`: the aggregates are compared with the imported leaderboard (not on a scope
      narrower than the suite, nor without the flagged tasks: the leaderboard has neither);
    - `domain`: only the cells whose (model, task) pair is of this domain ("in", "out",
      "unknown"), and only the analyses that hold on a partial matrix;
    - `versus`: also the agreement of the local rankings with this variant protocol's;
    - `examples`: also the per-example MCC intervals of every local cell of `regime` over this
      many resamples of its test rows (0: none);
    - `kind`: the task kind whose results it reads (`store.vocab.kinds`; the snapshot given to
      `compute` must be of this kind), under that kind's protocol
      (`store.vocab.protocol.read_protocol`: geneb-v1 for classification), `metric` one of
      that kind's: metrics of different kinds are never put together.
    """

    regime: str = "full"
    metric: str = "mcc"
    tasks: tuple[TaskMeta, ...] | None = None
    source: str | None = None
    models: tuple[str, ...] | None = None
    resamples: int = 0
    level: float = LEVEL
    seed: int = SEED
    published: bool = True
    domain: str | None = None
    versus: str | None = None
    examples: int = 0
    kind: TaskKind = CLASSIFICATION

    @property
    def protocol(self) -> Protocol:
        """The protocol whose results the question reads (its kind's)."""
        return read_protocol(self.kind)

    @property
    def with_source(self) -> bool:
        """Entries keyed by model and source (every source read), or by model alone."""
        return self.source is None
