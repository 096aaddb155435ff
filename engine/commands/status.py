"""`geneb-engine status`: done / missing cells per model and category."""

from __future__ import annotations

from rich.table import Table

from engine.commands.common import add_suite_args, console, emit_json, store_of, suite_of
from store.protocol import GENEB_V1, REGIMES


def register(sub, common) -> None:
    p = sub.add_parser("status", parents=[common], help="done / missing cells per model",
                       description="Cells (task, regime) done and missing per model and "
                                   "category for a suite, protocol geneb-v1.")
    add_suite_args(p)
    p.add_argument("--models", nargs="+", metavar="MODEL",
                   help="these models (default: every model with results on the suite)")
    p.add_argument("--regimes", nargs="+", choices=REGIMES, default=list(REGIMES))
    p.add_argument("--source", default="local",
                   help="local (default), official, verified, reproduced, self-reported")
    p.set_defaults(handler=run)


STATUS_SQL = """
WITH cells AS (
  SELECT model, task, regime FROM results
  WHERE source = ? AND protocol_hash = ? AND list_contains(?, task) AND list_contains(?, regime)
  GROUP BY model, task, regime
  HAVING count(DISTINCT seed) >= ? OR bool_or(seed IS NULL)
)
SELECT model, task, count(*) AS done FROM cells GROUP BY model, task
"""


def status_frame(paths, tasks, regimes, source, models=None):
    """Per (model, category): cells done and total (tasks × regimes)."""
    import polars as pl

    from store.db import query

    done = query(paths, STATUS_SQL, [source, GENEB_V1.hash, [t.task_id for t in tasks],
                                     list(regimes), len(GENEB_V1.seeds)])
    names = models or sorted(done["model"].unique().to_list())
    grid = pl.DataFrame(
        [(m, t.task_id, t.category) for m in names for t in tasks],
        schema={"model": pl.String, "task": pl.String, "category": pl.String}, orient="row")
    return (grid.join(done, on=["model", "task"], how="left")
            .with_columns(pl.col("done").fill_null(0))
            .group_by("model", "category", maintain_order=True)
            .agg(pl.col("done").sum(), (pl.len() * len(regimes)).alias("total")))


def run(args) -> int:
    paths = store_of(args)
    tasks = suite_of(args, paths).tasks
    frame = status_frame(paths, tasks, args.regimes, args.source, args.models)
    if args.json:
        emit_json({"suite": args.suite, "source": args.source, "protocol": GENEB_V1.name,
                   "rows": frame.to_dicts()})
        return 0
    if frame.is_empty():
        console.print(f"no {args.source} results for suite {args.suite} in {paths.root}; "
                      f"run `geneb-engine fill --suite {args.suite} --models ...` "
                      "or `geneb-engine import --official`")
        return 0
    table = Table(title=f"{args.suite}: cells (task × regime) done ({args.source}, "
                        f"{GENEB_V1.name}, regimes {', '.join(args.regimes)})")
    table.add_column("model", style="bold", no_wrap=True)
    table.add_column("done", justify="right")
    table.add_column("missing, by category")
    for model in dict.fromkeys(frame["model"]):
        rows = frame.filter(model=model).iter_rows(named=True)
        done = total = 0
        missing = []
        for r in rows:
            done, total = done + r["done"], total + r["total"]
            if r["done"] < r["total"]:
                missing.append(f"{r['category']} {r['total'] - r['done']}")
        table.add_row(model, _cell(done, total), ", ".join(missing) or "[green]none[/]")
    console.print(table)
    return 0


def _cell(done: int, total: int) -> str:
    colour = "green" if done == total else ("yellow" if done else "red")
    return f"[{colour}]{done}/{total}[/]"
