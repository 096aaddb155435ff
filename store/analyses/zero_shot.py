"""The zero-shot protocol of a task kind beside its probed one (`store.vocab.protocol.
READ_PROTOCOLS`: the variant kind's `variant-cosine-v1`, one regime, `zeroshot`): its aggregates
and, with resamples, the leader's tie group under the one rule (`store.analyses.differ`), from
the same snapshot, tasks, models and metric as the question's. A zero-shot score has no
regimes to compare, so the cross-regime analyses are not computed for it."""

from __future__ import annotations

import polars as pl

from store.analyses import uncertainty as U
from store.analyses.aggregates import aggregates
from store.analyses.cells import question_means
from store.analyses.intervals import regime_draws
from store.analyses.question import Question
from store.analyses.scores import scores_of
from store.vocab.kinds import ZERO_SHOT
from store.vocab.protocol import READ_PROTOCOLS


def zero_shot_frames(snap, q: Question) -> dict[str, pl.DataFrame]:
    """`zero_shot_aggregates` (and `zero_shot_tie_group` with `q.resamples`) of the zero-shot
    protocol of `q.kind`, where it has one and results on `q`'s tasks; none otherwise (nor
    under a domain, whose entries do not share a task set)."""
    protocol = next((p for p in READ_PROTOCOLS[q.kind] if p.zero_shot), None)
    if protocol is None or q.domain is not None:
        return {}
    means = question_means(snap, q, protocol_hash=protocol.hash)
    if means.is_empty():
        return {}
    scores = scores_of(means, regime=ZERO_SHOT, metric=q.metric, with_source=q.with_source)
    out = {"zero_shot_aggregates": aggregates(scores, tasks=q.tasks)}
    if q.resamples:
        draws = regime_draws(scores, tasks=q.tasks, regime=ZERO_SHOT, metric=q.metric,
                             per_seed=None, with_source=q.with_source, resamples=q.resamples,
                             seed=q.seed)
        if draws is not None:
            out["zero_shot_tie_group"] = U.leader_tie_group(draws, scope="macro",
                                                            level=q.level)
    return out
