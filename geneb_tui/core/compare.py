"""The comparison views, computed from the selection with `store.analyses` (no own statistics).

Each function returns a `Table` (header, rows, a note) or, for the scale view, a `Scatter`; the
screens only render them. Entries follow the main table's filters (model, source, metric).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import polars as pl

from geneb_tui.core.filters import METRIC_LABELS, Filters
from geneb_tui.core.kinds import marks_apply, no_marks_note
from geneb_tui.core.query import (
    FLAG,
    StoreSnapshot,
    domains_of,
    profiles_of,
    selection_aggregates,
    selection_scores,
    suite_task_metas,
)
from store.analyses.controlled import controlled_pairs
from store.analyses.degradation import degradation
from store.analyses.difficulty import EASY, HARD, HIGH_VAR, task_difficulty
from store.analyses.leaders import category_leaders
from store.analyses.rankings import borda, category_agreement, rank_shift, rankings
from store.analyses.scale import scale_correlation
from store.audit.verdict import Health
from store.catalog import PROFILE_HEADERS, profile_cells
from store.vocab.protocol import FEW_SHOT_REGIMES, REGIMES, is_few_shot
from store.vocab.pvalues import p_is

VIEWS: tuple[tuple[str, str], ...] = (
    ("leaders", "Ranks"),
    ("shift", "Rank shift"),
    ("agreement", "Agreement"),
    ("scale", "Scale"),
    ("degradation", "Few-shot"),
    ("tasks", "Tasks"),
    ("pairs", "Pairs"),
)


@dataclass
class Table:
    header: list[str]
    rows: list[list]
    note: str = ""
    heat: dict[int, tuple[float, float]] = field(default_factory=dict)  # col -> (lo, hi)
    row_keys: list[str] | None = None   # e.g. task ids, for a drill-down
    low_is_good: set[int] = field(default_factory=set)   # rank columns: 1 is green
    wrap: int | None = None     # a column given the width the others leave, its text wrapped


@dataclass
class Scatter:
    labels: list[str]
    params: list[int]
    values: list[float]
    column: str
    rho: float | None
    p_value: float | None
    n: int
    note: str = ""


@dataclass
class Failed:
    """A view that could not be computed (a bug): its note says why."""

    note: str


@dataclass(frozen=True)
class CompareOptions:
    """What the comparison tabs can change: the two regimes and the score column."""

    regime_a: str = "full"
    regime_b: str = "10shot"
    column: str = "macro"

    @classmethod
    def for_filters(cls, filters: Filters) -> CompareOptions:
        """What the tabs open with: the selection's regime against full (10shot from full),
        the selection's category (else macro)."""
        other = "full" if is_few_shot(filters.regime) else FEW_SHOT_REGIMES[0]
        return cls(regime_a=filters.regime, regime_b=other, column=filters.category or "macro")


def _names(snap: StoreSnapshot, frame: pl.DataFrame) -> list[str]:
    multi = frame["source"].n_unique() > 1 if "source" in frame.columns and frame.height else False
    out = []
    for r in frame.iter_rows(named=True):
        name = snap.model_meta(r["model"]).get("display") or r["model"]
        out.append(f"{name} [{r['source']}]" if multi else name)
    return out


def _fmt_rho(rho: float | None) -> str:
    return "n/a" if rho is None or (isinstance(rho, float) and math.isnan(rho)) else f"{rho:+.2f}"


def leaders(snap: StoreSnapshot, filters: Filters, opts: CompareOptions) -> Table:
    """Ranks per category side by side, entries ordered by their Borda count."""
    agg = selection_aggregates(snap, filters)
    cats = snap.categories(filters.suite)
    if agg.is_empty():
        return Table(["Model"], [], "No results in this selection.")
    ranks = rankings(agg, ["macro", *cats])
    order = borda(agg, cats)
    frame = order.join(ranks, on=["model", "source"], how="left", maintain_order="left")
    header = ["Model", "Borda", "Macro", *cats]
    rows = [[n, r["borda_rank"], r["macro"], *(r[c] for c in cats)]
            for n, r in zip(_names(snap, frame), frame.iter_rows(named=True), strict=True)]
    n = frame.height
    heat = {i: (1.0, float(max(n, 2))) for i in range(1, len(header))}
    lead = category_leaders({filters.regime: agg})
    wins = lead.filter(pl.col("scope").is_in(cats)).group_by("model").len().sort(
        ["len", "model"], descending=[True, False])
    top = ", ".join(f"{snap.model_meta(m).get('display') or m} ×{n}"
                    for m, n in wins.head(3).iter_rows())
    note = (f"Rank (1 = best) per category, {filters.regime}, {METRIC_LABELS[filters.metric]}; "
            f"ordered by Borda count. Most category wins: {top}.")
    return Table(header, rows, note, heat, low_is_good=set(heat))


def shift(snap: StoreSnapshot, filters: Filters, opts: CompareOptions) -> Table:
    a = selection_aggregates(snap, filters, regime=opts.regime_a)
    b = selection_aggregates(snap, filters, regime=opts.regime_b)
    col = opts.column
    if a.is_empty() or b.is_empty() or col not in a.columns:
        return Table(["Model"], [], f"No entries scored in both {opts.regime_a} and "
                                    f"{opts.regime_b}.")
    frame = rank_shift(a, b, col)
    header = ["Model", f"{opts.regime_a}", f"#{opts.regime_a}", f"{opts.regime_b}",
              f"#{opts.regime_b}", "Shift"]
    rows = [[n, r["value_a"], r["rank_a"], r["value_b"], r["rank_b"], r["shift"]]
            for n, r in zip(_names(snap, frame), frame.iter_rows(named=True), strict=True)]
    shifts = [abs(r[-1]) for r in rows] or [1]
    m = float(max(max(shifts), 1))
    note = (f"{col}: rank in {opts.regime_a} vs {opts.regime_b} ({METRIC_LABELS[filters.metric]});"
            " shift > 0 climbs. Keys: a/b change the regimes, o the column.")
    return Table(header, rows, note, heat={5: (-m, m)})


def agreement(snap: StoreSnapshot, filters: Filters, opts: CompareOptions) -> Table:
    agg = selection_aggregates(snap, filters)
    cats = snap.categories(filters.suite)
    if agg.height < 3:
        return Table(["Category"], [], "Spearman ρ needs at least three models.")
    frame = category_agreement(agg, cats)
    header = ["Category", *cats]
    rows = [[r["category"], *(r[c] for c in cats)] for r in frame.iter_rows(named=True)]
    note = (f"Spearman ρ between the model rankings of two categories ({agg.height} entries, "
            f"{filters.regime}, {METRIC_LABELS[filters.metric]}).")
    return Table(header, rows, note, heat={i: (-1.0, 1.0) for i in range(1, len(header))})


def scale(snap: StoreSnapshot, filters: Filters, opts: CompareOptions) -> Scatter:
    agg = selection_aggregates(snap, filters)
    col = opts.column if opts.column in agg.columns else "macro"
    if agg.is_empty():
        return Scatter([], [], [], col, None, None, 0, "No results in this selection.")
    corr = scale_correlation(agg, snap.models, columns=[col])
    sized = (agg.join(snap.models.select(pl.col("model_id").alias("model"), "params"),
                      on="model", how="left")
             .filter((pl.col("params") > 0) & pl.col(col).is_not_null()))
    row = corr.row(0, named=True) if corr.height else {"rho": None, "p_value": None, "n": 0}
    if "source" in corr.columns and corr.height > 1:
        row = max(corr.iter_rows(named=True), key=lambda r: r["n"])
    note = (f"{col} vs parameters (log scale), {filters.regime}, "
            f"{METRIC_LABELS[filters.metric]}: Spearman ρ = {_fmt_rho(row['rho'])}"
            + (f" ({p_is(row['p_value'])}, n = {row['n']})" if row["p_value"] is not None
               else f" (n = {row['n']})")
            + (f"; the {min(5, sized.height)} best are named (orange)" if sized.height else ""))
    return Scatter(_names(snap, sized), sized["params"].to_list(), sized[col].to_list(), col,
                   row["rho"], row["p_value"], row["n"], note)


def few_shot(snap: StoreSnapshot, filters: Filters, opts: CompareOptions) -> Table:
    aggs = {r: selection_aggregates(snap, filters, regime=r) for r in REGIMES}
    col = opts.column
    if all(a.is_empty() for a in aggs.values()):
        return Table(["Model"], [], "No results in this selection.")
    deg = degradation(aggs).filter(pl.col("scope") == col)
    deg = deg.sort(["retention_1shot", "model"], descending=[True, False], nulls_last=True)
    header = ["Model", "full", "10shot", "1shot", "Δ10", "Δ1", "keep10", "keep1"]
    rows = [[n, r["full"], r["10shot"], r["1shot"], r["drop_10shot"], r["drop_1shot"],
             r["retention_10shot"], r["retention_1shot"]]
            for n, r in zip(_names(snap, deg), deg.iter_rows(named=True), strict=True)]
    note = (f"{col} per regime ({METRIC_LABELS[filters.metric]}): Δ = full − few-shot, keep = "
            "few-shot / full; ordered by what a model keeps with one example per class.")
    heat = {}
    for i in (1, 2, 3, 6, 7):
        vals = [r[i] for r in rows if r[i] is not None]
        if vals:
            heat[i] = (min(vals), max(vals))
    return Table(header, rows, note, heat)


def tasks(snap: StoreSnapshot, filters: Filters, opts: CompareOptions) -> Table:
    long = selection_scores(snap, filters)
    metas = suite_task_metas(snap, filters)
    if filters.category:
        metas = [t for t in metas if t.category == filters.category]
    frame = task_difficulty(long, tasks=metas)
    kingdom = {t.task_id: t.kingdom for t in metas}
    profile = profiles_of(snap)
    header = ["Task", "Category", "n", "Mean", "SD", "Best", "Best value", "Marks", "Health",
              "Kingdom", *(h.capitalize() for h in PROFILE_HEADERS)]
    rows, keys = [], []
    marked = marks_apply(snap.kind)
    for r in frame.iter_rows(named=True):
        keys.append(r["task"])
        marks = " ".join(m for m, on in (("easy", r["easy"]), ("hard", r["hard"]),
                                         ("high-var", r["high_variance"])) if on and marked)
        best = r.get("best_model")
        best = (snap.model_meta(best).get("display") or best) if best else ""
        rows.append([r["label"], r["category"], r["n_models"], r["mean"], r["sd"], best,
                     r["best_value"], marks, health_mark(snap.health.get(r["task"])),
                     kingdom.get(r["task"], ""), *profile_cells(profile.get(r["task"]), snap.kind)])
    thresholds = (f"easy = mean > {EASY:.2f}, hard = mean < {HARD:.2f}, high-var = sd > "
                  f"{HIGH_VAR:.2f}" if marked else no_marks_note(snap.kind))
    note = (f"Per task across the {long.select('model', 'source').unique().height} entries shown "
            f"({filters.regime}, {METRIC_LABELS[filters.metric]}): {thresholds}; health: the "
            f"audit's verdict, {FLAG} flagged (geneb-engine audit); the task's rows, classes, "
            "smallest class share and lengths min-median-max (? = not recorded: `geneb-engine "
            "data verify` records them). Enter: the task across models.")
    means = [r[3] for r in rows if r[3] is not None]
    heat = {3: (min(means), max(means))} if means else {}
    return Table(header, rows, note, heat, row_keys=keys)


def task_values(snap: StoreSnapshot, filters: Filters, task: str) -> Table:
    """One task across the models shown: value, rank and distance from the task mean."""
    long = selection_scores(snap, filters).filter(pl.col("task") == task)
    meta = snap.tasks.filter(pl.col("task_id") == task)
    label = meta["label"][0] if meta.height else task
    header = ["Model", "Source", "Value", "Rank", "vs mean", "Domain"]
    if long.is_empty():
        return Table(header, [], f"{label}: no results in this selection.")
    stats = task_difficulty(long, tasks=suite_task_metas(snap, filters)).filter(
        pl.col("task") == task).row(0, named=True)
    wide = long.select("model", "source", "value")
    ranked = wide.join(rankings(wide, ["value"]).rename({"value": "rank"}),
                       on=["model", "source"]).sort(["rank", "model"])
    domain_of = domains_of(snap)
    rows = [[snap.model_meta(r["model"]).get("display") or r["model"], r["source"], r["value"],
             r["rank"], r["value"] - stats["mean"], domain_of(r["model"], task)]
            for r in ranked.iter_rows(named=True)]
    marks = [m for m, on in (("easy", stats["easy"]), ("hard", stats["hard"]),
                             ("high-variance", stats["high_variance"]))
             if on and marks_apply(snap.kind)]
    sd = "n/a" if stats["sd"] is None else f"{stats['sd']:.3f}"
    where = (f"{meta['organism'][0]}, {meta['kingdom'][0]}; " if meta.height else "")
    shown = dict(zip(PROFILE_HEADERS, profile_cells(profiles_of(snap).get(task), snap.kind),
                     strict=True))
    where += ", ".join(f"{h} {v}" for h, v in shown.items()) + "; "
    note = (f"[b]{label}[/b] ({stats['category']}; {where}domain: the model's pretraining, "
            f"in/out/unknown): mean {stats['mean']:.3f}, sd {sd}, "
            f"{stats['n_models']} models" + (f" — {', '.join(marks)}" if marks else "")
            + f"; {filters.regime}, {METRIC_LABELS[filters.metric]}.\n"
            + health_text(snap.health.get(task)))
    vals = [r[2] for r in rows]
    return Table(header, rows, note, heat={2: (min(vals), max(vals))},
                 row_keys=[r["model"] for r in ranked.iter_rows(named=True)])


def pairs(snap: StoreSnapshot, filters: Filters, opts: CompareOptions) -> Table:
    """Controlled pairs: models that differ in exactly one catalog attribute."""
    agg = selection_aggregates(snap, filters)
    header = ["Model A", "Model B", "Differs in", "A", "B", "Δ macro", "A wins", "B wins"]
    if agg.height < 2:
        return Table(header, [], "Controlled pairs need at least two models.")
    frame = controlled_pairs(agg, snap.models).sort(
        pl.col("macro").abs(), descending=True, nulls_last=True)

    def name(m: str) -> str:
        return snap.model_meta(m).get("display") or m

    rows = [[name(r["model_a"]), name(r["model_b"]), r["attribute"], r["value_a"], r["value_b"],
             r["macro"], r["wins_a"], r["wins_b"]] for r in frame.iter_rows(named=True)]
    deltas = [abs(r[5]) for r in rows if r[5] is not None] or [1.0]
    m = max(deltas)
    note = (f"{len(rows)} pairs of models that differ in exactly one of architecture, "
            "tokenization, pretraining data and scale band; Δ macro = A − B, wins count "
            f"categories ({filters.regime}, {METRIC_LABELS[filters.metric]}).")
    return Table(header, rows, note, heat={5: (-m, m)})


BUILDERS = {"leaders": leaders, "shift": shift, "agreement": agreement, "scale": scale,
            "degradation": few_shot, "tasks": tasks, "pairs": pairs}


def compute(name: str, snap: StoreSnapshot, filters: Filters, opts: CompareOptions):
    return BUILDERS[name](snap, filters, opts)


def health_mark(h: Health | None) -> str:
    """A task list's health cell: the flags after a mark, "clean", or "" (not audited)."""
    if h is None:
        return ""
    return f"{FLAG} {', '.join(h.flags)}" if h.flagged else h.verdict


def health_text(h: Health | None) -> str:
    """The task drill-down's health line (`store.audit.verdict`)."""
    if h is None:
        return "Health: not audited (geneb-engine audit --suite SUITE checks it)."
    shortcut = ("no shortcut probe" if h.shortcut is None else
                f"best shortcut {h.shortcut} (MCC {h.shortcut_mcc:.2f}"
                + (f", {h.shortcut_share:.0%} of the best model's" if h.shortcut_share
                   is not None else "") + ")")
    verdict = f"{FLAG} {', '.join(h.flags)}" if h.flagged else h.verdict
    return (f"Health: {verdict} — test rows with a copy in train {h.leak_share:.1%}, rows with "
            f"conflicting labels {h.conflict_share:.1%}, {shortcut}.")

