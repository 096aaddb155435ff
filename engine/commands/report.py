"""`geneb-engine report`: every GENEB analysis of the store, as rich tables or one JSON document.

It parses the arguments into a question (`store.analyses.question.Question`), asks the analysis
layer (`store.analyses.compute.compute`: every frame computed once) and prints the frames
(`engine.commands.report_tables`, one function per section) or `--json` them.

Single-regime analyses (aggregates, rankings and Borda, category agreement, scale, controlled
pairs, task difficulty) use `--regime`; cross-regime ones (rank shift, Spearman between regimes,
few-shot degradation, category leaders) use all three regimes. On a store without results it
says how to fill it and exits 1 (nothing to report).

Uncertainty (`--resamples`, `--level`, `--bootstrap-seed`; defaults `store.analyses.presets`):
one task bootstrap per regime of `--metric`, shared by every interval and claim, and the
Friedman test with the Nemenyi critical difference; `--resamples 0` turns all of them off: the
point analyses alone, as fast as before.
"""

from __future__ import annotations

import sys

from rich.markup import escape

from engine.commands.common import (
    OUTPUT_WIDTH,
    UNREGISTERED,
    StoreNames,
    add_domain_arg,
    add_kind_args,
    add_scope_args,
    add_suite_args,
    choice_of,
    current_notes,
    emit_json,
    kind_and_metric,
    kind_tasks,
    one_protocol,
    other_kinds_only,
    reading_suite,
    real_number,
    scoped_tasks,
    store_of,
    suites_with_results,
    table_console,
    whole_number,
)
from engine.figures import (
    FIGURES,
    FIGURES_JSON,
    figure_data,
    legacy_names,
    missing,
    write_figures,
)
from engine.figures import GENERATOR as FIGURES_GENERATOR
from store.analyses.presets import LEVEL, RESAMPLES, SEED
from store.analyses.question import Question
from store.catalog import TaskMeta
from store.output_folder import output_folder
from store.vocab.errors import GenebError
from store.vocab.kinds import CLASSIFICATION
from store.vocab.protocol import GENEB_V1, REGIMES, read_protocol
from store.vocab.sources import LOCAL, SOURCES

# Columns when stdout is not a terminal (piped to a file or a pager) and $COLUMNS is unset; on
# a terminal, its width. Tables wider than that are split into blocks of columns.
REPORT_WIDTH = OUTPUT_WIDTH

MAX_RESAMPLES = 100_000     # (n x entries x 15 scopes float64 per regime: 0.5 GB at 40 models)


# argparse `type=` of `--resamples` and `--examples`: 0 (none) to MAX_RESAMPLES.
resample_count = whole_number(
    0, of=" of resamples", note=" (0 turns the intervals off)", maximum=MAX_RESAMPLES,
    above=f"give at most {MAX_RESAMPLES:,} resamples (the default, {RESAMPLES:,}, gives "
          "percentiles to about 0.005)")


# argparse `type=` of `--level`: a number strictly between 0 and 1.
level_of = real_number(lambda v: 0 < v < 1, give=f"give a level between 0 and 1, such as {LEVEL}",
                       bad="not between 0 and 1 (exclusive); give a level such as "
                           f"{LEVEL} or 0.9")


# argparse `type=` of `--bootstrap-seed` (`numpy.random.default_rng`).
seed_of = whole_number(0)


def register(sub, common) -> None:
    p = sub.add_parser(
        "report", parents=[common], help="the GENEB analyses of the store",
        description="Aggregates, rankings and Borda count, rank shifts, Spearman agreement, "
                    "few-shot degradation, scale, controlled pairs, task difficulty and "
                    "category leaders, computed from the store (protocol geneb-v1).")
    p.add_argument("--regime", choices=REGIMES, default="full", type=choice_of("regime", REGIMES),
                   help="regime of the single-regime analyses (default: full)")
    add_kind_args(p, "report")
    p.add_argument("--source", metavar="SOURCE",
                   help=f"only this source ({', '.join(SOURCES)}); default: all, entries "
                        "keyed by model and source")
    add_suite_args(p, from_store=True)
    add_scope_args(p)
    add_domain_arg(p)
    p.add_argument("--models", nargs="+", metavar="MODEL",
                   help="only these models (default: every model with results on the suite); "
                        "ranks, intervals and tests are among them")
    p.add_argument("--versus", metavar="PROTOCOL",
                   help="also compare the rankings of your local geneb-v1 results with those of "
                        "a variant protocol you filled (e.g. mlp-h256: linear vs MLP stability)")
    p.add_argument("--resamples", type=resample_count, default=RESAMPLES, metavar="N",
                   help="task bootstrap resamples of the intervals, P(A > B), the tie group and "
                        f"the claims (default: {RESAMPLES:,}; 0: none of them, nor the rank "
                        "tests: the point analyses alone)")
    p.add_argument("--level", type=level_of, default=LEVEL, metavar="L",
                   help=f"level of the intervals and claims, between 0 and 1 (default: {LEVEL}); "
                        "the rank tests use alpha = 1 - L")
    p.add_argument("--bootstrap-seed", type=seed_of, default=SEED, metavar="S",
                   help=f"seed of the resamples (default: {SEED}; the same seed, the same "
                        "report)")
    p.add_argument("--exclude-flagged", action="store_true",
                   help="leave out the tasks `geneb-engine audit` flags (leaky, noisy labels, "
                        "shortcut): aggregates, ranks and intervals without them")
    p.add_argument("--examples", type=resample_count, default=0, metavar="N",
                   help="also the MCC interval of every local cell of --regime over N "
                        "resamples of its test examples, from the stored predictions "
                        "(default: 0, none; imported results have no predictions)")
    p.add_argument("--figures", metavar="DIR",
                   help="also draw the paper's figures (rank-shift heatmap, few-shot "
                        "degradation, scale scatter, critical-difference diagram, controlled "
                        "pairs; score against context where a model has two context policies "
                        "or more) into DIR as SVG and PNG, with the values each draws in "
                        "DIR/figures.json (needs the figures extra: matplotlib); your own "
                        "files in DIR are kept; not the store, your home nor a current folder "
                        "holding other files")
    p.set_defaults(handler=run)


def figures_folder(args, paths):
    """`--figures DIR` as an output folder (`store.output_folder`; None without it), checked
    before anything is computed: matplotlib installed, no `--domain`."""
    if args.figures is None:
        return None
    if args.domain:
        raise GenebError("--figures: the figures are of the analyses --domain leaves out; give "
                         "one or the other")
    if (why := missing()) is not None:
        raise GenebError(f"--figures: {why}")
    return output_folder("--figures", args.figures, generator=FIGURES_GENERATOR, store=paths,
                         is_for="give the folder to write the figures into",
                         legacy=legacy_names)


def write_report_figures(folder, frames, models, *, regime: str) -> list[str]:
    """The figures of `frames` into `folder` (`engine.figures`), before anything is printed (a
    folder that cannot be written is the one line of a refused command); the lines to print:
    what was written, and each figure not written (its analysis empty on the store)."""
    data = figure_data(frames, models, regime=regime)
    written = write_figures(folder, data)
    return [f"figures: {len(written)} of {len(data)} in {folder.path} (SVG and PNG), their "
            f"values in {FIGURES_JSON}",
            *(f"figures: {name} not written: the {FIGURES[name]}"
              for name, d in data.items() if d is None)]


def question(args, tasks: tuple[TaskMeta, ...], *, published: bool) -> Question:
    """The analysis layer's question of the arguments, over the `tasks` in scope;
    `published`: the scope is the whole suite, nothing excluded (the imported leaderboard's
    aggregates compare)."""
    return Question(regime=args.regime, metric=args.metric, tasks=tasks, source=args.source,
                    models=tuple(args.models) if args.models else None,
                    resamples=args.resamples, level=args.level, seed=args.bootstrap_seed,
                    published=published and args.kind is CLASSIFICATION, domain=args.domain,
                    versus=args.versus, examples=args.examples, kind=args.kind)


def check_kind(args) -> None:
    """`--kind` and `--metric` (`common.kind_and_metric`); an option that reads classification
    results only (`--versus`, `--examples`, `--exclude-flagged`) with another kind is a
    GenebError naming both."""
    kind_and_metric(args)
    if args.kind is not CLASSIFICATION:
        for option, given in (("--versus", args.versus), ("--examples", args.examples),
                              ("--exclude-flagged", args.exclude_flagged)):
            if given:
                raise GenebError(f"{option} reads classification results only; it does not "
                                 f"go with --kind {args.kind}")


def run(args) -> int:
    from engine.commands.report_tables import render_health  # lazy: polars
    from store.analyses.compute import compute  # lazy: polars, duckdb
    from store.current import with_entries  # lazy: polars
    from store.db import Snapshot  # lazy: polars, duckdb, pyarrow
    from store.tables.catalogs import models_with_builtins  # lazy: polars, pyarrow, filelock
    from store.task_health import task_health  # lazy: polars, duckdb

    check_kind(args)
    paths = store_of(args)
    snap = Snapshot(paths, args.kind)   # every analysis reads this one version of the results
    _check_names(args, StoreNames(paths, snap))
    figures = figures_folder(args, paths)
    models = with_entries(models_with_builtins(paths), snap.query)
    notes = current_notes(args, snap)
    suite, chosen = reading_suite(args, snap, args.source)
    tasks, scope = scoped_tasks(args, paths, suite)
    tasks = kind_tasks(snap, args.kind, tasks, suite.name)
    if args.models:
        _check_models_have_results(snap, args, tasks, suite.name)
    health = task_health(snap, [t.task_id for t in tasks])
    tasks, excluded = _without_flagged(tasks, health, suite.name) if args.exclude_flagged \
        else (tasks, [])
    # Why a report would be empty, asked first: the same decode of the snapshot as `compute`'s
    # (which then frees it), and no analyses computed for nothing.
    why = None if args.json else _nothing_on_suite(snap, args, tasks)
    if why is not None:
        print(why or _no_results(args, paths, snap), file=sys.stderr)
        return 1
    frames = compute(snap, models, question(args, tasks, published=scope is None and not excluded))
    if not frames:
        message = _no_results(args, paths, snap)
        if args.json:
            emit_json({"store": str(paths.root), "empty": True, "message": message})
        else:
            print(message, file=sys.stderr)
        return 1
    figure_lines = ([] if figures is None else
                    write_report_figures(figures, frames, models, regime=args.regime))
    if args.json:
        emit_json({"store": str(paths.root), "table_version": snap.version,
                   "as_of": snap.label, "suite": suite.name, "suite_chosen": chosen,
                   "scope": scope, "tasks": [t.task_id for t in tasks], **_settings(args),
                   "notes": notes, **_health_document(args, health, excluded),
                   **{k: f.to_dicts() for k, f in frames.items()}})
        for line in figure_lines:
            print(line, file=sys.stderr)
        return 0
    console = table_console()
    for line in _preamble(args, chosen, scope, excluded, health):
        console.print(line)
    _print_frames(console, args, frames, models)
    render_health(console, health, len(tasks) + len(excluded), suite.name)
    console.print(f"[dim]results {snap.label} of {paths.results}[/]")
    for line in figure_lines:
        console.print(escape(line), soft_wrap=True)
    return 0


def _check_names(args, names: StoreNames) -> None:
    """`--source`, `--versus` and `--models` each a name the store knows (a GenebError)."""
    if args.source is not None:
        names.check_sources([args.source], option="--source")
    if args.versus is not None:
        one_protocol(args.versus, "--versus", why="rankings are compared with one")
    if args.models:
        names.check_models(args.models)


def _settings(args) -> dict:
    """The question as `--json` says it (between the tasks and the notes)."""
    protocol = read_protocol(args.kind)
    return {"models": args.models, "protocol": protocol.name, "protocol_hash": protocol.hash,
            **({} if args.kind is CLASSIFICATION else {"kind": str(args.kind)}),
            "regime": args.regime, "metric": args.metric, "source": args.source,
            "resamples": args.resamples, "level": args.level,
            "bootstrap_seed": args.bootstrap_seed, "domain": args.domain}


def _health_document(args, health: dict, excluded: list[str]) -> dict:
    """What `--domain` leaves out, the task health and the tasks `--exclude-flagged` left out,
    as `--json` says them."""
    from store.analyses.compute import DOMAIN_SKIPPED  # lazy: polars, duckdb
    from store.task_health import health_row  # lazy: polars, duckdb

    return {**({"not_computed_under_domain": list(DOMAIN_SKIPPED)} if args.domain else {}),
            "task_health": [health_row(t, h) for t, (_, h) in health.items()],
            "excluded_flagged": excluded}


def _preamble(args, chosen: str | None, scope: str | None, excluded: list[str],
              health: dict) -> list[str]:
    """The lines above the tables: how the suite was chosen, the scope, `--models`, the tasks
    `--exclude-flagged` left out (markup escaped)."""
    return [*([f"[dim]{escape(chosen)}[/]"] if chosen else []),
            *([escape(scope)] if scope else []),
            *([f"models: only {escape(', '.join(args.models))} (--models)"] if args.models
              else []),
            *([escape(_excluded_line(excluded, health))] if excluded else [])]


def _print_frames(console, args, frames, models) -> None:
    """The report's tables (`engine.commands.report_tables`): every section, or `--domain`'s;
    then where `--examples`' intervals are."""
    from engine.commands.report_tables import (  # lazy: polars
        Names,
        render,
        render_domain,
        render_examples,
    )

    first = frames.get("aggregates", frames.get("domain_aggregates"))
    names = Names(models, args.source is None and first["source"].n_unique() > 1)
    if args.domain:
        render_domain(console, frames["domain_aggregates"], names, regime=args.regime,
                      metric=args.metric, domain=args.domain)
    else:
        render(console, frames, names, regime=args.regime, metric=args.metric,
               level=args.level)
    if "example_intervals" in frames:
        render_examples(console, frames["example_intervals"], args.regime)


def _check_models_have_results(snap, args, tasks: tuple[TaskMeta, ...], suite: str) -> None:
    """`--models` (each a known name) with no geneb-v1 results (of `--source`) on the tasks:
    one GenebError naming them."""
    from store.db import query  # lazy: polars, duckdb, pyarrow

    source = "" if args.source is None else " AND source = ?"
    have = set(query(snap, "SELECT DISTINCT model FROM results WHERE protocol_hash = ? AND "
                           f"list_contains(?, task) AND list_contains(?, model){source}",
                     [read_protocol(args.kind).hash, [t.task_id for t in tasks],
                      list(args.models),
                      *([args.source] if args.source else [])])["model"])
    if absent := [m for m in dict.fromkeys(args.models) if m not in have]:
        what = f"{args.source} results" if args.source else "results"
        raise GenebError(f"--models: {', '.join(absent)} {'has' if len(absent) == 1 else 'have'}"
                         f" no {what} on the {len(tasks)} tasks of suite {suite};"
                         f" `geneb-engine status --models {' '.join(absent)}` shows what is "
                         "there")


def _without_flagged(tasks: tuple[TaskMeta, ...], health: dict,
                     suite: str) -> tuple[tuple[TaskMeta, ...], list[str]]:
    """(`tasks` without the flagged ones, the flagged ones left out); a GenebError where no
    task is audited or every one is flagged."""
    if not health:
        raise GenebError(f"--exclude-flagged: no task of suite {suite} has been audited; run "
                         f"`geneb-engine audit --suite {suite}` first")
    excluded = [t.task_id for t in tasks if t.task_id in health and health[t.task_id][1].flagged]
    kept = tuple(t for t in tasks if t.task_id not in excluded)
    if not kept:
        raise GenebError(f"--exclude-flagged: all {len(tasks)} task(s) in the scope are "
                         "flagged; nothing left to report (`geneb-engine audit` says why)")
    return kept, excluded


def _excluded_line(excluded: list[str], health: dict) -> str:
    return (f"--exclude-flagged: left out {len(excluded)} flagged task(s): "
            + ", ".join(f"{t} ({health[t][1].verdict})" for t in excluded))


def _no_results(args, paths, snap) -> str:
    """What to do on a store without results of `--source` (all sources: None) of `--kind`;
    the other kinds it holds, where it holds some."""
    if (line := other_kinds_only(snap, args.kind)) is not None:
        return line
    what = f"{args.source} results" if args.source else "results"
    official = ("import the official results with `geneb-engine import --official` (or "
                "`geneb-engine import FILE..` for submission files you have)")
    local = "compute your own with `geneb-engine fill --models MODEL..`"
    fix = {None: f"{official}, or {local}", LOCAL: local,
           "official": "import them with `geneb-engine import --official`"}.get(
        args.source, f"import {args.source} submission files with `geneb-engine import FILE..`")
    if args.kind is not CLASSIFICATION:
        return (f"no {what} of {args.kind} tasks for protocol {read_protocol(args.kind).name} "
                f"in {paths.root}: compute them with `geneb-engine fill --suite SUITE --models "
                "MODEL..` on a suite with such tasks (geneb-kinds is one)")
    return f"no {what} for protocol {GENEB_V1.name} in {paths.root}: {fix}"


def _nothing_on_suite(snap, args, tasks) -> str | None:
    """Why the report would be empty: "" when the store has no results (of `--source`) at
    all, else a message when none are on the suite's tasks or in `--regime` there; None when
    there is something to report."""
    from store.db import query  # lazy: polars, duckdb, pyarrow

    source = "" if args.source is None else " AND source = ?"
    found = query(snap, "SELECT DISTINCT regime, list_contains(?, task) AS on_suite "
                        f"FROM results WHERE protocol_hash = ?{source}",
                  [[t.task_id for t in tasks], read_protocol(args.kind).hash,
                   *([args.source] if args.source else [])])
    if found.is_empty():
        return ""
    on_suite = set(found.filter("on_suite")["regime"])
    have = [r for r in REGIMES if r in on_suite]
    if args.regime in have:
        return None
    what = f"{args.source} results" if args.source else "results"
    where = f"on the tasks of suite {args.suite} in {snap.paths.root}"
    if not have:
        elsewhere = suites_with_results(snap, args.source)
        named = [x for x in elsewhere if x != UNREGISTERED]
        give = "; give " + " or ".join(f"--suite {x}" for x in named) if named else ""
        fill = (f", or compute them with `geneb-engine fill --suite {args.suite} --models "
                "MODEL..`" if args.source in (None, LOCAL) else "")
        return (f"no {what} {where} (its {what} are on the tasks of "
                f"{', '.join(elsewhere) or 'other suites'}){give}{fill}")
    fill = (f", or compute them with `geneb-engine fill --suite {args.suite} --models MODEL.. "
            f"--regimes {args.regime}`" if args.source in (None, LOCAL) else "")
    return (f"no {args.regime} {what} {where} (it has {', '.join(have)}): give --regime "
            f"{have[0]}{fill}")
