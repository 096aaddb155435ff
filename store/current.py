"""Which revision of each model is current for a reader that loads no model (`report`, `export`,
the site, the figures, the dashboard and its missing-evaluations screen: the `current_revision`
view of `store.db`), decided here once, the way `fill` and `status` tell it, and the notes that
say what it leaves out.

- A checkpoint folder given by path (a model catalog row with a `path`, of a kind that loads
  weights, no random-initialisation control: `folder_of`): the fingerprint of the folder as it
  is now (`store.fingerprint.checkpoint_fingerprint`, read again only for the files that
  changed), so a re-saved folder shows its old results as another revision's everywhere, not
  only in `status`. Rows recorded under the rule before the fingerprint (`folder-sha256-`) stay
  current while that older hash of the folder still matches (`legacy_revisions`). A folder that
  is gone or cannot be read: the last run's revision, and a note that says so.
- Any other model: the store's registered revision (`store.cells.CURRENT_REVISION_SQL`: what
  its last `fill` computed with): a hub model's is what its entry names.

`left_out` counts, per model, the local rows another revision left out, for the notes every
reader shows (`notes`: "my-model: 39 results of an earlier revision of /path left out; fill
computes the current one"; a folder that is gone; a model whose results at several compute
precisions are shown apart, `store.cells.ENTRY`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from store.cells import ENTRY_VARIANT
from store.fingerprint import LEGACY_PREFIX, checkpoint_fingerprint, folder_sha256
from store.vocab.context import context_label
from store.vocab.encoder_kinds import KINDS
from store.vocab.errors import GenebError
from store.vocab.kinds import (
    CLASSIFICATION,
    EVERY_KIND,
    METRIC_LABELS,
    PRIMARY,
    TaskKind,
    rows_of,
)
from store.vocab.sources import LOCAL
from store.vocab.variant import VARIANT_COLUMNS, precision_label, preset_label, storage_label

Run = Callable[[str, list], pl.DataFrame]

FOLDER_GONE = "folder not found: showing the last run's revision"


@dataclass(frozen=True)
class FolderRevision:
    """A checkpoint folder's revision as it is now (`revision`), and the name the rule before
    gave the same files (`also`, where asked); `problem` (revision None) when the folder is
    gone or cannot be read."""

    folder: str
    revision: str | None
    also: str | None = None
    problem: str | None = None


def folder_of(path: str | None, encoder: str | None, random_init) -> str | None:
    """The checkpoint folder whose files tell a model's revision (`engine.encoders.revision`),
    from its entry's `path`, `encoder` and `random_init`; None for every other model."""
    kind = KINDS.get(encoder or "")
    if not path or kind is None or not kind.source or random_init is not None:
        return None
    return path


def folder_revision(folder: str, *, legacy: bool = False) -> FolderRevision:
    """The revision of `folder` now (`store.fingerprint`), with its `folder-sha256-` name too
    when `legacy` (rows of the rule before are in the store)."""
    try:
        path = Path(folder).expanduser()
        if not path.is_dir():
            return FolderRevision(folder, None, problem=FOLDER_GONE)
        return FolderRevision(folder, checkpoint_fingerprint(path),
                              folder_sha256(path) if legacy else None)
    except (OSError, RuntimeError, ValueError):       # `~user` of no one, a NUL byte
        return FolderRevision(folder, None, problem=FOLDER_GONE)
    except GenebError as exc:
        return FolderRevision(folder, None,
                              problem=f"{exc}: showing the last run's revision")


def legacy_models(run: Run, models: Iterable[str]) -> set[str]:
    """Those of `models` with local rows recorded under the rule before the fingerprint."""
    found = run(f"SELECT DISTINCT model FROM results_all WHERE source = '{LOCAL}' AND "
                f"starts_with(model_revision, '{LEGACY_PREFIX}') AND list_contains(?, model)",
                [list(models)])
    return set(found["model"].to_list())


def legacy_revisions(run: Run, folders: Mapping[str, str]) -> dict[str, str]:
    """Model -> the `folder-sha256-` name of its folder as it is now, for the models of
    `folders` (model -> checkpoint folder) with rows of the rule before: such rows are current
    while it matches."""
    out = {}
    for model in sorted(legacy_models(run, folders)):
        told = folder_revision(folders[model], legacy=True)
        if told.also is not None:
            out[model] = told.also
    return out


def reader_revisions(run: Run, models: pl.DataFrame) -> dict[str, FolderRevision]:
    """Model -> its checkpoint folder's revision now, for the models of the catalog frame
    `models` (`model_id`, `path`, `encoder`, `random_init`) whose folder tells it and that
    have local rows (only their folders are read)."""
    if "path" not in models.columns or models["path"].is_null().all():
        return {}
    local = set(run(f"SELECT DISTINCT model FROM results_all WHERE source = '{LOCAL}'",
                    [])["model"].to_list())
    folders = {r["model_id"]: folder for r in models.iter_rows(named=True)
               if r["model_id"] in local
               and (folder := folder_of(r.get("path"), r.get("encoder"),
                                        r.get("random_init"))) is not None}
    legacy = legacy_models(run, folders) if folders else set()
    return {m: folder_revision(f, legacy=m in legacy) for m, f in folders.items()}


def left_out(run: Run, kind: str = CLASSIFICATION) -> pl.DataFrame:
    """[model, n]: the local results (cells: protocol, task, regime and variant, each over
    its seeds) per model that are not current for their model's revision alone (on current
    data, of another revision: the `stale_results` view of `store.db` minus the rows stale for
    their data), of `kind`'s tasks (those the readers show)."""
    return run(f"""
        SELECT r.model, count(DISTINCT (r.protocol_hash, r.task, r.regime,
                                        {', '.join(f'r.{c}' for c in VARIANT_COLUMNS)})) AS n
        FROM stale_results r
        LEFT JOIN current_data c ON c.task = r.task
        WHERE r.source = '{LOCAL}' AND ({rows_of(kind)})
          AND (r.data_hash IS NULL OR c.data_hash IS NULL OR r.data_hash = c.data_hash)
        GROUP BY r.model ORDER BY r.model""", [])


def with_entries(models: pl.DataFrame, run: Run) -> pl.DataFrame:
    """The model metadata frame `models` (`model_id`, `display`, ...: a catalog's) with a row
    for each entry of a model's rows at another variant (the `entries` view): its model's
    metadata, its id and display name followed by the entry's ` [<variant>]` (`[float16]`,
    `[reference@4]`), so every reader describes it as the model it is."""
    entries = run("SELECT entry, model FROM entries ORDER BY entry", [])
    if entries.is_empty() or "model_id" not in models.columns:
        return models
    base = models.unique("model_id", keep="first")
    extra = (entries.join(base, left_on="model", right_on="model_id", how="inner")
             .with_columns(pl.format("{} {}", pl.coalesce("display", "model"),
                                     pl.col("entry").str.extract(ENTRY_VARIANT))
                           .alias("display"))
             .drop("model").rename({"entry": "model_id"}))
    return pl.concat([models, extra.select(models.columns)], how="vertical_relaxed")


def notes(run: Run, folders: Mapping[str, FolderRevision],
          kind: str = CLASSIFICATION) -> list[str]:
    """What the store's current revisions leave out or cannot check, and what is shown apart,
    one line per model: its rows of another revision (`left_out`), a checkpoint folder that is
    gone, its rows at other variants than its current one (the `entries` view: other compute
    precisions, other recipe presets, other context policies)."""
    out = []
    for model, n in left_out(run, kind).iter_rows():
        told = folders.get(model)
        what = f"an earlier revision of {told.folder}" if told else "another revision"
        out.append(f"{model}: {n} result{'s' if n != 1 else ''} of {what} left out; fill "
                   "computes the current one")
    out += [f"{model}: {told.folder}: {told.problem}" for model, told in sorted(folders.items())
            if told.problem is not None]
    shown = run("SELECT e.model, string_agg(e.entry, ', ' ORDER BY e.entry) AS entries, "
                "any_value(p.compute_precision) AS precision, "
                "any_value(p.recipe_preset) AS preset, any_value(p.context_policy) AS context, "
                "any_value(p.storage_precision) AS storage, "
                "bool_and(coalesce(e.recipe_preset, '') = p.recipe_preset) AS one_preset, "
                "bool_and(coalesce(e.context_policy, '') = p.context_policy) AS one_context, "
                "bool_and(coalesce(e.storage_precision, '') = p.storage_precision) AS one_storage "
                "FROM entries e JOIN current_precision p ON p.model = e.model "
                "GROUP BY e.model ORDER BY e.model", [])
    out += [f"{model}: results at {precision_label(precision or None)}"
            f"{'' if one_preset else ', ' + preset_label(preset or None)}"
            f"{'' if one_context else ', ' + context_label(context or None)}"
            f"{', ' + storage_label(storage or None) if storage or not one_storage else ''}"
            f" shown as {model}, at other "
            f"{'precisions' if one_preset and one_context and one_storage else 'variants'} "
            f"apart as {entries} (never pooled)"
            for model, entries, precision, preset, context, storage, one_preset, one_context,
            one_storage in shown.iter_rows()]
    return out + kinds_left_out(run, kind)


def kinds_left_out(run: Run, kind: str = CLASSIFICATION) -> list[str]:
    """One line when the store holds current results of task kinds other than `kind`
    (`store.vocab.kinds`): a reader shows one kind's results, so those are left out, never
    averaged with its metric."""
    if kind == EVERY_KIND:
        return []
    kind = TaskKind(kind)
    cell = ", ".join(("model", "protocol_hash", "task", "regime", *VARIANT_COLUMNS))
    found = run(f"SELECT count(DISTINCT ({cell})) AS n, "
                "string_agg(DISTINCT coalesce(kind, 'classification'), ' and ' ORDER BY "
                "coalesce(kind, 'classification')) AS kinds "
                f"FROM current_rows WHERE NOT ({rows_of(kind)})", [])
    n, kinds = found.row(0)
    if not n:
        return []
    metric = METRIC_LABELS[PRIMARY[kind]]
    return [f"{n} result{'s' if n != 1 else ''} of {kinds} tasks left out: this shows "
            f"{kind} results only (their metrics are never averaged with {metric})"]
