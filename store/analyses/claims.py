"""The paper's claims with their uncertainty, from the task bootstrap of
`store.analyses.uncertainty` (`Draws`: per entry, scope and resample, the aggregate score on a
resample of the tasks).

Resampling unit: the task. A micro score is recomputed on the tasks drawn with replacement from
the suite; a category score on its own tasks drawn within the category, and macro as the mean of
those, so every category keeps its weight (the `Draws` a function is given define it; with local
per-seed rows the seeds of a task may be resampled too, `Draws.seeds_resampled`). Every claim is
judged on the same resamples: one `Draws` per regime (and metric), shared.

Definitions:
- a claim that two entries differ (a leader change is significant, a smaller model's win
  holds, a controlled pair differs) is the one rule of `store.analyses.differ`, applied by
  `uncertainty.pair_verdicts`: the two-sided sign-flip test of the per-task differences (the
  scope's task weights), with the interval of the paired resampled difference excluding 0;
  each frame carries its numbers (p_value, method, n_tasks, wins, losses);
- P(A beats B) = the share of resamples in which A's score is strictly higher than B's (a tie
  counts for neither): descriptive, never the basis of a claim;
- an interval at `level` is the percentile interval of the resampled quantity: its
  (1 - level) / 2 and 1 - (1 - level) / 2 quantiles (numpy's default, linear interpolation).

The point values (leaders, rho, deltas, cases) are the existing analyses' own, computed on the
`Draws`' point scores (the aggregates of the whole suite): `leaders.category_leaders` (ties go to
the first model id), `scale.scale_correlation` (Spearman rho, models with a known parameter
count, per source), `controlled.controlled_pairs` (pairs that differ in exactly one attribute).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from store.analyses.aggregates import aggregates, entry_keys
from store.analyses.controlled import controlled_pairs
from store.analyses.leaders import category_leaders
from store.analyses.presets import LEVEL, SEED
from store.analyses.rankings import tie_mean_ranks
from store.analyses.scale import scale_correlation
from store.analyses.uncertainty import (
    ROWS_BLOCK,
    bootstrap,
    pair_verdicts,
    percentile_interval,
    planes,
    quantile_bounds,
    threaded,
)
from store.catalog import TaskMeta, geneb_v1_tasks
from store.domains import IN

if TYPE_CHECKING:
    from store.analyses.differ import Verdicts
    from store.analyses.uncertainty import Draws

RATIO = 5.0   # "a smaller model beats a model 5x larger": params_small * RATIO <= params_large
# The one rule's columns of a pair (`store.analyses.differ.Verdicts.row`).
RULE_SCHEMA = {"p_value": pl.Float64, "method": pl.String, "n_tasks": pl.Int64,
               "wins": pl.Int64, "losses": pl.Int64, "threshold": pl.Float64,
               "differs": pl.Boolean}


def _null(value) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def point_frame(draws: Draws) -> pl.DataFrame:
    """[keys..., <one column per scope>]: the `Draws`' point scores in the shape of
    `aggregates()` (micro, macro, categories; NULL where a score is missing), the input of the
    point analyses."""
    values = np.asarray(draws.point, dtype=float)
    return draws.entries.select(entry_keys(draws.entries)).with_columns(
        pl.Series(scope, values[:, j], dtype=pl.Float64).fill_nan(None)
        for j, scope in enumerate(draws.scopes))


def _positions(draws: Draws) -> dict[tuple, int]:
    """Entry key (model, source or None) -> its row in the `Draws` arrays."""
    keys = entry_keys(draws.entries)
    return {(r[0], r[1] if len(r) > 1 else None): i
            for i, r in enumerate(draws.entries.select(keys).iter_rows())}


def _key(row: Mapping, prefix: str = "") -> tuple:
    return row[f"{prefix}model"], row.get(f"{prefix}source")


# --- leader changes -------------------------------------------------------------------------

def leader_change_significance(draws: Mapping[str, Draws], *, base: str = "full",
                               level: float = LEVEL) -> pl.DataFrame:
    """[regime_from, regime_to, scope, leader_from, (source_from), value_from, leader_to,
    (source_to), value_to, changed, p_new_beats_old, p_old_beats_new, p_value_to,
    p_value_from, n_tasks, threshold_to, threshold_from, significant].

    `draws` maps regime -> its `Draws` (of one metric). For every other regime than `base`
    (default: full -> 10shot, full -> 1shot) and every scope (micro, macro, categories): the
    leader of each regime (`leaders.category_leaders` on the point scores), whether it changes,
    and `significant`: the change holds both ways by the one rule, each as a comparison with
    its regime's leader (`store.analyses.differ`, threshold (1 - level) / (E - 1) of that
    regime's E entries): in the new regime the new leader is separably ahead of the old one
    (sign-flip p `p_value_to`), and in `base` the old leader separably ahead of the new one
    (`p_value_from`). Descriptive: P(new leader beats old) in the resamples of the new regime
    and P(old leader beats new) in those of `base`. Without a change (or where one leader has
    no score in the other regime) those columns are NULL and `significant` is false. Level: the
    scope's aggregate; unit: the task (see the module docstring).
    """
    quantile_bounds(level)   # a level outside (0, 1): ValueError
    if base not in draws:
        raise ValueError(f"no draws of the base regime {base!r}")
    keys = entry_keys(draws[base].entries)
    sourced = "source" in keys
    old_draws = draws[base]
    old_at, rows = _positions(old_draws), []
    for regime, new_draws in draws.items():
        if regime == base:
            continue
        leaders = category_leaders({base: point_frame(old_draws),
                                    regime: point_frame(new_draws)})
        lead = {(r["regime"], r["scope"]): r for r in leaders.iter_rows(named=True)}
        new_at = _positions(new_draws)
        for scope in old_draws.scopes:
            old, new = lead.get((base, scope)), lead.get((regime, scope))
            if old is None or new is None:
                continue
            changed = _key(old) != _key(new)
            p_new = p_old = None
            to = back = None
            if changed and scope in new_draws.scopes:
                p_new = _beats(new_draws, new_at, _key(new), _key(old), scope)
                p_old = _beats(old_draws, old_at, _key(old), _key(new), scope)
                if p_new is not None and p_old is not None:
                    to = _versus_leader(new_draws, new_at, _key(new), _key(old), scope, level)
                    back = _versus_leader(old_draws, old_at, _key(old), _key(new), scope,
                                          level)
            rows.append({
                "regime_from": base, "regime_to": regime, "scope": scope,
                "leader_from": old["model"], "source_from": old.get("source"),
                "value_from": old["value"],
                "leader_to": new["model"], "source_to": new.get("source"),
                "value_to": new["value"], "changed": changed,
                "p_new_beats_old": p_new, "p_old_beats_new": p_old,
                "p_value_to": None if to is None else to.row(0)["p_value"],
                "p_value_from": None if back is None else back.row(0)["p_value"],
                "n_tasks": None if to is None else to.n_tasks,
                "threshold_to": None if to is None else to.threshold,
                "threshold_from": None if back is None else back.threshold,
                "significant": bool(to is not None and back is not None
                                    and to.differs[0] and back.differs[0])})
    schema = {"regime_from": pl.String, "regime_to": pl.String, "scope": pl.String,
              "leader_from": pl.String, "source_from": pl.String, "value_from": pl.Float64,
              "leader_to": pl.String, "source_to": pl.String, "value_to": pl.Float64,
              "changed": pl.Boolean, "p_new_beats_old": pl.Float64,
              "p_old_beats_new": pl.Float64, "p_value_to": pl.Float64,
              "p_value_from": pl.Float64, "n_tasks": pl.Int64, "threshold_to": pl.Float64,
              "threshold_from": pl.Float64, "significant": pl.Boolean}
    frame = pl.DataFrame(rows, schema=schema)
    return frame if sourced else frame.drop("source_from", "source_to")


def _versus_leader(draws: Draws, at: Mapping[tuple, int], lead: tuple, other: tuple,
                   scope: str, level: float) -> Verdicts:
    """The one rule for the leader `lead` against `other` in `draws`, as a comparison with the
    leader (the threshold shared by the E - 1 others)."""
    return pair_verdicts(draws, [at[lead]], [at[other]], scope, level,
                         compared=max(1, len(draws.entries) - 1))


def _beats(draws: Draws, at: Mapping[tuple, int], a: tuple, b: tuple,
           scope: str) -> float | None:
    """P(a beats b) in `draws` for `scope`; None when either has no score there."""
    if a not in at or b not in at:
        return None
    j = draws.scopes.index(scope)
    point = np.asarray(draws.point)
    if not (np.isfinite(point[at[a], j]) and np.isfinite(point[at[b], j])):
        return None
    values = np.asarray(draws.values)
    return float(np.mean(values[:, at[a], j] > values[:, at[b], j]))


# --- scale ----------------------------------------------------------------------------------

def _row_spearman(fixed: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Spearman rho between `fixed` (E,) and every row of `values` (n, E): Pearson's r of the
    average ranks; NaN for a constant row. A row without ties ranks its values 1..E, so its
    centred ranks are known by sorted position and only the rows holding a tie are ranked."""
    a = tie_mean_ranks(fixed[None, :])[0]
    a = a - a.mean()
    n, e = values.shape
    order = np.argsort(values, axis=1)
    ordered = np.sort(values, axis=1)         # (faster than gathering by `order`)
    tied = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
    centred = np.arange(e) - (e - 1) / 2      # the centred rank of each sorted position
    products = a[order] @ centred             # sum of centred ranks x centred fixed ranks
    squares = np.full(n, centred @ centred)
    if tied.any():
        b = tie_mean_ranks(values[tied])
        b -= b.mean(axis=1, keepdims=True)
        products[tied] = b @ a
        squares[tied] = (b * b).sum(axis=1)
    with np.errstate(all="ignore"):
        return products / np.sqrt(squares * (a @ a))


def scale_rho_intervals(draws: Draws, models_df: pl.DataFrame, exclude: Iterable[str] = (),
                        *, scopes: Sequence[str] | None = None,
                        level: float = LEVEL) -> pl.DataFrame:
    """[(source), scope, rho, p_value, n, low, high]: the scale Spearman rho with its bootstrap
    interval, for every scope of `draws` (or `scopes`).

    rho, p_value and n are `scale.scale_correlation`'s on the point scores (models with a known
    parameter count, not in `exclude`, with the score; per source when sources mix). The
    interval: per resample, rho between the parameter counts and the resampled scores of the
    same models (the same definition: Pearson's r of the average ranks); its percentile interval
    at `level` over the resamples where rho is defined (NULL with fewer than 3 models). Unit:
    the task (the resampled score is the scope's aggregate).
    """
    quantile_bounds(level)   # a level outside (0, 1): ValueError
    scopes = list(scopes) if scopes is not None else list(draws.scopes)
    points = point_frame(draws)
    rho = scale_correlation(points, models_df, exclude, columns=scopes)
    sized = _sized(draws, models_df)
    excluded = np.isin(sized["model"].to_numpy(), list(exclude))
    values, point = np.asarray(draws.values), np.asarray(draws.point, dtype=float)

    def interval(r: dict) -> tuple[float | None, float | None]:
        j = draws.scopes.index(r["scope"])
        take = ((sized["params"].to_numpy() > 0) & ~excluded
                & np.isfinite(point[sized["i"].to_numpy(), j]))
        if "source" in sized.columns:
            take &= sized["source"].to_numpy() == r["source"]
        if r["rho"] is None or take.sum() < 3:
            return None, None
        idx = sized["i"].to_numpy()[take]
        resampled = _row_spearman(sized["params"].to_numpy()[take].astype(float),
                                  values[:, idx, j])
        lo, hi = percentile_interval(resampled, level)
        return _null(lo), _null(hi)

    found = threaded(interval, rho.iter_rows(named=True))
    return rho.with_columns(pl.Series("low", [lo for lo, _ in found], dtype=pl.Float64),
                            pl.Series("high", [hi for _, hi in found], dtype=pl.Float64))


def _sized(draws: Draws, models_df: pl.DataFrame) -> pl.DataFrame:
    """[i, keys..., params]: the `Draws`' entries (i: the row in its arrays) with their
    catalog parameter count (0 where unknown)."""
    return (draws.entries.select(entry_keys(draws.entries)).with_row_index("i")
            .join(models_df.select(pl.col("model_id").alias("model"), "params"),
                  on="model", how="left", maintain_order="left")
            .with_columns(pl.col("params").fill_null(0).cast(pl.Float64)))


# --- controlled pairs -----------------------------------------------------------------------

def pair_differences(draws: Draws, ia: np.ndarray, ib: np.ndarray, level: float):
    """Per scope of `draws` (in its order): the percentile interval of the paired
    differences a - b (entries `ia`, `ib`) and the shares of resamples where it is > 0 and
    < 0, each an array over the pairs."""
    n = draws.n
    step = max(1, ROWS_BLOCK // max(1, n))

    def per_scope(plane: np.ndarray):        # a scope, and a block of pairs, at a time
        by_entry = np.ascontiguousarray(plane.T)     # (E, n): rows gather fast
        low, high, above, below = (np.empty(len(ia)) for _ in range(4))
        for p in range(0, len(ia), step):
            block = slice(p, p + step)
            d = by_entry[ia[block]] - by_entry[ib[block]]                 # (pairs, n)
            low[block], high[block] = percentile_interval(d, level)
            above[block] = np.count_nonzero(d > 0, axis=1) / n
            below[block] = np.count_nonzero(d < 0, axis=1) / n
        return low, high, above, below

    return threaded(per_scope, planes(draws))


def controlled_pair_intervals(draws: Draws, models_df: pl.DataFrame,
                              pairs: Iterable[tuple[str, str]] | None = None, *,
                              level: float = LEVEL) -> pl.DataFrame:
    """[(source), model_a, model_b, attribute, value_a, value_b, scope, delta, low, high,
    p_a_beats_b, p_b_beats_a, p_value, method, n_tasks, wins, losses, differs]: every
    controlled pair's delta with its bootstrap interval and the one rule's decision.

    The pairs, their attributes and the point `delta` (a - b) are `controlled.controlled_pairs`'
    on the point scores (pairs that differ in exactly one attribute, or the named `pairs`); one
    row per pair and scope (macro, then the categories). Per resample the pair's difference of
    the resampled scores (paired: both on the same tasks); `low`/`high` its percentile interval
    at `level`, `p_a_beats_b` (`p_b_beats_a`) the share of resamples where it is > 0 (< 0),
    descriptive. `differs`: the one rule (`store.analyses.differ`, a pair named in advance:
    threshold 1 - level) with its sign-flip `p_value` over the scope's `n_tasks` and the tasks
    where a scores above (`wins`) and below (`losses`) b. NULL where either score is missing.
    Unit: the task.
    """
    quantile_bounds(level)   # a level outside (0, 1): ValueError
    points = point_frame(draws)
    found = controlled_pairs(points, models_df, pairs)
    keys = entry_keys(points)
    scopes = [c for c in found.columns if c in draws.scopes]   # macro, categories
    ident = [*(["source"] if "source" in keys else []), "model_a", "model_b", "attribute",
             "value_a", "value_b"]
    schema = {**{c: pl.String for c in ident}, "scope": pl.String, "delta": pl.Float64,
              "low": pl.Float64, "high": pl.Float64, "p_a_beats_b": pl.Float64,
              "p_b_beats_a": pl.Float64, **RULE_SCHEMA}
    if found.is_empty():
        return pl.DataFrame(schema=schema)
    at = _positions(draws)
    rows = found.to_dicts()
    ia = np.array([at[(r["model_a"], r.get("source"))] for r in rows])
    ib = np.array([at[(r["model_b"], r.get("source"))] for r in rows])
    stats = pair_differences(draws, ia, ib, level)
    out = []
    for scope in scopes:
        j = draws.scopes.index(scope)
        low, high, pa, pb = stats[j]
        moves = draws.resampled(j)
        rule = pair_verdicts(draws, ia, ib, j, level, interval=(low, high) if moves else None)
        for p, r in enumerate(rows):
            defined = r[scope] is not None
            out.append({**{c: r[c] for c in ident}, "scope": scope, "delta": r[scope],
                        "low": _null(low[p]) if defined else None,
                        "high": _null(high[p]) if defined else None,
                        "p_a_beats_b": float(pa[p]) if defined else None,
                        "p_b_beats_a": float(pb[p]) if defined else None,
                        **(rule.row(p) if defined else dict.fromkeys(RULE_SCHEMA))})
    return pl.DataFrame(out, schema=schema).drop("threshold")


# --- controlled pairs on the tasks in both models' domain -----------------------------------

MIN_IN_DOMAIN = 2   # a pair compared in domain needs at least this many tasks in both domains


def controlled_pairs_in_domain(scores: pl.DataFrame, agg: pl.DataFrame, models_df: pl.DataFrame,
                               domain_of: Callable[[str, str], str], *,
                               tasks: Iterable[TaskMeta] | None = None, regime: str,
                               metric: str, level: float = LEVEL, resamples: int = 0,
                               seed: int = SEED, per_seed: pl.DataFrame | None = None
                               ) -> pl.DataFrame:
    """[(source), model_a, model_b, attribute, value_a, value_b, n_tasks, n_categories, macro,
    wins_a, wins_b, ties, low, high, p_a_beats_b, p_b_beats_a, p_value, method, differs]:
    every controlled pair of the
    aggregates `agg` (`controlled.controlled_pairs`), compared again on only the tasks of the
    suite's `tasks` that are in the pretraining domain of BOTH models (`domain_of`:
    `store.tables.catalogs.pair_domains`) and scored for both: `n_tasks` and `n_categories`
    count them; `macro` (a - b) and the wins are `controlled_pairs`' on the aggregates of
    those tasks (macro over the categories they cover); with `resamples`, the interval and
    P of the macro delta (`controlled_pair_intervals`) from a task bootstrap of those tasks
    (`uncertainty.bootstrap`, seeded with `seed`; one per task set, shared by its pairs) and
    the one rule's decision on it (`differs`, with its sign-flip `p_value` and `method`).
    A pair with fewer than MIN_IN_DOMAIN such tasks keeps its counts and NULL elsewhere.
    Without resamples the frame has no interval columns (low, high, P), like every point
    analysis of `report --resamples 0`."""
    expected = list(tasks if tasks is not None else geneb_v1_tasks())
    keys = entry_keys(scores)
    found = controlled_pairs(agg, models_df)
    ident = [*(["source"] if "source" in keys else []), "model_a", "model_b", "attribute",
             "value_a", "value_b"]
    numbers = ("low", "high", "p_a_beats_b", "p_b_beats_a", "p_value", "method", "differs")
    schema = {**{c: pl.String for c in ident}, "n_tasks": pl.Int64, "n_categories": pl.Int64,
              "macro": pl.Float64, "wins_a": pl.Int64, "wins_b": pl.Int64, "ties": pl.Int64,
              **({c: RULE_SCHEMA.get(c, pl.Float64) for c in numbers} if resamples else {})}
    scored = set(scores.select(*keys, "task").iter_rows())
    rows, groups = [], {}
    for pair in found.iter_rows(named=True):
        a, b, source = pair["model_a"], pair["model_b"], pair.get("source")
        entries = [(m, *([source] if "source" in keys else [])) for m in (a, b)]
        shared = tuple(t.task_id for t in expected
                       if all(domain_of(e[0], t.task_id) == IN and (*e, t.task_id) in scored
                              for e in entries))
        rows.append({**{c: pair[c] for c in ident}, "n_tasks": len(shared),
                     "n_categories": len({t.category for t in expected
                                          if t.task_id in shared})})
        if len(shared) >= MIN_IN_DOMAIN:    # the pairs of one task set: one aggregate, one draw
            groups.setdefault((source, shared), []).append(rows[-1])
    for (source, shared), members in groups.items():
        on = [t for t in expected if t.task_id in shared]
        pairs = [(r["model_a"], r["model_b"]) for r in members]
        sub = scores.filter(pl.col("model").is_in([m for p in pairs for m in p])
                            & pl.col("task").is_in(shared)
                            & (pl.col("source") == source if source is not None else True))
        points = {(r["model_a"], r["model_b"]): r for r in controlled_pairs(
            aggregates(sub, tasks=on), models_df, pairs).iter_rows(named=True)}
        if resamples:
            draws = bootstrap(sub, tasks=on, regime=regime, metric=metric,
                              per_seed_rows=per_seed, with_source="source" in keys,
                              n=resamples, seed=seed)
            intervals = {(r["model_a"], r["model_b"]): r for r in controlled_pair_intervals(
                draws, models_df, pairs, level=level).filter(pl.col("scope") == "macro")
                .iter_rows(named=True)}
        for row, pair in zip(members, pairs, strict=True):
            row |= {c: points[pair][c] for c in ("macro", "wins_a", "wins_b", "ties")}
            if resamples:
                row |= {c: intervals[pair][c] for c in numbers}
    return pl.DataFrame(rows, schema=schema)


# --- the leader's margin --------------------------------------------------------------------

def leader_margin(draws: Draws, tie_group: pl.DataFrame, *, scope: str = "macro",
                  level: float = LEVEL) -> pl.DataFrame:
    """[model, (source), value, runner_up, (runner_up_source), runner_up_value, margin, low,
    high, p_leader_beats, p_value, method, n_tasks, wins, losses, threshold, differs]: one
    row, the leader of `scope` and the runner-up, the first two rows of its
    `uncertainty.leader_tie_group` frame `tie_group` (best point score first, ties in key
    order). margin = leader - runner-up; low/high its percentile interval at `level` and
    p_leader_beats the share of resamples where the leader scores strictly higher
    (descriptive), both over the paired differences on the same resamples (NULL in a scope
    resampling cannot move). `differs`: the runner-up is not in the leader's tie group (the one
    rule, as `leader_tie_group` decides it, whose numbers it repeats: the sign-flip `p_value`,
    the leader's task `wins` and `losses`, the `threshold` shared by the comparisons with the
    leader). No row with fewer than two entries."""
    keys = entry_keys(tie_group)
    with_source = "source" in keys
    schema = {"model": pl.String, **({"source": pl.String} if with_source else {}),
              "value": pl.Float64, "runner_up": pl.String,
              **({"runner_up_source": pl.String} if with_source else {}),
              "runner_up_value": pl.Float64, "margin": pl.Float64, "low": pl.Float64,
              "high": pl.Float64, "p_leader_beats": pl.Float64, **RULE_SCHEMA}
    if tie_group.height < 2:
        return pl.DataFrame(schema=schema)
    j = draws.scopes.index(scope)
    at = _positions(draws)
    runner = tie_group.row(1, named=True)
    lead, second = (_key(r) for r in tie_group.head(2).iter_rows(named=True))
    ia, ib = at[lead], at[second]
    low, high, above, _ = pair_differences(draws, np.array([ia]), np.array([ib]), level)[j]
    moves = draws.resampled(j)
    value, runner_up_value = float(draws.point[ia, j]), float(draws.point[ib, j])
    row = {"model": lead[0], **({"source": lead[1]} if with_source else {}), "value": value,
           "runner_up": second[0], **({"runner_up_source": second[1]} if with_source else {}),
           "runner_up_value": runner_up_value, "margin": value - runner_up_value,
           "low": _null(low[0]) if moves else None, "high": _null(high[0]) if moves else None,
           "p_leader_beats": float(above[0]) if moves else None,
           **{c: runner[c] for c in RULE_SCHEMA if c != "differs"},
           "differs": not runner["tied_with_leader"]}
    return pl.DataFrame([row], schema=schema)


# --- smaller beats larger -------------------------------------------------------------------

def smaller_beats_larger(draws: Draws, models_df: pl.DataFrame, *, ratio: float = RATIO,
                         scope: str = "macro", level: float = LEVEL) -> pl.DataFrame:
    """[(source), model_small, model_large, params_small, params_large, value_small,
    value_large, delta, low, high, p_small_beats_large, p_value, method, n_tasks, wins,
    losses, holds]: the paper's "a smaller model beats a model 5x larger" cases of one regime
    (the `Draws`' regime) and `scope`.

    A case: two entries of one source, both with a known parameter count,
    params_small * `ratio` <= params_large, and the point score of the smaller one higher
    (strictly) than the larger one's. `delta` = value_small - value_large, `low`/`high` its
    percentile interval over the resamples (paired), `p_small_beats_large` the share of
    resamples where the smaller one scores higher (descriptive); `holds`: the one rule
    separates the two (`store.analyses.differ`, a pair named by its sizes: threshold
    1 - level), with its sign-flip `p_value` over the scope's `n_tasks` and the tasks the
    smaller one wins and loses. Sorted by p_value (lowest first), then delta. Unit: the task.
    """
    quantile_bounds(level)   # a level outside (0, 1): ValueError
    keys = entry_keys(draws.entries)
    entries = _sized(draws, models_df)
    j = draws.scopes.index(scope)
    point = np.asarray(draws.point, dtype=float)[:, j]
    idx = entries["i"].to_numpy()
    size = entries["params"].to_numpy()
    source = (entries["source"].to_numpy() if "source" in keys
              else np.zeros(len(idx), dtype=object))
    score = point[idx]
    small, large = np.nonzero(
        (size[:, None] > 0) & (size[None, :] > 0) & (size[:, None] * ratio <= size[None, :])
        & (source[:, None] == source[None, :]) & np.isfinite(score[:, None])
        & np.isfinite(score[None, :]) & (score[:, None] > score[None, :]))
    a, b = idx[small], idx[large]
    values = np.asarray(draws.values)
    d = values[:, a, j] - values[:, b, j]
    low, high = (percentile_interval(d.T, level) if len(a)
                 else (np.array([]), np.array([])))
    share = np.mean(d > 0, axis=0) if len(a) else np.array([])
    rule = pair_verdicts(draws, a, b, j, level,
                         interval=(low, high) if draws.resampled(j) else None)
    names = entries["model"].to_numpy()
    frame = pl.DataFrame({
        **({"source": source[small].astype(str)} if "source" in keys else {}),
        "model_small": names[small].astype(str), "model_large": names[large].astype(str),
        "params_small": size[small].astype(np.int64), "params_large": size[large].astype(np.int64),
        "value_small": point[a], "value_large": point[b], "delta": point[a] - point[b],
        "low": low, "high": high, "p_small_beats_large": share, "p_value": rule.p,
        "method": [rule.method] * len(a), "n_tasks": np.full(len(a), rule.n_tasks),
        "wins": rule.wins, "losses": rule.losses, "holds": rule.differs,
    }, schema={**({"source": pl.String} if "source" in keys else {}),
               "model_small": pl.String, "model_large": pl.String, "params_small": pl.Int64,
               "params_large": pl.Int64, "value_small": pl.Float64, "value_large": pl.Float64,
               "delta": pl.Float64, "low": pl.Float64, "high": pl.Float64,
               "p_small_beats_large": pl.Float64, "p_value": pl.Float64, "method": pl.String,
               "n_tasks": pl.Int64, "wins": pl.Int64, "losses": pl.Int64,
               "holds": pl.Boolean})
    return frame.sort(["p_value", "delta", "model_small", "model_large"],
                      descending=[False, True, False, False])


def smaller_beats_larger_summary(cases: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """[regime, n_cases, n_hold]: per regime (`cases` maps regime -> `smaller_beats_larger`),
    how many cases there are and how many hold at the level they were computed at."""
    return pl.DataFrame(
        [{"regime": regime, "n_cases": frame.height, "n_hold": int(frame["holds"].sum())}
         for regime, frame in cases.items()],
        schema={"regime": pl.String, "n_cases": pl.Int64, "n_hold": pl.Int64})
