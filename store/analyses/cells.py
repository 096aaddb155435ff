"""The cells a question covers, read once from a snapshot: their seed means (the input of every
analysis), the per-seed rows of the bootstrap's seed level, and the scores of each regime."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from store.analyses.question import Question
from store.analyses.scores import scores_of, seed_means
from store.catalog import TaskMeta
from store.seedmeans import per_seed
from store.vocab.kinds import CLASSIFICATION, rows_of
from store.vocab.protocol import FEW_SHOT_REGIMES, GENEB_V1, REGIMES


def question_means(snap, q: Question, protocol_hash: str | None = None) -> pl.DataFrame:
    """The seed means of `snap` (a `store.db.Snapshot` of `q`'s task kind) under `q`'s protocol
    (geneb-v1 for classification) that `q` covers: its source, its suite's tasks (the entries
    with results on the suite, and only those) and its models; `protocol_hash`: another
    protocol of the kind (its zero-shot one, `store.analyses.zero_shot`)."""
    means = seed_means(snap, protocol_hash=protocol_hash or q.protocol.hash, source=q.source)
    if q.tasks is not None:
        means = means.filter(pl.col("task").is_in([t.task_id for t in q.tasks]))
    if q.models:
        means = means.filter(pl.col("model").is_in(list(q.models)))
    return means


def tasks_of_kind(snap, tasks: Sequence[TaskMeta]) -> tuple[TaskMeta, ...]:
    """Those of `tasks` that are of the task kind of `snap` (a `store.db.Snapshot`), as the
    store's rows tell it (a task catalog holds no kinds): the tasks with current rows of that
    kind, and for classification also those without rows of any kind (their cells are missing;
    on a store of classification results alone, every task)."""
    found = snap.query("SELECT task, bool_or(" + rows_of(snap.kind) + ") AS own "
                       "FROM current_rows WHERE list_contains(?, task) GROUP BY task",
                       [[t.task_id for t in tasks]])
    own = dict(found.iter_rows())
    return tuple(t for t in tasks if own.get(t.task_id, snap.kind is CLASSIFICATION))


def seed_level_rows(snap, means: pl.DataFrame, source: str | None,
                    protocol_hash: str = GENEB_V1.hash) -> pl.DataFrame | None:
    """The per-seed rows of the bootstrap's seed level, only where a cell of `means` has
    several seeds (local k-shot runs); None where none has (imported results are seed means)."""
    if means.is_empty() or (means["n_seeds"].max() or 0) <= 1:
        return None
    filters = {"protocol_hash": [protocol_hash], "regime": list(FEW_SHOT_REGIMES),
               "model": means["model"].unique().sort().to_list()}
    if source is not None:
        filters["source"] = [source]
    return per_seed(snap, **filters)


def regime_scores(means: pl.DataFrame, *, metric: str,
                  with_source: bool) -> dict[str, pl.DataFrame]:
    """The `scores` frame of every regime (`store.analyses.scores.scores_of`) for `metric`."""
    return {r: scores_of(means, regime=r, metric=metric, with_source=with_source)
            for r in REGIMES}
