"""`geneb-engine site -o DIR`: a static leaderboard site built from the store (HTML, CSS,
JavaScript and JSON; no server, no network request; works from file:// and any static host).
The data is `engine.site.data.site_data` (the report's functions, every metric and regime), the
folder is an output folder (`store.output_folder`: only the site's own files written, each
replaced whole; the user's files kept), written by `engine.site.build.write_site`."""

from __future__ import annotations

import sys

from engine.commands.common import (
    StoreNames,
    add_suite_args,
    choice_of,
    console,
    current_notes,
    emit_json,
    kind_tasks,
    other_kinds_only,
    reading_suite,
    store_of,
)
from engine.commands.report import level_of, resample_count, seed_of
from store.analyses.presets import LEVEL, SEED, SITE_RESAMPLES
from store.output_folder import output_folder
from store.vocab.errors import GenebError
from store.vocab.kinds import CLASSIFICATION, KIND_NAMES, TaskKind
from store.vocab.protocol import GENEB_V1, read_protocol

DEFAULT_TITLE = "GENEB leaderboard"


def register(sub, common) -> None:
    p = sub.add_parser(
        "site", parents=[common], help="build a static leaderboard site from the store",
        description="Write a self-contained static site (HTML, CSS, JavaScript, JSON) of the "
                    "store's geneb-v1 results into a folder: regime, metric, size, "
                    "architecture, tokenization and pretraining filters, search, category and "
                    "per-task tabs, provenance badges, sortable columns, score and rank "
                    "intervals, the leader's tie group, the critical-difference diagram, rank "
                    "shifts, a page per model and per task. It opens from file:// and any "
                    "static host (GitHub Pages, a Hugging Face static Space). Its numbers are "
                    "those of `geneb-engine report --json` with the same --resamples.")
    p.add_argument("-o", "--output", metavar="DIR", required=True,
                   help="the folder to write the site into: new or not (the site's files "
                        "are written beside yours, a previous site's replaced; not the store, "
                        "your home nor a current folder holding other files)")
    p.add_argument("--title", metavar="T", default=DEFAULT_TITLE,
                   help=f"the page's title (default: {DEFAULT_TITLE})")
    add_suite_args(p, from_store=True)
    p.add_argument("--resamples", type=resample_count, default=SITE_RESAMPLES, metavar="N",
                   help="task bootstrap resamples of the intervals and the tie group, per "
                        f"metric and regime (default: {SITE_RESAMPLES:,}; 0: no intervals, "
                        "tie group nor CD diagram)")
    p.add_argument("--level", type=level_of, default=LEVEL, metavar="L",
                   help=f"level of the intervals (default: {LEVEL})")
    p.add_argument("--bootstrap-seed", type=seed_of, default=SEED, metavar="S",
                   help=f"seed of the resamples (default: {SEED})")
    p.add_argument("--kind", choices=KIND_NAMES, default=CLASSIFICATION,
                   type=choice_of("kind", KIND_NAMES),
                   help="the task kind whose results the site shows (default: classification; "
                        "regression: ridge-v1 by Pearson r, Spearman, R^2; variant: "
                        "variant-probe-v1 by AUROC, AUPRC): one site per kind")
    p.set_defaults(handler=run)


def run(args) -> int:
    from engine.site.build import (  # lazy: polars, duckdb, pyarrow
        ENTRY,
        GENERATOR,
        legacy_names,
        write_site,
    )
    from engine.site.data import site_data  # lazy: polars, duckdb, pyarrow
    from store.current import with_entries  # lazy: polars
    from store.db import Snapshot  # lazy: polars, duckdb, pyarrow
    from store.official.leaderboard import (  # lazy: polars, duckdb, pyarrow
        leaderboard_documents,
        source_order,
        store_submissions,
    )
    from store.tables.catalogs import models_with_builtins  # lazy: polars, pyarrow, filelock
    from store.task_health import task_health  # lazy: polars, duckdb

    paths = store_of(args)
    out = output_folder("-o", args.output, generator=GENERATOR, store=paths,
                        is_for="give the folder to write the site into", legacy=legacy_names)
    kind = TaskKind(args.kind)
    snap = Snapshot(paths, kind)
    if (line := other_kinds_only(snap, kind)) is not None:
        raise GenebError(f"{line}; nothing written")
    suite, chosen = reading_suite(args, snap, None)
    if chosen and not args.json:
        console.print(chosen, markup=False, highlight=False)
    tasks = kind_tasks(snap, kind, suite.tasks, suite.name)
    # the official leaderboard's files: geneb-v1's submissions, classification only
    entries = store_submissions(snap, sources=source_order(StoreNames(paths, snap).sources),
                                protocol_hash=GENEB_V1.hash)[0] if kind is CLASSIFICATION else []
    health = {t: h.verdict for t, (_, h) in
              task_health(snap, [t.task_id for t in tasks]).items()}   # audited tasks
    notes = current_notes(args, snap)
    data = site_data(snap, with_entries(models_with_builtins(paths), snap.query), tasks,
                     suite=suite.name,
                     title=args.title, resamples=args.resamples, level=args.level,
                     seed=args.bootstrap_seed, health=health)
    if data is None:
        if kind is not CLASSIFICATION:
            raise GenebError(f"no {read_protocol(kind).name} results of {kind} tasks on suite "
                             f"{suite.name} in {paths.root}; nothing written")
        raise GenebError(f"no geneb-v1 results on suite {suite.name} in {paths.root}; nothing "
                         "written (fill the store with `geneb-engine fill --models MODEL`, or "
                         "import the official results with `geneb-engine import --official`)")
    board = leaderboard_documents(s for _, s in entries) if entries else None
    size, notes = write_site(out, data, board)
    for note in notes:
        print(f"geneb-engine site: warning: {note}", file=sys.stderr)
    if args.json:
        emit_json({"folder": str(out.path), "bytes": size, "table_version": data["table_version"],
                   "models": len(data["models"]), "tasks": len(data["tasks"]),
                   "leaderboard_files": board is not None, "notes": notes})
        return 0
    console.print(f"site of {len(data['models'])} models and {len(data['tasks'])} tasks "
                  f"written to {out.path} ({size / 1e6:.1f} MB); open {out.path / ENTRY}",
                  markup=False, highlight=False)
    return 0
