"""The official web leaderboard's two files, `leaderboard.json` and `leaderboard_tasks.json`,
derived from submissions as the official `tools/build_leaderboard.py` derives them, and the
store's entries they are written from.

`leaderboard_documents`: one row per model in each regime, rows sorted by lower-cased model id.
A `leaderboard.json` row holds `model`, `disp` (the display name, else the id), `params` (else
0), `official` (provenance 'official'), `zero_shot`, `submitted` (the provenance), then per
metric (MCC, Acc, F1) `micro_`, `macro_` and `cat_` (the 13 category scores); a
`leaderboard_tasks.json` row `model`, `disp`, `params`, then per metric `micro_`, `macro_` and
`task_` (the 100 per-task scores), after the task list `tasks` ({id, label, cat}). The
aggregates are `store.analyses.aggregates` of the per-task scores, never rounded; the files are
compact JSON in UTF-8, as the official script dumps them.

`store_submissions`: each model once, as the submission of the first source (in the order
asked) that holds every geneb-v1 cell of it: its seed means, the store's catalog metadata of the
model and the provenance `store.official.submission.entry_provenance` gives; the others are left
out,
each with the reason. The catalog keeps no zero-shot flag: `zero_shot` is false, as
`export --submission` writes it for an entry without an imported header.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import polars as pl

from store.analyses.aggregates import aggregates
from store.analyses.scores import scores_of
from store.catalog import CATEGORY_ORDER, geneb_v1_tasks
from store.db import Snapshot
from store.official.formats import METRIC_COLUMNS, Submission
from store.official.submission import entry_provenance, missing_cells, model_meta
from store.output_folder import OutputFolder, write_output
from store.seedmeans import seed_means
from store.vocab.protocol import REGIMES
from store.vocab.sources import BOARD_PREFERENCE

LEADERBOARD_FILES: tuple[str, str] = ("leaderboard.json", "leaderboard_tasks.json")
GENERATOR = "geneb-engine leaderboard"   # the writer of `leaderboard -o`'s folder, in its marker


def leaderboard_documents(subs: Iterable[Submission]) -> tuple[dict, dict]:
    """(`leaderboard.json`, `leaderboard_tasks.json`) of valid submissions, one model each."""
    tasks = geneb_v1_tasks()
    # The official script reads the files in name order, then sorts by lower-cased id (stable).
    subs = sorted(sorted(subs, key=lambda s: s.model_id), key=lambda s: s.model_id.lower())
    scores = pl.DataFrame(
        [{"model": sub.model_id, "regime": regime, "task": task.task_id,
          "category": task.category,
          **{column: float(sub.results[regime][task.task_id][metric])
             for metric, column in METRIC_COLUMNS.items()}}
         for sub in subs for regime in REGIMES for task in tasks],
        schema={"model": pl.String, "regime": pl.String, "task": pl.String,
                "category": pl.String, **{c: pl.Float64 for c in METRIC_COLUMNS.values()}})
    aggs = {(regime, column): {r["model"]: r for r in aggregates(
                scores_of(scores, regime=regime, metric=column, with_source=False),
                tasks=tasks).iter_rows(named=True)}
            for regime in REGIMES for column in METRIC_COLUMNS.values()}
    by_category: dict[str, list[dict]] = {regime: [] for regime in REGIMES}
    by_task: dict[str, list[dict]] = {regime: [] for regime in REGIMES}
    for sub in subs:
        head = {"model": sub.model_id, "disp": sub.meta.get("display", sub.model_id),
                "params": sub.meta.get("params", 0)}
        for regime in REGIMES:
            row = {**head, "official": sub.provenance == "official",
                   "zero_shot": bool(sub.meta.get("zero_shot", False)),
                   "submitted": sub.provenance}
            task_row = dict(head)
            for metric, column in METRIC_COLUMNS.items():
                agg = aggs[regime, column][sub.model_id]
                means = {f"micro_{metric}": agg["micro"], f"macro_{metric}": agg["macro"]}
                row |= {**means, f"cat_{metric}": {c: agg[c] for c in CATEGORY_ORDER}}
                task_row |= {**means, f"task_{metric}": {
                    t.task_id: float(sub.results[regime][t.task_id][metric]) for t in tasks}}
            by_category[regime].append(row)
            by_task[regime].append(task_row)
    task_list = [{"id": t.task_id, "label": t.label, "cat": t.category} for t in tasks]
    return {"data": by_category}, {"tasks": task_list, "data": by_task}


def leaderboard_texts(documents: tuple[dict, dict]) -> dict[str, str]:
    """The two files' names and texts: compact JSON, non-ASCII letters as they are (as the
    official script dumps them; `leaderboard -o` and the site write these)."""
    return {name: json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
            for name, doc in zip(LEADERBOARD_FILES, documents, strict=True)}


def legacy_names(folder: Path) -> list[str] | None:
    """The files `leaderboard -o` of a version before the folder's marker wrote into `folder`:
    the two files, where the folder holds them and nothing else. None for any other folder: a
    `leaderboard.json` beside other files (a web page's folder, the official repository's) is
    not taken as ours, so it is never replaced unasked."""
    try:
        names = {p.name for p in folder.iterdir()}
    except OSError:
        return None
    return list(LEADERBOARD_FILES) if names == set(LEADERBOARD_FILES) else None


def write_leaderboard_files(out: OutputFolder, documents: tuple[dict, dict]) -> list[Path]:
    """Write the two documents as the output of folder `out` (`store.output_folder`: created
    when missing; what else the folder holds is kept; a name taken by a file geneb did not
    write there is refused before anything is written); their paths."""
    texts = leaderboard_texts(documents)
    write_output(out, {name: text.encode("utf-8") for name, text in texts.items()},
                 last=LEADERBOARD_FILES[0])
    return [out.path / name for name in texts]


def source_order(present: Iterable[str]) -> list[str]:
    """The sources a leaderboard's rows come from by default, in order of preference: the
    submission provenances (official first), local, then the store's other sources (the rows
    of an imported leaderboard_tasks.json among them), sorted."""
    return [*BOARD_PREFERENCE, *sorted(set(present) - set(BOARD_PREFERENCE))]


def store_submissions(snap: Snapshot, *, sources: Sequence[str], protocol_hash: str
                      ) -> tuple[list[tuple[str, Submission]], list[str]]:
    """The store's entries for a leaderboard as (source, submission), and one line per
    (model, source) left out.

    A model's entry comes from the first of `sources` that holds all its geneb-v1 cells,
    complete as `export --submission` requires them (`store.official.submission.missing_cells`:
    every
    metric; k-shot: the protocol's five seeds, or an imported seed mean). Display name and
    parameter count are the store's catalog's (else the built-in or user catalog's)."""
    means = seed_means(snap, protocol_hash=[protocol_hash], source=list(sources))
    cells = len(REGIMES) * len(geneb_v1_tasks())
    entries: list[tuple[str, Submission]] = []
    left_out: list[str] = []
    taken: dict[str, str] = {}
    for source in sources:
        of_source = means.filter(pl.col("source") == source)
        for model in of_source["model"].unique(maintain_order=True):
            if model in taken:
                left_out.append(f"{model} ({source}): its row is the {taken[model]} one")
                continue
            model_means = of_source.filter(pl.col("model") == model)
            if missing := missing_cells(model_means):
                left_out.append(f"{model} ({source}): {len(missing)} of {cells} cells "
                                f"incomplete (first: {missing[0]})")
                continue
            taken[model] = source
            meta = model_meta(snap.paths, model)
            by_cell = {(r["regime"], r["task"]): r for r in model_means.iter_rows(named=True)}
            entries.append((source, Submission(
                snap.paths.results, model, "",
                {"display": meta["display"], "params": meta["params"], "zero_shot": False,
                 "provenance": entry_provenance(source, model)},
                {regime: {t.task_id: {metric: by_cell[regime, t.task_id][column]
                                      for metric, column in METRIC_COLUMNS.items()}
                          for t in geneb_v1_tasks()}
                 for regime in REGIMES})))
    return entries, left_out
