"""`geneb-engine tasks`: the tasks of a suite."""

from __future__ import annotations

from dataclasses import asdict

from rich.markup import escape

from engine.commands.common import (
    add_suite_args,
    check_names,
    console,
    emit_json,
    store_of,
    suite_of,
    table_console,
)
from engine.commands.layout import Col, FitTable


def register(sub, common) -> None:
    p = sub.add_parser("tasks", parents=[common], help="list the tasks of a suite")
    add_suite_args(p)
    p.add_argument("--category", nargs="+", metavar="CATEGORY", help="only these categories")
    p.set_defaults(handler=run)


def run(args) -> int:
    suite = suite_of(args, store_of(args))
    categories = list(dict.fromkeys(t.category for t in suite.tasks))
    if args.category:
        check_names("category", args.category, categories, option="--category",
                    listing=f"suite {suite.name} has {len(categories)}; `geneb-engine tasks "
                            f"--suite {args.suite}` shows each task's")
    tasks = [t for t in suite.tasks if not args.category or t.category in args.category]
    if args.json:
        emit_json([asdict(t) for t in tasks])
        return 0
    if not tasks:       # a suite always has tasks; kept for safety
        console.print(f"suite {suite.name}: no tasks")
        return 0
    table = FitTable(f"{suite.name}: {len(tasks)} tasks",
                     [Col("task", key=True), Col("label", wrap=20, drop=2), Col("category"),
                      Col("source", drop=1)], max_drop=2)
    for t in tasks:
        table.add_row(escape(t.task_id), escape(t.label), escape(t.category),
                      escape(t.source_benchmark))
    table_console().print(table)
    return 0
