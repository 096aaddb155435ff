"""Score against context, the dashboard's curve (issue 45; UI-free: `components.context_plot`
draws it, `components.context_screen` shows it).

Nothing is estimated here: the points are `store.analyses.context.context_curve`'s (each entry
of a model at one context policy, ordered by length) over the score intervals of the task
bootstrap as `report` draws it (`store.analyses.uncertainty.bootstrap`: `RESAMPLES`, `SEED`,
`LEVEL`, the local per-seed rows where seeds differ), for the selection: its suite's tasks (the
flagged ones left out where it leaves them out), regime, metric and model filters. The scope is
the selection's category (`c`), else macro, so a category filter gives that category's curve.
Where no model of the selection has entries at two context policies, the note says so and what
to run, and nothing is resampled.

Which entry is which model at which context policy (`VARIANTS_SQL`) is read from the store
when the view is first computed on a snapshot (`store_variants`), not at start-up: the
dashboard's snapshot load stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from geneb_tui.core.compare import Table
from geneb_tui.core.content_cache import cache_of
from geneb_tui.core.filters import METRIC_LABELS, Filters
from geneb_tui.core.query import StoreSnapshot, selection_scores, suite_task_metas
from geneb_tui.core.significance import store_seed_rows
from store.analyses.context import VARIANTS_SQL, context_curve
from store.analyses.presets import LEVEL, RESAMPLES, SEED
from store.analyses.uncertainty import bootstrap, score_intervals
from store.db import Snapshot
from store.vocab.context import axis_label

HEADER = ["Model", "Context", "Length", "Score", "Low", "High"]


MOVED_ON = ("The store has changed since the dashboard read it (a run, an import): Ctrl+R reads "
            "it again, then the curve is drawn from the same version as the table.")


def store_variants(snap: StoreSnapshot) -> pl.DataFrame | None:
    """[entry, model, context_policy] of the snapshot's version and kind (`VARIANTS_SQL`), read
    once per snapshot (the views' cache); None when the store has moved on since the snapshot
    (its entries could disagree with the snapshot's scores)."""

    def read() -> pl.DataFrame | None:
        current = Snapshot(snap.paths, snap.kind)
        try:
            return current.query(VARIANTS_SQL) if current.version == snap.version else None
        finally:
            current.close()

    return cache_of(snap).get(("context variants",), read)


def none_line(filters: Filters) -> str:
    """What the view says where no model of the selection has two context policies."""
    return ("No model here has results at two context policies or more, so there is no curve. "
            "Evaluate one at several context lengths (each its own entry), e.g. "
            f"`geneb-engine fill --suite {filters.suite} --models MODEL --context-lengths "
            "1000 10000`, then Ctrl+R.")


@dataclass
class ContextCurves:
    """What the view shows: `points` are `context_curve`'s rows ([model, context,
    context_length, entry, scope, value, low, high]) with the model's display name (`name`)
    and the x label (`label`); `order` the x axis' contexts (every model's, each once, in the
    curve's order) with their labels. No points: `note` says why."""

    note: str
    scope: str = "macro"
    points: list[dict] = field(default_factory=list)
    order: list[tuple[str, str]] = field(default_factory=list)

    def models(self) -> list[str]:
        """The curves' display names, in the frame's order."""
        return list(dict.fromkeys(p["name"] for p in self.points))

    def table(self) -> Table:
        """The points as rows (the values behind the plot)."""
        rows = [[p["name"], p["label"], p["context_length"], p["value"], p["low"], p["high"]]
                for p in self.points]
        return Table(HEADER, rows, self.note)


def context_view(snap: StoreSnapshot, filters: Filters, *, n: int = RESAMPLES,
                 seed: int = SEED, level: float = LEVEL) -> ContextCurves:
    """The selection's curve per model (see the module docstring)."""
    scope = filters.category or "macro"
    long = selection_scores(snap, filters)
    if long.is_empty():
        return ContextCurves(none_line(filters), scope)
    variants = store_variants(snap)
    if variants is None:
        return ContextCurves(MOVED_ON, scope)
    # no model with two context policies among the selection's entries: said without a draw
    # (context_curve's own rule, over the entries alone)
    entries = long.select("model").unique().with_columns(
        pl.lit(scope).alias("scope"), *(pl.lit(None, pl.Float64).alias(c)
                                        for c in ("value", "low", "high")))
    if context_curve(entries, variants, scope).is_empty():
        return ContextCurves(none_line(filters), scope)
    tasks = suite_task_metas(snap, filters)
    draws = bootstrap(long, tasks=tasks, regime=filters.regime, metric=filters.metric,
                      per_seed_rows=store_seed_rows(snap), n=n, seed=seed)
    curve = context_curve(score_intervals(draws, level), variants, scope)
    if curve.is_empty():
        return ContextCurves(
            f"No model here has two context policies with a score on every one of the "
            f"selection's {len(tasks)} tasks ({filters.regime}): the curve compares entries on "
            "the same tasks. `geneb-engine fill` completes them.", scope)
    points = [{**r, "name": snap.model_meta(r["model"]).get("display") or r["model"],
               "label": axis_label(r["context"], r["context_length"])}
              for r in curve.iter_rows(named=True)]
    order = list(dict.fromkeys(
        (p["context"], p["label"])
        for p in sorted(points, key=lambda p: (p["context_length"] is None,
                                               p["context_length"] or 0,
                                               p["context"].startswith("windows")))))
    left = long.select("model", "source").unique().height - draws.entries.height
    seeds = " and seeds" if draws.seeds_resampled else ""
    note = (f"{scope} score against context ({filters.regime}, {METRIC_LABELS[filters.metric]}):"
            f" a curve per model, a point per context policy (the nucleotides each sequence was"
            f" cut to; windows: each window's) with its {round(level * 100)}% bootstrap "
            f"interval over tasks{seeds} ({n:,} resamples, seed {seed})"
            + (f"; {left} {'entry' if left == 1 else 'entries'} without every task left out"
               if left else "") + ".")
    return ContextCurves(note, scope, points, order)
