"""Which differences are real: what the dashboard shows about uncertainty (UI-free).

Nothing is estimated here. The intervals, P(A > B) and the leader's tie group come from
`store.analyses.uncertainty` (the task bootstrap: tasks resampled, within each category for the
category and macro scores, one index set shared by every entry, so every comparison is paired;
the seeds of each drawn task too where local per-seed rows exist); the average ranks, Friedman's
test, the Nemenyi critical difference and the Wilcoxon signed-rank test come from
`store.analyses.ranktests`. This module picks the entries and the tasks of a selection, calls
those functions and shapes what the widgets show.

- `table_intervals(snap, filters)`: the main table's intervals, one row per entry and scope
  (micro, macro, each category): the score's 95 % percentile interval, the rank interval (the
  2.5 and 97.5 % quantiles of the entry's resampled ranks, rounded outwards) and whether the
  entry is in the leader's tie group (the one rule does not separate it from the leader:
  `uncertainty.leader_tie_group`). The entries are
  those `filters` select: the app passes the store's entries for the suite, regime and metric
  (every model filter off) when the cells show the rank among all entries of the store, and the
  entries shown when they show the rank among the rows shown (key `n`), so an interval is always
  over the same entries as the rank beside it. Level: 95 %; resampling unit: tasks (and seeds);
  `TABLE_RESAMPLES` resamples, seed 0.
- `significance(snap, filters)`: the Significance view over the entries shown and the tasks of
  the selection (one category's, or the whole suite's): average ranks, Friedman and the Nemenyi
  CD (alpha 0.05) with a text critical-difference diagram, the P(A > B) matrix in the scope
  (the category, or macro) from `RESAMPLES` resamples, the leader's tie group. Only the
  entries with a score on every task of the selection take part (a missing task would change
  every other entry's ranks); the others are named in the note.
- `two_models(sig, a, b)`: the per-task differences of two entries, wins / losses / ties, the
  Wilcoxon signed-rank p-value (two-sided, over the tasks), the paired bootstrap interval of
  the scope difference (the same resamples as the matrix: the percentile interval of A - B)
  and the one rule's decision on the pair (`store.analyses.differ`: the sign-flip test of the
  per-task differences; as a comparison with the leader when A or B leads).

Every "tied", "not separable" or "differs" shown comes from the one rule (`leader_tie_group`,
`uncertainty.pair_verdicts`); the P(A > B) matrix and the rank intervals describe the
resamples, and the Nemenyi critical difference is its own named test.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from geneb_tui.core.compare import Table
from geneb_tui.core.filters import METRIC_LABELS, Filters
from geneb_tui.core.intervals import Intervals
from geneb_tui.core.query import StoreSnapshot, selection_scores, suite_task_metas
from store.analyses.aggregates import aggregates
from store.analyses.differ import claim_text, decide, threshold_text, too_few
from store.analyses.examples import mcnemar, paired_mcc_difference
from store.analyses.intervals import scope_intervals
from store.analyses.presets import (
    EXAMPLE_RESAMPLES,
    LEVEL,
    RESAMPLES,
    SEED,
    TABLE_RESAMPLES,
)
from store.analyses.ranktests import ALPHA, average_ranks, friedman, wilcoxon_holm
from store.analyses.uncertainty import (
    bootstrap,
    interval_text,
    leader_tie_group,
    win_probabilities,
)
from store.catalog import TaskMeta
from store.db import Snapshot
from store.paths import StorePaths
from store.seedmeans import per_seed
from store.tables.predictions import NO_PREDICTIONS, Predictions
from store.vocab.bootstrap import ONE_TASK_NOTE
from store.vocab.kinds import CLASSIFICATION
from store.vocab.protocol import GENEB_V1
from store.vocab.pvalues import p_is, p_text
from store.vocab.sources import LOCAL

_INTERVAL_SCHEMA = {"model": pl.String, "source": pl.String, "scope": pl.String,
                    "value": pl.Float64, "low": pl.Float64, "high": pl.Float64,
                    "rank": pl.Int64, "rank_low": pl.Int64, "rank_high": pl.Int64,
                    "p_best": pl.Float64, "leader": pl.Boolean,
                    "tied_with_leader": pl.Boolean}


# -- per-seed rows (the two-level bootstrap of local runs) ------------------------------------
_SEED_ROWS: dict[tuple, pl.DataFrame | None] = {}
_SEED_LOCK = threading.Lock()


def store_seed_rows(snap: StoreSnapshot) -> pl.DataFrame | None:
    """The per-seed rows of the snapshot's protocol (`store.seedmeans.per_seed`), read once per
    store version; None when no cell's seeds differ (official imports: one row per cell), or
    when the store has moved on since the snapshot (its seed rows could disagree with the
    snapshot's seed means: task-level resampling only until Ctrl+R). Runs in a worker."""
    if snap.kind != CLASSIFICATION:
        return None   # the rank intervals of another kind: over its tasks only, as yet
    sds = [c for c in ("mcc_sd", "acc_sd", "f1_macro_sd") if c in snap.scores.columns]
    if not sds or not snap.scores.select(pl.any_horizontal(pl.col(sds) > 0).any()).item():
        return None   # no cell whose seeds differ: nothing to resample below the tasks
    key = (str(snap.root), snap.version, snap.protocol_hash)
    with _SEED_LOCK:
        if key in _SEED_ROWS:
            return _SEED_ROWS[key]
        rows = None
        if snap.version is not None:
            current = Snapshot(snap.paths)
            try:
                if current.version == snap.version:
                    rows = per_seed(current, protocol_hash=[snap.protocol_hash])
                    rows = rows.filter(pl.col("seed").is_not_null())
                    rows = rows if rows.height else None
            finally:
                current.close()
        if len(_SEED_ROWS) > 8:
            _SEED_ROWS.clear()
        _SEED_ROWS[key] = rows
        return rows


# -- the main table ------------------------------------------------------------------------------
def table_intervals(snap: StoreSnapshot, filters: Filters, *, n: int = TABLE_RESAMPLES,
                    seed: int = SEED, level: float = LEVEL,
                    seed_rows: pl.DataFrame | None = None) -> Intervals:
    """[model, source, scope, value, low, high, rank, rank_low, rank_high, p_best, leader,
    tied_with_leader] for the entries `filters` selects (suite, regime, metric and model
    filters; the category is ignored: every scope is computed) — see the module docstring.

    Level: `level` (95 %); resampling unit: the suite's tasks, within each category for the
    categories and macro (`store.analyses.uncertainty.draw`), and the seeds of each drawn task
    where `seed_rows` (a `store.seedmeans.per_seed` frame) holds local per-seed rows. Entries
    with every task take part in every scope; a category in which more entries are complete
    than in the whole suite (partial local runs) is drawn again over its own tasks, so its
    ranks are over the same entries as the table's rank of that column."""
    long = selection_scores(snap, filters)
    tasks = suite_task_metas(snap, filters)
    empty = Intervals(pl.DataFrame(schema=_INTERVAL_SCHEMA), n, seed, level)
    if long.is_empty() or not tasks:
        return empty
    def drawn(over: list[TaskMeta]):
        return bootstrap(long, tasks=over, regime=filters.regime, metric=filters.metric,
                         per_seed_rows=seed_rows, n=n, seed=seed)

    draws = drawn(tasks)
    frames = [scope_intervals(draws, level, draws.scopes)] if draws.entries.height else []
    seeds_resampled = draws.seeds_resampled
    agg = aggregates(long, tasks=tasks)
    for category in draws.scopes[2:]:
        if agg[category].is_not_null().sum() <= draws.entries.height:
            continue
        own = [t for t in tasks if t.category == category]
        part = drawn(own)
        seeds_resampled |= part.seeds_resampled
        frames = [f.filter(pl.col("scope") != category) for f in frames]
        frames.append(scope_intervals(part, level, (category,)))
    if not frames:
        return empty
    frame = pl.concat(frames, how="diagonal_relaxed").select(list(_INTERVAL_SCHEMA)).cast(
        _INTERVAL_SCHEMA)
    return Intervals(frame, n, seed, level, seeds_resampled)


# -- the Significance view -----------------------------------------------------------------------
@dataclass
class Significance:
    """Everything the Significance view shows for one selection (see `significance`)."""

    note: str                                   # the summary, or why nothing can be shown
    scope: str = "macro"
    scope_label: str = ""
    entries: list[str] = field(default_factory=list)      # ids, best average rank first
    labels: list[str] = field(default_factory=list)       # display names, same order
    average_ranks: list[float] = field(default_factory=list)
    test: dict | None = None                    # `ranktests.friedman`'s row
    diagram: list[str] = field(default_factory=list)
    groups: list[tuple[int, int]] = field(default_factory=list)   # (first, last) positions
    matrix: Table | None = None
    matrix_note: str = ""
    win: dict[tuple[str, str], float] = field(default_factory=dict)   # P(A > B)
    tie_group: list[str] = field(default_factory=list)    # ids in the leader's tie group
    leader: str | None = None                   # the scope's leader (best point score)
    point: np.ndarray | None = None             # (E,) scope scores as observed
    values: np.ndarray | None = None            # (n, E) resampled scope scores
    per_task: np.ndarray | None = None          # (E, T) scores per task (suite order)
    weights: np.ndarray | None = None           # (T,) the scope's task weights
    scores: pl.DataFrame | None = None          # [model (= entry id), task, category, value]
    tasks: list[TaskMeta] = field(default_factory=list)
    n: int = RESAMPLES
    seed: int = SEED
    seeds_resampled: bool = False
    left_out: list[str] = field(default_factory=list)
    resampled: bool = True     # False: a scope of one task, no interval (`ONE_TASK_NOTE`)

    @property
    def ok(self) -> bool:
        return len(self.entries) >= 2

    @property
    def critical_difference(self) -> float | None:
        return None if self.test is None else self.test["critical_difference"]

    def label_of(self, entry: str) -> str:
        return self.labels[self.entries.index(entry)]


def _fmt_p(p: float | None) -> str:
    return "n/a" if p is None else p_text(p)


def _entry_ids(frame: pl.DataFrame) -> pl.DataFrame:
    """[model, source, entry]: the model id, or `model [source]` for a model under several
    sources (the rank tests and the P matrix name entries by one id)."""
    entries = frame.select("model", "source").unique().sort("model", "source")
    several = entries.group_by("model").len().filter(pl.col("len") > 1)["model"].to_list()
    return entries.with_columns(
        pl.when(pl.col("model").is_in(several))
        .then(pl.format("{} [{}]", "model", "source")).otherwise(pl.col("model"))
        .alias("entry"))


def significance(snap: StoreSnapshot, filters: Filters, *, n: int = RESAMPLES,
                 seed: int = SEED, seed_rows: pl.DataFrame | None = None) -> Significance:
    """The Significance view of a selection: the entries shown (model filters applied), the
    tasks of its category (or of the whole suite), scope = the category (or macro); see the
    module docstring. Level 95 % (alpha 0.05); resampling unit: tasks (and seeds)."""
    metric = METRIC_LABELS.get(filters.metric, filters.metric)
    scope = filters.category or "macro"
    scope_label = f"{scope} {metric}, {filters.regime}"
    tasks = suite_task_metas(snap, filters)
    if filters.category:
        tasks = [t for t in tasks if t.category == filters.category]
    long = selection_scores(snap, filters)
    if long.is_empty() or not tasks:
        return Significance("No results in this selection: nothing to compare.", scope,
                            scope_label)
    ids = [t.task_id for t in tasks]
    counts = (long.filter(pl.col("task").is_in(ids)).group_by("model", "source")
              .agg(pl.col("task").n_unique().alias("n")))
    complete = counts.filter(pl.col("n") == len(ids)).select("model", "source")
    partial = counts.filter(pl.col("n") < len(ids)).sort("model", "source")
    left_out = [f"{_display(snap, r['model'])} ({r['source']}: {len(ids) - r['n']} of "
                f"{len(ids)} tasks missing)" for r in partial.iter_rows(named=True)]
    if complete.height < 2:
        have = "one model has" if complete.height == 1 else "no model has"
        why = (f"The significance view needs at least two models with a score on every task of "
               f"the selection ({len(ids)} tasks, {scope_label}); {have} them here.")
        if left_out:
            why += " Left out: " + "; ".join(left_out[:5]) + (" …" if len(left_out) > 5 else "")
        return Significance(why, scope, scope_label, left_out=left_out)

    named = _entry_ids(complete)
    several_sources = named["source"].n_unique() > 1
    frame = (long.filter(pl.col("task").is_in(ids)).join(named, on=["model", "source"])
             .select(pl.col("entry").alias("model"), "task", "category", "value"))
    label_of = {r["entry"]: _display(snap, r["model"])
                + (f" [{r['source']}]" if several_sources else "")
                for r in named.iter_rows(named=True)}

    ranks = average_ranks(frame, tasks=tasks)
    test = friedman(frame, tasks=tasks, alpha=ALPHA).row(0, named=True)
    entries = ranks["model"].to_list()
    avg = ranks["average_rank"].to_list()
    labels = [label_of[e] for e in entries]
    cd = test["critical_difference"]
    diagram, groups = cd_diagram(labels, avg, cd)

    if seed_rows is not None:   # keyed like the frame: entry ids, no source
        seed_rows = (seed_rows.join(named, on=["model", "source"])
                     .with_columns(pl.col("entry").alias("model")).drop("entry", "source"))
    draws = bootstrap(frame, tasks=tasks, regime=filters.regime, metric=filters.metric,
                      per_seed_rows=seed_rows, with_source=False, n=n, seed=seed)
    position = {e: i for i, e in enumerate(draws.entries["model"].to_list())}
    order = [position[e] for e in entries]
    j = draws.scopes.index(scope) if scope in draws.scopes else draws.scopes.index("macro")
    values = np.ascontiguousarray(draws.values[:, order, j])
    point = draws.point[order, j]
    win = {(r["model_a"], r["model_b"]): r["p_a_beats_b"]
           for r in win_probabilities(draws, scope=draws.scopes[j]).iter_rows(named=True)}
    ties = leader_tie_group(draws, scope=draws.scopes[j], level=LEVEL)   # the one rule
    tie_group = ties.filter(pl.col("tied_with_leader"))["model"].to_list()
    leader = ties.filter(pl.col("leader"))["model"].to_list()
    per_task = None if draws.tasks is None else draws.tasks[order]
    weights = None if draws.weights is None else draws.weights[j]

    matrix = Table(
        ["Model", *(f"#{i}" for i in range(1, len(entries) + 1))],
        [[f"#{i} {labels[i - 1]}", *(None if a == b else win[(a, b)] for b in entries)]
         for i, a in enumerate(entries, 1)],
        heat={c: (0.0, 1.0) for c in range(1, len(entries) + 1)},
        row_keys=entries)
    seeds = " and seeds" if draws.seeds_resampled else ""
    resampled = draws.resampled(j)
    matrix_note = (f"P(A > B): the share of {n:,} paired bootstrap resamples of the tasks{seeds} "
                   f"in which the row's {scope_label} is above the column's (#: average rank "
                   "order); it describes the resamples and decides nothing (on few tasks it "
                   "nears 0 or 1 for pairs no test can separate)." if resampled
                   else f"P(A > B): none here, {ONE_TASK_NOTE}.")
    matrix_note += " Enter on a cell: the two models compared (tab 3)."

    k, n_tasks = test["n_models"], test["n_tasks"]
    if test["statistic"] is None:
        fr = "Friedman's test needs three models" if k < 3 else "Friedman: every task ties"
    else:
        fr = f"Friedman χ² = {test['statistic']:.1f} ({k - 1} df), {p_is(test['p_value'])}"
    cd_text = "n/a" if cd is None else f"{cd:.2f}"
    lead = label_of[leader[0]] if leader else "?"
    others = [label_of[e] for e in tie_group if not leader or e != leader[0]]
    compared = len(entries) - 1
    rule = (f"the one rule at {round(LEVEL * 100)}%: sign-flip test of the {len(tasks)} tasks' "
            f"differences, p ≤ {threshold_text(LEVEL, compared)} with the leader compared "
            f"with {compared} others, and the bootstrap interval of the difference excluding 0")
    if few := too_few(len(tasks), LEVEL, compared):
        ties_text = f"nothing separable from the leader {lead}: {few}"
    elif others:
        ties_text = (f"not separable from the leader {lead} ({rule}): "
                     f"{', '.join(others[:4])}"
                     + (f" and {len(others) - 4} more" if len(others) > 4 else ""))
    else:
        ties_text = f"the leader {lead} is separably ahead of every other model ({rule})"
    note = (f"{fr} · Nemenyi CD = {cd_text} (α = {ALPHA:.2f}) · {k} models × {n_tasks} tasks, "
            f"{scope_label}. Average rank over the tasks (1 = best); ─ spans the models within "
            "the CD of the ● (not separable by the Nemenyi test), ≈ #a–#b names them; bars "
            f"below: groups the Nemenyi test does not separate. Tie group: {ties_text}.")
    if left_out:
        note += f" Left out (missing tasks): {'; '.join(left_out[:3])}" + (
            f" and {len(left_out) - 3} more" if len(left_out) > 3 else "") + "."
    return Significance(note, draws.scopes[j], scope_label, entries, labels, avg, test,
                        diagram, groups, matrix, matrix_note, win, tie_group,
                        leader[0] if leader else None, point, values, per_task, weights,
                        frame, tasks, n, seed, draws.seeds_resampled, left_out, resampled)


def _display(snap: StoreSnapshot, model: str) -> str:
    return snap.model_meta(model).get("display") or model


# -- the critical-difference diagram, in text -----------------------------------------------------
AXIS = 40   # characters of the rank axis


def _ticks(k: int) -> list[int]:
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 10**9) if (k - 1) / s <= 8)
    return sorted({1, *range(step, k + 1, step)} | ({k} if k - 1 <= 8 else set()))


def not_separable(ranks: list[float], cd: float | None) -> list[tuple[int, int]]:
    """For each entry (in average-rank order) the (first, last) positions of the entries whose
    average rank is within the critical difference of its own (`ranktests`: two entries differ
    when their average ranks differ by more than CD)."""
    if cd is None:
        return [(i, i) for i in range(len(ranks))]
    out = []
    for r in ranks:
        inside = [j for j, s in enumerate(ranks) if abs(s - r) <= cd]
        out.append((inside[0], inside[-1]))
    return out


def groups_of(ranks: list[float], cd: float | None) -> list[tuple[int, int]]:
    """The maximal runs of consecutive entries (average-rank order) whose average ranks all lie
    within CD of each other: the bars of a critical-difference diagram (Demšar 2006)."""
    if cd is None or len(ranks) < 2:
        return []
    spans = [(i, max(j for j in range(i, len(ranks)) if ranks[j] - ranks[i] <= cd))
             for i in range(len(ranks))]
    out, last = [], -1
    for i, j in spans:
        if j > last and j > i:
            out.append((i, j))
        last = max(last, j)
    return out


def cd_diagram(labels: list[str], ranks: list[float], cd: float | None,
               width: int = AXIS) -> tuple[list[str], list[tuple[int, int]]]:
    """(lines, groups): a text critical-difference diagram. One line per entry in average-rank
    order: position, name, average rank, the rank axis with ● at the average rank and ─ across
    [rank - CD, rank + CD], and `≈ #a–#b` (the entries not separable from it); a CD ruler and
    the axis on top; below, one bar per group not separable."""
    k = len(labels)
    if k == 0:
        return [], []
    lo, hi = 1.0, float(max(k, 2))

    def pos(r: float) -> int:
        return round((min(max(r, lo), hi) - lo) / (hi - lo) * width)

    name_w = min(max(len(s) for s in labels), 26)
    pad = " " * (4 + name_w + 1 + 6 + 1)

    ticks = _ticks(k)
    labels_line = [" "] * (width + 4)
    free = 0
    for t in ticks:
        text, p = str(t), pos(t)
        start = max(p - len(text) // 2, 0)
        if start >= free:
            labels_line[start:start + len(text)] = list(text)
            free = start + len(text) + 1
    axis = ["─"] * (width + 1)
    for t in ticks:
        axis[pos(t)] = "┼"
    axis[0], axis[width] = "├", "┤"
    lines = []
    if cd is not None:
        ruler = [" "] * (width + 1)
        end = pos(1 + cd)
        for c in range(0, end + 1):
            ruler[c] = "─"
        ruler[0], ruler[end] = "├", "┤"
        lines.append(pad[:-len("CD ")] + "CD " + "".join(ruler).rstrip() + f" {cd:.2f}")
    lines.append(pad + "".join(labels_line).rstrip())
    lines.append(pad + "".join(axis))
    near = not_separable(ranks, cd)
    for i, (label, r) in enumerate(zip(labels, ranks, strict=True)):
        bar = [" "] * (width + 1)
        if cd is not None:
            for c in range(pos(r - cd), pos(r + cd) + 1):
                bar[c] = "─"
        bar[pos(r)] = "●"
        a, b = near[i]
        name = label if len(label) <= name_w else label[:name_w - 1] + "…"
        lines.append(f"{i + 1:>3} {name:<{name_w}} {r:6.2f} {''.join(bar)}  "
                     f"≈ #{a + 1}–#{b + 1}")
    groups = groups_of(ranks, cd)
    if groups:
        lines.append("")
        lines.append(pad[:-len("groups ")] + "groups " + "(not separable)")
        for a, b in groups:
            bar = [" "] * (width + 1)
            for c in range(pos(ranks[a]), pos(ranks[b]) + 1):
                bar[c] = "━"
            lines.append(pad + "".join(bar) + f"  #{a + 1}–#{b + 1}")
    return lines, groups


# -- two models ------------------------------------------------------------------------------------
@dataclass
class Pair:
    """Two entries of a `Significance` compared over its tasks."""

    a: str
    b: str
    note: str
    table: Table
    n_tasks: int = 0
    wins: int = 0
    losses: int = 0
    ties: int = 0
    mean_difference: float | None = None
    p_value: float | None = None
    difference: float | None = None       # the scope score of A minus B's
    low: float | None = None               # its paired bootstrap interval
    high: float | None = None
    p_a_beats_b: float | None = None       # descriptive (the bootstrap), no claim
    sign_flip_p: float | None = None       # the one rule's p-value
    differs: bool = False                  # the one rule's decision
    compared: int = 1                      # 1, or the leader's comparisons when A or B leads
    tasks: list[str] = field(default_factory=list)   # task ids of the table's rows, in order

    def with_examples(self, line: str | None) -> str:
        """The note with the per-example line of one task (`pair_examples`) in place of the
        sentence saying these results have no predictions (kept when `line` is None)."""
        return self.note if line is None else self.note.replace(NO_EXAMPLES, line)


NO_EXAMPLES = ("Per-example paired tests need stored test-set predictions; these results have "
               "none, so every test here is over tasks.")


def _model_of(entry: str) -> tuple[str, str | None]:
    """(model id, source) of an entry id (`model` or `model [source]`, `_entry_ids`)."""
    if entry.endswith("]") and " [" in entry:
        model, source = entry[:-1].rsplit(" [", 1)
        return model, source
    return entry, None


def pair_examples(paths: StorePaths, a: str, b: str, task: str, regime: str, *,
                  n: int = EXAMPLE_RESAMPLES, seed: int = SEED) -> str | None:
    """The per-example line of entries A and B on `task` in `regime` (geneb-v1): the paired
    bootstrap interval of the seed-mean MCC difference over the task's test rows
    (`store.analyses.examples.paired_mcc_difference`, `n` resamples, level 95 %) and McNemar's
    p of the accuracies (`examples.mcnemar`, per seed: the first seed's, and the range when
    seeds differ). Which model lacks predictions, when one does; None when neither has any
    (the note's sentence says why). Reads the store: run it off the UI thread."""
    found, table = {}, Predictions(paths)      # one read of the table for all three
    for entry in (a, b):
        model, source = _model_of(entry)
        preds = (table.predictions(model=model, task=task, regime=regime,
                                   protocol_hash=GENEB_V1.hash)
                 if source in (None, LOCAL) else None)
        found[entry] = preds if preds is not None and preds.height else None
    missing = [e for e, f in found.items() if f is None]
    if len(missing) == 2:
        return None
    if missing:
        (entry,) = missing
        why = NO_PREDICTIONS if _model_of(entry)[1] not in (None, LOCAL) else \
            "it has no stored predictions for this task and regime (run `geneb-engine fill`)"
        return f"Per-example tests on {task} ({regime}): {entry}: {why}."
    pa, pb = found[a], found[b]
    hashes = set(pa["data_hash"]) | set(pb["data_hash"])
    key = (task, next(iter(hashes)))
    y = table.labels([key]).get(key) if len(hashes) == 1 else None
    if y is None:
        return (f"Per-example tests on {task} ({regime}): the two models' predictions are on "
                "different data; none computed.")
    xa, xb = (np.stack([np.asarray(v) for v in f["pred"].to_list()]) for f in (pa, pb))
    diff = paired_mcc_difference(y, xa, xb, n_resamples=n, seed=seed).row(0, named=True)
    common = sorted(set(pa["seed"]) & set(pb["seed"]))
    ia = [pa["seed"].to_list().index(s) for s in common]
    ib = [pb["seed"].to_list().index(s) for s in common]
    tests = mcnemar(y, xa[ia], xb[ib], common)
    ps = tests["p"].to_list()
    p_text = _fmt_p(ps[0]) if min(ps) == max(ps) else f"{_fmt_p(min(ps))} – {_fmt_p(max(ps))}"
    return (f"Per-example tests on {task} ({regime}, {len(y):,} test rows): MCC A − B = "
            f"{diff['diff']:+.3f}, {round(LEVEL * 100)}% paired bootstrap interval "
            f"[{diff['lo']:+.3f}, {diff['hi']:+.3f}] ({n:,} resamples of the test rows); "
            f"McNemar p (accuracy, exact) {p_text} over {len(common)} seed(s).")


def two_models(sig: Significance, a: str, b: str) -> Pair:
    """A against B over the tasks of `sig`: per task A, B and A - B (suite order); wins,
    losses and ties of A; `ranktests.wilcoxon_holm` for the one pair (two-sided signed-rank
    test over the tasks; with one pair Holm changes nothing); the scope difference and its
    percentile interval over `sig`'s paired resamples (level 95 %, numpy "linear", as
    `uncertainty.score_intervals`); P(A > B) from the same resamples (descriptive); and the
    one rule's decision (`store.analyses.differ.decide` on the per-task differences with the
    scope's weights and that interval): a pair named in advance (threshold 1 - level), or, when
    A or B is the scope's leader, a comparison with the leader (threshold shared by its E - 1
    comparisons, as the tie group decides it)."""
    header = ["Task", "Category", "A", "B", "A − B"]
    if not sig.ok or a not in sig.entries or b not in sig.entries or a == b:
        return Pair(a, b, "Pick two different models (a / b, or Enter in the P(A > B) tab).",
                    Table(header, []))
    scores = sig.scores
    assert scores is not None and sig.values is not None and sig.point is not None
    wide = (scores.filter(pl.col("model") == a).select("task", "category",
                                                         pl.col("value").alias("a"))
            .join(scores.filter(pl.col("model") == b).select("task", pl.col("value").alias("b")),
                  on="task"))
    label = {t.task_id: t.label for t in sig.tasks}
    order = {t.task_id: i for i, t in enumerate(sig.tasks)}
    recs = sorted(wide.iter_rows(named=True), key=lambda r: order.get(r["task"], 0))
    rows = [[label.get(r["task"], r["task"]), r["category"], r["a"], r["b"], r["a"] - r["b"]]
            for r in recs]
    diffs = np.array([r[4] for r in rows], dtype=float)
    wins, losses = int((diffs > 0).sum()), int((diffs < 0).sum())
    ties = len(rows) - wins - losses
    test = wilcoxon_holm(scores, [(a, b)], tasks=sig.tasks, alpha=ALPHA).row(0, named=True)
    ia, ib = sig.entries.index(a), sig.entries.index(b)
    resampled = sig.values[:, ia] - sig.values[:, ib]
    low = high = None
    if sig.resampled:
        q = (1 - LEVEL) / 2
        low, high = (float(x) for x in np.quantile(resampled, [q, 1 - q], method="linear"))
    difference = float(sig.point[ia] - sig.point[ib])
    p_win = sig.win.get((a, b))
    compared = len(sig.entries) - 1 if sig.leader in (a, b) else 1
    assert sig.per_task is not None and sig.weights is not None
    rule = decide(sig.per_task[ia] - sig.per_task[ib], sig.weights, LEVEL, compared=compared,
                  low=None if low is None else [low], high=None if high is None else [high])
    m = float(np.abs(diffs).max()) if diffs.size and np.abs(diffs).max() > 0 else 1.0
    na, nb = sig.label_of(a), sig.label_of(b)
    p_text = ("n/a (no task differs)" if test["p_value"] is None
              else _fmt_p(test["p_value"]))
    p_text = p_text if p_text.startswith(("<", "n/a")) else "= " + p_text
    seeds = " and seeds" if sig.seeds_resampled else ""
    interval = (f"{round(LEVEL * 100)}% paired bootstrap interval "
                f"{interval_text(low, high, 3)} ({sig.n:,} resamples of the tasks{seeds})"
                if sig.resampled else f"no interval, {ONE_TASK_NOTE}")
    leading = na if sig.leader == a else nb
    claim = claim_text(bool(rule.differs[0]), float(rule.p[0]), rule.n_tasks, None, None,
                       LEVEL, rule.threshold)
    claim = claim[0].upper() + claim[1:]
    if compared > 1:
        claim += (f" ({leading} leads the scope: the threshold is shared by its {compared} "
                  "comparisons)")
    if few := rule.too_few():
        claim += f". {few[0].upper() + few[1:]}"
    note = (f"A = {na}, B = {nb} ({sig.scope_label}). A − B = {difference:+.3f}, "
            f"{interval}. {claim}. Per task: A wins {wins}, loses "
            f"{losses}, ties {ties} of {len(rows)}; Wilcoxon signed-rank p {p_text} "
            f"(two-sided, over the tasks). {NO_EXAMPLES} "
            "Keys a / b: the next model as A / B.")
    return Pair(a, b, note, Table(header, rows, "", heat={4: (-m, m)}), len(rows), wins,
                losses, ties, test["mean_difference"], test["p_value"], difference, low, high,
                p_win, float(rule.p[0]), bool(rule.differs[0]), compared,
                [r["task"] for r in recs])
