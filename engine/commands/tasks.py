"""`geneb-engine tasks`: the tasks of a suite, and how many of their sequences hold IUPAC codes,
U, lower case or other letters (`store.catalog.LetterCounts`) where the store's task catalog
records it for that suite (`--json`: null where not recorded; the table has the column only
when some shown task has such sequences)."""

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
from store.catalog import LetterCounts, TaskMeta


def register(sub, common) -> None:
    p = sub.add_parser("tasks", parents=[common], help="list the tasks of a suite")
    add_suite_args(p)
    p.add_argument("--category", nargs="+", metavar="CATEGORY", help="only these categories")
    p.set_defaults(handler=run)


def run(args) -> int:
    paths = store_of(args)
    suite = suite_of(args, paths)
    categories = list(dict.fromkeys(t.category for t in suite.tasks))
    if args.category:
        check_names("category", args.category, categories, option="--category",
                    listing=f"suite {suite.name} has {len(categories)}; `geneb-engine tasks "
                            f"--suite {args.suite}` shows each task's")
    tasks = [t for t in suite.tasks if not args.category or t.category in args.category]
    letters = recorded_letters(paths, tasks)
    if args.json:
        emit_json([{**asdict(t), "letters": asdict(letters[t.task_id])
                    if t.task_id in letters else None} for t in tasks])
        return 0
    if not tasks:       # a suite always has tasks; kept for safety
        console.print(f"suite {suite.name}: no tasks")
        return 0
    shown = {t: c.summary() for t, c in letters.items() if c.summary()}
    columns = [Col("task", key=True), Col("label", wrap=20, drop=2), Col("category"),
               Col("source", drop=1)]
    if shown:
        columns.append(Col("sequences with", wrap=16, drop=3))
    table = FitTable(f"{suite.name}: {len(tasks)} tasks", columns, max_drop=3)
    for t in tasks:
        cells = [escape(t.task_id), escape(t.label), escape(t.category),
                 escape(t.source_benchmark)]
        table.add_row(*cells, *([shown.get(t.task_id, "")] if shown else []))
    table_console().print(table)
    return 0


def recorded_letters(paths, tasks: list[TaskMeta]) -> dict[str, LetterCounts]:
    """The letter counts the store's task catalog records for these tasks of their suite."""
    from store.tables.catalogs import read_catalog  # lazy: polars, pyarrow, filelock

    wanted = {(t.task_id, t.suite) for t in tasks}
    out = {}
    for row in read_catalog(paths, "tasks").iter_rows(named=True):
        counts = LetterCounts.from_row(row)
        if counts is not None and (row["task_id"], row["suite"]) in wanted:
            out[row["task_id"]] = counts
    return out
