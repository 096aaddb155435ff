"""The bootstrap's frames as their readers take them: one regime's draws, the report's
uncertainty frames (one draw per regime, shared by every interval and claim) and the interval
rows of each scope (score and rank intervals, the leader's tie group) of the dashboard's main
table. The bootstrap itself is `store.analyses.uncertainty`; the claims `store.analyses.claims`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from store.analyses import claims as C
from store.analyses import uncertainty as U
from store.analyses.uncertainty import Draws
from store.catalog import TaskMeta
from store.vocab.protocol import is_few_shot


def regime_draws(scores: pl.DataFrame, *, tasks: Sequence[TaskMeta] | None, regime: str,
                 metric: str, per_seed: pl.DataFrame | None, with_source: bool, resamples: int,
                 seed: int) -> Draws | None:
    """One regime's task bootstrap (`store.analyses.uncertainty.bootstrap`) as the report and
    the site draw it; None when no entry is complete (every task)."""
    d = U.bootstrap(scores, tasks=tasks, regime=regime, metric=metric, per_seed_rows=per_seed,
                    with_source=with_source, n=resamples, seed=seed)
    return d if d.entries.height else None


def uncertainty_frames(scores: dict[str, pl.DataFrame], models: pl.DataFrame, *, regime: str,
                       metric: str, tasks: Sequence[TaskMeta] | None, resamples: int,
                       level: float, seed: int, per_seed: pl.DataFrame | None = None,
                       with_source: bool = True) -> dict[str, pl.DataFrame]:
    """The bootstrap frames: ONE `uncertainty.draw` per regime (of `metric`), shared by all.

    Of `regime`: `score_intervals`, `rank_intervals` (every scope), `win_probabilities`,
    `leader_tie_group` and `leader_margin` (macro), `scale_rho_intervals`,
    `controlled_pair_intervals`. Across the regimes: `leader_change_significance` (full ->
    10shot, full -> 1shot), `smaller_beats_larger` (with a regime column) and its summary.
    `bootstrap` says how ([regime, metric, resamples, seed, level, unit, seeds_resampled,
    n_entries]). Regimes without a complete entry (every task) are left out."""
    def drawn(r: str) -> Draws | None:
        return regime_draws(scores[r], tasks=tasks, regime=r, metric=metric, per_seed=per_seed,
                            with_source=with_source, resamples=resamples, seed=seed)

    # One regime's draws at a time beside full's (each is n x entries x scopes float64): the
    # consumers of `regime`, full -> r leader changes and r's cases, then they are freed.
    base = drawn("full") if "full" in scores else None
    out: dict[str, pl.DataFrame] = {}
    how, changes, cases = [], [], {}
    for r in scores:
        d = drawn(r) if is_few_shot(r) else base
        if d is None:
            continue
        how.append({"regime": r, "metric": metric, "resamples": d.n, "seed": d.seed,
                    "level": level,
                    "unit": "task (micro: all tasks; categories and macro: within each "
                            "category)" + (", then seed within task" if d.seeds_resampled
                                           else ""),
                    "seeds_resampled": d.seeds_resampled, "n_entries": d.entries.height})
        if r == regime:
            out |= regime_claims(d, models, level=level)
        if base is not None and is_few_shot(r):
            changes.append(C.leader_change_significance({"full": base, r: d}, level=level))
        cases[r] = C.smaller_beats_larger(d, models, level=level)
        del d
    if not how:
        return {}
    out["bootstrap"] = pl.DataFrame(how)
    if changes:
        out["leader_change_significance"] = pl.concat(changes)
    out["smaller_beats_larger"] = pl.concat(
        [c.select(pl.lit(r).alias("regime"), pl.all()) for r, c in cases.items()])
    out["smaller_beats_larger_summary"] = C.smaller_beats_larger_summary(cases)
    return out


def regime_claims(d: Draws, models: pl.DataFrame, *, level: float) -> dict[str, pl.DataFrame]:
    """The frames of one regime's draws: score and rank intervals (every scope), P(A > B),
    the leader's tie group and margin (macro), the scale rho's and the controlled pairs'
    intervals."""
    group = U.leader_tie_group(d, scope="macro", level=level)
    return {
        "score_intervals": U.score_intervals(d, level),
        "rank_intervals": U.rank_intervals(d, level),
        "win_probabilities": U.win_probabilities(d, scope="macro"),
        "leader_tie_group": group,
        "leader_margin": C.leader_margin(d, group, scope="macro", level=level),
        "scale_rho_intervals": C.scale_rho_intervals(d, models, level=level),
        "controlled_pair_intervals": C.controlled_pair_intervals(d, models, level=level),
    }


def scope_intervals(draws: Draws, level: float, scopes: Sequence[str]) -> pl.DataFrame:
    """[entry keys, scope, value, low, high, rank, rank_low, rank_high, p_best, leader,
    tied_with_leader]: each entry's score and rank interval in each of `scopes`, and whether
    it leads or is in the leader's tie group there (the one rule, `leader_tie_group`)."""
    keys = list(draws.entries.columns)
    on = [*keys, "scope"]
    ties = pl.concat([U.leader_tie_group(draws, scope=s, level=level)
                      .select(*keys, pl.lit(s).alias("scope"), "p_best", "leader",
                              "tied_with_leader") for s in scopes])
    return (U.score_intervals(draws, level).filter(pl.col("scope").is_in(list(scopes)))
            .join(U.rank_intervals(draws, level), on=on, how="left")
            .join(ties, on=on, how="left"))
