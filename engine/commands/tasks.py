"""`geneb-engine tasks`: the tasks of a suite with their organism and kingdom
(`store.domains`), and where the store's task catalog records them for that suite, their
profile (rows, classes, the smallest class's share, sequence lengths: `store.catalog.TaskProfile`)
and how many of their sequences hold IUPAC codes, U, lower case or other letters
(`store.catalog.LetterCounts`) (`--json`: null where not recorded; the table has the letters'
column only when some shown task has such sequences)."""

from __future__ import annotations

from dataclasses import asdict

from rich.markup import escape

from engine.commands.common import (
    add_suite_args,
    console,
    emit_json,
    store_of,
    suite_of,
    table_console,
)
from engine.commands.layout import Col, FitTable
from store.catalog import PROFILE_HEADERS, LetterCounts, TaskMeta, TaskProfile, profile_cells
from store.did_you_mean import check_names
from store.vocab.kinds import CLASSIFICATION


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
    letters = recorded(paths, tasks, LetterCounts)
    profiles = recorded(paths, tasks, TaskProfile)
    if args.json:
        emit_json([{**asdict(t), **{key: asdict(known[t.task_id]) if t.task_id in known else None
                                    for key, known in (("letters", letters),
                                                       ("profile", profiles))}}
                   for t in tasks])
        return 0
    if not tasks:       # a suite always has tasks; kept for safety
        console.print(f"suite {suite.name}: no tasks")
        return 0
    shown = {t: c.summary() for t, c in letters.items() if c.summary()}
    train_test, classes, min_class, length = PROFILE_HEADERS
    columns = [Col("task", key=True), Col("label", wrap=20, drop=2), Col("category"),
               Col("source", drop=1), Col("organism", wrap=14, drop=3), Col("kingdom"),
               Col(train_test, justify="right", drop=4), Col(classes, justify="right"),
               Col(min_class, justify="right", drop=4), Col(length, drop=3)]
    if shown:
        columns.append(Col("sequences with", wrap=16, drop=5))
    table = FitTable(f"{suite.name}: {len(tasks)} tasks", columns, max_drop=5)
    for t in tasks:
        cells = [escape(t.task_id), escape(t.label), escape(t.category),
                 escape(t.source_benchmark), escape(t.organism), escape(t.kingdom),
                 *profile_cells(profiles.get(t.task_id),
                                suite.kinds.get(t.task_id, CLASSIFICATION))]
        table.add_row(*cells, *([shown.get(t.task_id, "")] if shown else []))
    table_console().print(table)
    return 0


def recorded(paths, tasks: list[TaskMeta], kind):
    """What the store's task catalog records for these tasks of their suite, as `kind`
    (`LetterCounts` or `TaskProfile`, read by its `from_row`), by task id."""
    from store.tables.catalogs import read_catalog  # lazy: polars, pyarrow, filelock

    wanted = {(t.task_id, t.suite) for t in tasks}
    out = {}
    for row in read_catalog(paths, "tasks").iter_rows(named=True):
        value = kind.from_row(row)
        if value is not None and (row["task_id"], row["suite"]) in wanted:
            out[row["task_id"]] = value
    return out
