"""`geneb-engine export`: results to CSV (seed means, or raw per-seed rows), or one source of
a model's results as an official submission file (schema 1.0), its metadata set by option."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.markup import escape

from engine import __version__
from engine.commands.common import (
    StoreNames,
    add_domain_arg,
    add_scope_args,
    add_suite_arg,
    choice_of,
    console,
    current_notes,
    domain_cells,
    emit_json,
    reading_suite,
    scoped_tasks,
    store_of,
    suite_reader,
)
from store.csv_out import write_csv
from store.folders import folder_problem
from store.licences import UNKNOWN, licence_text
from store.vocab.errors import GenebError
from store.vocab.kinds import CLASSIFICATION, CLASSIFICATION_ROWS, EVERY_KIND, KIND_METRICS
from store.vocab.protocol import REGIMES
from store.vocab.scopes import SCOPE_FIELDS
from store.vocab.sources import DEFAULT_PROVENANCE, LOCAL, SOURCES, SUBMISSION_PROVENANCES

# Columns after the results' own (which keep their order): what the export holds and how it
# was asked for, on every row.
EXTRA_COLUMNS = ("licence", "display", "suite", "domain", "task_health", "table_version", "filters")


def register(sub, common) -> None:
    p = sub.add_parser("export", parents=[common], help="export results",
                       description="Export results to CSV: seed means (mean and sample sd over "
                                   "seeds) by default, raw per-seed rows with --per-seed. Or, "
                                   "with --submission MODEL -o FILE, the model's geneb-v1 "
                                   "results of one source (local, or an imported one) as an "
                                   "official submission (refused, with the missing cells "
                                   "listed, unless complete, and unless the file passes the "
                                   "official rules). Its metadata: the imported file's own, "
                                   "else the catalog's, each field changed by its option.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--csv", metavar="PATH", help="the CSV file to write")
    what.add_argument("--submission", metavar="MODEL",
                      help="write this model's official submission file (needs -o)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the submission file, named <model id>.json (or a folder for it)")
    p.add_argument("--source", metavar="SOURCE", default=LOCAL,
                   help=f"with --submission: the results to export (default: {LOCAL}; "
                        f"{', '.join(SUBMISSION_PROVENANCES)}, leaderboard: imported ones)")
    p.add_argument("--provenance", type=_provenance, metavar="PROVENANCE",
                   help="the submission's provenance: official (only the 40 curated models), "
                        "verified (only local results recomputed from embeddings imported with "
                        "`import-embeddings --submission FILE` that reproduce that file), "
                        "reproduced or self-reported (default: an imported file's, else "
                        f"{DEFAULT_PROVENANCE})")
    p.add_argument("--display", metavar="NAME", help="meta.display (default: the imported "
                                                     "file's, else the catalog's display name)")
    p.add_argument("--params", type=_integer, metavar="N",
                   help="meta.params, the parameter count (default: the imported file's, else "
                        "the catalog's)")
    p.add_argument("--url", help="meta.url (default: the imported file's, else empty)")
    p.add_argument("--zero-shot", action=argparse.BooleanOptionalAction,
                   help="meta.zero_shot (default: the imported file's, else false)")
    p.add_argument("--training-data", metavar="TEXT",
                   help="meta.training_data (default: the imported file's, else the catalog's "
                        "pretraining data)")
    p.add_argument("--submitted-by", metavar="NAME",
                   help="meta.submitted_by (default: the imported file's, else empty)")
    p.add_argument("--harness-version", metavar="TEXT",
                   help="harness_version (default: the imported file's, else geneb-engine "
                        "<version>)")
    add_suite_arg(p, from_store=True)
    p.add_argument("--per-seed", action="store_true", help="one row per seed")
    p.add_argument("--models", nargs="+", metavar="MODEL")
    add_scope_args(p, aliases={"--category": "--categories"})
    add_domain_arg(p)
    p.add_argument("--regimes", nargs="+", choices=REGIMES, type=choice_of("regime", REGIMES))
    p.add_argument("--sources", nargs="+", metavar="SOURCE",
                   help=", ".join(SOURCES))
    p.set_defaults(handler=run)


def run(args) -> int:
    from store.db import Snapshot  # lazy: polars, duckdb, pyarrow
    from store.official.verified import VERIFIED, verified_problem  # lazy: polars, duckdb
    from store.seedmeans import per_seed, seed_means  # lazy: polars, duckdb, pyarrow
    from store.tables.catalogs import pair_domains  # lazy: polars, pyarrow
    from store.task_health import task_health  # lazy: polars, duckdb

    paths = store_of(args)
    snap = Snapshot(paths, EVERY_KIND)   # each row with its kind and that kind's metrics
    names = StoreNames(paths, snap)
    if args.submission:
        _refuse_other_kinds(snap, args.submission, args.source)
        names.check_models([args.submission], option="--submission")
        names.check_sources([args.source], option="--source")
        if args.provenance == VERIFIED and \
                (problem := verified_problem(snap.of_kind(CLASSIFICATION), args.submission,
                                             args.source)):
            raise GenebError(f"--provenance verified: {problem}; nothing written")
        return _submission(paths, args)
    names.check_models(args.models)
    names.check_sources(args.sources)
    out = _csv_path(args.csv)
    notes = current_notes(args, snap)
    sources = args.sources[0] if args.sources and len(args.sources) == 1 else None
    suite, chosen = reading_suite(args, suite_reader(snap, sources), sources)
    tasks, scope = scoped_tasks(args, paths, suite)
    filters = {"model": args.models, "regime": args.regimes, "source": args.sources}
    frame = (per_seed if args.per_seed else seed_means)(snap, **filters)
    frame = frame.filter(frame["task"].is_in([t.task_id for t in tasks]))
    if not args.per_seed and frame["kind"].is_null().all():
        # classification rows alone: the columns they always had (a row's bytes unchanged)
        frame = frame.drop("kind", *(f"{m}{sd}" for m in KIND_METRICS for sd in ("", "_sd")))
    domain_of = pair_domains(paths)
    frame = domain_cells(args.domain, frame, domain_of, what="result rows")
    verdicts = {t: h.verdict for t, (_, h) in
                task_health(snap, [t.task_id for t in tasks]).items()}
    frame = _described(frame, snap, names, {**filters, **_scope_options(args),
                                            "domain": [args.domain] if args.domain else None},
                       domain_of, verdicts)
    try:    # the dashboard's writer: full precision, formula-like text escaped, atomic
        write_csv(out, frame.columns, frame.iter_rows())
    except OSError as exc:
        raise GenebError(f"--csv {out}: cannot write ({exc.strerror or exc})") from None
    if args.json:
        emit_json({"path": str(out), "rows": frame.height, "suite": suite.name,
                   "suite_chosen": chosen, "tasks": [t.task_id for t in tasks],
                   "per_seed": args.per_seed, "table_version": snap.version, "notes": notes})
        return 0
    for line in (chosen, scope):
        if line:
            console.print(escape(line))
    if frame.height:
        console.print(f"wrote {frame.height} rows of suite {suite.name} to {out} (results "
                      f"{snap.label})")
    else:
        console.print(f"wrote 0 rows to {out} (header only): "
                      f"{_why_empty(snap, filters, scope)}")
    return 0


def _refuse_other_kinds(snap, model: str, source: str) -> None:
    """`--submission MODEL` where the model's `source` results are all of regression or
    variant tasks: the official format (schema 1.0, geneb-v1's tasks) holds classification
    results alone: one GenebError (its classification results, where any, are exported and
    the others are not in the file)."""
    found = snap.query(f"SELECT bool_or({CLASSIFICATION_ROWS}) AS classified, "
                       "string_agg(DISTINCT kind, ' and ' ORDER BY kind) AS kinds "
                       "FROM results WHERE model = ? AND source = ?", [model, source])
    classified, kinds = found.row(0)
    if kinds and not classified:
        raise GenebError(f"--submission {model}: the official submission format holds "
                         f"classification tasks only; its {source} results are of {kinds} "
                         "tasks (`export --csv` writes them); nothing written")


def _scope_options(args) -> dict[str, list[str] | None]:
    """The scope options given, by option name without its dashes (the `filters` column)."""
    return {f.option.removeprefix("--"): getattr(args, f.name) for f in SCOPE_FIELDS}


def _described(frame, snap, names: StoreNames, filters: dict, domain_of, verdicts: dict):
    """The export's frame with EXTRA_COLUMNS appended: the licences of the model's weights and
    code (catalog, `store.licences.licence_text`; `unknown` for a model it does not describe),
    the model's display name (catalog),
    the suite its task belongs to (task catalog), whether the task is in the model's domain
    (`domain_of`: `store.tables.catalogs.pair_domains`), its task's audit verdict (`verdicts`:
    `store.task_health`; empty where not audited), the results' table version and the
    filters the export was asked with (`none`: everything)."""
    import polars as pl  # lazy: polars

    from store.analyses.domains import domain_flags  # lazy: polars
    from store.cells import ENTRY_VARIANT  # lazy: polars

    display = names.displays
    licences = {m.model_id: licence_text(m.weights_licence, m.code_licence)
                for m in names.catalog.values()}
    # an entry of another precision (`<model> [float16]`) is its model's
    base = pl.col("model").str.replace(ENTRY_VARIANT, "")
    suites = snap.query("SELECT task_id AS task, suite FROM tasks")
    option = {"model": "models", "regime": "regimes", "source": "sources"}
    asked = "; ".join(f"{option.get(k, k)}={','.join(v)}"
                      for k, v in filters.items() if v) or "none"
    return (frame.join(suites.unique("task", keep="first"), on="task", how="left",
                       maintain_order="left")
            .with_columns(pl.col("model").replace_strict(display, default=pl.col("model"),
                                                         return_dtype=pl.String)
                          .alias("display"),
                          base.replace_strict(licences, default=UNKNOWN,
                                              return_dtype=pl.String).alias("licence"),
                          domain_flags(frame, domain_of),
                          pl.col("task").replace_strict(verdicts, default=None,
                                                        return_dtype=pl.String)
                          .alias("task_health"),
                          pl.lit(snap.version, dtype=pl.Int64).alias("table_version"),
                          pl.lit(asked).alias("filters"))
            .select(*(c for c in frame.columns if c not in EXTRA_COLUMNS), *EXTRA_COLUMNS))


def _why_empty(snap, filters: dict, scope: str | None) -> str:
    """Why no row matches although every name is known: which filter matches nothing in the
    store (and how to get those results), or that the filters together (in the scope, the
    line of `scoped_tasks`) match nothing."""
    if snap.version is None or snap.query("SELECT count(*) AS n FROM results")["n"][0] == 0:
        return (f"the store {snap.paths.root} holds no results; compute some with "
                "`geneb-engine fill --suite geneb-mini --models kmer-3` or import the official "
                "ones with `geneb-engine import --official`")
    have = snap.query("SELECT DISTINCT r.model, r.regime, r.source FROM results r")
    alone = [c for c, values in filters.items()
             if values and not have.filter(have[c].is_in(list(values))).height]
    if alone:
        fix = ""
        if "source" in alone and set(filters["source"]) <= {"official"}:
            fix = "; import them with `geneb-engine import --official`"
        elif "model" in alone:
            fix = (f"; compute them with `geneb-engine fill --models "
                   f"{' '.join(filters['model'])}`")
        what = " and of ".join(f"{c} {', '.join(filters[c])}" for c in alone)
        return f"no results of {what} in {snap.paths.root}{fix}"
    given = [f"{c} {', '.join(v)}" for c, v in filters.items() if v]
    if scope:
        given.append(f"the {scope.removeprefix('scope: ')}")
    return (f"the store {snap.paths.root} has results of each filter, but none of "
            f"{' with '.join(given)} together; `geneb-engine status` shows what is there")


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


def _provenance(text: str) -> str:
    """argparse `type=` of --provenance: one of the official format's."""
    return choice_of("provenance", SUBMISSION_PROVENANCES)(text)


def _integer(text: str) -> int:
    """argparse `type=` of --params: any integer (the official rules judge its value)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; give a parameter count "
                                         "(a whole number >= 0)") from None


def _submission(paths, args) -> int:
    # lazy: polars, duckdb, pyarrow
    from store.official.submission import META_FIELDS, InvalidSubmission, export_submission

    if not args.output:
        raise GenebError(f"--submission {args.submission}: give the file to write with -o "
                         "FILE (named <model id>.json) or -o FOLDER")
    out = Path(args.output).expanduser()
    if not out.is_dir() and (problem := folder_problem(
            str(out.parent), "give -o a file (named <model id>.json) in a folder, or a folder",
            may_be_missing=True)):
        raise GenebError(f"-o {args.output}: its folder {out.parent} {problem}")
    meta = {field: getattr(args, field) for field in META_FIELDS}   # each has its option
    options = {f"meta.{field}": f"--{field.replace('_', '-')}"
               for field, value in meta.items() if value is not None}
    if args.harness_version is not None:
        options["harness_version"] = "--harness-version"
    try:
        out = export_submission(paths, args.submission, args.output, source=args.source,
                                engine=f"geneb-engine {__version__}",
                                harness_version=args.harness_version, meta=meta)
    except InvalidSubmission as exc:   # a refused field the user set is named by its option
        raise GenebError("; ".join(f"{options.get(p.field, p.field)}: {p.rule}"
                                   for p in exc.problems) + "; nothing written") from None
    provenance = json.loads(out.read_bytes())["meta"].get("provenance", DEFAULT_PROVENANCE)
    if args.json:
        emit_json({"path": str(out), "model": args.submission, "source": args.source,
                   "provenance": provenance})
    else:
        of = "" if args.source == LOCAL else f" (its {args.source} results)"
        console.print(f"wrote the {provenance} submission of {args.submission}{of} to {out} "
                      "(schema 1.0, 3 regimes x 100 tasks, seed means)")
    return 0
