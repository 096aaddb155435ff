"""`geneb-engine audit`: task health, per task of a suite: exact and reverse-complement
duplicates (within and across splits, conflicting labels), near duplicates across splits,
shortcut probes (length, GC, composition; the geneb-v1 probe), class balance, and a verdict
(`store.audit.verdict`); then the sequences shared between tasks. Task files are read as `fill`
reads them; an audit is stored per task data hash and reused (`--refresh`: measured again).
"""

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
    tasks_of,
)
from engine.commands.layout import Col, FitTable
from store.audit.duplicates import Copies
from store.audit.report import TaskAudit
from store.audit.verdict import CLEAN, Health


def register(sub, common) -> None:
    p = sub.add_parser("audit", parents=[common],
                       help="task health: duplicates, leaks and shortcuts in a suite's tasks")
    add_suite_args(p)
    p.add_argument("--tasks", nargs="+", metavar="TASK", help="only these tasks")
    p.add_argument("--refresh", action="store_true",
                   help="measure again the tasks whose data the store has audited already")
    p.set_defaults(handler=run)


def run(args) -> int:
    from engine.audit import audit_suite  # lazy: sklearn

    paths = store_of(args, write=True)
    suite = suite_of(args, paths, write=True)
    tasks = tasks_of(args, suite, paths)
    suite.classification_only(tasks, "audit")
    suite.materialize()
    result = audit_suite(paths, (suite.load(t.task_id) for t in tasks), refresh=args.refresh)
    if args.json:
        emit_json({"suite": suite.name, "measured": list(result.measured),
                   "tasks": [{"task": t, **asdict(result.health[t]), **asdict(a)}
                             for t, a in result.audits.items()],
                   "shared": result.shared})
        return 0
    table = FitTable(f"{suite.name}: task health of {len(tasks)} task(s)", [
        Col("task", key=True), Col("verdict", wrap=12), Col("train/test", justify="right"),
        Col("min class", drop=4), Col("exact", drop=2), Col("revcomp", drop=2),
        Col("near", justify="right", drop=3), Col("leak", justify="right"),
        Col("shortcut", wrap=12), Col("best model", justify="right", drop=1)], max_drop=4)
    for task, audit in result.audits.items():
        table.add_row(*cells(task, audit, result.health[task]))
    table_console().print(table)
    console.print("exact, revcomp: duplicate rows within train / within test / test rows in "
                  "train / rows with conflicting labels; near: test rows with a train row at "
                  "k-mer Jaccard >= 0.9; leak: share of test rows with any copy in train")
    for s in result.shared:
        console.print(f"shared: {s['shared']} test sequence(s) of {escape(s['task'])} are in "
                      f"the train split of {escape(s['other'])}")
    reused = len({a.data_hash for a in result.audits.values()}) - len(result.measured)
    if reused:
        console.print(f"{reused} task(s) reused from the store's audits (--refresh measures "
                      "them again)")
    return 0


def _copies(c: Copies) -> str:
    return f"{c.within_train}/{c.within_test}/{c.across}/{c.conflicting}"


def _min_class(counts: dict[str, int]) -> str:
    return f"{min(counts.values()) / sum(counts.values()):.0%}"


def cells(task: str, audit: TaskAudit, h: Health) -> list[str]:
    """One task's row of the table."""
    verdict = h.verdict if h.verdict == CLEAN else f"[bold red]{', '.join(h.flags)}[/]"
    shortcut = f"{h.shortcut} {h.shortcut_mcc:.2f}" if h.shortcut is not None else "-"
    best = "-" if h.best_model_mcc is None else f"{h.best_model_mcc:.2f}" + (
        f" ({h.shortcut_share:.0%})" if h.shortcut_share is not None else "")
    return [escape(task), verdict, f"{audit.n_train}/{audit.n_test}",
            " ".join(_min_class(audit.classes[s]) for s in ("train", "test")),
            _copies(audit.exact), _copies(audit.revcomp), str(audit.near.test_rows),
            f"{h.leak_share:.1%}", shortcut, best]
