"""`geneb-engine report`: every GENEB analysis of the store, as rich tables or one JSON document.

Single-regime analyses (aggregates, rankings and Borda, category agreement, scale, controlled
pairs, task difficulty) use `--regime`; cross-regime ones (rank shift, Spearman between regimes,
few-shot degradation, category leaders) use all three regimes. On a store without results it
says how to fill it and exits 1 (nothing to report).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from engine.commands.common import (
    OUTPUT_WIDTH,
    StoreNames,
    add_suite_args,
    choice_of,
    emit_json,
    store_of,
    suite_of,
    suites_with_results,
    table_console,
)
from engine.commands.layout import Col, FitTable
from store.catalog import TaskMeta
from store.protocol import GENEB_V1, METRICS, REGIMES

if TYPE_CHECKING:
    import polars as pl

# Columns when stdout is not a terminal (piped to a file or a pager) and $COLUMNS is unset; on
# a terminal, its width. Tables wider than that are split into blocks of columns.
REPORT_WIDTH = OUTPUT_WIDTH


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
    add_suite_args(p)
    p.add_argument("--versus", metavar="PROTOCOL",
                   help="also compare the rankings of your local geneb-v1 results with those of "
                        "a variant protocol you filled (e.g. mlp-h256: linear vs MLP stability)")
    p.set_defaults(handler=run)


def versus(snap, name: str, *, regime: str, metric: str,
           tasks: tuple[TaskMeta, ...]) -> dict[str, pl.DataFrame]:
    """Spearman agreement between the local geneb-v1 rankings and protocol `name`'s."""
    from store import analyses as A
    from store.db import query
    from store.errors import GenebError
    from store.protocol import protocol_named

    other = protocol_named(name)   # None for a group (a whole sweep): not one protocol
    if other is None or query(snap, "SELECT 1 FROM results WHERE source = 'local' "
                                    "AND protocol_hash = ? LIMIT 1", [other.hash]).is_empty():
        raise GenebError(f"no local results for protocol {name!r} in {snap.paths.root}; "
                         f"compute them with `geneb-engine fill --protocol {name} "
                         "--models MODEL..`")
    aggs = [A.aggregates(A.scores_of(A.seed_means(snap, protocol_hash=h, source="local"),
                                     regime=regime, metric=metric, with_source=False),
                         tasks=tasks)
            for h in (GENEB_V1.hash, other.hash)]
    return {"protocol_agreement": A.protocol_agreement(*aggs),
            "protocol_rank_shift": A.rank_shift(*aggs)}


def _models(paths) -> pl.DataFrame:
    """The store's model catalog, completed with the built-in and user entries it lacks."""
    from store.catalog import models_with_builtins

    return models_with_builtins(paths)


def compute(store, models: pl.DataFrame, *, regime: str, metric: str, source: str | None,
            tasks: tuple[TaskMeta, ...] | None = None) -> dict[str, pl.DataFrame]:
    """Every analysis frame of the report, by name, from one snapshot of `store` (a
    `StorePaths` or a `store.db.Snapshot`); empty when the store has no results."""
    from store import analyses as A
    from store.db import snapshot_of
    from store.reference import leaderboard_differences, read_leaderboard

    snap = snapshot_of(store)
    means = A.seed_means(snap, protocol_hash=GENEB_V1.hash, source=source)
    snap.close()   # the analyses need no DuckDB: free its memory (a later query reopens it)
    if means.is_empty():
        return {}
    scores = {r: A.scores_of(means, regime=r, metric=metric, with_source=source is None)
              for r in REGIMES}
    aggs = {r: A.aggregates(s, tasks=tasks) for r, s in scores.items()}
    agg = aggs[regime]
    leaders = A.category_leaders(aggs)
    degradation = A.degradation(aggs)
    board = read_leaderboard(snap.paths, regime=regime, metric=metric)
    return {
        "aggregates": agg,
        "leaderboard_differences": leaderboard_differences(agg, board),
        "rankings": A.rankings(agg),
        "borda": A.borda(agg),
        **{f"rank_shift_full_{r}": A.rank_shift(aggs["full"], aggs[r]) for r in REGIMES[1:]},
        "spearman_regimes": A.spearman_regimes(aggs),
        "category_agreement": A.category_agreement(agg),
        "degradation": degradation,
        "degradation_summary": A.degradation_summary(degradation),
        "scale": A.scale_correlation(agg, models),
        "controlled_pairs": A.controlled_pairs(agg, models),
        "task_difficulty": A.task_difficulty(scores[regime], tasks=tasks),
        "category_leaders": leaders,
        "leader_changes": A.leader_changes(leaders),
    }


def _f(value, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


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


def render(console: Console, frames: dict[str, pl.DataFrame], names: _Names, *,
           regime: str, metric: str) -> None:
    import polars as pl

    from store.analyses.aggregates import category_columns
    from store.analyses.difficulty import EASY, HARD, HIGH_VAR

    where = f"{regime}, {metric}"
    agg = frames["aggregates"]
    cats = category_columns(agg)
    shown: list[FitTable] = []

    def show(table: FitTable) -> None:
        """Print a table, one blank line after the one before."""
        if shown:
            console.print()
        console.print(table)
        shown.append(table)

    t = _table(f"Aggregates ({where}): category = mean of its tasks, micro = mean of the "
               "tasks, macro = mean of the categories; — where a task is missing",
               [("#", "right"), ("model", "left"), ("macro", "right"), ("micro", "right"),
                *((c, "right") for c in cats), ("missing", "right")], keys=2)
    ranks = {_key(r): r for r in frames["rankings"].iter_rows(named=True)}
    for r in agg.iter_rows(named=True):
        t.add_row(str(ranks[_key(r)]["macro"] or "—"), names(r),
                  _f(r["macro"]), _f(r["micro"]), *(_f(r[c]) for c in cats),
                  str(r["n_missing"]))
    show(t)
    published = frames["leaderboard_differences"]
    if published.height:
        worst = published["difference"].abs().max()
        console.print(f"Imported leaderboard.json: {published['model'].n_unique()} models in "
                      f"common; largest |aggregate - published| = "
                      f"{'—' if worst is None else f'{worst:.1e}'}")

    t = _table(f"Rankings per category ({where}) and Borda count (n - rank points per "
               "category, summed)",
               [("#", "right"), ("model", "left"), ("Borda", "right"), ("mean rank", "right"),
                *((c, "right") for c in cats)], keys=2)
    for r in frames["borda"].iter_rows(named=True):
        rk = ranks[_key(r)]
        t.add_row(str(r["borda_rank"] or "—"), names(r), str(r["borda"] or "—"),
                  _f(r["mean_rank"], 1), *(str(rk[c] or "—") for c in cats))
    show(t)

    shifts = {r: {_key(x): x for x in frames[f"rank_shift_full_{r}"].iter_rows(named=True)}
              for r in REGIMES[1:]}
    t = _table(f"Rank shift of macro ({metric}) from full: + climbs, - falls",
               [("model", "left"), ("full", "right"),
                *((f"{r} rank", "right") for r in REGIMES[1:]),
                *((f"full→{r}", "right") for r in REGIMES[1:])],
               empty="no entry has a macro score (every task) in full and in 10shot")
    for r in frames["rank_shift_full_10shot"].iter_rows(named=True):
        rows = [shifts[k].get(_key(r)) for k in REGIMES[1:]]
        t.add_row(names(r), str(r["rank_a"]),
                  *(str(x["rank_b"]) if x else "—" for x in rows),
                  *(_signed(x["shift"]) if x else "—" for x in rows))
    show(t)

    t = _table(f"Spearman rho between the regimes' macro rankings ({metric})",
               [("regimes", "left"), ("rho", "right"), ("p-value", "right"), ("n", "right")],
               empty=_too_few(frames["spearman_regimes"], "with a macro score in both regimes"))
    for r in _defined(frames["spearman_regimes"]):
        t.add_row(f"{r['regime_a']} vs {r['regime_b']}", _f(r["rho"]),
                  "—" if r["p_value"] is None else f"{r['p_value']:.2g}", str(r["n"]))
    show(t)

    t = _table(f"Spearman rho between category rankings ({where})",
               [("", "left"), *((c, "right") for c in cats)],
               empty="rho needs at least 3 entries with both category scores, not all equal")
    agreement = frames["category_agreement"]
    for r in (agreement.iter_rows(named=True)
              if any(agreement[c].drop_nulls().len() for c in cats) else ()):
        t.add_row(escape(r["category"]), *(_f(r[c], 2) for c in cats))
    show(t)

    few = REGIMES[1:]
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
    t = _table(f"Scale ({where}): Spearman rho between parameter count and score",
               [*([("source", "left")] if by_source else []),
                ("scope", "left"), ("rho", "right"), ("p-value", "right"), ("n", "right")],
               keys=2 if by_source else 1,
               empty=_too_few(frames["scale"], "with a known parameter count (the k-mer "
                                               "baselines have none) and the score"))
    for r in _defined(frames["scale"]):
        t.add_row(*([escape(r["source"])] if by_source else []), escape(r["scope"]), _f(r["rho"]),
                  "—" if r["p_value"] is None else f"{r['p_value']:.2g}", str(r["n"]))
    show(t)

    pairs = frames["controlled_pairs"].sort("attribute", "model_a", "model_b")
    t = _table(f"Controlled pairs ({where}): models differing in exactly one attribute; "
               "Δ = a - b, wins over the categories",
               [("attribute", "left"), ("model a", "left"), ("model b", "left"),
                ("a", "left"), ("b", "left"), ("Δ macro", "right"),
                ("wins a-b-ties", "right")], keys=3,
               empty="no two models (of one source) differ in exactly one of architecture "
                     "family, tokenization family, pretraining data and scale band")
    for r in pairs.iter_rows(named=True):
        t.add_row(escape(r["attribute"]), names(r, "model_a"), names(r, "model_b"),
                  escape(r["value_a"]), escape(r["value_b"]), _f(r["macro"]),
                  f"{r['wins_a']}-{r['wins_b']}-{r['ties']}")
    show(t)

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

    if "protocol_agreement" in frames:
        t = _table(f"Probe agreement ({where}, local): Spearman rho between the geneb-v1 "
                   "rankings and the other protocol's, per column",
                   [("column", "left"), ("rho", "right"), ("p-value", "right"), ("n", "right")])
        for r in frames["protocol_agreement"].iter_rows(named=True):
            t.add_row(escape(r["column"]), _f(r["rho"]), _f(r["p_value"], 2), str(r["n"]))
        show(t)
        t = _table("Macro rank under geneb-v1 and under the other protocol",
                   [("model", "left"), ("geneb-v1", "right"), ("other", "right"),
                    ("shift", "right")],
                   empty="no model has a macro score under both protocols")
        for r in frames["protocol_rank_shift"].sort("rank_a").iter_rows(named=True):
            t.add_row(escape(r["model"]), str(r["rank_a"]), str(r["rank_b"]),
                      _signed(r["shift"]))
        show(t)


def run(args) -> int:
    from store.db import Snapshot

    paths = store_of(args)
    snap = Snapshot(paths)   # every analysis reads this one version of the results
    names = StoreNames(paths, snap)
    if args.source is not None:
        names.check_sources([args.source], option="--source")
    if args.versus is not None:
        names.check_protocols([args.versus], option="--versus")
    models = _models(paths)
    tasks = suite_of(args, paths).tasks
    # Why a report would be empty, asked first: the same decode of the snapshot as `compute`'s
    # (which then frees it), and no analyses computed for nothing.
    why = None if args.json else _nothing_on_suite(snap, args, tasks)
    if why is not None:
        print(why or _no_results(args, paths), file=sys.stderr)
        return 1
    frames = compute(snap, models, regime=args.regime, metric=args.metric, source=args.source,
                     tasks=tasks)
    if frames and args.versus:
        frames |= versus(snap, args.versus, regime=args.regime, metric=args.metric, tasks=tasks)
    if not frames:
        message = _no_results(args, paths)
        if args.json:
            emit_json({"store": str(paths.root), "empty": True, "message": message})
        else:
            print(message, file=sys.stderr)
        return 1
    if args.json:
        emit_json({"store": str(paths.root), "table_version": snap.version,
                   "as_of": snap.label, "protocol": GENEB_V1.name,
                   "protocol_hash": GENEB_V1.hash, "regime": args.regime, "metric": args.metric,
                   "source": args.source, **{k: f.to_dicts() for k, f in frames.items()}})
        return 0
    console = table_console()
    mixed = args.source is None and frames["aggregates"]["source"].n_unique() > 1
    render(console, frames, _Names(models, mixed), regime=args.regime,
           metric=args.metric)
    console.print(f"[dim]results {snap.label} of {paths.results}[/]")
    return 0


def _no_results(args, paths) -> str:
    """What to do on a store without results of `--source` (all sources: None)."""
    what = f"{args.source} results" if args.source else "results"
    official = ("import the official results with `geneb-engine import --official` (or "
                "`geneb-engine import FILE..` for submission files you have)")
    local = "compute your own with `geneb-engine fill --models MODEL..`"
    fix = {None: f"{official}, or {local}", "local": local,
           "official": "import them with `geneb-engine import --official`"}.get(
        args.source, f"import {args.source} submission files with `geneb-engine import FILE..`")
    return f"no {what} for protocol {GENEB_V1.name} in {paths.root}: {fix}"


def _nothing_on_suite(snap, args, tasks) -> str | None:
    """Why the report would be empty: "" when the store has no results (of `--source`) at
    all, else a message when none are on the suite's tasks or in `--regime` there; None when
    there is something to report."""
    from store.db import query

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
        named = [x for x in elsewhere if x in ("geneb-v1", "geneb-mini")]
        give = (f"; give --suite {' or '.join(named)}" if named else
                "; give --suite the folder of its tasks" if elsewhere else "")
        fill = (f", or compute them with `geneb-engine fill --suite {args.suite} --models "
                "MODEL..`" if args.source in (None, "local") else "")
        return (f"no {what} {where} (its {what} are on the tasks of "
                f"{', '.join(elsewhere) or 'other suites'}){give}{fill}")
    fill = (f", or compute them with `geneb-engine fill --suite {args.suite} --models MODEL.. "
            f"--regimes {args.regime}`" if args.source in (None, "local") else "")
    return (f"no {args.regime} {what} {where} (it has {', '.join(have)}): give --regime "
            f"{have[0]}{fill}")
