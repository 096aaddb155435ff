"""`geneb-engine report`: every GENEB analysis of the store, as rich tables or one JSON document.

Single-regime analyses (aggregates, rankings and Borda, category agreement, scale, controlled
pairs, task difficulty) use `--regime`; cross-regime ones (rank shift, Spearman between regimes,
few-shot degradation, category leaders) use all three regimes. On a store without results it
says how to fill it and exits 1 (nothing to report).

Uncertainty (`--resamples`, `--level`, `--bootstrap-seed`): one task bootstrap
(`store.analyses.uncertainty.draw`) per regime of `--metric`, shared by every consumer: the
score and rank intervals, P(A > B) and the leader's tie group of `--regime`, and the paper's
claims (`store.analyses.claims`), and the Friedman test with the Nemenyi critical difference
(`store.analyses.ranktests`, which resample nothing). `--resamples 0` turns all of them off:
the point analyses alone, as fast as before.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from engine.commands.common import (
    DOMAIN_WORDS,
    OUTPUT_WIDTH,
    UNREGISTERED,
    StoreNames,
    add_domain_arg,
    add_scope_args,
    add_suite_args,
    choice_of,
    current_notes,
    domain_cells,
    emit_json,
    one_protocol,
    reading_suite,
    real_number,
    scoped_tasks,
    store_of,
    suites_with_results,
    table_console,
    whole_number,
)
from engine.commands.layout import Col, FitTable
from engine.figures import (
    FIGURES,
    FIGURES_JSON,
    figure_data,
    legacy_names,
    missing,
    write_figures,
)
from engine.figures import GENERATOR as FIGURES_GENERATOR
from store.catalog import TaskMeta
from store.output_folder import output_folder
from store.vocab.bootstrap import LEVEL, ONE_TASK_NOTE, RESAMPLES, SEED
from store.vocab.errors import GenebError
from store.vocab.protocol import (
    FEW_SHOT_REGIMES,
    GENEB_V1,
    METRICS,
    REGIMES,
    is_few_shot,
    protocol_named,
)
from store.vocab.pvalues import p_text
from store.vocab.sources import LOCAL

if TYPE_CHECKING:
    import polars as pl

# Columns when stdout is not a terminal (piped to a file or a pager) and $COLUMNS is unset; on
# a terminal, its width. Tables wider than that are split into blocks of columns.
REPORT_WIDTH = OUTPUT_WIDTH

MAX_RESAMPLES = 100_000     # (n x entries x 15 scopes float64 per regime: 0.5 GB at 40 models)
MIN_TASKS = 5               # the rank tests of a category need at least this many tasks
# What `--domain` leaves out: the analyses that compare entries on one task set (a domain
# filter leaves each entry its own tasks).
DOMAIN_SKIPPED = ("the complete-task aggregates and rankings", "Borda", "intervals and tie group",
                  "rank tests", "rank shifts", "Spearman between regimes", "category agreement",
                  "few-shot degradation", "scale", "controlled pairs", "task difficulty",
                  "the in and out of domain split", "category leaders")


# argparse `type=` of `--resamples` and `--examples`: 0 (none) to MAX_RESAMPLES.
resample_count = whole_number(
    0, of=" of resamples", note=" (0 turns the intervals off)", maximum=MAX_RESAMPLES,
    above=f"give at most {MAX_RESAMPLES:,} resamples (the default, {RESAMPLES:,}, gives "
          "percentiles to about 0.005)")


# argparse `type=` of `--level`: a number strictly between 0 and 1.
level_of = real_number(lambda v: 0 < v < 1, give="give a level between 0 and 1, such as 0.95",
                       bad="not between 0 and 1 (exclusive); give a level such as 0.95 or 0.9")


# argparse `type=` of `--bootstrap-seed` (`numpy.random.default_rng`).
seed_of = whole_number(0)


def register(sub, common) -> None:
    p = sub.add_parser(
        "report", parents=[common], help="the GENEB analyses of the store",
        description="Aggregates, rankings and Borda count, rank shifts, Spearman agreement, "
                    "few-shot degradation, scale, controlled pairs, task difficulty and "
                    "category leaders, computed from the store (protocol geneb-v1).")
    p.add_argument("--regime", choices=REGIMES, default="full", type=choice_of("regime", REGIMES),
                   help="regime of the single-regime analyses (default: full)")
    p.add_argument("--metric", choices=METRICS, default="mcc", type=choice_of("metric", METRICS),
                   help="default: mcc")
    p.add_argument("--source", metavar="SOURCE",
                   help="only this source (local, official, verified, reproduced, "
                        "self-reported); default: all, entries keyed by model and source")
    add_suite_args(p, from_store=True)
    add_scope_args(p)
    add_domain_arg(p)
    p.add_argument("--models", nargs="+", metavar="MODEL",
                   help="only these models (default: every model with results on the suite); "
                        "ranks, intervals and tests are among them")
    p.add_argument("--versus", metavar="PROTOCOL",
                   help="also compare the rankings of your local geneb-v1 results with those of "
                        "a variant protocol you filled (e.g. mlp-h256: linear vs MLP stability)")
    p.add_argument("--resamples", type=resample_count, default=RESAMPLES, metavar="N",
                   help="task bootstrap resamples of the intervals, P(A > B), the tie group and "
                        f"the claims (default: {RESAMPLES:,}; 0: none of them, nor the rank "
                        "tests: the point analyses alone)")
    p.add_argument("--level", type=level_of, default=LEVEL, metavar="L",
                   help=f"level of the intervals and claims, between 0 and 1 (default: {LEVEL}); "
                        "the rank tests use alpha = 1 - L")
    p.add_argument("--bootstrap-seed", type=seed_of, default=SEED, metavar="S",
                   help="seed of the resamples (default: 0; the same seed, the same report)")
    p.add_argument("--exclude-flagged", action="store_true",
                   help="leave out the tasks `geneb-engine audit` flags (leaky, noisy labels, "
                        "shortcut): aggregates, ranks and intervals without them")
    p.add_argument("--examples", type=resample_count, default=0, metavar="N",
                   help="also the MCC interval of every local cell of --regime over N "
                        "resamples of its test examples, from the stored predictions "
                        "(default: 0, none; imported results have no predictions)")
    p.add_argument("--figures", metavar="DIR",
                   help="also draw the paper's figures (rank-shift heatmap, few-shot "
                        "degradation, scale scatter, critical-difference diagram, controlled "
                        "pairs) into DIR as SVG and PNG, with the values each draws in "
                        "DIR/figures.json (needs the figures extra: matplotlib); your own "
                        "files in DIR are kept; not the store, your home nor a current folder "
                        "holding other files")
    p.set_defaults(handler=run)


def figures_folder(args, paths):
    """`--figures DIR` as an output folder (`store.output_folder`; None without it), checked
    before anything is computed: matplotlib installed, no `--domain`."""
    if args.figures is None:
        return None
    if args.domain:
        raise GenebError("--figures: the figures are of the analyses --domain leaves out; give "
                         "one or the other")
    if (why := missing()) is not None:
        raise GenebError(f"--figures: {why}")
    return output_folder("--figures", args.figures, generator=FIGURES_GENERATOR, store=paths,
                         is_for="give the folder to write the figures into",
                         legacy=legacy_names)


def write_report_figures(folder, frames, models, *, regime: str) -> list[str]:
    """The figures of `frames` into `folder` (`engine.figures`), before anything is printed (a
    folder that cannot be written is the one line of a refused command); the lines to print:
    what was written, and each figure not written (its analysis empty on the store)."""
    data = figure_data(frames, models, regime=regime)
    written = write_figures(folder, data)
    return [f"figures: {len(written)} of {len(FIGURES)} in {folder.path} (SVG and PNG), their "
            f"values in {FIGURES_JSON}",
            *(f"figures: {name} not written: the {FIGURES[name]}"
              for name, d in data.items() if d is None)]


def versus(snap, name: str, *, regime: str, metric: str,
           tasks: tuple[TaskMeta, ...]) -> dict[str, pl.DataFrame]:
    """Spearman agreement between the local geneb-v1 rankings and protocol `name`'s."""
    from store import analyses as A  # lazy: polars, duckdb, pyarrow
    from store.db import query  # lazy: polars, duckdb, pyarrow

    other = protocol_named(name)   # None for a group (a whole sweep): not one protocol
    if other is None or query(snap, f"SELECT 1 FROM results WHERE source = '{LOCAL}' "
                                    "AND protocol_hash = ? LIMIT 1", [other.hash]).is_empty():
        raise GenebError(f"no local results for protocol {name!r} in {snap.paths.root}; "
                         f"compute them with `geneb-engine fill --protocol {name} "
                         "--models MODEL..`")
    aggs = [A.aggregates(A.scores_of(A.seed_means(snap, protocol_hash=h, source=LOCAL),
                                     regime=regime, metric=metric, with_source=False),
                         tasks=tasks)
            for h in (GENEB_V1.hash, other.hash)]
    return {"protocol_agreement": A.protocol_agreement(*aggs),
            "protocol_rank_shift": A.rank_shift(*aggs)}


def _models(paths) -> pl.DataFrame:
    """The store's model catalog, completed with the built-in and user entries it lacks."""
    from store.tables.catalogs import models_with_builtins  # lazy: polars, pyarrow, filelock

    return models_with_builtins(paths)


def compute(store, models: pl.DataFrame, *, regime: str, metric: str, source: str | None,
            tasks: tuple[TaskMeta, ...] | None = None, resamples: int = 0,
            level: float = LEVEL, bootstrap_seed: int = 0,
            published: bool = True, domain: str | None = None,
            model_ids: Sequence[str] | None = None) -> dict[str, pl.DataFrame]:
    """Every analysis frame of the report, by name, from one snapshot of `store` (a
    `StorePaths` or a `store.db.Snapshot`); empty when the store has no results. `published`:
    the aggregates are compared with the imported leaderboard (not on a scope narrower than
    the suite, whose macro and micro the leaderboard has not). `model_ids` (`--models`): only
    the results of these models.

    Also `controlled_pairs_in_domain` (`store.analyses.claims`: the controlled pairs on the
    tasks in both models' domains; its intervals with `resamples`).

    With `resamples` > 0 also the significance frames: the rank tests (`rank_test_frames`,
    alpha = 1 - `level`) and the bootstrap ones (`uncertainty_frames`, seeded with
    `bootstrap_seed`). The CLI's default is RESAMPLES; this function's 0 gives the point
    analyses alone (what a caller that does not ask for them gets, as before).

    With `domain` ("in", "out", "unknown": `--domain`) only the cells whose (model, task) pair
    is of that domain (`domain_cells`, its GenebError when none is), and only the analyses
    that hold on a partial matrix, each entry on its own tasks: `domain_aggregates`
    (`store.analyses.domains.partial_aggregates`); those that need the entries on one task
    set (DOMAIN_SKIPPED) are not computed."""
    import polars as pl  # lazy: polars

    from store import analyses as A  # lazy: polars, duckdb, pyarrow
    from store.analyses.claims import controlled_pairs_in_domain  # lazy: polars, duckdb
    from store.db import snapshot_of  # lazy: polars, duckdb, pyarrow
    from store.tables.catalogs import pair_domains  # lazy: polars, pyarrow

    snap = snapshot_of(store)
    means = A.seed_means(snap, protocol_hash=GENEB_V1.hash, source=source)
    if tasks is not None:   # the entries with results on the suite, and only those
        means = means.filter(pl.col("task").is_in([t.task_id for t in tasks]))
    if model_ids:
        means = means.filter(pl.col("model").is_in(list(model_ids)))
    if domain is not None:
        snap.close()
        means = domain_cells(domain, means, pair_domains(snap.paths))
        if means.is_empty():
            return {}
        return {"domain_aggregates": A.partial_aggregates(
            A.scores_of(means, regime=regime, metric=metric, with_source=source is None),
            tasks)}
    per_seed = seed_level_rows(snap, means, source) if resamples else None
    snap.close()   # the analyses need no DuckDB: free its memory (a later query reopens it)
    if means.is_empty():
        return {}
    scores = {r: A.scores_of(means, regime=r, metric=metric, with_source=source is None)
              for r in REGIMES}
    frames = _analyses(snap, scores, models, regime=regime, metric=metric, tasks=tasks,
                       published=published)
    frames["controlled_pairs_in_domain"] = controlled_pairs_in_domain(
        scores[regime], frames["aggregates"], models, pair_domains(snap.paths), tasks=tasks,
        regime=regime, metric=metric, level=level, resamples=resamples, seed=bootstrap_seed,
        per_seed=per_seed)
    if resamples:
        frames |= rank_test_frames(scores, tasks=tasks, level=level)
        frames |= uncertainty_frames(scores, models, regime=regime, metric=metric,
                                     tasks=tasks, resamples=resamples, level=level,
                                     seed=bootstrap_seed, per_seed=per_seed,
                                     with_source=source is None)
    return frames


def seed_level_rows(snap, means: pl.DataFrame, source: str | None) -> pl.DataFrame | None:
    """The per-seed rows of the bootstrap's seed level, only where a cell of `means` has
    several seeds (local k-shot runs); None where none has (imported results are seed means)."""
    if means.is_empty() or (means["n_seeds"].max() or 0) <= 1:
        return None
    from store.seedmeans import per_seed  # lazy: polars, duckdb, pyarrow

    filters = {"protocol_hash": [GENEB_V1.hash], "regime": list(FEW_SHOT_REGIMES),
               "model": means["model"].unique().sort().to_list()}
    if source is not None:
        filters["source"] = [source]
    return per_seed(snap, **filters)


def _alpha(level: float) -> float:
    """The rank tests' alpha for a level: 1 - level, rounded off the float noise (0.95 gives
    0.05, not 0.050000000000000044)."""
    return round(1 - level, 12)


def rank_test_frames(scores: dict[str, pl.DataFrame], *,
                     tasks: tuple[TaskMeta, ...] | None, level: float) -> dict[str, pl.DataFrame]:
    """`rank_tests` ([regime, scope, n_models, n_tasks, statistic, p_value,
    critical_difference, alpha]) and `average_ranks` ([regime, scope, model, (source),
    average_rank]) of every regime with scores: Friedman and Nemenyi over the tasks, for all
    of them and for each category with at least MIN_TASKS (`store.analyses.ranktests`), at
    alpha = 1 - level."""
    import polars as pl  # lazy: polars

    from store.analyses import ranktests as R  # lazy: polars, duckdb, pyarrow

    tests, ranks = [], []
    for r, frame in scores.items():
        if frame.is_empty():
            continue
        tests.append(R.rank_tests(frame, tasks=tasks, alpha=_alpha(level), min_tasks=MIN_TASKS)
                     .select(pl.lit(r).alias("regime"), pl.all()))
        ranks.append(R.scope_average_ranks(frame, tasks=tasks, min_tasks=MIN_TASKS)
                     .select(pl.lit(r).alias("regime"), pl.all()))
    return {"rank_tests": pl.concat(tests), "average_ranks": pl.concat(ranks)} if tests else {}


def regime_draws(scores: pl.DataFrame, *, tasks: tuple[TaskMeta, ...] | None, regime: str,
                 metric: str, per_seed: pl.DataFrame | None, with_source: bool, resamples: int,
                 seed: int):
    """One regime's task bootstrap (`store.analyses.uncertainty.bootstrap`) as the report
    draws it; None when no entry is complete (every task)."""
    from store.analyses import uncertainty as U  # lazy: polars, duckdb, pyarrow

    d = U.bootstrap(scores, tasks=tasks, regime=regime, metric=metric, per_seed_rows=per_seed,
                    with_source=with_source, n=resamples, seed=seed)
    return d if d.entries.height else None


def uncertainty_frames(scores: dict[str, pl.DataFrame], models: pl.DataFrame, *, regime: str,
                       metric: str, tasks: tuple[TaskMeta, ...] | None, resamples: int,
                       level: float, seed: int, per_seed: pl.DataFrame | None = None,
                       with_source: bool = True) -> dict[str, pl.DataFrame]:
    """The bootstrap frames: ONE `uncertainty.draw` per regime (of `metric`), shared by all.

    Of `regime`: `score_intervals`, `rank_intervals` (every scope), `win_probabilities`,
    `leader_tie_group` and `leader_margin` (macro), `scale_rho_intervals`,
    `controlled_pair_intervals`. Across the regimes: `leader_change_significance` (full ->
    10shot, full -> 1shot), `smaller_beats_larger` (with a regime column) and its summary.
    `bootstrap` says how ([regime, metric, resamples, seed, level, unit, seeds_resampled,
    n_entries]). Regimes without a complete entry (every task) are left out."""
    import polars as pl  # lazy: polars

    from store.analyses import claims as C  # lazy: polars, duckdb, pyarrow
    from store.analyses import uncertainty as U  # lazy: polars, duckdb, pyarrow

    def drawn(r: str):
        return regime_draws(scores[r], tasks=tasks, regime=r, metric=metric, per_seed=per_seed,
                            with_source=with_source, resamples=resamples, seed=seed)

    # One regime's draws at a time beside full's (each is n x entries x scopes float64): the
    # consumers of --regime, full -> r leader changes and r's cases, then they are freed.
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
            group = U.leader_tie_group(d, scope="macro", level=level)
            out |= {
                "score_intervals": U.score_intervals(d, level),
                "rank_intervals": U.rank_intervals(d, level),
                "win_probabilities": U.win_probabilities(d, scope="macro"),
                "leader_tie_group": group,
                "leader_margin": C.leader_margin(d, group, scope="macro", level=level),
                "scale_rho_intervals": C.scale_rho_intervals(d, models, level=level),
                "controlled_pair_intervals": C.controlled_pair_intervals(d, models,
                                                                         level=level),
            }
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


def _analyses(snap, scores: dict[str, pl.DataFrame], models: pl.DataFrame, *, regime: str,
              metric: str, tasks: tuple[TaskMeta, ...] | None,
              published: bool = True) -> dict[str, pl.DataFrame]:
    """The point analyses (no resampling), from the scores of every regime."""
    from store import analyses as A  # lazy: polars, duckdb, pyarrow

    # lazy: polars, duckdb, pyarrow
    from store.official.reference import leaderboard_differences, read_leaderboard
    from store.tables.catalogs import pair_domains  # lazy: polars, pyarrow

    aggs = {r: A.aggregates(s, tasks=tasks) for r, s in scores.items()}
    agg = aggs[regime]
    leaders = A.category_leaders(aggs)
    degradation = A.degradation(aggs)
    board = read_leaderboard(snap.paths, regime=regime, metric=metric)
    if not published:
        board = board.clear()
    return {
        "aggregates": agg,
        "leaderboard_differences": leaderboard_differences(agg, board),
        "rankings": A.rankings(agg),
        "borda": A.borda(agg),
        **{f"rank_shift_full_{r}": A.rank_shift(aggs["full"], aggs[r]) for r in FEW_SHOT_REGIMES},
        "spearman_regimes": A.spearman_regimes(aggs),
        "category_agreement": A.category_agreement(agg),
        "degradation": degradation,
        "degradation_summary": A.degradation_summary(degradation),
        "scale": A.scale_correlation(agg, models),
        "controlled_pairs": A.controlled_pairs(agg, models),
        "task_difficulty": A.task_difficulty(scores[regime], tasks=tasks),
        "domain_split": A.domain_split(scores[regime], pair_domains(snap.paths)),
        "category_leaders": leaders,
        "leader_changes": A.leader_changes(leaders),
    }


def _f(value, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _n(value: int | None) -> str:
    """A count or a rank; "—" only for none (a Borda count of 0 is 0)."""
    return "—" if value is None else str(value)


def _signed(value: int | None) -> str:
    if value is None:
        return "—"
    return f"[green]+{value}[/]" if value > 0 else f"[red]{value}[/]" if value < 0 else "0"


def _key(row: dict) -> tuple[str, str | None]:
    return row["model"], row.get("source")


def _table(title: str, columns: list[tuple[str, str]], *, keys: int = 1,
           empty: str = "no entry has these values",
           groups: list[str | None] | None = None) -> FitTable:
    """Left-justified columns are names (one line, never cut); right-justified ones are
    numbers, their headers broken into one word per line. The first `keys` columns identify a
    row: a table wider than the console is split into blocks of columns, each repeating them
    (`engine.commands.layout`; columns of one of `groups` stay in one block). `empty`: why
    the table can have no row."""
    groups = groups or [None] * len(columns)
    return FitTable(title, [Col(name if justify == "left" else name.replace(" ", "\n"),
                                justify=justify, key=n < keys, group=group)
                            for n, ((name, justify), group) in enumerate(zip(columns, groups,
                                                                             strict=True))],
                    compact=True, split=True, empty=empty, title_justify="left")


def _defined(frame: pl.DataFrame) -> list[dict]:
    """The rows of a frame of Spearman rho, none when rho is undefined in every row."""
    return frame.to_dicts() if frame["rho"].drop_nulls().len() else []


def _too_few(frame: pl.DataFrame, what: str) -> str:
    most = frame["n"].max() if frame.height else 0
    return f"rho needs at least 3 entries {what}, not all equal (here at most {most or 0})"


class _Names:
    """Entry labels for the tables: the catalog's display name, plus the source when the
    report mixes sources."""

    def __init__(self, models: pl.DataFrame, mixed: bool):
        self.display = dict(zip(models["model_id"], models["display"], strict=True))
        self.mixed = mixed

    def __call__(self, row: dict, key: str = "model") -> str:
        name = self.display.get(row[key]) or row[key]
        return escape(f"{name} ({row['source']})" if self.mixed and "source" in row else name)


def _p(value) -> str:
    """A probability: 3 decimals, and never a rounded 1.000 or 0.000 that is not exact."""
    if value is None:
        return "—"
    if 0.9995 <= value < 1:
        return ">0.999"
    if 0 < value < 0.0005:
        return "<0.001"
    return f"{value:.3f}"


def _rule_cells(row: dict | None) -> list[str]:
    """The p and differs cells of a pair's row (the one rule's columns); dashes without one."""
    if row is None or row.get("p_value") is None:
        return ["—", "—"]
    return [p_text(row["p_value"]), "yes" if row["differs"] else "no"]


def _pct(level: float) -> str:
    return f"{level * 100:g} %"


def render(console: Console, frames: dict[str, pl.DataFrame], names: _Names, *,
           regime: str, metric: str, level: float = LEVEL) -> None:
    import polars as pl  # lazy: polars

    from store.analyses.aggregates import category_columns  # lazy: polars, duckdb, pyarrow
    from store.analyses.claims import MIN_IN_DOMAIN  # lazy: polars, duckdb, pyarrow
    from store.analyses.differ import (  # lazy: numpy
        claim_text,
        compared_for,
        threshold_text,
        too_few,
    )
    from store.analyses.difficulty import EASY, HARD, HIGH_VAR  # lazy: polars, duckdb, pyarrow
    from store.analyses.uncertainty import interval_text  # lazy: polars, numpy

    where = f"{regime}, {metric}"
    agg = frames["aggregates"]
    cats = category_columns(agg)
    shown: list[FitTable] = []
    pct = _pct(level)
    boot = frames.get("bootstrap")
    n_boot = boot["resamples"][0] if boot is not None and boot.height else None

    def show(table: FitTable) -> None:
        """Print a table, one blank line after the one before."""
        if shown:
            console.print()
        console.print(table)
        shown.append(table)

    score_iv = {(_key(r), r["scope"]): r
                for r in frames.get("score_intervals", pl.DataFrame()).iter_rows(named=True)}
    rank_iv = {_key(r): r for r in frames.get("rank_intervals", pl.DataFrame())
               .filter(pl.col("scope") == "macro").iter_rows(named=True)} \
        if "rank_intervals" in frames else {}
    with_iv = (f"; [ ] = {pct} interval over {n_boot:,} resamples of the tasks (within each "
               "category for macro), rank interval = the macro rank's" if score_iv else "")

    def scored(r: dict, scope: str) -> str:
        iv = score_iv.get((_key(r), scope))
        return _f(r[scope]) + (f" {interval_text(iv['low'], iv['high'], 2)}" if iv else "")

    def rank_range(r: dict) -> list[str]:
        """The macro rank interval cell, `[2-7]` (none without the bootstrap)."""
        if not rank_iv:
            return []
        iv = rank_iv.get(_key(r))
        return [f"[{iv['rank_low']}-{iv['rank_high']}]"
                if iv and iv["rank_low"] is not None else "—"]

    t = _table(f"Aggregates ({where}): category = mean of its tasks, micro = mean of the "
               f"tasks, macro = mean of the categories; — where a task is missing{with_iv}",
               [("#", "right"), ("model", "left"),
                *([("rank interval", "right")] if rank_iv else []),
                ("macro", "right"), ("micro", "right"),
                *((c, "right") for c in cats), ("missing", "right")], keys=2)
    ranks = {_key(r): r for r in frames["rankings"].iter_rows(named=True)}
    for r in agg.iter_rows(named=True):
        t.add_row(_n(ranks[_key(r)]["macro"]), names(r), *rank_range(r),
                  scored(r, "macro"), scored(r, "micro"), *(_f(r[c]) for c in cats),
                  str(r["n_missing"]))
    show(t)
    published = frames["leaderboard_differences"]
    if published.height:
        worst = published["difference"].abs().max()
        console.print(f"Imported leaderboard.json: {published['model'].n_unique()} models in "
                      f"common; largest |aggregate - published| = "
                      f"{'—' if worst is None else f'{worst:.1e}'}")

    if boot is not None and not score_iv:
        console.print(f"[dim]no intervals in {regime}: the bootstrap needs an entry with a score "
                      "on every task of the suite[/]")
    elif any(iv["low"] is None for iv in score_iv.values()):
        console.print(f"[dim]— in place of an interval: {ONE_TASK_NOTE}[/]", soft_wrap=False)

    top = agg.filter(pl.col("macro").is_not_null()).head(2).to_dicts()   # agg: best first
    if len(top) == 2:
        margin = frames.get("leader_margin", pl.DataFrame()).to_dicts()
        paired = ""
        if margin:          # the one rule, as the tie group decides it
            m = margin[0]
            paired = ((f" {interval_text(m['low'], m['high'], 2)}" if m["low"] is not None
                       else "")
                      + "; " + claim_text(m["differs"], m["p_value"], m["n_tasks"], m["wins"],
                                          m["losses"], level, m["threshold"], a="the leader"))
        console.print(Text.from_markup(
            f"Leader of the scope (macro, {where}): {names(top[0])} {scored(top[0], 'macro')}"
            + "".join(f", rank {x}" for x in rank_range(top[0]))
            + f"; runner-up: {names(top[1])} {scored(top[1], 'macro')}"
            + "".join(f", rank {x}" for x in rank_range(top[1]))
            + f"; margin {_f(top[0]['macro'] - top[1]['macro'])}{escape(paired)}",
            overflow="fold"), soft_wrap=False)                  # wrapped at the width

    if "leader_tie_group" in frames and frames["leader_tie_group"].height:
        tie = frames["leader_tie_group"]
        n_tasks, bar = tie["n_tasks"][0], tie["threshold"][0]
        compared = compared_for(level, bar)
        group = tie.filter("tied_with_leader")
        t = _table(f"Tie group of the macro leader ({where}, {pct}): the leader and the models "
                   "the one rule does not separate from it (sign-flip test of the "
                   f"{n_tasks} tasks' differences: p > {threshold_text(level, compared)}, the "
                   f"leader compared with {compared} others; or the interval of Δ contains "
                   "0); Δ = leader - it, wins-losses = the leader's tasks above-below it; the "
                   "rank interval describes the resamples",
                   [("model", "left"), ("macro", "right"), ("Δ", "right"), ("p", "right"),
                    ("wins-losses", "right"), ("rank interval", "right")])
        macro = {_key(r): r for r in agg.iter_rows(named=True)}
        for r in group.iter_rows(named=True):
            own = r["leader"]
            t.add_row(names(r) + (" (leader)" if own else ""), _f(macro[_key(r)]["macro"]),
                      "—" if own else _f(r["delta"]) + (
                          f" {interval_text(r['delta_low'], r['delta_high'], 2)}"
                          if r["delta_low"] is not None else ""),
                      "—" if own else p_text(r["p_value"]),
                      "—" if own else f"{r['wins']}-{r['losses']}",
                      "—" if r["rank_low"] is None else f"{r['rank_low']}-{r['rank_high']}")
        show(t)
        if few := too_few(n_tasks, level, compared):
            console.print(Text(few, no_wrap=False, overflow="fold"), soft_wrap=False)

    t = _table(f"Rankings per category ({where}) and Borda count (n - rank points per "
               "category, summed)",
               [("#", "right"), ("model", "left"), ("Borda", "right"), ("mean rank", "right"),
                *((c, "right") for c in cats)], keys=2)
    for r in frames["borda"].iter_rows(named=True):
        rk = ranks[_key(r)]
        t.add_row(_n(r["borda_rank"]), names(r), _n(r["borda"]),
                  _f(r["mean_rank"], 1), *(_n(rk[c]) for c in cats))
    show(t)

    if "rank_tests" in frames:
        tests = frames["rank_tests"]
        alpha = tests["alpha"][0] if tests.height else None
        best = {(r["regime"], r["scope"]): r for r in frames["average_ranks"]
                .group_by("regime", "scope", maintain_order=True).first().iter_rows(named=True)}
        one_k = tests["n_models"].n_unique() == 1     # the usual case: said in the title
        t = _table(f"Friedman test and Nemenyi critical difference ({metric}"
                   + (f", {tests['n_models'][0]} models" if one_k else "")
                   + f"): average ranks over the tasks (1 = best), all tasks and each category "
                   f"with >= {MIN_TASKS}; two models whose average ranks differ by more than CD "
                   f"differ at alpha = {alpha:g}",
                   [("regime", "left"), ("scope", "left"),
                    *([] if one_k else [("models", "right")]),
                    ("tasks", "right"), ("chi2", "right"), ("p-value", "right"),
                    ("CD", "right"), ("best: its average rank", "left")], keys=2)
        for r in tests.iter_rows(named=True):
            top = best.get((r["regime"], r["scope"]))
            t.add_row(escape(r["regime"]), escape(r["scope"]),
                      *([] if one_k else [str(r["n_models"])]),
                      str(r["n_tasks"]), _f(r["statistic"], 1), p_text(r["p_value"]),
                      _f(r["critical_difference"], 2),
                      f"{names(top)}: {_f(top['average_rank'], 2)}" if top else "—")
        show(t)

    shifts = {r: {_key(x): x for x in frames[f"rank_shift_full_{r}"].iter_rows(named=True)}
              for r in FEW_SHOT_REGIMES}
    t = _table(f"Rank shift of macro ({metric}) from full: + climbs, - falls",
               [("model", "left"), ("full", "right"),
                *((f"{r} rank", "right") for r in FEW_SHOT_REGIMES),
                *((f"full→{r}", "right") for r in FEW_SHOT_REGIMES)],
               empty="no entry has a macro score (every task) in full and in 10shot")
    for r in frames["rank_shift_full_10shot"].iter_rows(named=True):
        rows = [shifts[k].get(_key(r)) for k in FEW_SHOT_REGIMES]
        t.add_row(names(r), str(r["rank_a"]),
                  *(str(x["rank_b"]) if x else "—" for x in rows),
                  *(_signed(x["shift"]) if x else "—" for x in rows))
    show(t)

    t = _table(f"Spearman rho between the regimes' macro rankings ({metric})",
               [("regimes", "left"), ("rho", "right"), ("p-value", "right"), ("n", "right")],
               empty=_too_few(frames["spearman_regimes"], "with a macro score in both regimes"))
    for r in _defined(frames["spearman_regimes"]):
        t.add_row(f"{r['regime_a']} vs {r['regime_b']}", _f(r["rho"]),
                  p_text(r["p_value"]), str(r["n"]))
    show(t)

    t = _table(f"Spearman rho between category rankings ({where})",
               [("", "left"), *((c, "right") for c in cats)],
               empty="rho needs at least 3 entries with both category scores, not all equal")
    agreement = frames["category_agreement"]
    for r in (agreement.iter_rows(named=True)
              if any(agreement[c].drop_nulls().len() for c in cats) else ()):
        t.add_row(escape(r["category"]), *(_f(r[c], 2) for c in cats))
    show(t)

    few = FEW_SHOT_REGIMES
    deg_cols = [("full", "right"), *((k, "right") for k in few),
                *(c for k in few for c in ((f"drop {k}", "right"), (f"rel. drop {k}", "right"),
                                           (f"retention {k}", "right")))]

    def deg_cells(r: dict) -> list[str]:
        return [_f(r["full"]), *(_f(r[k]) for k in few),
                *(_f(r[f"{m}_{k}"]) for k in few for m in ("drop", "rel_drop", "retention"))]

    t = _table(f"Few-shot degradation of macro ({metric}): drop = full - k, rel. drop = "
               "drop / full, retention = k / full", [("model", "left"), *deg_cols],
               empty="no entry has a full macro score")
    for r in (frames["degradation"].filter(pl.col("scope") == "macro")
              .sort("full", descending=True, nulls_last=True).iter_rows(named=True)):
        t.add_row(names(r), *deg_cells(r))
    show(t)
    t = _table(f"Few-shot degradation per category ({metric}): means over the models",
               [("scope", "left"), ("n", "right"), *deg_cols])
    for r in frames["degradation_summary"].iter_rows(named=True):
        t.add_row(escape(r["scope"]), str(r["n"]), *deg_cells(r))
    show(t)

    by_source = names.mixed and "source" in frames["scale"].columns
    rho_iv = {(r.get("source"), r["scope"]): r
              for r in frames.get("scale_rho_intervals", pl.DataFrame()).iter_rows(named=True)}
    t = _table(f"Scale ({where}): Spearman rho between parameter count and score"
               + (f"; its {pct} interval over the resamples of the tasks" if rho_iv else ""),
               [*([("source", "left")] if by_source else []),
                ("scope", "left"), ("rho", "right"), *([("interval", "right")] if rho_iv else []),
                ("p-value", "right"), ("n", "right")],
               keys=2 if by_source else 1,
               empty=_too_few(frames["scale"], "with a known parameter count (the k-mer "
                                               "baselines have none) and the score"))
    for r in _defined(frames["scale"]):
        iv = rho_iv.get((r.get("source"), r["scope"]))
        same = iv is not None and iv["n"] == r["n"]     # the same models (all complete)
        t.add_row(*([escape(r["source"])] if by_source else []), escape(r["scope"]), _f(r["rho"]),
                  *([interval_text(iv["low"], iv["high"], 2) if same else "—"] if rho_iv else []),
                  p_text(r["p_value"]), str(r["n"]))
    show(t)

    pairs = frames["controlled_pairs"].sort("attribute", "model_a", "model_b")
    pair_iv = {(r.get("source"), r["model_a"], r["model_b"]): r
               for r in frames.get("controlled_pair_intervals", pl.DataFrame())
               .filter(pl.col("scope") == "macro").iter_rows(named=True)} \
        if "controlled_pair_intervals" in frames else {}
    t = _table(f"Controlled pairs ({where}): models differing in exactly one attribute; "
               "Δ = a - b, wins over the categories"
               + (f"; [ ] = {pct} interval of Δ; p = sign-flip p of the tasks' differences; "
                  f"differs = the one rule at {pct} (p <= {threshold_text(level)} and the "
                  "interval excludes 0)" if pair_iv else ""),
               [("attribute", "left"), ("model a", "left"), ("model b", "left"),
                ("a", "left"), ("b", "left"), ("Δ macro", "right"),
                *([("p", "right"), ("differs", "left")] if pair_iv else []),
                ("wins a-b-ties", "right")], keys=3,
               empty="no two models (of one source) differ in exactly one of architecture "
                     "family, tokenization family, pretraining data and scale band")
    for r in pairs.iter_rows(named=True):
        iv = pair_iv.get((r.get("source"), r["model_a"], r["model_b"]))
        t.add_row(escape(r["attribute"]), names(r, "model_a"), names(r, "model_b"),
                  escape(r["value_a"]), escape(r["value_b"]),
                  _f(r["macro"]) + (f" {interval_text(iv['low'], iv['high'], 2)}" if iv else ""),
                  *(_rule_cells(iv) if pair_iv else []),
                  f"{r['wins_a']}-{r['wins_b']}-{r['ties']}")
    show(t)

    in_domain = frames.get("controlled_pairs_in_domain")
    if in_domain is not None:
        with_p = ("p_value" in in_domain.columns
                  and in_domain["p_value"].drop_nulls().len() > 0)
        t = _table(f"Controlled pairs on in-domain tasks ({where}): the same pairs over only "
                   "the tasks in the pretraining domain of both models (the rule: docs, Task "
                   "and model domains); Δ = a - b, macro over the categories of those tasks"
                   + (f"; [ ] = {pct} interval of Δ over resamples of those tasks; p and "
                      "differs: the one rule on those tasks" if with_p else ""),
                   [("attribute", "left"), ("model a", "left"), ("model b", "left"),
                    ("tasks", "right"), ("categories", "right"), ("Δ macro", "right"),
                    *([("p", "right"), ("differs", "left")] if with_p else []),
                    ("wins a-b-ties", "right")],
                   keys=3, empty="no controlled pairs")
        for r in in_domain.sort("attribute", "model_a", "model_b").iter_rows(named=True):
            few = r["macro"] is None
            t.add_row(escape(r["attribute"]), names(r, "model_a"), names(r, "model_b"),
                      str(r["n_tasks"]), str(r["n_categories"]),
                      f"fewer than {MIN_IN_DOMAIN} tasks in both domains" if few else
                      _f(r["macro"]) + (f" {interval_text(r['low'], r['high'], 2)}"
                                        if r.get("low") is not None else ""),
                      *(_rule_cells(r) if with_p else []),
                      "—" if few else f"{r['wins_a']}-{r['wins_b']}-{r['ties']}")
        show(t)

    if "smaller_beats_larger_summary" in frames:
        counts = "; ".join(f"{r['regime']}: {r['n_hold']} of {r['n_cases']}"
                           for r in frames["smaller_beats_larger_summary"].iter_rows(named=True))
        console.print(Text(
            f"Smaller beats 5x larger ({metric}, macro; pairs of one source where the model "
            "with at most a fifth of the other's parameters scores higher), cases that hold at "
            f"{pct} (the one rule separates the two: sign-flip p of the tasks' differences <= "
            f"{threshold_text(level)} and the interval of Δ excludes 0): {counts}",
            no_wrap=False, overflow="fold"), soft_wrap=False)   # wrapped at the width

    difficulty = frames["task_difficulty"]
    flagged = difficulty.filter(pl.col("easy") | pl.col("hard") | pl.col("high_variance"))
    t = _table(f"Task difficulty ({where}): easy = mean > {EASY}, hard = mean < {HARD}, "
               f"high variance = sd > {HIGH_VAR} (sample sd); {difficulty['easy'].sum()} easy, "
               f"{difficulty['hard'].sum()} hard, {difficulty['high_variance'].sum()} "
               "high-variance tasks",
               [("task", "left"), ("category", "left"), ("mean", "right"), ("sd", "right"),
                ("best model", "left"), ("best", "right"), ("flags", "left")],
               empty="no task is easy, hard or high-variance")
    for r in flagged.iter_rows(named=True):
        flags = ", ".join(f for f, on in (("easy", r["easy"]), ("hard", r["hard"]),
                                          ("high variance", r["high_variance"])) if on)
        t.add_row(escape(r["label"]), escape(r["category"]), _f(r["mean"]), _f(r["sd"]),
                  names({"model": r["best_model"], "source": r.get("best_source")}),
                  _f(r["best_value"]), flags)
    show(t)

    t = _table(f"In and out of domain ({where}): micro = mean of the entry's tasks in its "
               "model's pretraining domain (in) and out of it (out), with their counts; tasks "
               "of unknown domain in neither (the rule: docs, Task and model domains)",
               [("model", "left"), ("in", "right"), ("tasks in", "right"), ("out", "right"),
                ("tasks out", "right"), ("unknown", "right")],
               empty="no entry has a score")
    for r in frames["domain_split"].iter_rows(named=True):
        t.add_row(names(r), _f(r["in_micro"]), str(r["n_in"]), _f(r["out_micro"]),
                  str(r["n_out"]), str(r["n_unknown"]))
    show(t)

    leaders = {(r["regime"], r["scope"]): r
               for r in frames["category_leaders"].iter_rows(named=True)}
    t = _table(f"Category leaders ({metric}) per regime; * where the leader changes",
               [("", "left"), ("scope", "left"),
                *(c for r in REGIMES for c in ((r, "left"), ("score", "right")))], keys=2,
               empty="no entry has a score", groups=[None, None, *(r for r in REGIMES
                                                                  for _ in range(2))])
    for r in frames["leader_changes"].iter_rows(named=True):
        cells = []
        for regime_ in REGIMES:
            lead = leaders.get((regime_, r["scope"]))
            cells += [names(lead), _f(lead["value"])] if lead else ["—", "—"]
        t.add_row("*" if r["changed"] else "", escape(r["scope"]), *cells)
    show(t)

    if "leader_change_significance" in frames:
        changes = frames["leader_change_significance"].filter("changed")
        t = _table(f"Leader changes from full ({metric}): significant when the one rule "
                   f"separates the two leaders at {pct} in both regimes, each as a comparison "
                   "with its regime's leader: the new one ahead in the new regime, the old one "
                   "ahead in full (sign-flip p of the scope's tasks <= (1 - level) / the "
                   "entries compared with the leader, and the interval of Δ excluding 0)",
                   [("regime", "left"), ("scope", "left"), ("significant", "left"),
                    ("p new regime", "right"), ("p full", "right"),
                    ("tasks", "right"), ("new leader", "left"), ("full leader", "left")],
                   keys=2, empty="no leader changes")
        for r in changes.iter_rows(named=True):
            t.add_row(escape(r["regime_to"]), escape(r["scope"]),
                      "yes" if r["significant"] else "no",
                      p_text(r["p_value_to"]), p_text(r["p_value_from"]),
                      "—" if r["n_tasks"] is None else str(r["n_tasks"]),
                      names({"model": r["leader_to"], "source": r.get("source_to")}),
                      names({"model": r["leader_from"], "source": r.get("source_from")}))
        show(t)

    if "protocol_agreement" in frames:
        t = _table(f"Probe agreement ({where}, local): Spearman rho between the geneb-v1 "
                   "rankings and the other protocol's, per column",
                   [("column", "left"), ("rho", "right"), ("p-value", "right"), ("n", "right")])
        for r in frames["protocol_agreement"].iter_rows(named=True):
            t.add_row(escape(r["column"]), _f(r["rho"]), p_text(r["p_value"]), str(r["n"]))
        show(t)
        t = _table(f"Macro rank under {GENEB_V1.name} and under the other protocol",
                   [("model", "left"), (GENEB_V1.name, "right"), ("other", "right"),
                    ("shift", "right")],
                   empty="no model has a macro score under both protocols")
        for r in frames["protocol_rank_shift"].sort("rank_a").iter_rows(named=True):
            t.add_row(escape(r["model"]), str(r["rank_a"]), str(r["rank_b"]),
                      _signed(r["shift"]))
        show(t)


def render_domain(console: Console, agg: pl.DataFrame, names: _Names, *, regime: str,
                  metric: str, domain: str) -> None:
    """`--domain`'s report: the aggregates of each entry over its own cells of the domain
    (`partial_aggregates`), then what is not computed (DOMAIN_SKIPPED) and why."""
    from store.analyses.aggregates import category_columns  # lazy: polars, duckdb, pyarrow

    cats = category_columns(agg)
    t = _table(f"Aggregates of the cells {DOMAIN_WORDS[domain]} ({regime}, {metric}): each "
               "entry over its own tasks of the domain; micro = mean of its tasks, category = "
               "mean of its tasks there, macro = mean of its categories; not ranked (the "
               "entries do not share a task set)",
               [("model", "left"), ("macro", "right"), ("categories", "right"),
                ("micro", "right"), ("tasks", "right"), *((c, "right") for c in cats)],
               empty=f"no entry has a {regime} score on a cell of this domain")
    for r in agg.iter_rows(named=True):
        t.add_row(names(r), _f(r["macro"]), str(r["n_categories"]), _f(r["micro"]),
                  str(r["n_tasks"]), *(_f(r[c]) for c in cats))
    console.print(t)
    console.print(Text(f"not computed with --domain (they compare entries on one task set): "
                       f"{', '.join(DOMAIN_SKIPPED)}", no_wrap=False, overflow="fold"),
                  soft_wrap=False)


def run(args) -> int:
    from store.current import with_entries  # lazy: polars
    from store.db import Snapshot  # lazy: polars, duckdb, pyarrow
    from store.task_health import health_row, task_health  # lazy: polars, duckdb

    paths = store_of(args)
    snap = Snapshot(paths)   # every analysis reads this one version of the results
    names = StoreNames(paths, snap)
    if args.source is not None:
        names.check_sources([args.source], option="--source")
    if args.versus is not None:
        one_protocol(args.versus, "--versus", why="rankings are compared with one")
    if args.models:
        names.check_models(args.models)
    figures = figures_folder(args, paths)
    models = with_entries(_models(paths), snap.query)
    notes = current_notes(args, snap)
    suite, chosen = reading_suite(args, snap, args.source)
    tasks, scope = scoped_tasks(args, paths, suite)
    if args.models:
        _check_models_have_results(snap, args, tasks, suite.name)
    health = task_health(snap, [t.task_id for t in tasks])
    tasks, excluded = _without_flagged(tasks, health, suite.name) if args.exclude_flagged \
        else (tasks, [])
    # Why a report would be empty, asked first: the same decode of the snapshot as `compute`'s
    # (which then frees it), and no analyses computed for nothing.
    why = None if args.json else _nothing_on_suite(snap, args, tasks)
    if why is not None:
        print(why or _no_results(args, paths), file=sys.stderr)
        return 1
    frames = compute(snap, models, regime=args.regime, metric=args.metric, source=args.source,
                     tasks=tasks, resamples=args.resamples, level=args.level,
                     bootstrap_seed=args.bootstrap_seed,
                     published=scope is None and not excluded, domain=args.domain,
                     model_ids=args.models)
    if frames and args.versus and not args.domain:
        frames |= versus(snap, args.versus, regime=args.regime, metric=args.metric, tasks=tasks)
    if frames and args.examples and not args.domain:
        frames["example_intervals"] = example_frame(paths, regime=args.regime, n=args.examples,
                                                    level=args.level, seed=args.bootstrap_seed)
    if not frames:
        message = _no_results(args, paths)
        if args.json:
            emit_json({"store": str(paths.root), "empty": True, "message": message})
        else:
            print(message, file=sys.stderr)
        return 1
    figure_lines = ([] if figures is None else
                    write_report_figures(figures, frames, models, regime=args.regime))
    if args.json:
        emit_json({"store": str(paths.root), "table_version": snap.version,
                   "as_of": snap.label, "suite": suite.name, "suite_chosen": chosen,
                   "scope": scope, "tasks": [t.task_id for t in tasks],
                   "models": args.models, "protocol": GENEB_V1.name,
                   "protocol_hash": GENEB_V1.hash, "regime": args.regime, "metric": args.metric,
                   "source": args.source, "resamples": args.resamples, "level": args.level,
                   "bootstrap_seed": args.bootstrap_seed, "domain": args.domain,
                   "notes": notes,
                   **({"not_computed_under_domain": list(DOMAIN_SKIPPED)} if args.domain
                      else {}),
                   "task_health": [health_row(t, h) for t, (_, h) in health.items()],
                   "excluded_flagged": excluded,
                   **{k: f.to_dicts() for k, f in frames.items()}})
        for line in figure_lines:
            print(line, file=sys.stderr)
        return 0
    console = table_console()
    if chosen:
        console.print(f"[dim]{escape(chosen)}[/]")
    if scope:
        console.print(escape(scope))
    if args.models:
        console.print(f"models: only {escape(', '.join(args.models))} (--models)")
    if excluded:
        console.print(escape(_excluded_line(excluded, health)))
    first = frames.get("aggregates", frames.get("domain_aggregates"))
    names = _Names(models, args.source is None and first["source"].n_unique() > 1)
    if args.domain:
        render_domain(console, frames["domain_aggregates"], names, regime=args.regime,
                      metric=args.metric, domain=args.domain)
    else:
        render(console, frames, names, regime=args.regime, metric=args.metric,
               level=args.level)
    if "example_intervals" in frames:
        import polars as pl  # lazy: polars

        from store.tables.predictions import NO_PREDICTIONS  # lazy: polars, pyarrow, numpy

        cells = frames["example_intervals"].filter(pl.col("seed").is_null()).height
        console.print(f"per-example MCC intervals of {cells} local cell(s) of {args.regime}: "
                      "in --json (example_intervals)" if cells else
                      f"per-example MCC intervals: no local predictions of {args.regime}; "
                      f"{NO_PREDICTIONS}")
    _render_health(console, health, len(tasks) + len(excluded), suite.name)
    console.print(f"[dim]results {snap.label} of {paths.results}[/]")
    for line in figure_lines:
        console.print(escape(line), soft_wrap=True)
    return 0


def _check_models_have_results(snap, args, tasks: tuple[TaskMeta, ...], suite: str) -> None:
    """`--models` (each a known name) with no geneb-v1 results (of `--source`) on the tasks:
    one GenebError naming them."""
    from store.db import query  # lazy: polars, duckdb, pyarrow

    source = "" if args.source is None else " AND source = ?"
    have = set(query(snap, "SELECT DISTINCT model FROM results WHERE protocol_hash = ? AND "
                           f"list_contains(?, task) AND list_contains(?, model){source}",
                     [GENEB_V1.hash, [t.task_id for t in tasks], list(args.models),
                      *([args.source] if args.source else [])])["model"])
    if absent := [m for m in dict.fromkeys(args.models) if m not in have]:
        what = f"{args.source} results" if args.source else "results"
        raise GenebError(f"--models: {', '.join(absent)} {'has' if len(absent) == 1 else 'have'}"
                         f" no {what} on the {len(tasks)} tasks of suite {suite};"
                         f" `geneb-engine status --models {' '.join(absent)}` shows what is "
                         "there")


def _without_flagged(tasks: tuple[TaskMeta, ...], health: dict,
                     suite: str) -> tuple[tuple[TaskMeta, ...], list[str]]:
    """(`tasks` without the flagged ones, the flagged ones left out); a GenebError where no
    task is audited or every one is flagged."""
    if not health:
        raise GenebError(f"--exclude-flagged: no task of suite {suite} has been audited; run "
                         f"`geneb-engine audit --suite {suite}` first")
    excluded = [t.task_id for t in tasks if t.task_id in health and health[t.task_id][1].flagged]
    kept = tuple(t for t in tasks if t.task_id not in excluded)
    if not kept:
        raise GenebError(f"--exclude-flagged: all {len(tasks)} task(s) in the scope are "
                         "flagged; nothing left to report (`geneb-engine audit` says why)")
    return kept, excluded


def _excluded_line(excluded: list[str], health: dict) -> str:
    return (f"--exclude-flagged: left out {len(excluded)} flagged task(s): "
            + ", ".join(f"{t} ({health[t][1].verdict})" for t in excluded))


def _render_health(console: Console, health: dict, n_tasks: int, suite: str) -> None:
    """The task-health section: the flagged tasks of the scope, and how many were audited."""
    if not health:     # wrapped at the width (the console's prints are not)
        console.print(Text(f"task health: no task of the report audited (`geneb-engine audit "
                           f"--suite {suite}` checks them)", style="dim", no_wrap=False,
                           overflow="fold"), soft_wrap=False)
        return
    flagged = {t: h for t, (_, h) in health.items() if h.flagged}
    table = FitTable(f"Task health: {len(flagged)} of {len(health)} audited task(s) flagged "
                     f"({n_tasks - len(health)} not audited); `geneb-engine audit` for details",
                     [Col("task", key=True), Col("verdict", wrap=14), Col("leak", justify="right"),
                      Col("label conflicts", justify="right"), Col("shortcut", wrap=12),
                      Col("of best model", justify="right")])
    for t, h in flagged.items():
        table.add_row(escape(t), ", ".join(h.flags), f"{h.leak_share:.1%}",
                      f"{h.conflict_share:.1%}",
                      f"{h.shortcut} {h.shortcut_mcc:.2f}" if h.shortcut else "-",
                      "-" if h.shortcut_share is None else f"{h.shortcut_share:.0%}")
    if flagged:
        console.print(table)
    else:
        console.print(Text(f"task health: all {len(health)} audited task(s) clean "
                           f"({n_tasks - len(health)} not audited)", no_wrap=False,
                           overflow="fold"), soft_wrap=False)


def example_frame(paths, *, regime: str, n: int, level: float, seed: int) -> pl.DataFrame:
    """`store.analyses.examples.example_intervals` of every local geneb-v1 cell of `regime`
    with stored predictions (each seed, and the seed mean with seed NULL)."""
    from store.analyses.examples import example_intervals  # lazy: polars, duckdb, pyarrow

    # lazy: polars, pyarrow, numpy
    from store.tables.predictions import read_labels, read_predictions

    preds = read_predictions(paths, regime=regime, protocol_hash=GENEB_V1.hash)
    labels = {(task, data_hash): y
              for task, data_hash in preds.select("task", "data_hash").unique().iter_rows()
              if (y := read_labels(paths, task, data_hash)) is not None}
    return example_intervals(preds, labels, n_resamples=n, level=level, seed=seed)


def _no_results(args, paths) -> str:
    """What to do on a store without results of `--source` (all sources: None)."""
    what = f"{args.source} results" if args.source else "results"
    official = ("import the official results with `geneb-engine import --official` (or "
                "`geneb-engine import FILE..` for submission files you have)")
    local = "compute your own with `geneb-engine fill --models MODEL..`"
    fix = {None: f"{official}, or {local}", LOCAL: local,
           "official": "import them with `geneb-engine import --official`"}.get(
        args.source, f"import {args.source} submission files with `geneb-engine import FILE..`")
    return f"no {what} for protocol {GENEB_V1.name} in {paths.root}: {fix}"


def _nothing_on_suite(snap, args, tasks) -> str | None:
    """Why the report would be empty: "" when the store has no results (of `--source`) at
    all, else a message when none are on the suite's tasks or in `--regime` there; None when
    there is something to report."""
    from store.db import query  # lazy: polars, duckdb, pyarrow

    source = "" if args.source is None else " AND source = ?"
    found = query(snap, "SELECT DISTINCT regime, list_contains(?, task) AS on_suite "
                        f"FROM results WHERE protocol_hash = ?{source}",
                  [[t.task_id for t in tasks], GENEB_V1.hash,
                   *([args.source] if args.source else [])])
    if found.is_empty():
        return ""
    on_suite = set(found.filter("on_suite")["regime"])
    have = [r for r in REGIMES if r in on_suite]
    if args.regime in have:
        return None
    what = f"{args.source} results" if args.source else "results"
    where = f"on the tasks of suite {args.suite} in {snap.paths.root}"
    if not have:
        elsewhere = suites_with_results(snap, args.source)
        named = [x for x in elsewhere if x != UNREGISTERED]
        give = "; give " + " or ".join(f"--suite {x}" for x in named) if named else ""
        fill = (f", or compute them with `geneb-engine fill --suite {args.suite} --models "
                "MODEL..`" if args.source in (None, LOCAL) else "")
        return (f"no {what} {where} (its {what} are on the tasks of "
                f"{', '.join(elsewhere) or 'other suites'}){give}{fill}")
    fill = (f", or compute them with `geneb-engine fill --suite {args.suite} --models MODEL.. "
            f"--regimes {args.regime}`" if args.source in (None, LOCAL) else "")
    return (f"no {args.regime} {what} {where} (it has {', '.join(have)}): give --regime "
            f"{have[0]}{fill}")
