"""`geneb-engine doctor [--repair]`: check the store, one line per problem; repair it."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from engine.commands.common import console, emit_json, store_of
from store.doctor import examine, repair


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
    if args.json:
        emit_json({"store": str(paths.root), "repaired": [f.to_dict() for f in done],
                   "problems": [f.to_dict() for f in left]})
        return 1 if left else 0
    if done:
        _print(f"repaired in {paths.root}", done, "done")
    if left:
        _print(f"problems in {paths.root}", left, "--repair will" if not args.repair else
               "not repaired")
        return 1
    console.print(f"{paths.root}: no problems found" + (" after the repair" if done else ""))
    return 0


def _print(title: str, findings, action: str) -> None:
    table = Table(title=title)
    for col in ("part", "path", "problem", action):
        table.add_column(col, overflow="fold")
    for f in findings:
        table.add_row(f.part, escape(f.path), escape(f.problem), escape(f.repair))
    console.print(table)
