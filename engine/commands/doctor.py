"""`geneb-engine doctor [--repair]`: check the store, one line per problem; repair it."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from engine.commands.common import console, emit_json, store_of
from store.doctor import examine, repair
from store.vocab.errors import GenebError


def register(sub, common) -> None:
    p = sub.add_parser(
        "doctor", parents=[common], help="check the store and repair it",
        description="Check the results table (its log and every data file), every embedding "
                    "split (completeness, checksums, finite values), the imported embeddings "
                    "(their records, splits and submission copies), the catalogs (the audit's "
                    "too) and temporary files: one line per problem and what --repair does "
                    "about it, or the command that fixes it where --repair cannot. Exit 1 when "
                    "a problem is found (or, with --repair, remains).")
    p.add_argument("--repair", action="store_true",
                   help="repair every problem it can: broken files leave the table (kept in "
                        "<store>/aside/), a damaged log goes back to its last good version, "
                        "incomplete splits are dropped, an unreadable import record is kept "
                        "aside with its splits, splits of an interrupted import removed, "
                        "catalogs rebuilt (an unreadable audit table removed: `audit` measures "
                        "again), stale temporary files removed; refused while another process "
                        "writes to the store")
    p.set_defaults(handler=run, changes_store=True)   # engine.cli: store_changed


def run(args) -> int:
    paths = store_of(args, write=args.repair)
    if args.repair:
        done, left = repair(paths)
    else:
        done, left = [], examine(paths)
    notes = _absent(paths)
    if args.json:
        emit_json({"store": str(paths.root), "repaired": [f.to_dict() for f in done],
                   "problems": [f.to_dict() for f in left], "embeddings": notes})
        return 1 if left else 0
    for line in notes["lines"]:
        console.print(escape(line), highlight=False)
    if done:
        _print(f"repaired in {paths.root}", done, "done")
    if left:
        _print(f"problems in {paths.root}", left, "--repair will" if not args.repair else
               "not repaired")
        return 1
    console.print(f"{paths.root}: no problems found" + (" after the repair" if done else ""))
    return 0


def _absent(paths) -> dict:
    """The embeddings not on disk, told apart (`store.prune.absent`): pruned (recorded) and
    missing (pairs with local results, no embeddings, no record); neither is a problem: `fill`
    recomputes them only when a new cell needs them."""
    from store.prune import absent  # lazy: duckdb, polars, zarr

    try:
        pruned, missing = absent(paths)
    except GenebError as exc:           # an unreadable record: said, not a traceback
        return {"pruned": None, "missing": None, "lines": [str(exc)]}
    lines = []
    if pruned:
        lines.append(f"embeddings: {len(pruned)} split(s) pruned (recorded in {paths.pruned}): "
                     "`fill` recomputes them only when a new cell needs them")
    if missing:
        lines.append(f"embeddings: {len(missing)} (model, task) pair(s) with local results "
                     "have no embeddings and were not pruned (removed outside geneb-engine, or "
                     "lost): `fill` recomputes them only when a new cell needs them; first: "
                     f"{missing[0][0]} x {missing[0][1]}")
    return {"pruned": pruned, "missing": [list(m) for m in missing], "lines": lines}


def _print(title: str, findings, action: str) -> None:
    table = Table(title=title)
    for col in ("part", "path", "problem", action):
        table.add_column(col, overflow="fold")
    for f in findings:
        table.add_row(f.part, escape(f.path), escape(f.problem), escape(f.repair))
    console.print(table)
