"""`geneb-engine import-embeddings MODEL DIR`: bring your own embeddings
(`engine.embedding_import`), then `fill --models MODEL` probes them."""

from __future__ import annotations

from rich.markup import escape

from engine.commands.common import (
    add_suite_args,
    console,
    emit_json,
    err_console,
    store_of,
    suite_of,
)
from engine.embedding_files import FORMATS


def register(sub, common) -> None:
    p = sub.add_parser(
        "import-embeddings", parents=[common],
        help="import embeddings made elsewhere, for fill to probe",
        description="Import a model's embeddings computed elsewhere (your pipeline, a cluster "
                    "job, the official extractor) as its stored embeddings: DIR/<task_id>/"
                    "train.<ext> and test.<ext>, one row per sequence of the split in the "
                    f"order of the suite's task file, <ext> one of "
                    f"{', '.join(f.lstrip('.') for f in FORMATS)} (read as data: a pickle is "
                    "never loaded). Every file is checked against the suite's task files "
                    "first (row counts, one width, values finite once stored as float32; "
                    "regular files only, links within DIR only); every problem is one line "
                    "and nothing is stored unless all pass; a hidden folder of DIR is not "
                    "read, and named. Then `geneb-engine fill --models MODEL` probes them like "
                    "any model's, embedding nothing. Importing again replaces the model's "
                    "embeddings in one step (a kill leaves the old or the new ones); an import "
                    "and a fill of one model never run together.")
    p.add_argument("model", metavar="MODEL",
                   help="the model id its results get (a new id, or one imported before)")
    p.add_argument("folder", metavar="DIR", help="the folder of the embeddings")
    add_suite_args(p, subsample=False)
    p.add_argument("--submission", metavar="FILE",
                   help="the model's official submission file the embeddings came with "
                        "(schema 1.0, model_id MODEL): kept with them, so that `export "
                        "--submission MODEL --provenance verified` can check that the results "
                        "recomputed here reproduce it")
    p.set_defaults(handler=run, changes_store=True)   # engine.cli: store_changed


def run(args) -> int:
    # lazy: polars, duckdb, pyarrow, scikit-learn (through engine.pairs)
    from engine.embedding_import import prepare, store_import

    paths = store_of(args, write=True)
    suite = suite_of(args, paths)

    def warn(message: str) -> None:
        err_console.print(f"[yellow]warning:[/] {escape(message)}")

    prepared = prepare(paths, args.model, args.folder, suite, args.submission, warn)
    written = store_import(paths, prepared)
    record = prepared.record
    width = record.files[0].dim
    if args.json:
        emit_json({"store": str(paths.root), "model": args.model, "folder": record.folder,
                   "suite": suite.name, "revision": record.revision,
                   "tasks": len(record.tasks), "splits": len(record.files), "width": width,
                   "submission": record.submission.file if record.submission else None,
                   "status": "imported" if written else "unchanged"})
        return 0
    what = (f"{len(record.files)} splits of {len(record.tasks)} tasks ({width} values a row, "
            f"revision {record.revision[:12]})")
    if written:
        console.print(f"imported {what} of {escape(args.model)} from {escape(record.folder)} "
                      f"into {paths.root}")
    else:
        console.print(f"unchanged: {paths.root} holds these {what} of {escape(args.model)} "
                      "already")
    console.print(f"next: geneb-engine fill --models {escape(args.model)} --suite "
                  f"{escape(args.suite)}" + (f" --data-dir {escape(args.data_dir)}"
                                              if args.data_dir else ""))
    return 0
