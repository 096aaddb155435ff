"""The analysis layer's entry: a `Question` in, every frame of its answer out, computed once
from one snapshot of the store. `geneb-engine report` prints them (rich tables, or `--json`),
`report --figures` draws them (`engine.figures`); the site (`engine.site.data`) and the
dashboard (`geneb_tui.core.significance`) take the same steps from `cells`, `intervals` and
`ranktests`.

Uncertainty: one task bootstrap (`store.analyses.uncertainty.bootstrap`) per regime of the
metric, shared by every consumer: the score and rank intervals, P(A > B) and the leader's tie
group of the regime, and the claims (`store.analyses.claims`), and the Friedman test with the
Nemenyi critical difference (`store.analyses.ranktests`, which resample nothing). A question
with `resamples` 0 turns all of them off: the point analyses alone."""

from __future__ import annotations

import polars as pl

from store.analyses.cells import question_means, regime_scores, seed_level_rows
from store.analyses.claims import controlled_pairs_in_domain
from store.analyses.context import VARIANTS_SQL, context_curve, curve_scopes
from store.analyses.domains import domain_cells, partial_aggregates
from store.analyses.examples import example_intervals
from store.analyses.intervals import uncertainty_frames
from store.analyses.point import point_frames, versus
from store.analyses.question import Frames, Question
from store.analyses.ranktests import regime_rank_tests
from store.analyses.scores import scores_of
from store.analyses.zero_shot import zero_shot_frames
from store.db import snapshot_of
from store.tables.catalogs import pair_domains
from store.tables.predictions import Predictions
from store.vocab.protocol import GENEB_V1

# What a question with a domain leaves out: the analyses that compare entries on one task set
# (a domain filter leaves each entry its own tasks).
DOMAIN_SKIPPED = ("the complete-task aggregates and rankings", "Borda", "intervals and tie group",
                  "rank tests", "rank shifts", "Spearman between regimes", "category agreement",
                  "few-shot degradation", "scale", "controlled pairs", "task difficulty",
                  "the in and out of domain split", "category leaders")


def compute(store, models: pl.DataFrame, q: Question) -> Frames:
    """Every analysis frame of `q`, by name, from one snapshot of `store` (a `StorePaths` or
    a `store.db.Snapshot`); empty when the store has no results there. `models`: the model
    catalog (`store.tables.catalogs.models_with_builtins`).

    Also `controlled_pairs_in_domain` (`store.analyses.claims`: the controlled pairs on the
    tasks in both models' domains; its intervals with `q.resamples`). With `q.resamples` > 0
    the significance frames: the rank tests (`ranktests.regime_rank_tests`, alpha from
    `q.level`) and the bootstrap ones (`intervals.uncertainty_frames`, seeded with `q.seed`),
    and where a model has entries at several context policies, `context_curve`
    (`store.analyses.context`: macro, and each category where the suite has more than one).
    Then the kind's zero-shot frames (`store.analyses.zero_shot`: the variant kind's cosine
    distance), `q.versus`'s and `q.examples`' frames (`versus`, `stored_example_intervals`).

    With `q.domain` only the cells whose (model, task) pair is of that domain
    (`domains.domain_cells`, its GenebError when none is), and only the analyses that hold on
    a partial matrix, each entry on its own tasks: `domain_aggregates`
    (`domains.partial_aggregates`); those that need the entries on one task set
    (DOMAIN_SKIPPED) are not computed."""
    snap = snapshot_of(store, q.kind)
    means = question_means(snap, q)
    if q.domain is not None:
        snap.close()
        means = domain_cells(q.domain, means, pair_domains(snap.paths))
        if means.is_empty():
            return {}
        return {"domain_aggregates": partial_aggregates(
            scores_of(means, regime=q.regime, metric=q.metric, with_source=q.with_source),
            q.tasks)}
    per_seed = seed_level_rows(snap, means, q.source, q.protocol.hash) if q.resamples else None
    zero_shot = zero_shot_frames(snap, q)
    snap.close()   # the analyses need no DuckDB: free its memory (a later query reopens it)
    if means.is_empty():
        return {}
    scores = regime_scores(means, metric=q.metric, with_source=q.with_source)
    frames = point_frames(snap, scores, models, regime=q.regime, metric=q.metric, tasks=q.tasks,
                          published=q.published)
    frames["controlled_pairs_in_domain"] = controlled_pairs_in_domain(
        scores[q.regime], frames["aggregates"], models, pair_domains(snap.paths), tasks=q.tasks,
        regime=q.regime, metric=q.metric, level=q.level, resamples=q.resamples, seed=q.seed,
        per_seed=per_seed)
    if q.resamples:
        frames |= regime_rank_tests(scores, tasks=q.tasks, level=q.level)
        frames |= uncertainty_frames(scores, models, regime=q.regime, metric=q.metric,
                                     tasks=q.tasks, resamples=q.resamples, level=q.level,
                                     seed=q.seed, per_seed=per_seed, with_source=q.with_source)
        intervals = frames.get("score_intervals", pl.DataFrame())
        curve = context_curve(intervals, snap.query(VARIANTS_SQL), curve_scopes(intervals))
        if not curve.is_empty():        # a store without two contexts of a model: as before
            frames["context_curve"] = curve
    frames |= zero_shot
    if q.versus:
        frames |= versus(snap, q.versus, regime=q.regime, metric=q.metric, tasks=q.tasks)
    if q.examples:
        frames["example_intervals"] = stored_example_intervals(
            snap.paths, regime=q.regime, n=q.examples, level=q.level, seed=q.seed)
    return frames


def stored_example_intervals(paths, *, regime: str, n: int, level: float,
                             seed: int) -> pl.DataFrame:
    """`store.analyses.examples.example_intervals` of every local geneb-v1 cell of `regime`
    with stored predictions (each seed, and the seed mean with seed NULL)."""
    table = Predictions(paths)
    preds = table.predictions(regime=regime, protocol_hash=GENEB_V1.hash)
    labels = table.labels(preds.select("task", "data_hash").unique().iter_rows())
    return example_intervals(preds, labels, n_resamples=n, level=level, seed=seed)
