"""Read the store once into a snapshot, then build the main table (`geneb_tui.core.table_view`)
for any selection.

`StoreSnapshot.load` is the only place that touches the store (one DuckDB read of the `results`,
`tasks` and `models` views); `build_view` is pure and cheap, so a filter change never re-reads.
Seed means, aggregates and ranks come from `store.analyses` (the official rules: a category is the
mean of its tasks, micro of all tasks, macro of the categories; any missing task makes it missing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl

from geneb_tui.core.content_cache import cache_of
from geneb_tui.core.filters import METRIC_LABELS, Filters
from geneb_tui.core.table_view import (
    META_COLUMNS,
    RANK_SCOPES,
    TRAILING_META,
    Column,
    Row,
    TableView,
    score_field,
)
from store.analyses.aggregates import aggregates
from store.analyses.cells import tasks_of_kind
from store.analyses.domains import keep_domain
from store.analyses.rankings import rankings
from store.analyses.scores import scores_of, seed_means
from store.audit.verdict import Health
from store.catalog import CATEGORY_ORDER, ModelMeta, TaskMeta, TaskProfile
from store.cells import cell_states
from store.current import with_entries
from store.damage import damage
from store.db import Snapshot
from store.domains import UNKNOWN
from store.paths import StorePaths
from store.pins import pinned, read_pins
from store.runnable import resolved_device
from store.tables.catalogs import (
    known_tasks,
    models_frame,
    models_with_builtins,
    pair_domains,
    store_models,
)
from store.task_health import task_health
from store.vocab.encoder_kinds import KINDS
from store.vocab.errors import GenebError
from store.vocab.kinds import CLASSIFICATION, METRICS_OF, PRIMARY, TaskKind
from store.vocab.protocol import GENEB_V1, REGIMES, name_of, read_protocol, seed_counts
from store.vocab.sources import LOCAL
from store.vocab.suites import DEFAULT as DEFAULT_SUITE
from store.vocab.suites import generated_suites, store_suite
from store.vocab.variant import kind_precision

FLAG = "⚑"   # before a flagged task (its audit's flags: `store.audit.verdict`) in a task list


@dataclass
class StoreSnapshot:
    """Everything the dashboard shows, read from the store in one go."""

    root: Path
    scores: pl.DataFrame   # `store.analyses.seed_means`: one row per (model, source, task, regime)
    tasks: pl.DataFrame    # task_id, label, category, suite, source_benchmark
    models: pl.DataFrame   # the models catalog (store's, then built-in and user entries)
    # (model, task, regime, source, compute_precision, recipe_preset, context_policy,
    # storage_precision) done (`store.cells`; a local cell at each variant it is done at)
    done: pl.DataFrame
    version: int | None = None        # the results table version read
    damage: tuple[str, ...] = ()      # damaged store files met while reading (store.db)
    # what is current leaves out or shows apart (`store.db.Snapshot.notes`: other revisions'
    # rows, a checkpoint folder gone, a model's rows at other precisions)
    notes: tuple[str, ...] = ()
    # The engine's catalog (built-in, <store>/models.toml, the checkpoint folders the store has
    # run: `store.tables.catalogs.store_models`) as ModelMeta fields, at the commits the store
    # pins (`store.pins`): what `fill` can run; `catalog_error` when the user's files could
    # not be read.
    catalog: dict[str, dict] = field(default_factory=dict)
    catalog_error: str | None = None
    protocol: str = GENEB_V1.name
    protocol_hash: str = GENEB_V1.hash
    # task -> its health (`store.task_health`), for the audited tasks
    health: dict[str, Health] = field(default_factory=dict)
    # The task kind whose results this snapshot holds (`store.db.Snapshot`'s kind: no view
    # mixes kinds), read under its protocol (`store.vocab.protocol.read_protocol`), and the
    # kinds the store's current rows hold (classification first; what the kind key cycles)
    kind: str = str(CLASSIFICATION)
    kinds: tuple[str, ...] = (str(CLASSIFICATION),)
    _meta: dict[str, dict] | None = field(default=None, init=False, repr=False, compare=False)
    _choices: dict[str, FilterChoices] = field(default_factory=dict, init=False, repr=False,
                                               compare=False)

    @classmethod
    def load(cls, paths: StorePaths, kind: str | None = None) -> StoreSnapshot:
        """The store's results of `kind` (None, or a kind it holds no results of: the first
        kind it holds, classification where it has any), read under that kind's protocol."""
        snap = Snapshot(paths)   # one version of the results for everything shown
        kinds = tuple(str(k) for k in snap.kinds()) or (str(CLASSIFICATION),)
        kind = kind if kind in kinds else kinds[0]
        if kind != CLASSIFICATION:
            first, snap = snap, snap.of_kind(kind)
            first.close()
        protocol_hash = read_protocol(kind).hash
        scores = seed_means(snap, protocol_hash=protocol_hash)
        done = (cell_states(snap.query, seeds=seed_counts([protocol_hash]), precisions={})
                .filter(pl.col("state") == "done")
                .select("model", "task", "regime", "source", "compute_precision",
                        "recipe_preset", "context_policy", "storage_precision").unique())
        tasks = known_tasks(paths, snap.query("SELECT * FROM tasks"))
        if kinds != (CLASSIFICATION,):   # the kind's tasks only, as the store's rows tell them
            own = [t.task_id for t in tasks_of_kind(snap, _task_metas(tasks))]
            tasks = tasks.filter(pl.col("task_id").is_in(own))
        catalog_error = None
        try:
            known = store_models(paths)
            pins = read_pins(paths)
        except GenebError as exc:  # a broken user file must not keep the dashboard from opening
            known, pins = store_models(paths, user=False), {}
            catalog_error = str(exc)
        models = with_entries(models_with_builtins(paths, known), snap.query)
        health = task_health(snap, tasks["task_id"].to_list(),
                             scores if protocol_hash == GENEB_V1.hash else None)
        notes = tuple(snap.notes)
        snap.close()
        return cls(paths.root, scores, tasks, models, done, snap.version, tuple(damage()), notes,
                   catalog={mid: asdict(pinned(m, pins)) for mid, m in known.items()},
                   catalog_error=catalog_error, protocol=name_of(protocol_hash),
                   protocol_hash=protocol_hash,
                   health={t: h for t, (_, h) in health.items()}, kind=kind, kinds=kinds)

    @property
    def paths(self) -> StorePaths:
        """The store this snapshot was read from."""
        return StorePaths(self.root)

    @property
    def is_empty(self) -> bool:
        return self.scores.is_empty()

    # -- vocabularies for the filter choices -------------------------------------------------
    def _with_results(self) -> set[str]:
        return set(
            self.tasks.filter(pl.col("task_id").is_in(self.scores["task"].unique().implode()))
            ["suite"].to_list()
        )

    def suites(self) -> list[str]:
        known = set(self.tasks["suite"].to_list())
        return [DEFAULT_SUITE,
                *sorted((self._with_results() | known | generated_suites()) - {DEFAULT_SUITE})]

    def suite_to_open(self, preferred: str) -> str:
        """`preferred` when it has results, else the suite the commands take when given none
        (`store.vocab.suites.store_suite`: the only suite with results, geneb-v1 among
        several), else (several, geneb-v1 not among them, where a command asks) the first."""
        with_results = self._with_results()
        if preferred in with_results:
            return preferred
        name, _ = store_suite(with_results)
        return name or next((s for s in self.suites() if s in with_results), preferred)

    def filters_for(self, filters: Filters, *, opening: bool = False) -> Filters:
        """`filters` on this snapshot: a suite it does not hold falls back to geneb-v1; when
        the dashboard opens, to the first suite with results (`suite_to_open`); the category
        is dropped whenever the suite changes. Filters of another kind take this snapshot's
        kind, with its primary metric, as the dashboard opening would (its suite with
        results); a metric not of the kind becomes its primary one."""
        if filters.kind != self.kind:
            filters = filters.with_(kind=self.kind, metric=PRIMARY[TaskKind(self.kind)],
                                    category=None)
            opening = True
        elif filters.metric not in METRICS_OF[TaskKind(self.kind)]:
            filters = filters.with_(metric=PRIMARY[TaskKind(self.kind)])
        if filters.suite not in self.suites():
            filters = filters.with_(suite=DEFAULT_SUITE, category=None)
        suite = self.suite_to_open(filters.suite) if opening else filters.suite
        return filters if suite == filters.suite else filters.with_(suite=suite, category=None)

    def categories(self, suite: str) -> list[str]:
        present = set(self.tasks.filter(pl.col("suite") == suite)["category"].to_list())
        ordered = [c for c in CATEGORY_ORDER if c in present]
        return ordered + sorted(present - set(ordered))

    def suite_tasks(self, suite: str, category: str | None = None, *,
                    exclude_flagged: bool = False) -> pl.DataFrame:
        """The tasks of `suite` (of `category`; without the flagged ones: `flagged`), in
        category order."""
        t = self.tasks.filter(pl.col("suite") == suite)
        if category:
            t = t.filter(pl.col("category") == category)
        if exclude_flagged:
            t = t.filter(~pl.col("task_id").is_in(self.flagged()))
        order = {c: i for i, c in enumerate(self.categories(suite))}
        return (t.with_columns(pl.col("category").replace_strict(order, default=99).alias("_o"))
                .with_row_index("_i").sort(["_o", "_i"]).drop(["_o", "_i"]))

    def flagged(self) -> list[str]:
        """The tasks whose audit flags them (`store.audit.verdict`)."""
        return sorted(t for t, h in self.health.items() if h.flagged)

    def shown_tasks(self, filters: Filters, category: str | None = None) -> pl.DataFrame:
        """The tasks a selection covers: its suite's (of `category`), without the flagged
        ones where it leaves them out."""
        return self.suite_tasks(filters.suite, category,
                                exclude_flagged=filters.exclude_flagged)

    def sources(self) -> list[str]:
        return sorted(set(self.scores["source"].to_list()))

    def model_values(self, column: str) -> list[str]:
        vals = {v for v in self.models[column].to_list() if v}
        return sorted(vals)

    def filter_choices(self, suite: str) -> FilterChoices:
        """The filter dialog's choices for `suite`, computed once per snapshot (the store
        worker computes them for every suite after the table, so `f` opens without them)."""
        if suite not in self._choices:
            self._choices[suite] = FilterChoices.of(self, suite)
        return self._choices[suite]

    def model_meta(self, model_id: str) -> dict:
        if self._meta is None:   # one pass over the catalog; the first entry of an id wins
            meta: dict[str, dict] = {}
            for r in self.models.iter_rows(named=True):
                meta.setdefault(r["model_id"], r)
            self._meta = meta
        hit = self._meta.get(model_id)
        if hit is None:   # in no catalog: what the store records for a model known in part
            return models_frame([ModelMeta.one_off(model_id)]).row(0, named=True)
        return hit


def score_columns(snap: StoreSnapshot, filters: Filters) -> tuple[list[Column], pl.DataFrame]:
    """The score columns of a selection and the tasks behind them."""
    tasks = snap.shown_tasks(filters, filters.category)
    if filters.category:
        cols = [Column(f"cat:{filters.category}", filters.category, "score")]
        flagged = set(snap.flagged())
        cols += [Column(f"task:{t}", f"{FLAG} {lbl}" if t in flagged else lbl, "score")
                 for t, lbl in zip(tasks["task_id"], tasks["label"], strict=True)]
    else:
        cols = [Column("macro", "Macro", "score"), Column("micro", "Micro", "score")]
        cols += [Column(f"cat:{c}", c, "score") for c in snap.categories(filters.suite)]
    return cols, tasks


def selection_scores(snap: StoreSnapshot, filters: Filters,
                     regime: str | None = None) -> pl.DataFrame:
    """The selection in the shape of `store.analyses.scores(source=None)`: [model, task,
    category, value, source] for the regime and metric, suite tasks only, model and source
    filters applied, NULL values left out (they count as missing downstream)."""
    regime = regime or filters.regime
    tasks = snap.shown_tasks(filters).select(pl.col("task_id").alias("task"), "category")
    s = (scores_of(snap.scores, regime=regime, metric=filters.metric).drop("category")
         .join(tasks, on="task", how="inner")
         .select("model", "task", "category", "value", "source"))
    if filters.source:
        s = s.filter(pl.col("source") == filters.source)
    keep = [m for m in s["model"].unique().to_list() if filters.model_matches(snap.model_meta(m))]
    s = s.filter(pl.col("model").is_in(keep))
    return keep_domain(s, domains_of(snap), filters.domain) if filters.domain else s


def _task_metas(tasks: pl.DataFrame) -> list[TaskMeta]:
    return [TaskMeta(r["task_id"], r["label"], r["category"], r["suite"],
                     r.get("source_benchmark") or "", r.get("organism") or UNKNOWN,
                     r.get("kingdom") or UNKNOWN)
            for r in tasks.iter_rows(named=True)]


def domains_of(snap: StoreSnapshot):
    """`(model id, task id) -> "in" | "out" | "unknown"` over the snapshot's catalog and tasks
    (`store.tables.catalogs.pair_domains`)."""
    return pair_domains(snap.paths, {m: ModelMeta(**d) for m, d in snap.catalog.items()},
                        snap.tasks)


def profiles_of(snap: StoreSnapshot) -> dict[str, TaskProfile]:
    """The recorded profile of each task of the snapshot's task catalog that has one."""
    return {r["task_id"]: p for r in snap.tasks.iter_rows(named=True)
            if (p := TaskProfile.from_row(r)) is not None}


def suite_task_metas(snap: StoreSnapshot, filters: Filters) -> list[TaskMeta]:
    """The tasks of a selection (`StoreSnapshot.shown_tasks`) as `TaskMeta`."""
    return _task_metas(snap.shown_tasks(filters))


def selection_aggregates(snap: StoreSnapshot, filters: Filters,
                         long: pl.DataFrame | None = None,
                         regime: str | None = None) -> pl.DataFrame:
    """`store.analyses.aggregates` of the selection (entries keyed by model and source)."""
    if long is None:
        long = selection_scores(snap, filters, regime)
    return aggregates(long, tasks=suite_task_metas(snap, filters))


def _wide(snap: StoreSnapshot, filters: Filters, fields: list[str]) -> pl.DataFrame:
    """[model, source, <one column per score field>] of a selection."""
    long = selection_scores(snap, filters)
    agg = selection_aggregates(snap, filters, long)
    if filters.category:
        per_task = (long.filter(pl.col("category") == filters.category)
                    .select("model", "source", "task", "value"))
        wide = agg.select("model", "source", filters.category)
        for task in fields[1:]:
            one = per_task.filter(pl.col("task") == task).select(
                "model", "source", pl.col("value").alias(task))
            wide = wide.join(one, on=["model", "source"], how="left")
    else:
        wide = agg.select("model", "source", *fields)
    return wide


def _rank_map(wide: pl.DataFrame, fields: list[str]) -> dict[tuple[str, str], dict]:
    ranks = rankings(wide, fields)
    return {(r["model"], r["source"]): r for r in ranks.iter_rows(named=True)}


def build_view(snap: StoreSnapshot, filters: Filters, sort_key: str | None = None,
               descending: bool = True, rank_scope: str = "store") -> TableView:
    """The table for a selection; aggregates and ranks come from `store.analyses` ('min' ties,
    missing values unranked). Each cell has two ranks: among the rows shown (`Row.ranks`) and
    among every entry of the store for the same suite, category, regime and metric
    (`Row.overall`), so that a filter never makes a model look first overall."""
    cols, _ = score_columns(snap, filters)
    columns = [Column(k, lbl, "meta") for k, lbl in META_COLUMNS]
    columns += cols
    columns += [Column(k, lbl, "meta") for k, lbl in TRAILING_META]

    fields = [score_field(c) for c in cols]
    wide = _wide(snap, filters, fields)
    rank_of = _rank_map(wide, fields)
    # the number of entries and their ranks without the model filters, kept in the snapshot's
    # view cache (read only): a search letter or a filter computes only the rows it shows
    unfiltered = filters.without_model_filters()

    def every_entry() -> tuple[int, dict]:
        w = wide if unfiltered == filters else _wide(snap, unfiltered, fields)
        return w.height, (rank_of if w is wide else _rank_map(w, fields))

    n_entries, overall_of = cache_of(snap).get(("every entry", unfiltered, tuple(fields)),
                                               every_entry)
    rows: list[Row] = []
    domain_of = domains_of(snap) if filters.category else None    # task columns: their flag
    for rec in wide.sort("model", "source").iter_rows(named=True):
        key = (rec["model"], rec["source"])
        rk, ov = rank_of[key], overall_of.get(key, {})
        row = Row(rec["model"], rec["source"], snap.model_meta(rec["model"]))
        for c, f in zip(cols, fields, strict=True):
            row.values[c.key] = rec[f]
            row.ranks[c.key] = rk[f]
            row.overall[c.key] = ov.get(f)
            if domain_of is not None and c.key.startswith("task:"):
                row.domains[c.key] = domain_of(rec["model"], f)
        rows.append(row)
    keys = {c.key for c in columns}
    if sort_key not in keys:
        sort_key, descending = cols[0].key, True
    left_out = len(snap.suite_tasks(filters.suite, filters.category)) - len(
        snap.shown_tasks(filters, filters.category))
    view = TableView(filters, tuple(columns), rows, sort_key, descending,
                     n_rows_unfiltered=n_entries,
                     rank_scope=rank_scope if rank_scope in RANK_SCOPES else "store",
                     protocol=snap.protocol, protocol_hash=snap.protocol_hash,
                     flagged_left_out=left_out)
    view.rows = sort_rows(view, sort_key, descending)
    return view


def sort_rows(view: TableView, key: str, descending: bool) -> list[Row]:
    """Sort by one column; missing values always last; model id breaks ties."""
    col = next(c for c in view.columns if c.key == key)

    def present(r: Row):
        v = view.cell(r, col)
        return v is not None and v != ""

    have = [r for r in view.rows if present(r)]
    lack = sorted((r for r in view.rows if not present(r)), key=lambda r: (r.model, r.source))
    have.sort(key=lambda r: (r.model, r.source))
    if col.key == "display":
        have.sort(key=lambda r: str(view.cell(r, col)).lower(), reverse=descending)
    else:
        have.sort(key=lambda r: view.cell(r, col), reverse=descending)
    return have + lack


def missing_cells(snap: StoreSnapshot, filters: Filters, models: list[str],
                  regimes: tuple[str, ...] | None = None,
                  precisions: Mapping[str, str | None] | None = None
                  ) -> list[tuple[str, str, str]]:
    """(model, task, regime) cells of the selection that no source has done (by the rule of
    `store.cells`: partial and stale cells are missing, as `fill` sees them; a local cell
    counts only at the compute precision `precisions` gives its model, what the fill would
    compute in: `run_precisions`, and at the normalized recipe preset, the default context
    policy and float32 storage, those the dashboard's fill runs; a model it does not name, at
    any), in the order models, tasks (suite order), regimes."""
    regimes = regimes or (filters.regime,)
    tasks = snap.suite_tasks(filters.suite, filters.category)["task_id"].to_list()
    chosen = precisions or {}
    have = {(m, t, r) for m, t, r, source, at, preset, context, storage in snap.done.iter_rows()
            if source != LOCAL or m not in chosen
            or (at == chosen[m] and preset is None and context is None and storage is None)}
    return [(m, t, r) for m in models for t in tasks for r in regimes if (m, t, r) not in have]


def run_precisions(snap: StoreSnapshot, models: list[str], device: str,
                   dtype: str) -> dict[str, str | None]:
    """Model -> the compute precision a fill of it with `--device` and `--dtype` computes in
    here (`store.vocab.variant.kind_precision` on the device `auto` means here,
    `store.runnable.resolved_device`; a CUDA card is taken to have bfloat16, as every card
    since Ampere has), for the models of the engine's catalog."""
    on = resolved_device(device).partition(":")[0]
    return {m: kind_precision(KINDS[kind], dtype, on) for m in models
            if (kind := (snap.catalog.get(m) or {}).get("encoder")) in KINDS}


def candidate_models(snap: StoreSnapshot, filters: Filters) -> list[str]:
    """Catalog models that pass the model filters (what a fill could run), each once, in a
    stable order: by display name, then id (a reload or a run never reorders them)."""
    seen: dict[str, dict] = {}
    for m in snap.models.iter_rows(named=True):
        if m["model_id"] not in seen and filters.model_matches(m):
            seen[m["model_id"]] = m
    return sorted(seen, key=lambda mid: (str(seen[mid].get("display") or mid).lower(), mid))


__all__ = [
    "METRIC_LABELS", "RANK_SCOPES", "REGIMES", "Column", "Row", "StoreSnapshot", "TableView",
    "build_view",
    "candidate_models", "missing_cells", "run_precisions", "selection_scores", "sort_rows",
]


@dataclass(frozen=True)
class FilterChoices:
    """The values each filter can take in this store (for the filter dialog)."""

    suites: tuple[str, ...]
    categories: tuple[str, ...]
    architecture_families: tuple[str, ...]
    pretraining_data: tuple[str, ...]
    sources: tuple[str, ...]
    metrics: tuple[str, ...] = METRICS_OF[CLASSIFICATION]   # the snapshot's kind's

    @classmethod
    def of(cls, snap: StoreSnapshot, suite: str) -> FilterChoices:
        return cls(tuple(snap.suites()), tuple(snap.categories(suite)),
                   tuple(snap.model_values("architecture_family")),
                   tuple(snap.model_values("pretraining_data")), tuple(snap.sources()),
                   METRICS_OF[TaskKind(snap.kind)])
