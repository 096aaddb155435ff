"""`geneb-engine fill`: compute the missing cells of suite × models × regimes."""

from __future__ import annotations

import signal
import time

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from engine.commands.common import add_suite_args, console, emit_json, models_of, store_of, suite_of
from store.protocol import GENEB_V1, REGIMES


def register(sub, common) -> None:
    p = sub.add_parser("fill", parents=[common], help="compute the missing results",
                       description="Compute only the cells (model, task, regime) the store lacks; "
                                   "each (model, task) is embedded once.")
    add_suite_args(p)
    p.add_argument("--models", nargs="+", required=True, metavar="MODEL",
                   help="catalog ids (see `geneb-engine models`)")
    p.add_argument("--tasks", nargs="+", metavar="TASK", help="only these tasks")
    p.add_argument("--regimes", nargs="+", choices=REGIMES, default=list(REGIMES))
    p.add_argument("--limit", type=int, metavar="N",
                   help="only the first N tasks of the suite (a smoke run; complete results are "
                        "never overwritten)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="probe N (model, task) pairs in parallel worker processes")
    enc = p.add_argument_group("model encoders")
    enc.add_argument("--device", help="cuda, cuda:1, cpu (default: cuda when available)")
    enc.add_argument("--batch-size", type=int, metavar="N",
                     help="start batch size (halved on out-of-memory)")
    enc.add_argument("--trust-remote-code", action="store_true",
                     help="allow models whose code lives on the hub (needs a pinned revision)")
    p.set_defaults(handler=run)


def _stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C: finished fragments stay, nothing half-written appears."""
    def raise_interrupt(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, raise_interrupt)


def run(args) -> int:
    from engine.fill import FillOptions, run_fill
    _stop_on_sigterm()
    paths = store_of(args)
    suite = suite_of(args, paths)
    tasks = list(suite.select(args.tasks))[:args.limit]
    models = models_of(paths, args.models)
    encoder_options = {"device": args.device, "batch_size": args.batch_size,
                       "trust_remote_code": args.trust_remote_code}
    options = FillOptions(protocol=GENEB_V1, jobs=max(1, args.jobs),
                          encoder_options={k: v for k, v in encoder_options.items() if v})
    start = time.perf_counter()
    if args.json:
        def on_event(event: dict) -> None:
            if event["event"] == "cell":
                elapsed = time.perf_counter() - start
                event["eta_s"] = round(elapsed / event["done"] * (event["total"] - event["done"]),
                                       1)
            emit_json(event)
        the_plan = run_fill(paths, suite, models, tasks, args.regimes, options, on_event)
        emit_json({"event": "done", "computed": the_plan.cells_missing,
                   "seconds": round(time.perf_counter() - start, 3)})
        return 0

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                        MofNCompleteColumn(), TextColumn("cells"), TimeElapsedColumn(),
                        TextColumn("ETA"), TimeRemainingColumn(), console=console,
                        transient=False)
    bar = None

    def on_event(event: dict) -> None:
        nonlocal bar
        if event["event"] == "plan":
            have = event["cells_total"] - event["cells_missing"]
            console.print(f"suite [bold]{suite.name}[/]: {len(tasks)} tasks × {len(models)} "
                          f"models × {len(args.regimes)} regimes = {event['cells_total']} cells; "
                          f"{have} in the store, {event['cells_missing']} to compute")
            if event["cells_missing"]:
                progress.start()
                bar = progress.add_task("fill", total=event["cells_missing"])
        elif event["event"] == "cell":
            progress.update(bar, advance=1, description=f"{event['model']} {event['task']}")

    try:
        the_plan = run_fill(paths, suite, models, tasks, args.regimes, options, on_event)
    finally:
        if bar is not None:
            progress.stop()
    if the_plan.cells_missing == 0:
        console.print("nothing to compute: every requested cell is already in the store")
    else:
        console.print(f"computed {the_plan.cells_missing} cells in "
                      f"{time.perf_counter() - start:.1f} s; store: {paths.root}")
    return 0
