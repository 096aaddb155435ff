"""`geneb-engine export`: results to CSV (seed means, or raw per-seed rows), or one model's
local results as an official submission file (schema 1.0)."""

from __future__ import annotations

from pathlib import Path

from engine.commands.common import console, emit_json, store_of
from store.errors import GenebError
from store.protocol import REGIMES


def register(sub, common) -> None:
    p = sub.add_parser("export", parents=[common], help="export results",
                       description="Export results to CSV: seed means (mean and sample sd over "
                                   "seeds) by default, raw per-seed rows with --per-seed. Or, "
                                   "with --submission MODEL -o FILE, the model's local geneb-v1 "
                                   "results as an official submission (refused, with the "
                                   "missing cells listed, unless complete).")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--csv", metavar="PATH", help="the CSV file to write")
    what.add_argument("--submission", metavar="MODEL",
                      help="write this model's official submission file (needs -o)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the submission file, named <model id>.json (or a folder for it)")
    p.add_argument("--provenance", choices=("self-reported", "reproduced", "verified"),
                   default="self-reported", help="the submission's provenance "
                                                 "(default: self-reported)")
    p.add_argument("--per-seed", action="store_true", help="one row per seed")
    p.add_argument("--models", nargs="+", metavar="MODEL")
    p.add_argument("--tasks", nargs="+", metavar="TASK")
    p.add_argument("--categories", nargs="+", metavar="CATEGORY")
    p.add_argument("--regimes", nargs="+", choices=REGIMES)
    p.add_argument("--sources", nargs="+", metavar="SOURCE",
                   help="local, official, verified, reproduced, self-reported")
    p.set_defaults(handler=run)


def run(args) -> int:
    from store.csv_out import write_csv
    from store.db import Snapshot
    from store.seedmeans import per_seed, seed_means

    paths = store_of(args)
    if args.submission:
        return _submission(paths, args)
    out = _csv_path(args.csv)
    filters = {"model": args.models, "task": args.tasks, "category": args.categories,
               "regime": args.regimes, "source": args.sources}
    snap = Snapshot(paths)
    frame = (per_seed if args.per_seed else seed_means)(snap, **filters)
    try:    # the dashboard's writer: full precision, formula-like text escaped, atomic
        write_csv(out, frame.columns, frame.iter_rows())
    except OSError as exc:
        raise GenebError(f"--csv {out}: cannot write ({exc.strerror or exc})") from None
    if args.json:
        emit_json({"path": str(out), "rows": frame.height, "per_seed": args.per_seed,
                   "table_version": snap.version})
    else:
        console.print(f"wrote {frame.height} rows to {out} (results {snap.label})"
                      + ("" if frame.height else " (no results match: header only)"))
    return 0


def _csv_path(given: str) -> Path:
    """The file `--csv` names, refused when it is a folder or its folder is missing."""
    try:
        out = Path(given).expanduser()
    except RuntimeError:                        # `~user` of no known user
        out = Path(given)
    if out.is_dir():
        raise GenebError(f"--csv {given}: is a folder; give a file name such as "
                         f"{out / 'geneb.csv'}")
    if not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise GenebError(f"--csv {given}: folder {out.parent} {what}; create it or give "
                         "another path")
    return out


def _submission(paths, args) -> int:
    from engine import __version__
    from store.submission import export_submission

    if not args.output:
        raise GenebError(f"--submission {args.submission}: give the file to write with -o "
                         "FILE (named <model id>.json) or -o FOLDER")
    out = export_submission(paths, args.submission, args.output, provenance=args.provenance,
                            harness_version=f"geneb-engine {__version__}")
    if args.json:
        emit_json({"path": str(out), "model": args.submission, "provenance": args.provenance})
    else:
        console.print(f"wrote the {args.provenance} submission of {args.submission} to {out} "
                      "(schema 1.0, 3 regimes x 100 tasks, seed means)")
    return 0
