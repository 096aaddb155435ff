"""The static site's data: one plain document (JSON-ready) from one snapshot of a store.

Every number comes from the analysis layer's steps that `geneb-engine report` computes with
(`store.analyses.compute`: `cells.question_means`, `cells.seed_level_rows`,
`cells.regime_scores`, `intervals.regime_draws`, `ranktests.regime_rank_tests`, and the
analyses of `store.analyses`), called with the same arguments, so the site shows the values
`report --json --metric M --regime R --resamples N` prints: per metric and regime the
aggregates, the point ranks of every scope, the macro score and rank intervals, the leader and
its tie group (the one rule, `store.analyses.differ`: each row's sign-flip p against the
leader, and the board's `rule`: the tasks, the threshold, the comparisons and, where the scope
is too small to separate anything, the sentence saying so), the Friedman test with the Nemenyi
critical difference and the average ranks (the CD diagram), the rank shift from full, the
few-shot degradation, and where a model has entries at two context policies or more, score
against context at macro and, where the suite has more than one category, at each category
(`store.analyses.context.context_curve`, from the same intervals).

Entries are keyed by (model, source), as the report keys them when it reads every source; an
entry refers to its model by index. A task's `health` is None until an audit gives one (the
`health` argument: task id -> verdict text).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from engine.site.build import GENERATOR
from store import __version__
from store.analyses import uncertainty as U
from store.analyses.aggregates import aggregates, categories_of
from store.analyses.cells import question_means, regime_scores, seed_level_rows
from store.analyses.context import VARIANTS_SQL, context_curve, curve_scopes
from store.analyses.degradation import degradation as degradation_of
from store.analyses.differ import threshold_text, too_few
from store.analyses.intervals import regime_draws
from store.analyses.question import Question
from store.analyses.rankings import rank_shift, rankings
from store.analyses.ranktests import regime_rank_tests
from store.catalog import ModelMeta, TaskMeta, scale_band
from store.official.submission import entry_provenance
from store.vocab.ids import path_part
from store.vocab.kinds import CLASSIFICATION, METRICS_OF
from store.vocab.protocol import FEW_SHOT_REGIMES, REGIMES
from store.vocab.pvalues import p_is
from store.vocab.sources import BADGES, LOCAL

SCOPES_FIXED = ("micro", "macro")
# The degradation frame's columns a model page shows (its drops follow from them).
DEGRADATION_COLUMNS = ("scope", *REGIMES, *(f"retention_{r}" for r in FEW_SHOT_REGIMES))
# The per-task scores' decimals (the pages show 3; the exact values are in
# leaderboard_tasks.json and `export`): half the site's size. Every other number is exact.
TASK_DIGITS = 6
SHIFT_COLUMNS = ("rank_a", "rank_b", "shift")
# A context curve's columns after its model and entry (`context_curve`'s: macro, and each
# category where the suite has more than one).
CONTEXT_COLUMNS = ("context", "context_length", "scope", "value", "low", "high")
MODEL_FACTS = ("architecture", "architecture_family", "tokenization", "tokenization_family",
               "pretraining_data", "weights_licence", "code_licence", "licence_source",
               "hub_id", "commit", "commit_source", "commit_reason")


def _num(value):
    """A JSON number: NaN and infinities (no JSON for them) become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _badge(model: str, source: str) -> str:
    """The provenance badge of an entry: Local for this tool's rows, else its provenance's."""
    provenance = source if source == LOCAL else entry_provenance(source, model)
    return BADGES.get(provenance, provenance)


def _models(entries: list[tuple[str, str]], catalog: pl.DataFrame) -> list[dict]:
    """Each model of the entries once: its catalog facts (a model the catalog lacks: known in
    part, `ModelMeta.one_off`), size bin and page."""
    rows = {r["model_id"]: r for r in catalog.iter_rows(named=True)}
    out = []
    for model in dict.fromkeys(m for m, _ in entries):
        meta = rows.get(model) or vars(ModelMeta.one_off(model))
        meta = {k: meta.get(k) for k in ("display", "params", *MODEL_FACTS)}
        out.append({"id": model, "display": meta["display"] or model,
                    "params": meta["params"] or None, "size": scale_band(meta["params"]),
                    **{k: meta[k] for k in MODEL_FACTS},
                    "page": f"models/{path_part(model)}.html"})
    return out


def _board(agg: pl.DataFrame, index: Mapping[tuple[str, str], int], scopes: list[str],
           draws, intervals: pl.DataFrame | None, level: float) -> dict:
    """One regime and metric: a row per entry (scores and point ranks of every scope, and
    with `draws` the macro score interval (of `intervals`, `score_intervals` of the draws) and
    rank interval, the tie-group mark and the one rule's p against the leader), the leader
    (macro), its tie group and the rule's numbers."""
    ranks = {(r["model"], r["source"]): r for r in rankings(agg).iter_rows(named=True)}
    macro = {}
    group = None
    if draws is not None:
        scored = intervals.filter(pl.col("scope") == "macro")
        ranked = U.rank_intervals(draws, level).filter(pl.col("scope") == "macro")
        for r in scored.iter_rows(named=True):
            macro[r["model"], r["source"]] = {"low": _num(r["low"]), "high": _num(r["high"])}
        for r in ranked.iter_rows(named=True):
            macro[r["model"], r["source"]] |= {"rank_low": r["rank_low"],
                                              "rank_high": r["rank_high"]}
        group = U.leader_tie_group(draws, scope="macro", level=level)
    rows = []
    for r in agg.iter_rows(named=True):
        key = (r["model"], r["source"])
        rows.append({"entry": index[key], "scores": [_num(r[s]) for s in scopes],
                     "ranks": [ranks[key][s] for s in scopes],
                     "n_missing": r["n_missing"], **macro.get(key, {})})
    board = {"rows": rows, "leader": None, "tie_group": [], "rule": None}
    if group is not None and group.height:
        board["leader"] = index[next((r["model"], r["source"]) for r in
                                     group.filter(pl.col("leader")).iter_rows(named=True))]
        board["tie_group"] = [index[r["model"], r["source"]] for r in
                              group.filter(pl.col("tied_with_leader")).iter_rows(named=True)]
        p = {index[r["model"], r["source"]]: _num(r["p_value"])
             for r in group.iter_rows(named=True)}
        tied = set(board["tie_group"])
        for row in rows:
            row["tied"] = row["entry"] in tied
            row["p_value"] = p.get(row["entry"])
        n_tasks, bar = group["n_tasks"][0], group["threshold"][0]
        compared = group.height - 1     # every entry but the leader (0: it alone)
        board["rule"] = {"n_tasks": n_tasks, "threshold": bar, "compared": compared,
                         "threshold_text": threshold_text(level, compared),
                         "too_few": too_few(n_tasks, level, compared)}
    return board


def _cd(frames: Mapping[str, pl.DataFrame], regime: str,
        index: Mapping[tuple[str, str], int]) -> dict | None:
    """The CD diagram of a regime (all tasks): Friedman's P, the Nemenyi critical difference
    and each entry's average rank."""
    if "rank_tests" not in frames:
        return None
    test = frames["rank_tests"].filter((pl.col("regime") == regime) & (pl.col("scope") == "all"))
    if not test.height:
        return None
    t = test.row(0, named=True)
    ranks = frames["average_ranks"].filter((pl.col("regime") == regime)
                                           & (pl.col("scope") == "all"))
    return {"critical_difference": _num(t["critical_difference"]), "p_value": _num(t["p_value"]),
            "p_is": None if t["p_value"] is None else p_is(t["p_value"], "Friedman P"),
            "alpha": t["alpha"], "n_tasks": t["n_tasks"], "n_models": t["n_models"],
            "ranks": [[index[r["model"], r["source"]], r["average_rank"]]
                      for r in ranks.sort("average_rank").iter_rows(named=True)]}


def _context_rows(intervals: pl.DataFrame, variants: pl.DataFrame,
                  index: Mapping[tuple[str, str], int]) -> list[list]:
    """Score against context (`store.analyses.context.context_curve` at its `curve_scopes`) of
    one regime and metric, source by source (an entry is a model and a source), as [model, entry,
    *CONTEXT_COLUMNS]: the model each point is of (its id), the entry the point is."""
    rows = []
    for (source,), part in intervals.group_by("source", maintain_order=True):
        curve = context_curve(part.drop("source"), variants, curve_scopes(part))
        rows += [[r["model"], index[r["entry"], source], *(_num(r[c]) for c in CONTEXT_COLUMNS)]
                 for r in curve.iter_rows(named=True)]
    return rows


def _keyed(frame: pl.DataFrame, index, columns: tuple[str, ...]) -> list[list]:
    """The rows of a frame keyed by entry, as [entry, *columns] (the columns named once, in
    the document: a list per row keeps the site small)."""
    return [[index[r["model"], r["source"]], *(_num(r[c]) for c in columns)]
            for r in frame.iter_rows(named=True)]


def site_data(snap, catalog: pl.DataFrame, tasks: tuple[TaskMeta, ...], *, suite: str,
              title: str, resamples: int, level: float, seed: int,
              health: Mapping[str, str] | None = None) -> dict | None:
    """The site's document from the snapshot `snap` (closed here) over `tasks`; None when the
    store has no result of its kind's protocol (geneb-v1 for classification) on them: the
    snapshot's task kind (`store.vocab.kinds`) is the site's, its metrics the boards' (a site of
    another kind says its `kind`). `catalog`: the model catalog
    (`store.tables.catalogs.models_with_builtins`)."""
    ids = [t.task_id for t in tasks]
    q = Question(tasks=tasks, kind=snap.kind)
    means = question_means(snap, q)
    per_seed = seed_level_rows(snap, means, None, q.protocol.hash) if resamples else None
    variants = snap.query(VARIANTS_SQL) if resamples else None
    version = snap.version
    snap.close()
    if means.is_empty():
        return None
    entries = sorted({(r["model"], r["source"])
                      for r in means.select("model", "source").iter_rows(named=True)})
    index = {key: i for i, key in enumerate(entries)}
    models = _models(entries, catalog)
    model_index = {m["id"]: i for i, m in enumerate(models)}
    categories = categories_of(tasks)
    scopes = [*SCOPES_FIXED, *categories]
    boards, shifts, degradation, cd, curves = {}, {}, {}, {}, {}
    task_scores: dict[str, dict] = {t: {} for t in ids}
    for metric in METRICS_OF[q.kind]:
        scores = regime_scores(means, metric=metric, with_source=True)
        aggs = {r: aggregates(s, tasks=tasks) for r, s in scores.items()}
        tests = regime_rank_tests(scores, tasks=tasks, level=level) if resamples else {}
        boards[metric], cd[metric] = {}, {}
        for r in REGIMES:
            draws = (regime_draws(scores[r], tasks=tasks, regime=r, metric=metric,
                                  per_seed=per_seed, with_source=True, resamples=resamples,
                                  seed=seed) if resamples else None)
            intervals = U.score_intervals(draws, level) if draws is not None else None
            boards[metric][r] = _board(aggs[r], index, scopes, draws, intervals, level)
            if intervals is not None and (curve := _context_rows(intervals, variants, index)):
                curves.setdefault(metric, {})[r] = curve
            cd[metric][r] = _cd(tests, r, index)
        shifts[metric] = {r: _keyed(rank_shift(aggs["full"], aggs[r]), index,
                                    SHIFT_COLUMNS)
                          for r in FEW_SHOT_REGIMES}
        degradation[metric] = _keyed(degradation_of(aggs), index, DEGRADATION_COLUMNS)
        for r, frame in scores.items():
            for row in frame.iter_rows(named=True):
                cell = task_scores[row["task"]].setdefault(metric, {}).setdefault(
                    r, [None] * len(entries))
                value = _num(row["value"])
                cell[index[row["model"], row["source"]]] = (
                    None if value is None else round(value, TASK_DIGITS))
    return {
        "generator": GENERATOR, "version": __version__, "table_version": version,
        "title": title, "suite": suite, "protocol": q.protocol.name,
        **({} if q.kind is CLASSIFICATION else {"kind": str(q.kind)}),
        "resamples": resamples, "level": level, "bootstrap_seed": seed,
        "regimes": list(REGIMES), "metrics": list(METRICS_OF[q.kind]), "categories": categories,
        "scopes": scopes, "shift_columns": list(SHIFT_COLUMNS),
        "degradation_columns": list(DEGRADATION_COLUMNS),
        "models": models,
        "entries": [{"model": model_index[m], "source": s, "badge": _badge(m, s)}
                    for m, s in entries],
        "boards": boards, "cd": cd, "rank_shift": shifts, "degradation": degradation,
        # where a model has entries at two context policies or more (a regime and metric of
        # a curve only): every other store's site as before
        **({"context_columns": list(CONTEXT_COLUMNS), "context_curve": curves}
           if curves else {}),
        "tasks": [{"id": t.task_id, "label": t.label, "category": t.category,
                   "page": f"tasks/{path_part(t.task_id)}.html",
                   "health": (health or {}).get(t.task_id), "scores": task_scores[t.task_id]}
                  for t in tasks],
    }
