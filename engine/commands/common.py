"""Helpers shared by the subcommands: the store, the suite, the models, output."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from engine.registry import resolve_model
from store.catalog import ARCHITECTURE_FAMILIES, TOKENIZATION_FAMILIES, ModelMeta, TaskMeta
from store.did_you_mean import check_names, suggestions
from store.domains import DOMAIN_WORDS as DOMAIN_WORDS  # read by the commands from here
from store.domains import DOMAINS
from store.paths import StorePaths, absent_store, new_store, store_named
from store.vocab.errors import GenebError
from store.vocab.ids import check_id
from store.vocab.kinds import (
    ALL_METRICS,
    CLASSIFICATION,
    EVERY_KIND,
    KIND_NAMES,
    METRICS_OF,
    PRIMARY,
    TaskKind,
    kinds_of_metric,
)
from store.vocab.protocol import GENEB_V1, NAMED, Protocol, protocol_named, protocols_named
from store.vocab.scopes import SCOPE_FIELDS, Scope
from store.vocab.sources import SOURCES
from store.vocab.suites import DEFAULT as SUITE_DEFAULT
from store.vocab.suites import NAMED as NAMED_SUITES
from store.vocab.suites import SuiteChoice, store_suite

if TYPE_CHECKING:
    from store.db import Snapshot

# messages stay one line (commands and paths in them copy whole; a path is never folded)
console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

OUTPUT_WIDTH = 200  # columns of the tables when stdout is not a terminal and $COLUMNS is unset

def output_width() -> int:
    """The width tables are laid out for: the terminal's when stdout is one (rich's own rule,
    which lets $COLUMNS override it), else $COLUMNS when set, else OUTPUT_WIDTH."""
    if sys.stdout.isatty():
        return Console().width
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else OUTPUT_WIDTH


# Columns of a progress line when stdout is not a terminal (a log file, a pipe): wider than
# any line, so it is never cut to a width ("0:04…"); and how often such a line is written.
LOG_WIDTH = 10_000
LOG_EVERY_S = 30.0


def progress_console() -> Console:
    """The console of a progress bar: stdout's on a terminal (redrawn in place); elsewhere one
    LOG_WIDTH wide, whose lines are printed whole (`LOG_EVERY_S`)."""
    return console if console.is_terminal else Console(soft_wrap=True, width=LOG_WIDTH)


def table_console() -> Console:
    """The console of a command's tables (`output_width` columns; messages are never wrapped,
    so the commands in them copy whole)."""
    return Console(soft_wrap=True, width=output_width())


def store_of(args, *, write: bool = False) -> StorePaths:
    """The store `--store` / `GENEB_HOME` names, checked (`store.paths.store_named`); `write`
    for the commands that write into it, whose first line names a store they create
    (`store.paths.new_store`; not in `--json`, nor in a dry run, which creates nothing). A
    read-only command on a named store folder that does not exist, or holds no store, says so
    first (`store.paths.absent_store`), then reads it as empty."""
    paths = store_named(args.store, write=write)
    if write and not (getattr(args, "json", False) or getattr(args, "dry_run", False)) \
            and (line := new_store(paths)):
        console.print(line, markup=False, highlight=False)
    if not write and (note := absent_store(paths, args.store)):
        print(f"geneb-engine {args.command}: warning: {note}", file=sys.stderr)
    return paths


def current_notes(args, snap: Snapshot) -> list[str]:
    """What the snapshot's current revisions leave out or could not check and which entries
    show a model at another precision (`store.db.Snapshot.notes`), each on stderr as one
    `geneb-engine <command>: note: ...` line (the Rich markup of store text never read);
    returned for a `--json` document."""
    found = snap.notes
    for line in found:
        print(f"geneb-engine {args.command}: note: {line}", file=sys.stderr)
    return found


def add_kind_args(p, command: str) -> None:
    """`--kind` (the task kind read, `store.vocab.kinds`; default classification) and `--metric`
    (one of its metrics; default its primary one), checked together by `kind_and_metric`."""
    p.add_argument("--kind", choices=KIND_NAMES, default=CLASSIFICATION,
                   type=choice_of("kind", KIND_NAMES),
                   help=f"the task kind to {command} (default: classification): regression "
                        "(ridge-v1, Pearson r), variant (variant-probe-v1, AUROC), tracks "
                        "(ridge-tracks-v1, mean Pearson r over targets); one kind at a "
                        "time, its metrics never averaged with another kind's")
    p.add_argument("--metric", choices=ALL_METRICS, type=choice_of("metric", ALL_METRICS),
                   help="one of the kind's metrics (default: its primary one: mcc, pearson, "
                        "auroc)")


def kind_and_metric(args) -> None:
    """`args.kind` as a `TaskKind` and `args.metric` one of its metrics (None: its primary
    one); a metric of another kind is a GenebError naming both."""
    args.kind = TaskKind(args.kind)
    if args.metric is None:
        args.metric = PRIMARY[args.kind]
    elif args.metric not in METRICS_OF[args.kind]:
        of = " or ".join(kinds_of_metric(args.metric))
        raise GenebError(f"--metric {args.metric} is a metric of {of} tasks, not of --kind "
                         f"{args.kind} (its metrics: {', '.join(METRICS_OF[args.kind])}); "
                         f"give --kind {of} or one of those")


def kind_tasks(snap: Snapshot, kind: TaskKind, tasks: tuple[TaskMeta, ...],
               suite: str) -> tuple[TaskMeta, ...]:
    """The tasks in scope of `--kind` (`store.analyses.cells.tasks_of_kind` over `snap`, a
    snapshot of that kind); a GenebError where a kind beyond classification has none, and
    where classification has none because the scope's tasks hold other kinds' results."""
    from store.analyses.cells import tasks_of_kind  # lazy: polars

    own = tasks_of_kind(snap, tasks)
    if own:
        return own
    if kind is CLASSIFICATION:      # the default kind on tasks of other kinds: name them
        if held := snap.kinds(t.task_id for t in tasks):
            raise GenebError(f"suite {suite}: no task in the scope ({len(tasks)}) holds "
                             f"{kind} results; its results are of {_give_kind(held)}")
        return own
    if snap.query("SELECT count(*) AS n FROM results")["n"][0] == 0:
        raise GenebError(f"--kind {kind}: the store {snap.paths.root} holds no {kind} "
                         "results; fill a suite that declares such tasks (a manifest's kind "
                         "column), e.g. `geneb-engine fill --suite geneb-kinds --models kmer-3`")
    elsewhere = [x for x in suites_with_results(snap) if x != suite]
    fix = (f"{' or '.join(f'--suite {x}' for x in elsewhere)} has them" if elsewhere else
           f"the suite's {kind} tasks are outside the scope options given")
    raise GenebError(f"--kind {kind}: no task of suite {suite} in the scope "
                     f"({len(tasks)}) has {kind} results in {snap.paths.root}; {fix}")


def _give_kind(held: Sequence[str]) -> str:
    """"regression and variant tasks: give --kind regression or --kind variant": the kinds a
    scope holds and the `--kind` that reads them."""
    return (f"{' and '.join(held)} tasks: give " + " or ".join(f"--kind {k}" for k in held))


def real_number(ok: Callable[[float], bool], *, give: str, bad: str) -> Callable[[str], float]:
    """An argparse `type=` that takes a finite number for which `ok` holds: "{text!r} is not a
    number; {give}" for text that is no number, "{text} is {bad}" for one `ok` refuses."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number; {give}") from None
        if not (math.isfinite(value) and ok(value)):
            raise argparse.ArgumentTypeError(f"{text} is {bad}")
        return value
    return parse


def whole_number(minimum: int, *, of: str = "", note: str = "", maximum: int | None = None,
                 above: str = "") -> Callable[[str], int]:
    """An argparse `type=` that takes a whole number >= `minimum` (and <= `maximum`): the one
    wording of every count option, "give a whole number{of} >= {minimum}{note}"; `above` is
    what to give instead of a number over `maximum`."""
    give = f"give a whole number{of} >= {minimum}{note}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer; {give}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below {minimum}; {give}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{value} is above {maximum:,}; {above}")
        return value

    return parse


# argparse `type=` of the counts (`--jobs`, `--limit`, `--batch-size`, `--subsample`, `--rows`).
positive_int = whole_number(1)


def models_of(paths: StorePaths, specs: list[str]) -> list[ModelMeta]:
    """The models `--models` names (`engine.registry.resolve_model`), against the store's
    models (`store.tables.catalogs.store_models`: catalog, user entries, checkpoint folders
    run)."""
    from store.tables.catalogs import store_models  # lazy: polars, pyarrow

    catalog = store_models(paths)
    return [resolve_model(spec, catalog) for spec in specs]


def duration(seconds: float) -> str:
    """A time to read at a glance: seconds under two minutes, minutes under two hours, else
    hours ('0.4 s', '95.0 s', '3.5 min', '2.1 h')."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def emit_json(obj) -> None:
    """One JSON document on a line (`json.dumps`: the C encoder, unlike `json.dump`)."""
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def add_suite_arg(p, *, from_store: bool = False, only: str | None = None) -> None:
    """`--suite`, with the defaults of the options `suite_of` reads that the command does not
    take. `from_store`: a command that reads results, whose default suite is the store's
    (`reading_suite`). `only`: an optional narrowing (no default suite; `only` ends its help:
    "only the embeddings of this suite's tasks")."""
    default = ("the store's only suite with results, asked when it has several; "
               f"{SUITE_DEFAULT} when it has none" if from_store else SUITE_DEFAULT)
    stored = ", or the name of a suite the store has results on" if from_store else ""
    p.add_argument("--suite", default=None if from_store or only else SUITE_DEFAULT,
                   help=f"{only} ({', '.join(NAMED_SUITES)}, a directory of task CSVs{stored})"
                   if only else
                   f"{' or '.join(NAMED_SUITES)} (default: {default}), or a directory of task "
                   "CSVs (flat <task_id>.csv or the hub layout tasks/<task_id>/{train,test}.csv)"
                   + stored)
    p.set_defaults(data_dir=None, subsample=None, reference=None)


def add_suite_args(p, *, from_store: bool = False, subsample: bool = True) -> None:
    """`--suite` (`add_suite_arg`), `--data-dir`, `--subsample` (unless not `subsample`)."""
    add_suite_arg(p, from_store=from_store)
    p.add_argument("--data-dir", metavar="DIR",
                   help="where the geneb-v1 task files are (default: $GENEB_DATA_DIR, else the "
                        "snapshot `geneb-engine data download` put in the store)")
    p.add_argument("--reference", metavar="FASTA",
                   help="the reference genome of a folder suite's tasks given by coordinates: "
                        "variants as chrom,pos,ref,alt,label,split (positions 1-based), "
                        "intervals as chrom,start,end,label,split (0-based, end exclusive, "
                        "as BED); genome.fa or a bgzip-compressed .fa.gz")
    if subsample:
        p.add_argument("--subsample", type=positive_int, metavar="N",
                       help="cap each task at N sequences (deterministic, stratified; changes "
                            "the data revision; off for geneb-v1 unless asked)")


# The family options (`models`, `recommend`): option, kind, ModelMeta field, vocabulary (none:
# the catalog's values).
FAMILY_OPTIONS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("--architecture", "architecture family", "architecture_family", ARCHITECTURE_FAMILIES),
    ("--tokenization", "tokenization family", "tokenization_family", TOKENIZATION_FAMILIES),
    ("--pretraining", "pretraining data", "pretraining_data", ()),
)


def add_family_args(p) -> None:
    """`--architecture`, `--tokenization`, `--pretraining` (checked by `check_families`)."""
    p.add_argument("--architecture", metavar="FAMILY",
                   help=f"architecture family: {', '.join(ARCHITECTURE_FAMILIES)}")
    p.add_argument("--tokenization", metavar="FAMILY",
                   help=f"tokenization family: {', '.join(TOKENIZATION_FAMILIES)}")
    p.add_argument("--pretraining", metavar="DATA",
                   help="pretraining data, e.g. human, multi-species, plant-genomes")


def check_families(args, models: Sequence[ModelMeta]) -> None:
    """The family options given, each against its vocabulary (did you mean)."""
    for option, kind, field, vocabulary in FAMILY_OPTIONS:
        given = getattr(args, option[2:])
        if given is not None:
            check_names(kind, [given], vocabulary or sorted({getattr(m, field) for m in models}),
                        option=option)


def add_scope_args(p, *, aliases: Mapping[str, str] | None = None) -> None:
    """The scope options, one per `store.vocab.scopes.SCOPE_FIELDS` (`--category`, `--tasks`,
    `--organism`, `--kingdom`, `--source-benchmark`), each taking several values; `aliases`:
    an older spelling of an option (`--category` -> `--categories`), taken as well. Read by
    `scoped_tasks`."""
    aliases = aliases or {}
    for f in SCOPE_FIELDS:
        p.add_argument(f.option, *([aliases[f.option]] if f.option in aliases else []),
                       dest=f.name, nargs="+", metavar=f.what.replace(" ", "_").upper(),
                       help=f"only the tasks of this {f.what} (several: any of them); the "
                            "scope options combine (a task in every one given)")


def scoped_tasks(args, paths: StorePaths, suite) -> tuple[tuple[TaskMeta, ...], str | None]:
    """(the tasks of `suite` in the scope the options of `add_scope_args` give, the line that
    says how many: None for the whole suite), by `store.scopes.scope_tasks` (its GenebError
    for a scope that names no task)."""
    from store.scopes import scope_tasks  # lazy: polars

    scope = Scope(**{f.name: tuple(getattr(args, f.name) or ()) for f in SCOPE_FIELDS})
    tasks = scope_tasks(paths, suite.tasks, scope, suite=suite.name)
    if scope.whole:
        return tasks, None
    return tasks, (f"scope: {len(tasks)} of the {len(suite.tasks)} tasks of suite {suite.name} "
                   f"({scope.describe()})")


def add_domain_arg(p) -> None:
    """`--domain in|out|unknown`: only the (model, task) cells of that domain (read by
    `domain_cells`)."""
    p.add_argument("--domain", choices=DOMAINS, type=choice_of("domain", DOMAINS),
                   help="only the cells whose (model, task) pair is in (out of, of unknown) the "
                        "model's pretraining domain (the rule: docs, Task and model domains); "
                        "default: every cell")


def domain_cells(which: str | None, frame, domain_of, *, what: str = "result cells"):
    """`--domain`'s cells of `frame` (`store.analyses.domains.domain_cells`: the rows whose pair
    is of domain `which`, every row for None; a GenebError when it had rows and none is of that
    one), imported when a command filters (its start-up stays without polars)."""
    from store.analyses.domains import domain_cells as cells  # lazy: polars

    return cells(which, frame, domain_of, what=what)


def suite_of(args, paths: StorePaths, *, write: bool = False):
    """The suite of `--suite`; `write`: the command writes the store (see `resolve_suite`).
    What reading it found worth a warning (its manifest's) goes to stderr, one line each."""
    from engine.suites import resolve_suite  # lazy: numpy

    if args.suite not in NAMED_SUITES and not _exists(args.suite) \
            and suggestions(args.suite, NAMED_SUITES):        # a misspelt name, not a path
        check_names("suite", [args.suite], NAMED_SUITES, option="--suite",
                    more=", or a directory of <task_id>.csv files")
    suite = resolve_suite(args.suite, paths, data_dir=args.data_dir, subsample=args.subsample,
                          write=write, reference=args.reference)
    for message in suite.warnings:
        print(f"geneb-engine {args.command}: warning: {message}", file=sys.stderr)
    return suite


def tasks_of(args, suite, paths: StorePaths) -> tuple[TaskMeta, ...]:
    """The tasks of `suite` that `--tasks` names (all without it), each name checked (its id
    rule, then against the suite: a task of another suite of the store names that suite
    (`held_elsewhere`), any other did-you-mean)."""
    if args.tasks:
        for t in args.tasks:
            check_id("task", t, "--tasks")      # an unusable id is its own message
        held_elsewhere("--tasks", args.tasks, task_suites(paths), suite.name,
                       have={t.task_id for t in suite.tasks}, taken=False)
        check_names("task(s)", args.tasks, [t.task_id for t in suite.tasks],
                    option=f"suite {suite.name}", quote=False,
                    listing=f"`geneb-engine tasks --suite {args.suite}` lists them")
    return suite.select(args.tasks)


def reading_suite(args, snap: Snapshot, source: str | None):
    """(suite, note) of a command that reads results (`report`, `status`, `export`,
    `recommend`, `site`): `--suite`; else the suite of `store.vocab.suites.store_suite` over
    the store's suites with results of `source` (its only one, geneb-v1 among several; `note`
    is the line that says so, the command's first) or the default suite when the store has
    none; a GenebError naming them when it has results on several without geneb-v1. A suite
    the store knows only by name (a folder `fill` read) lists the tasks its catalog holds.
    Names given that the suite lacks but another suite of the store holds (`--tasks`; with
    the suite taken by the rule, `--models` with results only there) are one GenebError
    naming that suite (`held_elsewhere`)."""
    note = None
    if args.suite is None:
        with_results = [s for s in suites_with_results(snap, source) if s != UNREGISTERED]
        name, how = store_suite(with_results)
        also = _other_kinds_suites(snap, source, with_results)
        what = " ".join(w for w in (source, str(snap.kind) if also else "", "results") if w)
        if name is None:
            raise GenebError(f"the store {snap.paths.root} has {what} on {len(with_results)} "
                             f"suites ({', '.join(with_results)}); give "
                             + " or ".join(f"--suite {s}" for s in with_results))
        args.suite = name
        others = [s for s in with_results if s != name]
        elsewhere = (f"; {', '.join(also)} {'has' if len(also) == 1 else 'have'} results of "
                     "other kinds: " + " or ".join(f"--suite {s}" for s in also)) if also else ""
        if how is SuiteChoice.ONLY:
            note = (f"suite {name}: the store's only suite with {what} "
                    f"({'--suite for another' if not also else elsewhere[2:]})")
        elif how is SuiteChoice.PREFERRED:
            note = (f"suite {name} (the store also has {what} on {', '.join(others)}: "
                    + " or ".join(f"--suite {s}" for s in others) + elsewhere + ")")
    suite = _reading_suite(args, snap)
    _check_held_elsewhere(args, snap, suite, source, taken=note is not None)
    return suite, note


def _other_kinds_suites(snap: Snapshot, source: str | None,
                        with_results: Sequence[str]) -> list[str]:
    """The suites with results (of `source`) of other kinds than the one `snap` reads, that
    are not among `with_results` (geneb-kinds beside a classification suite): what a note on
    the suite a command took names besides, so that "the only suite with results" is never
    said of a store that holds results of another kind elsewhere."""
    if snap.kind == EVERY_KIND or len(snap.kinds()) < 2:
        return []
    every = suites_with_results(snap.of_kind(EVERY_KIND), source)
    return [s for s in every if s not in with_results and s != UNREGISTERED]


def suite_reader(snap: Snapshot, source: str | None) -> Snapshot:
    """The snapshot whose results choose the suite of a command that reads every kind
    (`status`, `export`) when `--suite` is not given (`reading_suite`): the classification
    results' where the store has any (a store of geneb-mini and geneb-kinds results takes
    geneb-mini, as before geneb-kinds), else every kind's (a store of geneb-kinds results alone
    takes geneb-kinds, not the default suite it holds nothing of)."""
    if snap.kinds() in ([], [CLASSIFICATION]):
        return snap
    classified = snap.of_kind(CLASSIFICATION)
    return classified if suites_with_results(classified, source) else snap.of_kind(EVERY_KIND)


def other_kinds_only(snap: Snapshot, kind: str) -> str | None:
    """What a command reading `kind`'s results says on a store that holds none of them but
    results of other kinds: the line naming them and the `--kind` to give; None where it holds
    `kind`'s results, or none at all."""
    found = snap.kinds()
    if not found or kind in found:
        return None
    return f"no results of {kind} tasks in {snap.paths.root}; it holds results of " + \
        _give_kind(found)


def _reading_suite(args, snap: Snapshot):
    """The suite `args.suite` names, for a command that reads results (`reading_suite`)."""
    from engine.suites import stored_suite  # lazy: numpy

    if args.suite not in NAMED_SUITES and not _exists(args.suite):
        stored = stored_suite(args.suite, snap.paths)
        if stored is not None:
            return stored
        known = [*NAMED_SUITES, *(s for s in suites_with_results(snap) if s != UNREGISTERED)]
        if suggestions(args.suite, known):        # a misspelt name, not a path
            check_names("suite", [args.suite], known, option="--suite",
                        more=", or a directory of <task_id>.csv files")
    return suite_of(args, snap.paths)


def _check_held_elsewhere(args, snap: Snapshot, suite, source: str | None, *,
                          taken: bool) -> None:
    """`--tasks` of another suite of the store, and (`taken`: the command took the suite by
    the rule) `--models` whose results (of `source`) are all on other suites: one GenebError
    naming the suite that holds them (`held_elsewhere`)."""
    if getattr(args, "tasks", None):
        held_elsewhere("--tasks", args.tasks, task_suites(snap.paths), suite.name,
                       have={t.task_id for t in suite.tasks}, taken=taken)
    if taken and getattr(args, "models", None):
        held_elsewhere("--models", args.models, _holders(model_suites(snap, source)),
                       suite.name, taken=taken,
                       what=("has results only on", "have results only on"))


def task_suites(paths: StorePaths) -> dict[str, set[str]]:
    """Task id -> the suites that hold it: every task the store knows
    (`store.tables.catalogs.known_tasks`) and those of the suites the engine generates
    (geneb-mini's, which its code lists, in a store it is not yet generated into)."""
    from engine import mini  # lazy: numpy
    from store.tables.catalogs import known_tasks  # lazy: polars, pyarrow, filelock

    known = known_tasks(paths).select("task_id", "suite").rows()
    return _holders([*known, *((t.task_id, t.suite) for t in mini.TASKS)])


def _holders(pairs) -> dict[str, set[str]]:
    """name -> the suites of the (name, suite) `pairs`."""
    out: dict[str, set[str]] = {}
    for name, suite in pairs:
        if suite is not None and suite != UNREGISTERED:
            out.setdefault(name, set()).add(suite)
    return out


def held_elsewhere(option: str, given: Sequence[str], holders: Mapping[str, set[str]],
                   suite: str, *, have: Collection[str] = (), taken: bool,
                   what: tuple[str, str] = ("is a task of", "are tasks of")) -> None:
    """One GenebError for the names of `option` that `suite` lacks (not in `have`, its own)
    and other suites hold (`holders`: name -> its suites), naming them and the `--suite` to
    give ("add" where the command took `suite` by the rule, `taken`): "--tasks:
    mini_promoter_tata is a task of geneb-mini, not geneb-v1: add --suite geneb-mini".
    `what`: the verb for one name, for several."""
    away: dict[tuple[str, ...], list[str]] = {}
    for name in dict.fromkeys(given):
        if name not in have and name in holders and suite not in holders[name]:
            away.setdefault(tuple(sorted(holders[name])), []).append(name)
    if not away:
        return
    parts = []
    for suites, names in away.items():
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        parts.append(f"{shown} {what[len(names) > 1]} {' and '.join(suites)}")
    give = " or ".join(f"--suite {s}" for s in dict.fromkeys(s for k in away for s in k))
    raise GenebError(f"{option}: {'; '.join(parts)}, not {suite}: "
                     f"{'add' if taken else 'give'} {give}")


def _exists(path: str) -> bool:
    try:
        return Path(path).expanduser().exists()
    except (RuntimeError, OSError, ValueError):
        return False


# --- names: one rule for every option that takes names ------------------------------------

def choice_of(kind: str, values: Sequence[str]):
    """argparse `type=` for an option with a closed set of values (regimes, metrics, scale
    bands, provenances): an unknown value is the usage error of `check_names`."""
    def convert(text: str) -> str:
        try:
            return check_names(kind, [text], values)[0]
        except GenebError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = kind
    return convert


class StoreNames:
    """The names a store knows, from where the project keeps them: the model catalog (built-in
    and the user's) and the store's, and the models and sources of its rows (tasks and
    categories: the scope, `scoped_tasks`)."""

    def __init__(self, paths: StorePaths, snap: Snapshot | None = None):
        self.paths = paths
        self._snap = snap

    @cached_property
    def snap(self) -> Snapshot:
        from store.db import Snapshot  # lazy: polars, duckdb, pyarrow

        return self._snap if self._snap is not None else Snapshot(self.paths)

    @cached_property
    def _rows(self):
        """The distinct (model, source) of the store's rows."""
        return self.snap.query("SELECT DISTINCT model, source FROM results_all")

    @cached_property
    def _catalog_models(self):
        from store.tables.catalogs import read_catalog  # lazy: polars, pyarrow, filelock

        return read_catalog(self.paths, "models")

    @cached_property
    def catalog(self) -> dict[str, ModelMeta]:
        from store.tables.catalogs import store_models  # lazy: polars, pyarrow

        return store_models(self.paths)

    @cached_property
    def models(self) -> list[str]:
        return list(dict.fromkeys([*self.catalog, *self._catalog_models["model_id"],
                                   *sorted(self._rows["model"].unique())]))

    @cached_property
    def model_aliases(self) -> dict[str, str]:
        """Display names (and hub ids) of the catalog's models -> their ids."""
        out = {m.display: m.model_id for m in self.catalog.values() if m.display}
        out |= {m.hub_id: m.model_id for m in self.catalog.values() if m.hub_id}
        out |= dict(zip(self._catalog_models["display"], self._catalog_models["model_id"],
                        strict=True))
        return {k: v for k, v in out.items() if k}

    @cached_property
    def displays(self) -> dict[str, str]:
        """Model id -> display name (the catalog's, else the store's catalog)."""
        out = {**dict(zip(self._catalog_models["model_id"], self._catalog_models["display"],
                          strict=True)),
               **{m.model_id: m.display for m in self.catalog.values()}}
        return {k: v for k, v in out.items() if v}

    @cached_property
    def sources(self) -> list[str]:
        """local, the provenances of imported submissions, then any other of the store's."""
        return list(dict.fromkeys([*SOURCES,
                                   *sorted(self._rows["source"].unique())]))

    def check_models(self, given, option: str = "--models") -> list[str]:
        return check_names("model", given, self.models, option=option,
                           aliases=self.model_aliases,
                           listing=f"`geneb-engine models` lists the {len(self.catalog)} "
                                   "catalog models")

    def check_sources(self, given, option: str = "--sources") -> list[str]:
        return check_names("source", given, self.sources, option=option)


def add_protocol_arg(p, *, many: bool = False, help: str) -> None:
    """`--protocol` (`many`: one or more names, groups such as `sweep` included; else one
    protocol), default geneb-v1, checked by `protocols_of` / `one_protocol`."""
    names = ", ".join(NAMED)
    p.add_argument("--protocol", nargs="+" if many else None, metavar="NAME",
                   default=[GENEB_V1.name] if many else GENEB_V1.name,
                   help=f"{help} (default: {GENEB_V1.name}; one of {names})")


def protocols_of(names: Sequence[str], option: str = "--protocol") -> tuple[Protocol, ...]:
    """The protocols `names` stand for (a group: each of its members), each once, in order;
    one GenebError for an unknown name."""
    check_names("protocol", names, NAMED, option=option)
    return protocols_named(names)


def one_protocol(name: str, option: str = "--protocol", *, why: str) -> Protocol:
    """The one protocol `name` names; a GenebError for an unknown name and for a group (a whole
    sweep), saying `why` one is needed."""
    check_names("protocol", [name], NAMED, option=option)
    protocol = protocol_named(name)
    if protocol is None:
        members = ", ".join(p.name for p in NAMED[name])
        raise GenebError(f"{option} {name}: stands for {len(NAMED[name])} protocols "
                         f"({members}); {why}, give one of them")
    return protocol


UNREGISTERED = "unregistered tasks"   # results on tasks the task catalog does not hold


def model_suites(snap: Snapshot, source: str | None = None) -> list[tuple[str, str]]:
    """The (model, suite) pairs of the store's results (of `source`), suites by the task
    catalog (`suites_with_results`)."""
    where = "" if source is None else " WHERE r.source = ?"
    return snap.query(f"SELECT DISTINCT r.model, coalesce(t.suite, '{UNREGISTERED}') AS suite "
                      f"FROM results r LEFT JOIN tasks t ON t.task_id = r.task{where}",
                      [source] if source is not None else None).rows()


def suites_with_results(snap: Snapshot, source: str | None = None) -> list[str]:
    """The suites (by the task catalog) whose tasks hold the store's results (of `source`)."""
    where = "" if source is None else " WHERE r.source = ?"
    found = snap.query(f"SELECT DISTINCT coalesce(t.suite, '{UNREGISTERED}') AS suite "
                       f"FROM results r LEFT JOIN tasks t ON t.task_id = r.task{where} "
                       "ORDER BY suite", [source] if source is not None else None)
    return found["suite"].to_list()
