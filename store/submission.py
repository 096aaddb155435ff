"""Official submissions in and out of the store.

Import: every file is validated first (`store.official.read_official_files`); only when all are
valid is anything written. A submission becomes 300 result rows (3 regimes x 100 tasks) with
`source` = its provenance (official / verified / reproduced / self-reported), protocol geneb-v1,
`seed` NULL (the files hold seed means), probe 'logreg', metrics MCC -> mcc, Acc -> acc,
F1 -> f1_macro, and the file's harness_version as `engine_version`. The rows of all files of
one import are one commit of the results table (all or nothing). Re-importing identical content
writes nothing; changed content writes new rows that win in the `results` view (latest per
key). A leaderboard goes to `store.reference`.

Export: a schema-1.0 submission from the seed means of a model's local results; refused, with the
missing cells listed, unless every (task, regime) of geneb-v1 is complete.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from store.analyses.scores import seed_means
from store.atomic import write_text_atomic
from store.catalog import ModelMeta, geneb_v1_tasks, load_models, register_models, register_tasks
from store.db import query, read_catalog
from store.errors import GenebError
from store.ids import safe_name
from store.official import (
    METRIC_COLUMNS,
    Leaderboard,
    Submission,
    read_official_files,
    submission_document,
)
from store.paths import StorePaths
from store.protocol import GENEB_V1, REGIME_K, REGIMES, SEEDS
from store.reference import write_leaderboard
from store.results import append_rows, open_for_writing

_COMPARED = ["model", "source", "task", "regime", "mcc", "acc", "f1_macro", "engine_version"]


@dataclass(frozen=True)
class ImportOutcome:
    """What importing one file did: `rows` written (0 when the store already had them)."""

    path: Path
    kind: str            # "submission" or "leaderboard"
    model: str | None    # the submission's model id; None for a leaderboard
    source: str | None   # the submission's provenance; None for a leaderboard
    rows: int
    status: str          # "imported" or "unchanged"


def submission_rows(sub: Submission) -> list[dict]:
    """The submission's 300 result rows (regimes, then tasks, in the official order)."""
    return [
        {"model": sub.model_id, "task": task.task_id, "regime": regime, "seed": None,
         "probe": "logreg", "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash,
         **{col: float(sub.results[regime][task.task_id][m]) for m, col in METRIC_COLUMNS.items()},
         "source": sub.provenance, "engine_version": sub.harness_version}
        for regime in REGIMES for task in geneb_v1_tasks()
    ]


def _catalog_entry(sub: Submission) -> ModelMeta:
    """A catalog record for a model the catalogs do not know, from the submission's meta."""
    training = sub.meta.get("training_data")
    url = sub.meta.get("url")
    return ModelMeta(
        model_id=sub.model_id, display=sub.meta["display"], params=sub.meta["params"],
        architecture="unknown", architecture_family="Other", tokenization="unknown",
        tokenization_family="unknown",
        pretraining_data=training if isinstance(training, str) and training else "unknown",
        provenance=sub.provenance, notes=url if isinstance(url, str) and url else None)


def _imported_rows(paths: StorePaths) -> pl.DataFrame:
    """Imported (seed NULL) geneb-v1 rows the `results` view holds now, in comparable form."""
    return query(paths, f"SELECT {', '.join(_COMPARED)} FROM results "
                        "WHERE seed IS NULL AND protocol_hash = ?", [GENEB_V1.hash])


def import_files(paths: StorePaths, files) -> list[ImportOutcome]:
    """Import official submissions and/or a leaderboard.json; all-or-nothing validation."""
    docs = read_official_files(files)
    subs = [d for d in docs if isinstance(d, Submission)]
    outcomes = _import_submissions(paths, subs) if subs else []
    for board in (d for d in docs if isinstance(d, Leaderboard)):
        written = write_leaderboard(paths, board)
        outcomes.append(ImportOutcome(board.path, "leaderboard", None, None,
                                      board.frame.height if written else 0,
                                      "imported" if written else "unchanged"))
    return outcomes


def _import_submissions(paths: StorePaths, subs: list[Submission]) -> list[ImportOutcome]:
    """Catalog entries first (only what the catalogs lack), then ONE commit with the rows of
    every submission whose rows differ from those the store holds."""
    open_for_writing(paths)
    tasks = set(read_catalog(paths, "tasks")["task_id"])
    register_tasks(paths, [t for t in geneb_v1_tasks() if t.task_id not in tasks])
    known = load_models(paths.user_models)
    registered = set(read_catalog(paths, "models")["model_id"])
    register_models(paths, [known.get(s.model_id) or _catalog_entry(s) for s in subs
                            if s.model_id not in registered])
    existing = _imported_rows(paths)
    outcomes, changed = [], []
    for sub in subs:
        rows = submission_rows(sub)
        new = pl.DataFrame(rows).select(_COMPARED).sort("regime", "task")
        old = (existing.filter((pl.col("model") == sub.model_id)
                               & (pl.col("source") == sub.provenance))
               .sort("regime", "task"))
        unchanged = old.equals(new)
        if not unchanged:
            changed += rows
        outcomes.append(ImportOutcome(sub.path, "submission", sub.model_id, sub.provenance,
                                      0 if unchanged else len(rows),
                                      "unchanged" if unchanged else "imported"))
    append_rows(paths, changed, "import", files=sum(o.rows > 0 for o in outcomes))
    return outcomes


def _missing_cells(means: pl.DataFrame) -> list[str]:
    """One line per incomplete (task, regime): no result, or (k-shot) fewer seeds than the
    protocol's five."""
    cells = {(r["task"], r["regime"]): r for r in means.iter_rows(named=True)}
    lines = []
    for regime in REGIMES:
        for task in geneb_v1_tasks():
            cell = cells.get((task.task_id, regime))
            if cell is None or any(cell[m] is None for m in METRIC_COLUMNS.values()):
                lines.append(f"{regime} {task.task_id}: no result")
            elif REGIME_K[regime] is not None and cell["n_seeds"] < len(SEEDS):
                lines.append(f"{regime} {task.task_id}: {cell['n_seeds']} of {len(SEEDS)} seeds")
    return lines


def _model_meta(paths: StorePaths, model_id: str) -> dict:
    models = read_catalog(paths, "models").filter(pl.col("model_id") == model_id)
    if models.height:
        row = models.row(0, named=True)
    else:
        known = load_models(paths.user_models).get(model_id)
        row = {"display": known.display, "params": known.params,
               "pretraining_data": known.pretraining_data} if known else {}
    return {"display": row.get("display") or model_id, "params": row.get("params") or 0,
            "pretraining_data": row.get("pretraining_data") or ""}


def export_submission(paths: StorePaths, model_id: str, out_path: str | os.PathLike,
                      protocol_hash: str = GENEB_V1.hash, *, source: str = "local",
                      provenance: str = "self-reported", harness_version: str = "geneb-engine",
                      submitted_by: str = "") -> Path:
    """Write `model_id`'s `source` results as an official schema-1.0 submission.

    Scores are the seed means of each (task, regime) (`store.analyses.scores.seed_means`). Every
    geneb-v1 cell must be complete (k-shot regimes: all five protocol seeds; full: at least one
    recorded fit) or a `GenebError` lists the missing cells. `out_path` is a file named
    `<model id, sanitized>.json` (the official rule) or an existing folder to write it into.
    Returns the written path.
    """
    out = Path(out_path)
    name = f"{safe_name(model_id)}.json"
    if out.is_dir():
        out = out / name
    elif out.name != name:
        raise GenebError(f"{out}: an official submission file must be named {name} "
                         "(the model id, characters outside A-Za-z0-9._- replaced by _)")
    means = seed_means(paths, protocol_hash=protocol_hash, source=source, model=model_id)
    if means.is_empty():
        raise GenebError(f"{model_id}: no {source} results under protocol {protocol_hash} in "
                         f"{paths.root}; compute them with `geneb-engine fill` first")
    if missing := _missing_cells(means):
        raise GenebError(f"{model_id}: {len(missing)} of {len(REGIMES) * len(geneb_v1_tasks())} "
                         "cells incomplete, nothing exported (run `geneb-engine fill` for them):"
                         "\n  " + "\n  ".join(missing))
    cells = {(r["regime"], r["task"]): r for r in means.iter_rows(named=True)}
    results = {regime: {task.task_id: {m: cells[regime, task.task_id][col]
                                       for m, col in METRIC_COLUMNS.items()}
                        for task in geneb_v1_tasks()}
               for regime in REGIMES}
    meta = _model_meta(paths, model_id)
    doc = submission_document(model_id, harness_version, {
        "display": meta["display"], "params": meta["params"], "url": "", "zero_shot": False,
        "training_data": meta["pretraining_data"], "provenance": provenance,
        "submitted_by": submitted_by}, results)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(doc, separators=(",", ":")))
    return out
