"""The point analyses of the report (nothing resampled), from the scores of every regime, and
the agreement of the local rankings with a variant protocol's (`report --versus`)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from store.analyses.aggregates import aggregates
from store.analyses.controlled import controlled_pairs
from store.analyses.degradation import degradation, degradation_summary
from store.analyses.difficulty import task_difficulty
from store.analyses.domains import domain_split
from store.analyses.leaders import category_leaders, leader_changes
from store.analyses.rankings import (
    borda,
    category_agreement,
    protocol_agreement,
    rank_shift,
    rankings,
    spearman_regimes,
)
from store.analyses.scale import scale_correlation
from store.analyses.scores import scores_of, seed_means
from store.catalog import TaskMeta
from store.db import query
from store.official.reference import leaderboard_differences, read_leaderboard
from store.tables.catalogs import pair_domains
from store.vocab.errors import GenebError
from store.vocab.protocol import FEW_SHOT_REGIMES, GENEB_V1, protocol_named
from store.vocab.sources import LOCAL


def point_frames(snap, scores: dict[str, pl.DataFrame], models: pl.DataFrame, *, regime: str,
                 metric: str, tasks: Sequence[TaskMeta] | None,
                 published: bool = True) -> dict[str, pl.DataFrame]:
    """The point analyses of `regime` and across the regimes, by name (the report's order);
    `published`: with the imported leaderboard's differences (else none)."""
    aggs = {r: aggregates(s, tasks=tasks) for r, s in scores.items()}
    agg = aggs[regime]
    leaders = category_leaders(aggs)
    drops = degradation(aggs)
    board = read_leaderboard(snap.paths, regime=regime, metric=metric)
    if not published:
        board = board.clear()
    return {
        "aggregates": agg,
        "leaderboard_differences": leaderboard_differences(agg, board),
        "rankings": rankings(agg),
        "borda": borda(agg),
        **{f"rank_shift_full_{r}": rank_shift(aggs["full"], aggs[r]) for r in FEW_SHOT_REGIMES},
        "spearman_regimes": spearman_regimes(aggs),
        "category_agreement": category_agreement(agg),
        "degradation": drops,
        "degradation_summary": degradation_summary(drops),
        "scale": scale_correlation(agg, models),
        "controlled_pairs": controlled_pairs(agg, models),
        "task_difficulty": task_difficulty(scores[regime], tasks=tasks),
        "domain_split": domain_split(scores[regime], pair_domains(snap.paths)),
        "category_leaders": leaders,
        "leader_changes": leader_changes(leaders),
    }


def versus(snap, name: str, *, regime: str, metric: str,
           tasks: Sequence[TaskMeta] | None) -> dict[str, pl.DataFrame]:
    """Spearman agreement between the local geneb-v1 rankings and protocol `name`'s
    (`protocol_agreement`, `protocol_rank_shift`); a GenebError when the store has no local
    results of that protocol."""
    other = protocol_named(name)   # None for a group (a whole sweep): not one protocol
    if other is None or query(snap, f"SELECT 1 FROM results WHERE source = '{LOCAL}' "
                                    "AND protocol_hash = ? LIMIT 1", [other.hash]).is_empty():
        raise GenebError(f"no local results for protocol {name!r} in {snap.paths.root}; "
                         f"compute them with `geneb-engine fill --protocol {name} "
                         "--models MODEL..`")
    aggs = [aggregates(scores_of(seed_means(snap, protocol_hash=h, source=LOCAL),
                                 regime=regime, metric=metric, with_source=False), tasks=tasks)
            for h in (GENEB_V1.hash, other.hash)]
    return {"protocol_agreement": protocol_agreement(*aggs),
            "protocol_rank_shift": rank_shift(*aggs)}
