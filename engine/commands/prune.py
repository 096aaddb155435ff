"""`geneb-engine prune`: remove the embeddings of (model, task) pairs whose every cell is done
(`store.prune`); a dry run unless `--apply`."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from datetime import UTC, datetime

from rich.markup import escape

from engine.commands.common import (
    StoreNames,
    add_suite_arg,
    console,
    emit_json,
    reading_suite,
    store_of,
)
from store.runnable import format_bytes
from store.vocab.sources import LOCAL


def register(sub, common) -> None:
    p = sub.add_parser(
        "prune", parents=[common], help="remove the embeddings of finished pairs",
        description="Remove the stored embeddings of (model, task) pairs whose every cell is "
                    "done at those embeddings' data, revision and variant (geneb-v1 in every "
                    "regime; a regression or variant task's protocols), to free disk space. "
                    "A dry run listing what would go and the bytes freed unless --apply. "
                    "Results and predictions are never touched; imported embeddings and "
                    "partial splits are never pruned; a pair a running fill holds is left. "
                    "`fill` recomputes a pruned pair's embeddings only when a new cell needs "
                    "them; `doctor` tells pruned embeddings from missing ones.")
    p.add_argument("--models", nargs="+", metavar="MODEL", help="only these models' embeddings")
    add_suite_arg(p, from_store=True, only="only the embeddings of this suite's tasks")
    p.add_argument("--older-revisions", action="store_true",
                   help="only the embeddings of another revision of each model than its "
                        "current one (all but the newest)")
    p.add_argument("--before", type=moment, metavar="DATE",
                   help="only embeddings written before DATE (ISO 8601: 2026-12-01 or "
                        "2026-12-01T12:00, UTC unless it names its offset)")
    p.add_argument("--apply", action="store_true",
                   help="remove them (default: a dry run that lists them, nothing removed)")
    p.set_defaults(handler=run)


def moment(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (ISO 8601: 2026-12-01 or 2026-12-01T12:00)") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def run(args) -> int:
    from store.prune import Policy, prunable, prune  # lazy: duckdb, polars, zarr

    paths = store_of(args)
    names = StoreNames(paths)
    if args.models:
        names.check_models(args.models)
    tasks = None
    if args.suite is not None:
        suite, _ = reading_suite(args, names.snap, LOCAL)
        tasks = [t.task_id for t in suite.tasks]
    chosen = prunable(paths, Policy(args.models, tasks, args.older_revisions, args.before))
    pruned, busy = prune(paths, chosen) if args.apply else ([], [])   # sweeps a killed one
    listed = pruned if args.apply else chosen
    freed = sum(p.bytes for p in listed)
    if args.json:
        emit_json({"store": str(paths.root), "applied": args.apply, "bytes": freed,
                   "splits": [asdict(p) for p in listed], "busy": [asdict(p) for p in busy]})
        return 0
    if not listed and not busy:
        console.print(f"nothing to prune in {paths.root}: no stored embeddings of a pair whose "
                      "every cell is done" + (" match the options" if _narrowed(args) else ""))
        return 0
    per_model: dict[str, list] = {}
    for p in listed:
        per_model.setdefault(p.model, []).append(p)
    for model, items in per_model.items():
        console.print(f"  {escape(model)}: {len({p.task for p in items})} task(s), "
                      f"{len(items)} split(s), {format_bytes(sum(p.bytes for p in items))}",
                      highlight=False)
    if args.apply:
        console.print(f"pruned {len(pruned)} split(s), {format_bytes(freed)} freed; recorded "
                      f"in {escape(str(paths.pruned))} (results and predictions untouched)",
                      highlight=False)
    else:
        console.print(f"dry run, nothing removed: {len(listed)} split(s) would go, "
                      f"{format_bytes(freed)} freed; `prune --apply` with the same options "
                      "removes them", highlight=False)
    if busy:
        console.print(f"left {len(busy)} split(s) whose pair another process (a fill) holds "
                      "now: run prune again later", highlight=False)
    return 0


def _narrowed(args) -> bool:
    return bool(args.models or args.suite or args.older_revisions or args.before)
