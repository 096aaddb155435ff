"""The store's catalog tables, `<store>/catalog/{tasks,models}.parquet`: what the results refer
to (a task's category, label, suite and current data hash; a model's metadata and current
revision), written by every command that writes results and read by every reader (`store.db`'s
`tasks` and `models` views).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, asdict, astuple, fields, replace

import polars as pl
import pyarrow.parquet as pq

from store.atomic import write_atomic
from store.catalog import (
    BOOL_FIELDS,
    COUNT_FIELDS,
    LIST_FIELDS,
    TASK_FIELDS,
    LetterCounts,
    ModelMeta,
    TaskMeta,
    TaskProfile,
    geneb_v1_tasks,
    load_models,
    param_count,
)
from store.cells import revision_text
from store.damage import REPAIR, note
from store.domains import domain
from store.embedding_imports import read_import
from store.failpoints import reach
from store.licences import licence_text
from store.locks import named_lock
from store.manifest import materialised_suite_tasks
from store.paths import StorePaths
from store.vocab.errors import GenebError, brief

# The model catalog's column beside an entry's fields: the revision the model's last `fill`
# computed with (its current revision, `store.cells`), NULL where none was recorded (a catalog
# written before it, a model only imported).
REVISION = "model_revision"


def empty_catalog(name: str) -> pl.DataFrame:
    """The catalog table `name` (tasks, models) without rows; the model catalog with its
    `REVISION` column."""
    return (tasks_frame([]) if name == "tasks" else
            models_frame([]).with_columns(pl.lit(None, pl.String).alias(REVISION)))


def open_catalogs(paths: StorePaths) -> None:
    """Write each catalog the store lacks as the empty table it reads as: a run calls this when
    it opens the results tables, so that a store with results tables has both catalogs (what
    `store.doctor.check_catalogs` holds it to) even when the run stops before it registers a
    model (one that fails to load); a catalog that is there is left as it is."""
    for name in ("tasks", "models"):
        path = paths.catalog_table(name)
        if path.exists():
            continue
        with named_lock(paths, "catalog"):
            if not path.exists():
                write_atomic(path, lambda tmp, name=name: empty_catalog(name).write_parquet(tmp))


def read_catalog(paths: StorePaths, name: str) -> pl.DataFrame:
    """A catalog table; the empty table when it is missing, and when it cannot be read (then
    reported once: `geneb-engine doctor --repair` rebuilds it). The model catalog always has
    its `REVISION` column."""
    empty = empty_catalog(name)
    f = paths.catalog_table(name)
    if not f.exists():
        return empty
    try:
        # one file, read as such (`pq.read_table` goes through pyarrow.dataset, which imports
        # pandas: ~250 ms on the dashboard's cold start)
        with pq.ParquetFile(f) as parquet:
            frame = pl.from_arrow(parquet.read())
    except Exception as exc:
        note(str(f), f"{f}: cannot be read ({brief(exc)}); using the built-in "
                      f"catalogs; {REPAIR}")
        return empty
    return pl.concat([empty, frame], how="diagonal_relaxed")


def models_with_builtins(paths, known: Mapping[str, ModelMeta] | None = None) -> pl.DataFrame:
    """The store's model catalog, completed with the entries of `known` it lacks (default:
    the built-in and user models, `load_models(paths.user_models)`, whose GenebError names a
    broken `models.toml`); a stored entry wins."""
    stored = read_catalog(paths, "models")
    # a catalog written before `param_count` held 0 for a model without a count
    stored = stored.with_columns(pl.Series("params", [param_count(n) for n in stored["params"]],
                                           dtype=pl.Int64))
    known = load_models(paths.user_models) if known is None else known
    ids = set(stored["model_id"])
    extra = [m for m in known.values() if m.model_id not in ids]
    return pl.concat([_with_facts(stored, known), models_frame(extra)], how="diagonal_relaxed")


# The catalog's facts about a model itself, not about a run of it (the commit its hub entry
# records, its licences): an entry's current ones win over those a stored row was registered
# with (a store written before they were recorded holds none).
CATALOG_FACTS: tuple[str, ...] = ("commit", "commit_source", "commit_reason", "weights_licence",
                                  "code_licence", "licence_source", "licence")


def _with_facts(stored: pl.DataFrame, known: Mapping[str, ModelMeta]) -> pl.DataFrame:
    stored = stored.with_columns(pl.lit(None, dtype=pl.String).alias(c) for c in CATALOG_FACTS
                                 if c not in stored.columns)
    ids = set(stored["model_id"])
    entries = [m for m in known.values() if m.model_id in ids]
    if not entries:
        return stored
    facts = models_frame(entries).select("model_id", *CATALOG_FACTS)
    return (stored.join(facts, on="model_id", how="left", suffix="_entry",
                        maintain_order="left")
            .with_columns(pl.coalesce(f"{c}_entry", c).alias(c) for c in CATALOG_FACTS)
            .drop(f"{c}_entry" for c in CATALOG_FACTS))


# What the data tell of a task (`fill` and `data verify` record them; a task keeps its recorded
# ones where a later write gives none), and their column types.
MEASURED: dict[str, pl.DataType] = {
    **dict.fromkeys(LetterCounts.columns(), pl.Int64),
    **{c: pl.Float64 if c in ("min_class_share", "length_median") else pl.Int64
       for c in TaskProfile.columns()},
}


def tasks_frame(tasks: list[TaskMeta] | tuple[TaskMeta, ...],
                data_hashes: Mapping[str, str] | None = None,
                letters: Mapping[str, LetterCounts] | None = None,
                profiles: Mapping[str, TaskProfile] | None = None) -> pl.DataFrame:
    """The task catalog's rows: a task's fields (organism and kingdom included), `data_hash`
    (its current data, `store.cells`), `letters_*` (what its sequences hold, `LetterCounts`)
    and its `TaskProfile`, NULL where not known."""
    hashes = data_hashes or {}
    measured = (letters or {}, LetterCounts.columns()), (profiles or {}, TaskProfile.columns())

    def values(task_id: str) -> dict:
        out = {}
        for known, columns in measured:
            value = known.get(task_id)
            out.update(zip(columns, astuple(value) if value is not None
                           else (None,) * len(columns), strict=True))
        return out

    return pl.DataFrame([{**asdict(t), "data_hash": hashes.get(t.task_id), **values(t.task_id)}
                         for t in tasks],
                        schema={**dict.fromkeys(TASK_FIELDS, pl.String), "data_hash": pl.String,
                                **MEASURED})


def models_frame(models: list[ModelMeta] | tuple[ModelMeta, ...]) -> pl.DataFrame:
    """The models as catalog rows (the store's catalog file, the model lists shown and
    exported): every field, `params` by `param_count`, the scale band and the licences in one
    cell (`store.licences.licence_text`)."""
    rows = [{**asdict(m), "params": param_count(m.params), "scale_band": m.scale_band,
             "licence": licence_text(m.weights_licence, m.code_licence)} for m in models]
    types = {**dict.fromkeys(("params", "random_init", *COUNT_FIELDS), pl.Int64),
             **dict.fromkeys(BOOL_FIELDS, pl.Boolean),
             **dict.fromkeys(LIST_FIELDS, pl.List(pl.String))}
    schema = {f.name: types.get(f.name, pl.String) for f in fields(ModelMeta)}
    schema["scale_band"] = schema["licence"] = pl.String
    return pl.DataFrame(rows, schema=schema)


def upsert(paths, name: str, new: pl.DataFrame, key: str, keep: tuple[str, ...] = ()) -> None:
    """Replace the rows of catalog `name` with the same key and keep the rest (columns in
    `keep` keep their stored value where the new one is NULL); read-modify-write under the
    catalog lock, written atomically."""
    path = paths.catalog_table(name)
    with named_lock(paths, "catalog"):
        if path.exists():
            try:
                old = pl.from_arrow(pq.read_table(path))
            except Exception:   # a damaged catalog is rebuilt from what is registered now
                old = new.clear()
            kept = [c for c in keep if c in old.columns]    # an older catalog may lack some
            if kept:
                stored = old.select(key, *kept)
                new = (new.join(stored, on=key, how="left", suffix="_stored")
                       .with_columns(pl.coalesce(c, f"{c}_stored").alias(c) for c in kept)
                       .drop(f"{c}_stored" for c in kept))
            new = pl.concat([old.filter(~pl.col(key).is_in(new[key].implode())), new],
                            how="diagonal_relaxed")
        write_atomic(path, lambda tmp: new.write_parquet(tmp))
        reach("catalog-written")


def register_tasks(paths, tasks, data_hashes: Mapping[str, str] | None = None,
                   letters: Mapping[str, LetterCounts] | None = None,
                   profiles: Mapping[str, TaskProfile] | None = None) -> None:
    """Record tasks in `<store>/catalog/tasks.parquet` (what results refer to), with the hash of
    their current data, its letter counts and its profile where given (a task keeps its
    recorded ones otherwise)."""
    if tasks:
        upsert(paths, "tasks", tasks_frame(list(tasks), data_hashes, letters, profiles),
                "task_id", keep=("data_hash", *MEASURED))


def register_models(paths, models, revisions: Mapping[str, str | None] | None = None) -> None:
    """Record models in `<store>/catalog/models.parquet`, with the revision a run computed
    them with where given (`revisions`: model id -> revision; a model keeps its recorded one
    otherwise)."""
    if models:
        revisions = revisions or {}
        frame = models_frame(list(models)).with_columns(pl.Series(
            REVISION, [revision_text(revisions[m.model_id]) if m.model_id in revisions
                       else None for m in models], dtype=pl.String))
        upsert(paths, "models", frame, "model_id", keep=(REVISION,))


def built_in_tasks(paths: StorePaths) -> list[TaskMeta]:
    """The tasks a store knows without its task catalog: geneb-v1's and those of the suites
    generated into it (`store.manifest.materialised_suite_tasks`)."""
    return [*geneb_v1_tasks(), *materialised_suite_tasks(paths)]


def known_tasks(paths: StorePaths, stored: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every task the store knows, once (the task catalog's columns): the catalog's own rows
    (`stored`, default read from the store; they carry what `fill` registered), then the
    `built_in_tasks` it lacks. The one list behind name checks, the dashboard and `doctor`."""
    stored = read_catalog(paths, "tasks") if stored is None else stored
    built_in = tasks_frame(built_in_tasks(paths))
    # a catalog written before the task domains holds no organism or kingdom: the built-in's
    domains = built_in.select("task_id", "suite", *(pl.col(c).alias(f"{c}_built_in")
                                                    for c in ("organism", "kingdom")))
    known = (pl.concat([stored, built_in], how="diagonal_relaxed")
             .unique("task_id", keep="first", maintain_order=True))
    return (known.join(domains, on=["task_id", "suite"], how="left", maintain_order="left")
            .with_columns(pl.coalesce(c, f"{c}_built_in").alias(c)
                          for c in ("organism", "kingdom"))
            .select(known.columns))


def path_models(paths: StorePaths) -> dict[str, ModelMeta]:
    """The checkpoint folders the store has run (`fill --models PATH` records each model it runs
    in `<store>/catalog/models.parquet`, `register_models`), by model id: the rows with a
    `path`, of the generic encoder, that are no random-initialisation control. They let
    `--models ID` name a folder after its first run (its id: `engine.registry.path_model_id`)."""
    return catalog_models(paths, lambda row: bool(row["path"]) and row["encoder"] == "hf"
                           and row["random_init"] is None)


def imported_models(paths: StorePaths) -> dict[str, ModelMeta]:
    """The models whose embeddings `geneb-engine import-embeddings` imported (the rows of
    `<store>/catalog/models.parquet` of encoder `imported`, which it records), by model id:
    `--models ID` names them, and `fill` probes their stored embeddings. Each has its import
    record's revision (`store.embedding_imports`: an import switches there first, the catalog
    follows), the row's where the record cannot be read."""
    found = catalog_models(paths, lambda row: row["encoder"] == "imported")
    for model_id, meta in found.items():
        try:
            record = read_import(paths, model_id)
        except GenebError:
            continue
        if record is not None and record.revision != meta.revision:
            found[model_id] = replace(meta, revision=record.revision)
    return found


def catalog_models(paths: StorePaths, keep: Callable[[dict], bool]) -> dict[str, ModelMeta]:
    """The model catalog's rows that `keep(row)`, as entries (a row no entry could hold is left
    out), by model id."""
    names = {f.name for f in fields(ModelMeta)}
    defaults = {f.name for f in fields(ModelMeta) if f.default is not MISSING}
    out = {}
    for row in read_catalog(paths, "models").iter_rows(named=True):
        if keep(row):
            try:
                # a field with a default that a catalog written before it lacks (None) keeps
                # its default
                out[row["model_id"]] = ModelMeta(**{k: row.get(k) for k in names
                                                    if k not in defaults
                                                    or row.get(k) is not None})
            except GenebError:      # a row no entry could hold: not offered
                continue
    return out


def store_models(paths: StorePaths, *, user: bool = True) -> dict[str, ModelMeta]:
    """The models `--models ID` names in this store: the built-in and (`user`) the user's
    entries (`load_models`), then the store's checkpoint folders (`path_models`) and imported
    embeddings (`imported_models`) whose ids those do not take."""
    known = load_models(paths.user_models if user else None)
    stored = path_models(paths) | imported_models(paths)
    return known | {k: m for k, m in stored.items() if k not in known}


def pair_domains(paths: StorePaths, models: Mapping[str, ModelMeta] | None = None,
                 tasks: pl.DataFrame | None = None) -> Callable[[str, str], str]:
    """`(model id, task id) -> "in" | "out" | "unknown"`: the in-domain rule
    (`store.domains.domain`) on the store's models (default `store_models`) and known tasks
    (default `known_tasks`); "unknown" for a model or task they do not describe."""
    models = store_models(paths) if models is None else models
    tasks = {r["task_id"]: (r["kingdom"], r["organism"])
             for r in (known_tasks(paths) if tasks is None else tasks).iter_rows(named=True)}

    def of(model_id: str, task_id: str) -> str:
        m = models.get(model_id)
        kingdom, organism = tasks.get(task_id, (None, None))
        return domain(m.pretraining_kingdoms if m else (), m.pretraining_organisms if m else (),
                      kingdom, organism)

    return of
