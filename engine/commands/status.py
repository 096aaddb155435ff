"""`geneb-engine status`: done / missing cells per model and category."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.markup import escape

from engine.commands.common import (
    DOMAIN_WORDS,
    StoreNames,
    add_domain_arg,
    add_scope_args,
    add_suite_args,
    choice_of,
    console,
    domain_cells,
    emit_json,
    reading_suite,
    scoped_tasks,
    store_of,
    suite_reader,
    suites_with_results,
    table_console,
)
from engine.commands.layout import Col, FitTable
from engine.encoders import EncoderOptions, told_precision
from store.catalog import TaskMeta
from store.runnable import format_bytes
from store.vocab.errors import GenebError
from store.vocab.kinds import CLASSIFICATION, KIND_NAMES, TaskKind
from store.vocab.protocol import GENEB_V1, KIND_PROTOCOLS, REGIMES, Protocol, seed_counts
from store.vocab.sources import LOCAL, SUBMISSION_PROVENANCES
from store.vocab.variant import precision_label, storage_label

if TYPE_CHECKING:
    import polars as pl

    from store.db import Snapshot


def register(sub, common) -> None:
    p = sub.add_parser("status", parents=[common], help="done / missing cells per model",
                       description="Cells (task, regime) done and missing per model and "
                                   "category for a suite: its classification tasks' of "
                                   "protocol geneb-v1, then each other kind's of its "
                                   "protocols (regression: ridge-v1; variant: "
                                   "variant-cosine-v1, variant-probe-v1), a table per kind.")
    add_suite_args(p, from_store=True)
    add_scope_args(p)
    add_domain_arg(p)
    p.add_argument("--models", nargs="+", metavar="MODEL",
                   help="these models (default: every model with results on the suite)")
    p.add_argument("--regimes", nargs="+", choices=REGIMES, default=list(REGIMES),
                   type=choice_of("regime", REGIMES))
    p.add_argument("--kind", choices=KIND_NAMES, type=choice_of("kind", KIND_NAMES),
                   help="count the tasks of this kind only (default: every kind of the suite, "
                        "a table each)")
    p.add_argument("--source", default=LOCAL,
                   help=f"{LOCAL} (default), {', '.join(SUBMISSION_PROVENANCES)}")
    p.add_argument("--perf", action="store_true",
                   help="how fast each model embedded, per device: sequences/s, tokens/s, "
                        "padding, peak memory, final batch size, TFLOP/s and MFU (CUDA)")
    p.set_defaults(handler=run)


def status_frame(source, tasks, regimes, source_name, models=None, data_hashes=None,
                 revisions=None, pairs=None, *, also=None, precisions=None,
                 protocols: tuple[Protocol, ...] = (GENEB_V1,)):
    """Per (model, category): cells done, stale (rows only on other data or of another model
    revision) and total (tasks x each of `protocols`' regimes of `regimes`: a zero-shot one's
    one), by the rule of `store.cells` (`data_hashes`: the
    suite's files as they are now, `revisions` (`also`: their second names): the models' as
    they are now, `precisions`: the compute precision a run of each computes in; None: the
    store's current ones). `pairs`: the (model, task) pairs counted, from the frame of all of
    them (`--domain`'s `domain_cells`; None: all)."""
    import polars as pl  # lazy: polars

    from store.cells import cell_states  # lazy: polars
    from store.db import snapshot_of  # lazy: polars, duckdb, pyarrow

    task_ids = [t.task_id for t in tasks]
    states = cell_states(
        snapshot_of(source).query, seeds=seed_counts(protocols),
        data_hashes=data_hashes, revisions=revisions, also=also, precisions=precisions,
        where="r.source = ? AND list_contains(?, r.task) AND list_contains(?, r.regime)",
        params=[source_name, task_ids, _regimes(protocols, regimes)])
    per_task = (states.group_by("model", "task")
                .agg((pl.col("state") == "done").sum().alias("done"),
                     (pl.col("state") == "stale").sum().alias("stale")))
    names = models or sorted(per_task["model"].unique().to_list())
    grid = pl.DataFrame(
        [(m, t.task_id, t.category) for m in names for t in tasks],
        schema={"model": pl.String, "task": pl.String, "category": pl.String}, orient="row")
    if pairs is not None:
        grid = pairs(grid)
    return (grid.join(per_task, on=["model", "task"], how="left")
            .with_columns(pl.col("done", "stale").fill_null(0).cast(pl.Int64))
            .group_by("model", "category", maintain_order=True)
            .agg(pl.col("done").sum(), pl.col("stale").sum(),
                 (pl.len() * sum(len(p.regimes_of(regimes)) for p in protocols))
                 .alias("total")))


def _regimes(protocols: tuple[Protocol, ...], regimes) -> list[str]:
    """The regimes `protocols` run of `regimes` (`Protocol.regimes_of`), each once."""
    return list(dict.fromkeys(r for p in protocols for r in p.regimes_of(regimes)))


def other_precisions(source, tasks, regimes, precisions, *, data_hashes=None, revisions=None,
                     also=None, protocols: tuple[Protocol, ...] = (GENEB_V1,),
                     out: dict[str, dict[str, int]] | None = None) -> dict[str, dict[str, int]]:
    """Model -> {variant: cells done} of the local cells done at another compute precision
    than the one `precisions` gives the model (what `fill` would compute in), at a recipe
    preset other than normalized (`<precision>, reference@4`) or at a context policy other than
    the default (`<precision>, windows-1000-500`): other cells, which `fill --dtype` /
    `--preset` / `--context` at that variant counts (`store.vocab.variant`); of the cells of
    `protocols`, added to `out`'s counts where given."""
    from store.cells import cell_states  # lazy: polars
    from store.db import snapshot_of  # lazy: polars, duckdb, pyarrow

    states = cell_states(
        snapshot_of(source).query, seeds=seed_counts(protocols),
        data_hashes=data_hashes, revisions=revisions, also=also, precisions={},
        where="r.source = ? AND list_contains(?, r.task) AND list_contains(?, r.regime)",
        params=[LOCAL, [t.task_id for t in tasks], _regimes(protocols, regimes)])
    out = {} if out is None else out
    for r in states.iter_rows(named=True):
        if r["state"] == "done" and r["model"] in precisions and (
                r["compute_precision"] != precisions[r["model"]] or r["recipe_preset"]
                or r["context_policy"] or r["storage_precision"]):
            at = out.setdefault(r["model"], {})
            label = precision_label(r["compute_precision"]) + (
                f", {r['recipe_preset']}" if r["recipe_preset"] else "") + (
                f", {r['context_policy']}" if r["context_policy"] else "") + (
                f", {storage_label(r['storage_precision'])}" if r["storage_precision"] else "")
            at[label] = at.get(label, 0) + 1
    return out


def _suite_hashes(suite, tasks) -> tuple[dict[str, str] | None, str | None]:
    """The data hashes of the suite's files as they are now; (None, why) when unreadable."""
    from engine.fill import validate_tasks  # lazy: polars, duckdb, pyarrow

    try:
        return validate_tasks(suite, list(tasks), lambda event: None).hashes, None
    except GenebError as exc:
        return None, str(exc).splitlines()[0]


def _tasks_by_kind(suite, tasks, kind: TaskKind | None) -> dict[TaskKind, tuple[TaskMeta, ...]]:
    """`tasks` per kind (`Suite.kinds`), classification first, each kind with tasks once
    (`kind`: that kind's alone); a `GenebError` when `--kind` names one the scope lacks."""
    out: dict[TaskKind, list[TaskMeta]] = {}
    for t in tasks:
        out.setdefault(suite.kinds.get(t.task_id, CLASSIFICATION), []).append(t)
    order = [k for k in TaskKind if k in out and kind in (None, k)]
    if not order:
        found = ", ".join(f"{len(out[k])} {k}" for k in TaskKind if k in out)
        raise GenebError(f"--kind {kind}: suite {suite.name} has no {kind} task in the scope "
                         f"({found}); leave --kind out to count every kind")
    return {k: tuple(out[k]) for k in order}


def _revisions(paths, snap, models: list[str] | None):
    """(revision, its second name, compute precision) of each model (`models`, else every one
    with local rows) as a run of it would compute now (`engine.planner`: a checkpoint folder's
    files as they are, its registry entry's revision, `fill`'s default `--device` and `--dtype`
    on this machine; the store's current revision and precision for a model the store cannot
    run)."""
    from engine.planner import accepted_revisions, run_revisions  # lazy: polars, duckdb
    from store.tables.catalogs import store_models  # lazy: polars, pyarrow

    ids = models or snap.query("SELECT DISTINCT model FROM results_all WHERE source = ?",
                               [LOCAL])["model"].to_list()
    try:
        known = store_models(paths)
    except GenebError:          # a broken <store>/models.toml: `fill` says why
        known = store_models(paths, user=False)
    runs = [known[m] for m in ids if m in known]
    precisions = dict(snap.query("SELECT model, nullif(compute_precision, '') FROM "
                                 "current_precision WHERE list_contains(?, model)",
                                 [ids]).iter_rows())
    for m in runs:
        try:
            precisions[m.model_id] = told_precision(m, EncoderOptions())
        except GenebError:      # a kind this machine cannot run: the store's current one
            continue
    return run_revisions(snap, ids, known), accepted_revisions(snap, runs), precisions


@dataclass(frozen=True)
class KindCells:
    """The cells of the tasks of one kind beyond classification, of its protocols
    (`KIND_PROTOCOLS`), per model and category (`status_frame`)."""

    kind: TaskKind
    protocols: tuple[Protocol, ...]
    tasks: tuple[TaskMeta, ...]
    frame: pl.DataFrame


@dataclass(frozen=True)
class StatusCounts:
    """What `status` counted (`status_frame`) and what the counts rest on: the suite's data
    (`data_note`), the precision each model is counted at and its cells done at others."""

    snap: Snapshot
    chosen: str | None                  # how the suite was chosen, when not named
    tasks: tuple[TaskMeta, ...]         # the classification tasks counted
    scope: str | None                   # the scope's line, when one narrows the tasks
    frame: pl.DataFrame                 # per (model, category): done, stale, total
    data_note: str
    precisions: dict[str, str] | None   # None: not the local source
    others: dict[str, dict[str, int]]   # other_precisions, of every kind's cells
    kinds: tuple[KindCells, ...] = ()   # the other kinds' cells, a table each

    @property
    def frames(self) -> list[pl.DataFrame]:
        """Every table's frame: classification's (where it has tasks), then each kind's."""
        return [*([self.frame] if self.tasks else []), *(k.frame for k in self.kinds)]


def run(args) -> int:
    paths = store_of(args)
    if args.perf:
        return _perf(paths, args)
    counts = count_cells(args, paths)
    if args.json:
        emit_json({"suite": args.suite, "suite_chosen": counts.chosen, "source": args.source,
                   "protocol": GENEB_V1.name, "tasks": [t.task_id for t in counts.tasks],
                   "domain": args.domain,
                   "table_version": counts.snap.version, "data": counts.data_note,
                   "rows": counts.frame.to_dicts(), "precisions": counts.precisions or {},
                   "other_precisions": counts.others, "sizes": _sizes(paths, counts),
                   **({"kinds": [{"kind": k.kind, "protocols": [p.name for p in k.protocols],
                                  "tasks": [t.task_id for t in k.tasks],
                                  "rows": k.frame.to_dicts()} for k in counts.kinds]}
                      if counts.kinds else {})})
        return 0
    _show(args, paths, counts)
    return 0


def count_cells(args, paths) -> StatusCounts:
    """The cells of the suite, scope and domain `args` name, per model and category, each name
    checked first."""
    from store.db import Snapshot  # lazy: polars, duckdb, pyarrow
    from store.tables.catalogs import pair_domains  # lazy: polars, pyarrow

    snap = Snapshot(paths)
    names = StoreNames(paths, snap)
    names.check_sources([args.source], option="--source")
    if args.models:
        names.check_models(args.models)
    suite, chosen = reading_suite(args, suite_reader(snap, args.source), args.source)
    scoped, scope = scoped_tasks(args, paths, suite)
    by_kind = _tasks_by_kind(suite, scoped, args.kind)
    hashes, unread = _suite_hashes(suite, [t for ts in by_kind.values() for t in ts])
    revisions, also, precisions = (_revisions(paths, snap, args.models)
                                   if args.source == LOCAL else (None, None, None))
    domain_of = pair_domains(paths)
    others: dict[str, dict[str, int]] = {}

    def count(tasks, protocols):
        if precisions:
            other_precisions(snap, tasks, args.regimes, precisions, data_hashes=hashes,
                             revisions=revisions, also=also, protocols=protocols, out=others)
        return status_frame(snap, tasks, args.regimes, args.source, args.models, hashes,
                            revisions, pairs=lambda grid: domain_cells(
                                args.domain, grid, domain_of, what="(model, task) pairs"),
                            also=also, precisions=precisions, protocols=protocols)

    tasks = by_kind.pop(CLASSIFICATION, ())
    frame = count(tasks, (GENEB_V1,))
    kinds = tuple(KindCells(kind, KIND_PROTOCOLS[kind], ts, count(ts, KIND_PROTOCOLS[kind]))
                  for kind, ts in by_kind.items())
    data_note = ("the suite's files as they are now" if hashes is not None else
                 f"the store's current data (task files not read: {unread})")
    return StatusCounts(snap, chosen, tasks, scope, frame, data_note, precisions, others, kinds)


def _show(args, paths, counts: StatusCounts) -> None:
    """The counts on the terminal: the table, what stale means, the other precisions, and how
    to get what no model has."""
    if counts.chosen:
        console.print(f"[dim]{escape(counts.chosen)}[/]")
    if all(f.is_empty() for f in counts.frames):
        console.print(f"no {args.source} results for suite {args.suite} in {paths.root}"
                      f"{_elsewhere(counts.snap, args.source)}; {_how_to_get(args)}")
        return
    if counts.scope:
        console.print(escape(counts.scope))
    if args.domain:
        console.print(f"domain: only the (model, task) pairs {DOMAIN_WORDS[args.domain]}")
    stale_any = any(f["stale"].sum() > 0 for f in counts.frames)
    nothing = None
    if counts.tasks:
        nothing = set(_print_table(
            f"{args.suite}: cells (task × regime) done ({args.source}, {GENEB_V1.name}, "
            f"regimes {', '.join(args.regimes)}; {counts.snap.label})", counts.frame, stale_any))
    for k in counts.kinds:
        empty = set(_print_table(
            f"{args.suite}: {k.kind} cells (task × regime) done ({args.source}, "
            f"{', '.join(p.name for p in k.protocols)}, regimes "
            f"{', '.join(_regimes(k.protocols, args.regimes))}; {counts.snap.label})",
            k.frame, stale_any))
        nothing = empty if nothing is None else nothing & empty
    nothing = [m for m in dict.fromkeys(m for f in counts.frames for m in f["model"])
               if m in (nothing or ())]
    if stale_any:
        console.print(f"stale: cells whose results were computed on other data than "
                      f"{counts.data_note}, or with another revision of the model than it has "
                      "now (another commit, edited extractor, re-saved checkpoint folder); "
                      "`fill` computes them again")
    for model, at in counts.others.items():
        console.print(escape(
            f"{model}: counted at {precision_label(counts.precisions[model])}, normalized "
            "(what `fill` computes in here by default); also done at "
            + "; ".join(f"{p}: {n} cell{'s' if n != 1 else ''}" for p, n in sorted(at.items()))
            + " (other cells: `fill` at that --dtype, --preset and --context counts them)"))
    if nothing:
        console.print(f"no {args.source} results of {', '.join(nothing)} on suite {args.suite} "
                      f"in {paths.root}; {_how_to_get(args, nothing)}")
    _print_sizes(args, _sizes(paths, counts))


def _sizes(paths, counts: StatusCounts) -> dict:
    """The bytes on disk (`store.sizes`): in total, of the suite's tasks' embeddings, and per
    model counted (embeddings, results, predictions; a model's results and predictions files
    hold every task's rows, so they are not split by suite)."""
    from store.embeddings import EmbeddingStore  # lazy: zarr
    from store.sizes import store_sizes  # lazy: zarr

    sizes, embeddings = store_sizes(paths), EmbeddingStore(paths)
    return {"total": sizes.total,
            "suite_embeddings": sizes.task_embeddings(
                t.task_id for t in (*counts.tasks, *(t for k in counts.kinds for t in k.tasks))),
            "models": {m: sizes.of_model(m, embeddings.model_folder(m))
                       for m in dict.fromkeys(m for f in counts.frames for m in f["model"])}}


def _print_sizes(args, sizes: dict) -> None:
    from store.sizes import sizes_line  # lazy: zarr

    console.print(f"on disk: {sizes_line(sizes['total'])}; the embeddings of {args.suite}'s "
                  f"tasks {format_bytes(sizes['suite_embeddings'])}", highlight=False)
    for model, at in sizes["models"].items():
        console.print(f"  {escape(model)}: {sizes_line(at)}", highlight=False)


def _print_table(title: str, frame: pl.DataFrame, stale_any: bool) -> list[str]:
    """The table `title` of cells done (and stale) per model, with the categories missing; the
    models with no cell done or stale."""
    table = FitTable(title,
                     [Col("model", key=True, style="bold"), Col("done", justify="right"),
                      *([Col("stale", justify="right")] if stale_any else []),
                      Col("missing, by category", wrap=24, max=90)])
    nothing = []
    for model in dict.fromkeys(frame["model"]):
        done = total = stale = 0
        missing = []
        for r in frame.filter(model=model).iter_rows(named=True):
            done, total, stale = done + r["done"], total + r["total"], stale + r["stale"]
            if r["done"] < r["total"]:
                missing.append(f"{escape(r['category'])} {r['total'] - r['done']}")
        if not done and not stale:
            nothing.append(model)
        cells = [escape(model), _cell(done, total)]
        if stale_any:
            cells.append(f"[yellow]{stale}[/]" if stale else "0")
        table.add_row(*cells, ", ".join(missing) or "[green]none[/]")
    table_console().print(table)
    return nothing


def _how_to_get(args, models: list[str] | None = None) -> str:
    """The command that gives the missing results of `args.source`."""
    if args.source == LOCAL:
        regimes = "" if len(args.regimes) == 3 else f" --regimes {' '.join(args.regimes)}"
        return (f"fill them with `geneb-engine fill --suite {args.suite} --models "
                f"{' '.join(models or ['MODEL..'])}{regimes}`")
    if args.source == "official":
        return "import them with `geneb-engine import --official`"
    return f"import {args.source} submission files with `geneb-engine import FILE..`"


def _elsewhere(snap, source: str) -> str:
    """' (its local results are on the tasks of geneb-mini)' when the store has rows of the
    source on other tasks than the suite's."""
    found = suites_with_results(snap, source)
    return f" (its {source} results are on the tasks of {', '.join(found)})" if found else ""


def _cell(done: int, total: int) -> str:
    colour = "green" if done == total else ("yellow" if done else "red")
    return f"[{colour}]{done}/{total}[/]"


def _perf(paths, args) -> int:
    """`status --perf`: the runs table per model and device
    (`store.tables.telemetry.perf_summary`)."""
    from store.tables.telemetry import perf_summary, read_runs  # lazy: polars, pyarrow

    runs = read_runs(paths)
    if args.models:
        StoreNames(paths).check_models(args.models)
        runs = runs.filter(runs["model"].is_in(args.models))
    frame = perf_summary(runs)
    if args.json:
        emit_json({"perf": frame.to_dicts()})
        return 0
    if frame.is_empty():
        console.print(f"no embedding runs recorded in {paths.root}; `geneb-engine fill` records "
                      "one per split it encodes")
        return 0
    table = FitTable("embedding throughput (every split `fill` encoded, per model and device)",
                     [Col("model", key=True, style="bold"), Col("device"), Col("dtype"),
                      Col("splits", justify="right", drop=1), Col("sequences", justify="right"),
                      Col("seq/s", justify="right"), Col("tokens/s", justify="right"),
                      Col("padding", justify="right"), Col("peak mem", justify="right", drop=2),
                      Col("batch", justify="right"), Col("TFLOP/s", justify="right", drop=3),
                      Col("MFU", justify="right", drop=4)])
    for r in frame.iter_rows(named=True):
        table.add_row(escape(r["model"]), escape(r["device"] or "?"), escape(r["dtype"] or "?"),
                      str(r["splits"]), f"{r['sequences']:,}", _num(r["sequences_per_s"]),
                      _num(r["tokens_per_s"]), _share(r["padding"]),
                      _bytes(r["peak_memory_bytes"]), _num(r["batch_size"]),
                      _num(r["tflops"], 1), _share(r["mfu"]))
    table_console().print(table)
    return 0


def _num(value, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _share(value) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def _bytes(value) -> str:
    return "-" if value is None else f"{value / 2**30:.2f} GiB"
