"""`geneb-engine export`: results to CSV (seed means, or raw per-seed rows)."""

from __future__ import annotations

from pathlib import Path

from engine.commands.common import console, emit_json, store_of
from store.errors import GenebError
from store.protocol import REGIMES


def register(sub, common) -> None:
    p = sub.add_parser("export", parents=[common], help="export results",
                       description="Export results to CSV: seed means (mean and sample sd over "
                                   "seeds) by default, raw per-seed rows with --per-seed.")
    p.add_argument("--csv", metavar="PATH", required=True, help="the CSV file to write")
    p.add_argument("--per-seed", action="store_true", help="one row per seed")
    p.add_argument("--models", nargs="+", metavar="MODEL")
    p.add_argument("--tasks", nargs="+", metavar="TASK")
    p.add_argument("--categories", nargs="+", metavar="CATEGORY")
    p.add_argument("--regimes", nargs="+", choices=REGIMES)
    p.add_argument("--sources", nargs="+", metavar="SOURCE",
                   help="local, official, verified, reproduced, self-reported")
    p.set_defaults(handler=run)


def run(args) -> int:
    from store.seedmeans import per_seed, seed_means

    paths = store_of(args)
    filters = {"model": args.models, "task": args.tasks, "category": args.categories,
               "regime": args.regimes, "source": args.sources}
    frame = (per_seed if args.per_seed else seed_means)(paths, **filters)
    out = Path(args.csv)
    if not out.parent.exists():
        raise GenebError(f"{out}: folder {out.parent} does not exist")
    tmp = out.with_name(out.name + ".tmp")
    frame.write_csv(tmp, float_precision=None)
    tmp.replace(out)
    if args.json:
        emit_json({"path": str(out), "rows": frame.height, "per_seed": args.per_seed})
    else:
        console.print(f"wrote {frame.height} rows to {out}"
                      + ("" if frame.height else " (no results match: header only)"))
    return 0
