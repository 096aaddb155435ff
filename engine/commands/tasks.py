"""`geneb-engine tasks`: the tasks of a suite."""

from __future__ import annotations

from dataclasses import asdict

from rich.table import Table

from engine.commands.common import add_suite_args, console, emit_json, store_of, suite_of


def register(sub, common) -> None:
    p = sub.add_parser("tasks", parents=[common], help="list the tasks of a suite")
    add_suite_args(p)
    p.add_argument("--category", nargs="+", metavar="CATEGORY", help="only these categories")
    p.set_defaults(handler=run)


def run(args) -> int:
    suite = suite_of(args, store_of(args))
    tasks = [t for t in suite.tasks if not args.category or t.category in args.category]
    if args.json:
        emit_json([asdict(t) for t in tasks])
        return 0
    table = Table(title=f"{suite.name}: {len(tasks)} tasks")
    for col in ("task", "label", "category", "source"):
        table.add_column(col)
    for t in tasks:
        table.add_row(t.task_id, t.label, t.category, t.source_benchmark)
    console.print(table)
    return 0
