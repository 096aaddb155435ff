"""`geneb-engine recommend`: which models to try for a task, and which differences are real.

The options make a `store.analyses.recommend.Question` (the scope, the regime or label budget,
the constraints, the metric and the bootstrap's settings); `store.analyses.recommend.recommend`
answers it; this module prints the answer (or `--json`: every field).
"""

from __future__ import annotations

import argparse
import sys

from rich.markup import escape

from engine.commands.common import (
    StoreNames,
    add_family_args,
    add_kind_args,
    add_scope_args,
    add_suite_args,
    check_families,
    choice_of,
    emit_json,
    kind_and_metric,
    kind_tasks,
    other_kinds_only,
    positive_int,
    reading_suite,
    real_number,
    scoped_tasks,
    store_of,
    table_console,
)
from engine.commands.layout import Col, FitTable
from engine.commands.report import level_of, resample_count, seed_of
from store.analyses.presets import LEVEL, RESAMPLES, SEED
from store.catalog import params_text, parse_params
from store.runnable import here_text
from store.vocab.encoder_kinds import DTYPES
from store.vocab.errors import GenebError
from store.vocab.protocol import REGIMES
from store.vocab.pvalues import p_text


def param_limit(text: str) -> int:
    """argparse `type=` of `--max-params`: a parameter count as `store.catalog.parse_params`
    reads one (100M, 1.5B, 500000000), at least 1."""
    try:
        value = parse_params(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a parameter count; give one such "
                                         "as 100M, 1.5B or 500000000") from None
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive parameter count; give "
                                         "one such as 100M or 1.5B")
    return value


def licence_list(text: str) -> tuple[str, ...]:
    """argparse `type=` of `--licence`: comma-separated licence ids, at least one."""
    ids = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    if not ids:
        raise argparse.ArgumentTypeError(f"{text!r} names no licence; give SPDX ids such as "
                                         "MIT,Apache-2.0")
    return ids


# argparse `type=` of `--memory-gb`: a positive number.
gigabytes = real_number(lambda v: v > 0, give="give the memory in GB, such as 24",
                        bad="not a positive size; give the memory in GB, such as 24")


def register(sub, common) -> None:
    p = sub.add_parser(
        "recommend", parents=[common], help="which models to try for a task",
        description="The best model on a scope of tasks at a regime (or label budget) under "
                    "constraints, every model not separably worse than it (a sign-flip test "
                    "of the scope's tasks, with the paired task bootstrap's interval), and the "
                    "models excluded and why. The rules: docs, Choosing a model.")
    add_suite_args(p, from_store=True)
    add_scope_args(p)
    p.add_argument("--like", metavar="TASK",
                   help="the suite's tasks like TASK: its kingdom, and a median sequence length "
                        "within a factor 2 of its own where recorded")
    p.add_argument("--regime", type=choice_of("regime", REGIMES), metavar="REGIME",
                   help=f"{', '.join(REGIMES)} (default: full); or give --labels-per-class")
    p.add_argument("--labels-per-class", type=positive_int, metavar="N",
                   help="labelled sequences per class you have: the nearest regime (N <= 3: "
                        "1shot, N <= 30: 10shot, else full)")
    p.add_argument("--max-params", type=param_limit, metavar="N",
                   help="at most N parameters (100M, 1.5B, ...)")
    p.add_argument("--min-context", type=positive_int, metavar="TOKENS",
                   help="a documented context (or max_tokens cap) of at least TOKENS")
    p.add_argument("--memory-gb", type=gigabytes, metavar="GB",
                   help="its weights fit in GB (GiB) at --dtype (weights only)")
    p.add_argument("--dtype", type=choice_of("dtype", DTYPES), default="auto", metavar="DTYPE",
                   help=f"the precision of --memory-gb and the fill line: {', '.join(DTYPES)} "
                        "(default: auto, float32 weights)")
    add_family_args(p)
    p.add_argument("--in-domain", action="store_true",
                   help="only models with some of the scope's tasks in their pretraining domain")
    p.add_argument("--runnable-here", action="store_true",
                   help="only models `fill` can run on this machine (a hub model without a "
                        "cached snapshot stays, its here column ?, while it cannot be told "
                        "whether the hub answers; it is left out when the hub is offline)")
    p.add_argument("--weights-available", action="store_true",
                   help="only models with published weights")
    p.add_argument("--not-zero-shot", action="store_true",
                   help="leave out models trained on benchmark data or with known overlap")
    p.add_argument("--licence-allows", choices=("commercial",), metavar="USE",
                   help="commercial: only models whose weights and code licences both permit "
                        "commercial use (a licence unknown or custom excludes the model, "
                        "saying so)")
    p.add_argument("--licence", type=licence_list, metavar="IDS",
                   help="only models whose weights and code licences are among IDS, "
                        "comma-separated SPDX ids or names (e.g. MIT,Apache-2.0)")
    add_kind_args(p, "recommend within")
    p.add_argument("--level", type=level_of, default=LEVEL, metavar="L",
                   help=f"level of the intervals and the tie rule (default: {LEVEL})")
    p.add_argument("--resamples", type=resample_count, default=RESAMPLES, metavar="N",
                   help=f"task bootstrap resamples (default: {RESAMPLES:,})")
    p.add_argument("--bootstrap-seed", type=seed_of, default=SEED, metavar="S",
                   help=f"seed of the resamples (default: {SEED})")
    p.set_defaults(handler=run)


def _regime(args) -> tuple[str, str | None, str | None]:
    """(regime, how it was chosen, the between-regimes warning)."""
    from store.analyses.recommend import regime_for_labels  # lazy: polars, numpy

    if args.regime and args.labels_per_class:
        raise GenebError("--regime and --labels-per-class both given; give one (a label "
                         "budget picks the nearest regime)")
    if args.labels_per_class:
        regime, warning = regime_for_labels(args.labels_per_class)
        n = args.labels_per_class
        return regime, f"{n} label{'' if n == 1 else 's'} per class", warning
    return args.regime or "full", None, None


def _constraints(args, names: StoreNames):
    from store.analyses.recommend import Constraints  # lazy: polars, numpy

    check_families(args, list(names.catalog.values()))
    return Constraints(args.max_params, args.min_context, args.memory_gb, args.dtype,
                       args.architecture, args.tokenization, args.pretraining, args.in_domain,
                       args.runnable_here, args.weights_available, args.not_zero_shot,
                       args.licence_allows == "commercial", args.licence or ())


def run(args) -> int:
    from store.analyses.recommend import Question, like_tasks, recommend  # lazy: polars
    from store.db import Snapshot  # lazy: polars, duckdb, pyarrow
    from store.tables.catalogs import known_tasks  # lazy: polars, pyarrow

    if args.resamples == 0:
        raise GenebError("--resamples 0: recommend separates models with the task "
                         "bootstrap's interval beside the sign-flip test; give at least 1 "
                         "(default 10,000)")
    kind_and_metric(args)
    regime, budget, warning = _regime(args)
    paths = store_of(args)
    snap = Snapshot(paths, args.kind)   # one kind's results: the answer is within it
    if (line := other_kinds_only(snap, args.kind)) is not None:
        raise GenebError(line)
    names = StoreNames(paths, snap)
    constraints = _constraints(args, names)
    suite, chosen = reading_suite(args, snap, None)
    tasks, scope = scoped_tasks(args, paths, suite)
    tasks = kind_tasks(snap, args.kind, tasks, suite.name)
    notes = [n for n in (chosen, scope) if n]
    if args.like:
        alike, rule = like_tasks(args.like, suite.tasks, known_tasks(paths))
        tasks = tuple(t for t in tasks if t in alike)
        if not tasks:
            raise GenebError(f"--like {args.like}: no task like it is in the scope "
                             f"({scope or 'the whole suite'}); {rule}")
        notes.append(rule)
    if warning:
        print(f"geneb-engine recommend: warning: {warning}", file=sys.stderr)
        notes.append(warning)
    q = Question(tasks, regime, args.metric, args.level, args.resamples, args.bootstrap_seed,
                 constraints, suite.name, len(tasks) == len(suite.tasks), scope or "",
                 tuple(notes), kind=args.kind, suite_given=args.suite or "")
    answer = recommend(snap, q)
    if args.json:
        emit_json({"store": str(paths.root), "table_version": snap.version,
                   "as_of": snap.label, "label_budget": args.labels_per_class,
                   **answer.to_dict()})
        return 0
    _print(answer, regime_how=budget, told=warning)
    return 0


def _num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _print(answer, *, regime_how: str | None, told: str | None) -> None:
    """The answer as text; `told`: a note already on stderr (the label budget's warning)."""
    from store.analyses.uncertainty import interval_text  # lazy: polars, numpy

    q = answer.question
    console = table_console()
    for note in q.notes:
        if note != told:
            console.print(escape(note))
    how = f" (for {regime_how})" if regime_how else ""
    categories = len({t.category for t in q.tasks})
    console.print(f"{q.regime}{how}; {q.metric}, macro over {categories} categor"
                  f"{'y' if categories == 1 else 'ies'} of {len(q.tasks)} tasks; "
                  f"{q.resamples:,} resamples, {round(q.level * 100)}% intervals")
    if wanted := q.constraints.describe():
        console.print(f"constraints: {escape(wanted)}")
    console.print(f"[b]{escape(answer.message)}[/]")
    if answer.small:
        console.print(escape(answer.small))
    if answer.picks:
        console.print(f"[dim]{escape(answer.rule)}[/]")
        mixed = len({p.source for p in answer.picks}) > 1
        t = FitTable("" if mixed else f"results: {escape(answer.picks[0].source)}",
                     [Col("model", key=True), *([Col("from", drop=3)] if mixed else []),
                          Col("score", justify="right"), Col("interval", drop=2),
                          Col("rank", justify="right", drop=3), Col("p", justify="right"),
                          Col("params", justify="right"),
                          Col("context", justify="right", drop=1),
                          Col("in/out/?", justify="right", drop=4),
                          Col("here")], max_drop=4)
        for p in answer.picks:
            rank = (f"{p.rank_low}-{p.rank_high}" if p.rank_low is not None else str(p.rank))
            d = p.domain
            t.add_row(escape(p.model), *([escape(p.source)] if mixed else []), _num(p.score),
                      interval_text(p.low, p.high, 3), rank,
                      "lead" if p is answer.picks[0] else p_text(p.p_value),
                      params_text(p.params), f"{p.context:,}" if p.context else "?",
                      f"{d.inside}/{d.outside}/{d.unknown}", here_text(p.runs_here))
        console.print(t)
        for line in answer.not_here:
            console.print(escape(line))
        if answer.fill:
            console.print(f"run here: {escape(answer.fill)}")
    shown = [x for x in answer.excluded if x.kind != "no results"]
    if shown:
        mixed = len({x.source for x in shown if x.source}) > 1
        t = FitTable("excluded", [Col("model", key=True), *([Col("from")] if mixed else []),
                                  Col("why", wrap=24)])
        for x in shown:
            t.add_row(escape(x.model), *([escape(x.source or "—")] if mixed else []),
                      escape("; ".join(x.reasons)))
        console.print(t)
    if none := [x.model for x in answer.excluded if x.kind == "no results"]:
        console.print(f"no results on the scope at {q.regime}: {escape(', '.join(none))}")
    for n in answer.neighbours:
        console.print(escape(n.line))
