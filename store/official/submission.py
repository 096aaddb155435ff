"""Official submissions in and out of the store.

Import: every file is validated first (`store.official.formats.read_official_files`); only when all
are
valid is anything written. A submission becomes 300 result rows (3 regimes x 100 tasks) with
`source` = its provenance (official / verified / reproduced / self-reported), protocol geneb-v1,
`seed` NULL (the files hold seed means), probe 'logreg', metrics MCC -> mcc, Acc -> acc,
F1 -> f1_macro, and the file's harness_version as `engine_version`. The rows of all files of
one import are one commit of the results table (all or nothing). Its header (harness_version and
the whole `meta`, as the file has them) is kept per (model, source) in
`StorePaths.submission_headers`, written before that commit, so an export gives the file back.
Re-importing identical content writes nothing; changed content writes new rows that win in the
`results` view (latest per key), a changed header replaces the stored one. A
leaderboard_tasks.json becomes the same 300 rows for each of its models, with `source`
'leaderboard' (`store.official.formats.LEADERBOARD_SOURCE`) and no `engine_version` (the file states
neither provenance nor harness), in the same commit; a model the catalogs lack is registered
from the file's display name and parameter count. A leaderboard.json goes to
`store.official.reference`.

Export: a schema-1.0 submission from the seed means of one source of a model's results (local,
or imported: an imported cell's mean is written as it was read); refused, with the missing cells
listed, unless every (task, regime) of geneb-v1 is complete, and refused unless the file passes
the official rules (`store.official.formats.read_official_file`). Written as the official tools
write
it (`store.official.data.document_bytes`), so an imported file comes back byte for byte.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from store.analyses.scores import seed_means
from store.atomic import write_atomic, write_bytes_atomic
from store.catalog import ModelMeta, geneb_v1_tasks, load_models
from store.db import query
from store.locks import named_lock
from store.official.data import document_bytes
from store.official.formats import (
    LEADERBOARD_SOURCE,
    METRIC_COLUMNS,
    Leaderboard,
    LeaderboardTasks,
    Problem,
    Submission,
    leaderboard_provenance,
    read_official_file,
    read_official_files,
    submission_document,
)
from store.official.reference import write_leaderboard
from store.paths import StorePaths
from store.tables.catalogs import read_catalog, register_models, register_tasks
from store.tables.results import append_rows, open_for_writing
from store.vocab.errors import GenebError, brief
from store.vocab.ids import safe_name
from store.vocab.protocol import GENEB_V1, REGIMES, is_few_shot, seed_counts
from store.vocab.sources import DEFAULT_PROVENANCE, LOCAL, SUBMISSION_PROVENANCES

_COMPARED = ["model", "source", "task", "regime", "mcc", "acc", "f1_macro", "engine_version"]
# The fields of an official submission's `meta`, in the order the official tools write them.
META_FIELDS: tuple[str, ...] = ("display", "params", "url", "zero_shot", "training_data",
                                "provenance", "submitted_by")
# `StorePaths.submission_headers`: one row per (model, source); `meta` the file's object as JSON.
_HEADER_SCHEMA = {"model": pl.String, "source": pl.String, "harness_version": pl.String,
                  "meta": pl.String}


@dataclass(frozen=True)
class ImportOutcome:
    """What importing one file did: `rows` written (0 when the store already had them)."""

    path: Path
    kind: str            # "submission", "leaderboard" or "leaderboard-tasks"
    model: str | None    # the submission's model id; None for a leaderboard file
    source: str | None   # the rows' source (a submission's provenance); None for leaderboard.json
    rows: int
    status: str          # "imported" (rows or header written) or "unchanged"


class InvalidSubmission(GenebError):
    """An export the official rules refuse; `problems` are the rules it breaks."""

    def __init__(self, model_id: str, problems: list[Problem]):
        super().__init__(f"{model_id}: the submission breaks the official rules, nothing "
                         "exported: " + "; ".join(f"{p.field}: {p.rule}" for p in problems))
        self.problems = problems


def submission_rows(sub: Submission) -> list[dict]:
    """The submission's 300 result rows (regimes, then tasks, in the official order)."""
    return [
        {"model": sub.model_id, "task": task.task_id, "regime": regime, "seed": None,
         "probe": "logreg", "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash,
         **{col: float(sub.results[regime][task.task_id][m]) for m, col in METRIC_COLUMNS.items()},
         "source": sub.provenance, "engine_version": sub.harness_version}
        for regime in REGIMES for task in geneb_v1_tasks()
    ]


def catalog_entry(sub: Submission) -> ModelMeta:
    """A catalog record for a model the catalogs do not know, from the submission's meta."""
    training = sub.meta.get("training_data")
    url = sub.meta.get("url")
    return ModelMeta.one_off(
        sub.model_id, display=sub.meta["display"], params=sub.meta["params"],
        provenance=sub.provenance, notes=url if isinstance(url, str) and url else None,
        **({"pretraining_data": training} if isinstance(training, str) and training else {}))


def _imported_rows(paths: StorePaths) -> pl.DataFrame:
    """Imported (seed NULL) geneb-v1 rows the `results` view holds now, in comparable form."""
    return query(paths, f"SELECT {', '.join(_COMPARED)} FROM results "
                        "WHERE seed IS NULL AND protocol_hash = ?", [GENEB_V1.hash])


def _header(sub: Submission) -> dict:
    """The submission's row of `StorePaths.submission_headers`."""
    return {"model": sub.model_id, "source": sub.provenance,
            "harness_version": sub.harness_version,
            "meta": json.dumps(sub.meta, ensure_ascii=False, separators=(",", ":"))}


def _read_headers(paths: StorePaths) -> pl.DataFrame:
    """The stored headers (none when no submission was imported); a GenebError naming the file
    when it cannot be read."""
    path = paths.submission_headers
    if not path.exists():
        return pl.DataFrame(schema=_HEADER_SCHEMA)
    try:
        return pl.read_parquet(path, glob=False)
    except Exception as exc:
        raise GenebError(f"{path}: cannot be read ({brief(exc)}); move it aside and import the "
                         "submission files again (their headers are kept there)") from None


def _write_headers(paths: StorePaths, headers: list[dict]) -> None:
    """Replace the stored headers of the same (model, source) by `headers`, keep the rest;
    read-modify-write under the catalog lock (metadata updates take turns), atomically."""
    if not headers:
        return
    new = pl.DataFrame(headers, schema=_HEADER_SCHEMA)
    with named_lock(paths, "catalog"):
        kept = _read_headers(paths).join(new.select("model", "source"), on=["model", "source"],
                                         how="anti")
        table = pl.concat([kept, new]).sort("source", "model")
        write_atomic(paths.submission_headers, lambda tmp: table.write_parquet(tmp))


def import_files(paths: StorePaths, files) -> list[ImportOutcome]:
    """Import official submissions, a leaderboard.json and/or a leaderboard_tasks.json;
    all-or-nothing validation."""
    docs = read_official_files(files)
    subs = [d for d in docs if isinstance(d, Submission)]
    tables = [d for d in docs if isinstance(d, LeaderboardTasks)]
    outcomes = _import_submissions(paths, subs, tables) if subs or tables else []
    for board in (d for d in docs if isinstance(d, Leaderboard)):
        written = write_leaderboard(paths, board)
        outcomes.append(ImportOutcome(board.path, "leaderboard", None, None,
                                      board.frame.height if written else 0,
                                      "imported" if written else "unchanged"))
    return outcomes


def _import_submissions(paths: StorePaths, subs: list[Submission],
                        tables: list[LeaderboardTasks]) -> list[ImportOutcome]:
    """Catalog entries first (only what the catalogs lack), then the submissions' headers that
    differ from the stored ones, then ONE commit with the rows of every submission, and of
    every model of a leaderboard_tasks.json, whose rows differ from those the store holds."""
    open_for_writing(paths)
    tasks = set(read_catalog(paths, "tasks")["task_id"])
    register_tasks(paths, [t for t in geneb_v1_tasks() if t.task_id not in tasks])
    known = load_models(paths.user_models)
    registered = set(read_catalog(paths, "models")["model_id"])
    submitted = {s.model_id for s in subs}      # a submission's meta is the richer record
    catalogued = [*subs, *(m for t in tables for m in t.models if m.model_id not in submitted)]
    register_models(paths, [known.get(s.model_id) or catalog_entry(s) for s in catalogued
                            if s.model_id not in registered])
    existing = _imported_rows(paths)
    stored = _read_headers(paths).to_dicts()
    outcomes, changed, headers = [], [], []
    for sub in subs:
        rows = submission_rows(sub)
        same_rows = _holds(existing, rows)
        if not same_rows:
            changed += rows
        header = _header(sub)
        if header not in stored:
            headers.append(header)
        outcomes.append(ImportOutcome(sub.path, "submission", sub.model_id, sub.provenance,
                                      0 if same_rows else len(rows),
                                      "unchanged" if same_rows and header in stored
                                      else "imported"))
    for table in tables:
        written = 0
        for model in table.models:
            rows = [{**row, "source": LEADERBOARD_SOURCE, "engine_version": None}
                    for row in submission_rows(model)]
            if not _holds(existing, rows):
                changed += rows
                written += len(rows)
        outcomes.append(ImportOutcome(table.path, "leaderboard-tasks", None, LEADERBOARD_SOURCE,
                                      written, "imported" if written else "unchanged"))
    _write_headers(paths, headers)
    append_rows(paths, changed, "import", files=sum(o.rows > 0 for o in outcomes))
    return outcomes


def _holds(existing: pl.DataFrame, rows: list[dict]) -> bool:
    """Whether `existing` (`_imported_rows`) already holds these rows of one model and source."""
    new = (pl.DataFrame(rows).select(_COMPARED)
           .with_columns(pl.col("engine_version").cast(pl.String)).sort("regime", "task"))
    first = rows[0]
    old = (existing.filter((pl.col("model") == first["model"])
                           & (pl.col("source") == first["source"]))
           .sort("regime", "task"))
    return old.equals(new)


def missing_cells(means: pl.DataFrame) -> list[str]:
    """One line per incomplete (task, regime) of a `seed_means` frame of one model and source:
    no result, or (k-shot) fewer seeds than its protocol's (`seed_counts`: geneb-v1's five). An
    imported cell has no seeds (`n_seeds` 0): the file's seed mean stands for all of them."""
    cells = {(r["task"], r["regime"]): r for r in means.iter_rows(named=True)}
    seeds = seed_counts(means["protocol_hash"].unique())
    lines = []
    for regime in REGIMES:
        for task in geneb_v1_tasks():
            cell = cells.get((task.task_id, regime))
            if cell is None or any(cell[m] is None for m in METRIC_COLUMNS.values()):
                lines.append(f"{regime} {task.task_id}: no result")
            elif is_few_shot(regime) and 0 < cell["n_seeds"] < (n := seeds[cell["protocol_hash"]]):
                lines.append(f"{regime} {task.task_id}: {cell['n_seeds']} of {n} seeds")
    return lines


def model_meta(paths: StorePaths, model_id: str) -> dict:
    """The catalog's display name (else the id), parameter count (else 0) and pretraining data
    (else "") of a model: the store's catalog, else the built-in or user catalog."""
    models = read_catalog(paths, "models").filter(pl.col("model_id") == model_id)
    if models.height:
        row = models.row(0, named=True)
    else:
        known = load_models(paths.user_models).get(model_id)
        row = {"display": known.display, "params": known.params,
               "pretraining_data": known.pretraining_data} if known else {}
    return {"display": row.get("display") or model_id, "params": row.get("params") or 0,
            "pretraining_data": row.get("pretraining_data") or ""}


def entry_provenance(source: str, model_id: str) -> str:
    """The provenance a store entry is published with: an imported submission's own, a
    leaderboard_tasks.json row's `leaderboard_provenance`, else `DEFAULT_PROVENANCE` (local
    results, as `export --submission` writes them by default)."""
    if source in SUBMISSION_PROVENANCES:
        return source
    if source == LEADERBOARD_SOURCE:
        return leaderboard_provenance(model_id)
    return DEFAULT_PROVENANCE


def submission_header(paths: StorePaths, model_id: str, source: str, *,
                      engine: str = "geneb-engine") -> tuple[str, dict]:
    """(harness_version, meta) an export of the (model, source) entry writes unless told
    otherwise: the imported file's own, as it had them, when the store keeps its header; else
    `engine` (our engine and version) and the catalog's metadata (`model_meta`), no url, not
    zero-shot, no submitter, the provenance `entry_provenance` gives."""
    stored = _read_headers(paths).filter((pl.col("model") == model_id)
                                         & (pl.col("source") == source))
    if stored.height:
        row = stored.row(0, named=True)
        return row["harness_version"], json.loads(row["meta"])
    meta = model_meta(paths, model_id)
    return engine, {"display": meta["display"], "params": meta["params"], "url": "",
                    "zero_shot": False, "training_data": meta["pretraining_data"],
                    "provenance": entry_provenance(source, model_id), "submitted_by": ""}


def _no_results(paths: StorePaths, model_id: str, source: str, protocol_hash: str) -> str:
    """Why there is nothing to export, and what to do: the sources that hold the model, else
    how to get results of `source`."""
    held = query(paths, "SELECT DISTINCT source FROM results WHERE model = ? AND "
                        "protocol_hash = ? ORDER BY source",
                 [model_id, protocol_hash])["source"].to_list()
    if held:
        fix = f"its results are of source {', '.join(held)}: give --source {held[0]}"
    elif source == LOCAL:
        fix = "compute them with `geneb-engine fill` first"
    elif source == "official":
        fix = "import them with `geneb-engine import --official`"
    else:
        fix = "import its submission file with `geneb-engine import FILE`"
    return f"{model_id}: no {source} results under protocol {protocol_hash} in {paths.root}; {fix}"


def export_submission(paths: StorePaths, model_id: str, out_path: str | os.PathLike,
                      protocol_hash: str = GENEB_V1.hash, *, source: str = LOCAL,
                      engine: str = "geneb-engine", harness_version: str | None = None,
                      meta: Mapping[str, object] | None = None) -> Path:
    """Write `model_id`'s `source` results as an official schema-1.0 submission.

    Scores are the seed means of each (task, regime) (`store.analyses.scores.seed_means`). Every
    geneb-v1 cell must be complete (`missing_cells`) or a `GenebError` lists the missing cells.
    The header is `submission_header` (`engine` states our engine for results without a stored
    header) with `harness_version` and the `meta` fields given (of META_FIELDS) instead; a file
    the official rules refuse is an `InvalidSubmission`. `out_path` is a file named
    `<model id, sanitized>.json` (the official rule) or an existing folder to write it into.
    Returns the written path.
    """
    given = {k: v for k, v in (meta or {}).items() if v is not None}
    if unknown := set(given) - set(META_FIELDS):
        raise ValueError(f"not fields of a submission's meta: {sorted(unknown)}")
    out = Path(out_path)
    name = f"{safe_name(model_id)}.json"
    if out.is_dir():
        out = out / name
    elif out.name != name:
        raise GenebError(f"{out}: an official submission file must be named {name} "
                         "(the model id, characters outside A-Za-z0-9._- replaced by _)")
    means = seed_means(paths, protocol_hash=protocol_hash, source=source, model=model_id)
    if means.is_empty():
        raise GenebError(_no_results(paths, model_id, source, protocol_hash))
    if missing := missing_cells(means):
        raise GenebError(f"{model_id}: {len(missing)} of {len(REGIMES) * len(geneb_v1_tasks())} "
                         "cells incomplete, nothing exported (run `geneb-engine fill` for them):"
                         "\n  " + "\n  ".join(missing))
    cells = {(r["regime"], r["task"]): r for r in means.iter_rows(named=True)}
    results = {regime: {task.task_id: {m: cells[regime, task.task_id][col]
                                       for m, col in METRIC_COLUMNS.items()}
                        for task in geneb_v1_tasks()}
               for regime in REGIMES}
    stated, header = submission_header(paths, model_id, source, engine=engine)
    doc = submission_document(model_id, stated if harness_version is None else harness_version,
                              {**header, **given}, results)
    blob = document_bytes(doc)
    with tempfile.TemporaryDirectory() as folder:  # the official rules read a file of this name
        check = Path(folder) / name
        check.write_bytes(blob)
        _, problems = read_official_file(check)
    if problems:
        raise InvalidSubmission(model_id, problems)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_bytes_atomic(out, blob)
