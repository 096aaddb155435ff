"""`geneb-engine status`: done / missing cells per model and category."""

from __future__ import annotations

import sys
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
    suites_with_results,
    table_console,
)
from engine.commands.layout import Col, FitTable
from engine.encoders import EncoderOptions, told_precision
from store.catalog import TaskMeta
from store.runnable import format_bytes
from store.vocab.errors import GenebError
from store.vocab.protocol import GENEB_V1, REGIMES, seed_counts
from store.vocab.sources import LOCAL
from store.vocab.variant import precision_label, storage_label

if TYPE_CHECKING:
    import polars as pl

    from store.db import Snapshot


def register(sub, common) -> None:
    p = sub.add_parser("status", parents=[common], help="done / missing cells per model",
                       description="Cells (task, regime) done and missing per model and "
                                   "category for a suite, protocol geneb-v1.")
    add_suite_args(p, from_store=True)
    add_scope_args(p)
    add_domain_arg(p)
    p.add_argument("--models", nargs="+", metavar="MODEL",
                   help="these models (default: every model with results on the suite)")
    p.add_argument("--regimes", nargs="+", choices=REGIMES, default=list(REGIMES),
                   type=choice_of("regime", REGIMES))
    p.add_argument("--source", default=LOCAL,
                   help="local (default), official, verified, reproduced, self-reported")
    p.add_argument("--perf", action="store_true",
                   help="how fast each model embedded, per device: sequences/s, tokens/s, "
                        "padding, peak memory, final batch size, TFLOP/s and MFU (CUDA)")
    p.set_defaults(handler=run)


def status_frame(source, tasks, regimes, source_name, models=None, data_hashes=None,
                 revisions=None, pairs=None, *, also=None, precisions=None):
    """Per (model, category): cells done, stale (rows only on other data or of another model
    revision) and total (tasks x regimes), by the rule of `store.cells` (`data_hashes`: the
    suite's files as they are now, `revisions` (`also`: their second names): the models' as
    they are now, `precisions`: the compute precision a run of each computes in; None: the
    store's current ones). `pairs`: the (model, task) pairs counted, from the frame of all of
    them (`--domain`'s `domain_cells`; None: all)."""
    import polars as pl  # lazy: polars

    from store.cells import cell_states  # lazy: polars
    from store.db import snapshot_of  # lazy: polars, duckdb, pyarrow

    task_ids = [t.task_id for t in tasks]
    states = cell_states(
        snapshot_of(source).query, seeds=seed_counts([GENEB_V1]),
        data_hashes=data_hashes, revisions=revisions, also=also, precisions=precisions,
        where="r.source = ? AND list_contains(?, r.task) AND list_contains(?, r.regime)",
        params=[source_name, task_ids, list(regimes)])
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
                 (pl.len() * len(regimes)).alias("total")))


def other_precisions(source, tasks, regimes, precisions, *, data_hashes=None, revisions=None,
                     also=None) -> dict[str, dict[str, int]]:
    """Model -> {variant: cells done} of the local cells done at another compute precision
    than the one `precisions` gives the model (what `fill` would compute in), at a recipe
    preset other than normalized (`<precision>, reference@4`) or at a context policy other than
    the default (`<precision>, windows-1000-500`): other cells, which `fill --dtype` /
    `--preset` / `--context` at that variant counts (`store.vocab.variant`)."""
    from store.cells import cell_states  # lazy: polars
    from store.db import snapshot_of  # lazy: polars, duckdb, pyarrow

    states = cell_states(
        snapshot_of(source).query, seeds=seed_counts([GENEB_V1]),
        data_hashes=data_hashes, revisions=revisions, also=also, precisions={},
        where="r.source = ? AND list_contains(?, r.task) AND list_contains(?, r.regime)",
        params=[LOCAL, [t.task_id for t in tasks], list(regimes)])
    out: dict[str, dict[str, int]] = {}
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


def _classification_tasks(suite, tasks) -> tuple[tuple[TaskMeta, ...], str | None]:
    """The classification tasks of `tasks` (what status counts, geneb-v1's cells) and a line
    naming the others (`Suite.kinds`); a `GenebError` when none is one."""
    other = suite.other_kinds(tasks)
    kept = tuple(t for t in tasks if t.task_id not in other)
    if not other:
        return kept, None
    what = (f"{len(other)} task(s) of suite {suite.name} are regression or "
            "variant tasks; status counts classification cells (protocol geneb-v1) only")
    if not kept:
        raise GenebError(f"{what}; `geneb-engine fill --suite {suite.name} --models MODEL.. "
                         "--dry-run` says which of their cells are missing")
    return kept, f"{what}: they are left out"


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
class StatusCounts:
    """What `status` counted (`status_frame`) and what the counts rest on: the suite's data
    (`data_note`), the precision each model is counted at and its cells done at others."""

    snap: Snapshot
    chosen: str | None                  # how the suite was chosen, when not named
    tasks: tuple[TaskMeta, ...]
    scope: str | None                   # the scope's line, when one narrows the tasks
    frame: pl.DataFrame                 # per (model, category): done, stale, total
    data_note: str
    precisions: dict[str, str] | None   # None: not the local source
    others: dict[str, dict[str, int]]   # other_precisions


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
                   "other_precisions": counts.others, "sizes": _sizes(paths, counts)})
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
    suite, chosen = reading_suite(args, snap, args.source)
    tasks, scope = scoped_tasks(args, paths, suite)
    tasks, left_out = _classification_tasks(suite, tasks)
    if left_out:
        print(f"geneb-engine status: note: {left_out}", file=sys.stderr)
    hashes, unread = _suite_hashes(suite, tasks)
    revisions, also, precisions = (_revisions(paths, snap, args.models)
                                   if args.source == LOCAL else (None, None, None))
    domain_of = pair_domains(paths)
    frame = status_frame(snap, tasks, args.regimes, args.source, args.models, hashes,
                         revisions, pairs=lambda grid: domain_cells(
                             args.domain, grid, domain_of, what="(model, task) pairs"),
                         also=also, precisions=precisions)
    others = (other_precisions(snap, tasks, args.regimes, precisions, data_hashes=hashes,
                               revisions=revisions, also=also) if precisions else {})
    data_note = ("the suite's files as they are now" if hashes is not None else
                 f"the store's current data (task files not read: {unread})")
    return StatusCounts(snap, chosen, tasks, scope, frame, data_note, precisions, others)


def _show(args, paths, counts: StatusCounts) -> None:
    """The counts on the terminal: the table, what stale means, the other precisions, and how
    to get what no model has."""
    if counts.chosen:
        console.print(f"[dim]{escape(counts.chosen)}[/]")
    if counts.frame.is_empty():
        console.print(f"no {args.source} results for suite {args.suite} in {paths.root}"
                      f"{_elsewhere(counts.snap, args.source)}; {_how_to_get(args)}")
        return
    if counts.scope:
        console.print(escape(counts.scope))
    if args.domain:
        console.print(f"domain: only the (model, task) pairs {DOMAIN_WORDS[args.domain]}")
    stale_any = counts.frame["stale"].sum() > 0
    nothing = _print_table(args, counts, stale_any)
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
            "suite_embeddings": sizes.task_embeddings(t.task_id for t in counts.tasks),
            "models": {m: {"embeddings": sizes.model_embeddings(embeddings.model_folder(m)),
                           "results": sizes.results.get(m, 0),
                           "predictions": sizes.predictions.get(m, 0)}
                       for m in dict.fromkeys(counts.frame["model"])}}


def _print_sizes(args, sizes: dict) -> None:
    from store.sizes import sizes_line  # lazy: zarr

    console.print(f"on disk: {sizes_line(sizes['total'])}; the embeddings of {args.suite}'s "
                  f"tasks {format_bytes(sizes['suite_embeddings'])}", highlight=False)
    for model, at in sizes["models"].items():
        console.print(f"  {escape(model)}: {sizes_line(at)}", highlight=False)


def _print_table(args, counts: StatusCounts, stale_any: bool) -> list[str]:
    """The table of cells done (and stale) per model, with the categories missing; the models
    with no cell done or stale."""
    frame = counts.frame
    table = FitTable(f"{args.suite}: cells (task × regime) done ({args.source}, "
                     f"{GENEB_V1.name}, regimes {', '.join(args.regimes)}; {counts.snap.label})",
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
