"""`geneb-engine fill`: compute the missing cells of suite × models × regimes."""

from __future__ import annotations

import argparse
import math
import signal
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from engine.cluster import ClusterOptions, require_ray
from engine.commands.common import (
    LOG_EVERY_S,
    add_protocol_arg,
    add_suite_args,
    choice_of,
    console,
    duration,
    emit_json,
    err_console,
    models_of,
    positive_int,
    progress_console,
    protocols_of,
    store_of,
    suite_of,
    table_console,
    tasks_of,
    whole_number,
)
from engine.commands.layout import Col, FitTable
from engine.encoders import EncoderOptions
from engine.registry import PATH_MODEL_ID
from store.catalog import ModelMeta, TaskMeta
from store.devices import DeviceProfile, device_profile, device_profiles
from store.paths import StorePaths
from store.runnable import PRECISION_SHOWN, format_bytes
from store.vocab.context import parse_context
from store.vocab.encoder_kinds import DTYPES, KINDS
from store.vocab.errors import GenebError
from store.vocab.executors import EXECUTORS, IN_PROCESS, check_address
from store.vocab.kinds import CLASSIFICATION
from store.vocab.protocol import REGIMES, Protocol, Solver
from store.vocab.variant import NORMALIZED, PRESETS, STORAGES, STORED_FLOAT32

if TYPE_CHECKING:
    from engine.dry_run import DryRun
    from engine.fill import FillOptions
    from engine.suites import Suite


def register(sub, common) -> None:
    p = sub.add_parser("fill", parents=[common], help="compute the missing results",
                       description="Compute only the cells (model, task, regime) the store lacks; "
                                   "each (model, task) is embedded once.")
    _add_request_args(p)
    _add_encoder_args(p.add_argument_group("model encoders"))
    _add_cluster_args(p.add_argument_group("cluster (docs: Clusters and offline nodes)"))
    p.set_defaults(handler=run, changes_store=True)   # engine.cli: store_changed


def _add_request_args(p) -> None:
    """What to compute (suite, models, tasks, regimes, protocols) and how: probe workers,
    a dry run."""
    add_suite_args(p)
    p.add_argument("--models", nargs="+", required=True, metavar="MODEL",
                   help="catalog ids (`geneb-engine models` lists them), hub ids (org/name) or "
                        f"checkpoint folders (written by save_pretrained): {PATH_MODEL_ID}")
    p.add_argument("--tasks", nargs="+", metavar="TASK", help="only these tasks")
    p.add_argument("--regimes", nargs="+", choices=REGIMES, default=list(REGIMES),
                   type=choice_of("regime", REGIMES))
    p.add_argument("--limit", type=positive_int, metavar="N",
                   help="only the first N tasks of the suite (a smoke run; complete results are "
                        "never overwritten)")
    p.add_argument("--jobs", type=jobs_count, default=1, metavar="N",
                   help="probe N (model, task) pairs in parallel worker processes, at most "
                        "one per core this process may use and as many as the available memory "
                        "holds (a larger N is capped, saying so); auto: one per core less one")
    p.add_argument("--dry-run", action="store_true",
                   help="write nothing: show the plan (per model: tasks and cells to compute, "
                        "embeddings to compute and to reuse, tokens to embed) and its estimated "
                        "time on this machine, from the store's measured throughput and fit "
                        "times where it has them, else from a short calibration (a few hundred "
                        "sequences of the suite embedded, timed); a suite whose data is not "
                        "here is sized from the task catalog and a model whose weights are not "
                        "here estimated from its parameter count, each basis printed")
    p.add_argument("--ignore-free-space", action="store_true",
                   help="start even when the embeddings this run writes (its dry run's "
                        "estimate) exceed the free space where the store is; the risk: the "
                        "disk fills mid-run, the run stops with a split unfinished (resumed "
                        "by the next fill once space is freed) and other programs writing to "
                        "that disk fail too")
    p.add_argument("--device-profile", metavar="NAME", type=str.strip,
                   help="with --dry-run: estimate the embedding on the device NAME of the device "
                        f"table ({', '.join(device_profiles())}: measured or datasheet "
                        "throughputs, docs Reference: Devices) instead of this machine")
    add_protocol_arg(p, many=True,
                     help="the probe protocols to compute: geneb-v1 (the official probe), "
                          "geneb-v1-array-api (its lbfgs on torch tensors, on the GPU), "
                          "geneb-v1-converged, mlp-h256, sweep (converged, standardised, C in "
                          "0.01..100), sweep-unscaled, or a single converged-C<C>[-unscaled]; "
                          "each variant is its own protocol")
    p.add_argument("--probe-device", metavar="DEVICE",
                   help="device of the variant solvers (the batched ones and "
                        "geneb-v1-array-api; default: cuda when available)")


def _add_encoder_args(enc) -> None:
    """How the models embed: device, precision, batches, compilation, remote code, the
    random-weights control."""
    enc.add_argument("--device", help="cuda, cuda:1, cpu (default: cuda when available)")
    enc.add_argument("--dtype", default="auto", choices=DTYPES, type=choice_of("dtype", DTYPES),
                     help="the precision of models with weights: auto (default: float32 weights, "
                          "bfloat16 autocast on CUDA, float16 where the card lacks bfloat16, "
                          "float32 on the CPU; closest to the official extractors), bfloat16 or "
                          "float16 (weights cast, no autocast; faster on a GPU, refused where "
                          "the device lacks it), float32 (no autocast anywhere); part of the "
                          "embeddings' identity")
    enc.add_argument("--preset", default=NORMALIZED, choices=list(PRESETS),
                     type=choice_of("preset", list(PRESETS)),
                     help="the recipe preset: normalized (default: each record embedded as if "
                          "alone) or reference (the official extractors' loop: file order, "
                          "fixed batches of --batch-size, default the official run's: 4 for "
                          "main.py's extractors, 8 for SpliceBERT, 1 for Evo-1; padded as the "
                          "official extractor did); part of the embeddings' identity and of "
                          "every result row (reference@<batch size>)")
    enc.add_argument("--context", metavar="POLICY",
                     help="what of each sequence a model sees: crop (default: cut to the "
                          "model's own limit on its own side, the start kept, Enformer the "
                          "centre), crop:left|centre|right (with --context-length: the side "
                          "kept), windows:W:S (windows of W nucleotides every S, their "
                          "embeddings averaged); part of the embeddings' identity and of every "
                          "result row (crop-<side>-<N>, windows-<W>-<S>)")
    enc.add_argument("--context-length", type=positive_int, metavar="N",
                     help="cut each sequence to N nucleotides first (on the --context side, "
                          "else the model's own), to evaluate a model at less than its limit")
    enc.add_argument("--context-lengths", type=positive_int, nargs="+", metavar="N",
                     help="a context sweep: the same fill at each --context-length N in turn "
                          "(each its own cells); `report` then shows score against context per "
                          "model")
    enc.add_argument("--storage-precision", default=STORED_FLOAT32, choices=list(STORAGES),
                     type=choice_of("storage precision", list(STORAGES)), metavar="PRECISION",
                     help="how the embeddings are stored: float32 (default: as computed), "
                          "float16 or bfloat16 (half the bytes; the probes read them back as "
                          "float32, so the scores are of the rounded embeddings; bfloat16 "
                          "stored as its bit pattern); part of the embeddings' identity and of "
                          "every result row (stored-float16)")
    enc.add_argument("--batch-size", type=positive_int, metavar="N",
                     help="at most N sequences per batch (halved on out-of-memory); with "
                          "--preset reference exactly N (never halved)")
    enc.add_argument("--max-batch-tokens", type=positive_int, metavar="N",
                     help="at most N padded tokens per batch of the Hugging Face encoder "
                          "(default 4,096 on the CPU, 32,768 on CUDA; halved on out-of-memory)")
    enc.add_argument("--compile", action="store_true",
                     help="run Hugging Face models through torch.compile (off by default; the "
                          "first batches compile; embeddings agree to float rounding)")
    enc.add_argument("--trust-remote-code", action="store_true",
                     help="allow models whose code lives on the hub; it runs at a commit: the "
                          "one ID@<commit> or the entry names, else the store's pin "
                          "(<store>/pins.toml), else the one the branch names now, then "
                          "pinned there for later runs")
    enc.add_argument("--random-init", nargs="?", const=0, metavar="SEED",
                     type=whole_number(0, maximum=(1 << 63) - 1, above="a seed below 2^63"),
                     help="the control: each model's architecture with random weights drawn "
                          "from SEED (default 0), results under <model>-random-init-<SEED>")


def _add_cluster_args(ray) -> None:
    """The executor, and the Ray cluster's options (`cluster_of` refuses them without it)."""
    ray.add_argument("--executor", default=IN_PROCESS, choices=EXECUTORS,
                     type=choice_of("executor", EXECUTORS),
                     help="local (default: this process, --jobs probe workers) or ray (GPU "
                          "actors embed, probes run as CPU tasks; pip install 'geneb[cluster]')")
    ray.add_argument("--address", type=address, metavar="ADDR",
                     help="the Ray cluster to join: auto, HOST:PORT or ray://HOST:PORT "
                          "(default: start a local Ray instance)")
    ray.add_argument("--gpus-per-model", type=gpu_share, metavar="G",
                     help="GPUs per embedding actor: 2 spreads a model over two GPUs, 0.5 lets "
                          "two actors share one (default: 1, or 0.5 under 100M parameters)")
    ray.add_argument("--probe-cpus", type=positive_int, metavar="N",
                     help="CPUs Ray reserves per probe task (default 1): fewer probes at "
                          "once, more memory each")


RAY_ONLY = ("address", "gpus_per_model", "probe_cpus")


def address(text: str) -> str:
    try:
        return check_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def gpu_share(text: str) -> float:
    """A positive number of GPUs: a fraction (0.5: two actors share one GPU) or a count."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0 or (value > 1 and not value.is_integer()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a GPU share; give a fraction of one "
                                         "GPU (0.25, 0.5) or a whole number of GPUs (1, 2, 4)")
    return value


def jobs_count(text: str) -> int | None:
    """A whole number of probe workers, or `auto` (None); `engine.workers.probe_jobs` decides
    how many run."""
    if text == "auto":
        return None
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc}, or auto") from None


def randomised(models: list[ModelMeta], seed: int) -> list[ModelMeta]:
    """The random-initialisation controls of `models` (`ModelMeta.randomised`); a model without
    weights of the generic encoder's kind is refused."""
    for m in models:
        if m.encoder != "hf":
            raise GenebError(f"--random-init: model {m.model_id} is not a model of the generic "
                             f"Hugging Face encoder ({KINDS[m.encoder].label or m.encoder}); "
                             "the control draws an hf model's weights from its configuration")
    return [m.randomised(seed) for m in models]


def cluster_of(args) -> ClusterOptions | None:
    """The Ray executor's options, None for the local executor; options of the other one are
    refused rather than ignored."""
    given = [f"--{name.replace('_', '-')}" for name in RAY_ONLY
             if getattr(args, name) is not None]
    if args.executor == IN_PROCESS:
        if given:
            raise GenebError(f"{', '.join(given)}: only with --executor ray")
        return None
    if args.jobs != 1:
        raise GenebError("--jobs is the local executor's; with --executor ray probes run as Ray "
                         "tasks (--probe-cpus N CPUs each)")
    return ClusterOptions(address=args.address, gpus_per_model=args.gpus_per_model,
                          probe_cpus=args.probe_cpus or 1)


def device_profile_of(args) -> DeviceProfile | None:
    """The row of the device table `--device-profile` names (one line with the closest names
    for an unknown one); refused without --dry-run, and with --dtype float32 (the table holds
    16-bit peaks)."""
    if args.device_profile is None:
        return None
    if not args.dry_run:
        raise GenebError("--device-profile: only with --dry-run (it estimates a run on another "
                         "device; a fill runs here)")
    profile = device_profile(args.device_profile)
    if args.dtype == "float32":
        raise GenebError("--device-profile estimates 16-bit runs (--dtype auto, bfloat16 or "
                         "float16): the device table holds each device's 16-bit peak, not its "
                         "float32 one")
    return profile


def fill_protocols(names: list[str]) -> tuple[Protocol, ...]:
    """The protocols of `--protocol` (`common.protocols_of`), refused where the run cannot fit
    them (geneb-v1-array-api without scipy's array-API switch)."""
    protocols = protocols_of(names)
    if any(p.solver is Solver.SKLEARN_LBFGS_ARRAY_API for p in protocols):
        from engine.probes.array_api import dispatch_problem  # lazy: torch, sklearn, numpy

        if (problem := dispatch_problem()) is not None:
            raise GenebError(problem)
    return protocols


def _stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C: finished fragments stay, nothing half-written appears."""
    def raise_interrupt(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, raise_interrupt)


@dataclass(frozen=True)
class FillRequest:
    """What a fill was asked for, every name and option checked: the store, the suite, the
    models, the tasks and regimes, and how to run (`engine.fill.FillOptions`)."""

    paths: StorePaths
    suite: Suite
    models: list[ModelMeta]
    tasks: list[TaskMeta]
    regimes: list[str]
    options: FillOptions

    def shape(self, other_kinds: int = 0) -> str:
        """"2 tasks × 3 models × 3 regimes = " (and "× N protocols" for more than one
        classification protocol); with
        tasks of other kinds than classification (`other_kinds`, run under their kinds'
        protocols and regimes), which the product does not give: "... regimes, 2 of the
        tasks of other kinds: "."""
        protocols = sum(p.kind is CLASSIFICATION for p in self.options.protocols)
        per = f" × {protocols} protocols" if protocols > 1 else ""
        kinds = (f", {other_kinds} of the tasks of other kinds "
                 "(their kinds' protocols):" if other_kinds else " =")
        return (f"{len(self.tasks)} tasks × {len(self.models)} models × "
                f"{len(self.regimes)} regimes{per}{kinds}")


def fill_request(args) -> tuple[FillRequest, DeviceProfile | None]:
    """The request `args` make, and the device `--device-profile` estimates on, each option
    checked (a refusal writes nothing)."""
    from engine.fill import FillOptions  # lazy: polars, duckdb, pyarrow

    context = parse_context(args.context, args.context_length)   # before the store is made
    paths = store_of(args, write=True)
    models = models_of(paths, args.models)      # names first: a typo changes nothing
    if args.random_init is not None:
        models = randomised(models, args.random_init)
    protocols = fill_protocols(args.protocol)
    cluster = cluster_of(args)
    profile = device_profile_of(args)
    if cluster is not None and args.dry_run:
        raise GenebError("--dry-run estimates a run of the local executor; leave out "
                         "--executor ray")
    if cluster is not None:
        require_ray()                           # before the suite is read or anything written
    suite = suite_of(args, paths, write=not args.dry_run)
    tasks = list(tasks_of(args, suite, paths))[:args.limit]
    _protocols_take_classification(protocols, suite, tasks)
    options = FillOptions(protocols=protocols, jobs=args.jobs,
                          probe_device=args.probe_device,
                          encoder=EncoderOptions(device=args.device or None,
                                                 batch_size=args.batch_size,
                                                 max_batch_tokens=args.max_batch_tokens,
                                                 compile=args.compile, dtype=args.dtype,
                                                 preset=args.preset,
                                                 context=context,
                                                 storage=args.storage_precision,
                                                 trust_remote_code=args.trust_remote_code),
                          cluster=cluster, ignore_free_space=args.ignore_free_space)
    return FillRequest(paths, suite, models, tasks, list(args.regimes), options), profile


def _protocols_take_classification(protocols: tuple[Protocol, ...], suite: Suite,
                                   tasks: list[TaskMeta]) -> None:
    """A `GenebError` when `--protocol` names only protocols of other kinds (variant-llr-v1)
    for a run with classification tasks, which would then compute none of them."""
    if any(p.kind is CLASSIFICATION for p in protocols):
        return
    classification = [t.task_id for t in tasks if t.task_id not in suite.kinds]
    if classification:
        names = " ".join(p.name for p in protocols)
        raise GenebError(
            f"--protocol {names}: scores variant tasks only, and this run has "
            f"{len(classification)} classification task(s) ({', '.join(classification[:3])}"
            f"{', ...' if len(classification) > 3 else ''}): name a classification protocol "
            f"too (--protocol geneb-v1 {names}), or only variant tasks (--tasks)")


def run(args) -> int:
    _stop_on_sigterm()
    if args.context_lengths:
        return _sweep(args)
    return _run_one(args)


def _sweep(args) -> int:
    """`--context-lengths`: the fill at each length in turn, every length checked first (a
    refusal writes nothing); the worst exit status."""
    if args.context_length is not None:
        raise GenebError("--context-lengths sweeps the lengths: leave out --context-length")
    for n in args.context_lengths:
        parse_context(args.context, n)
    return max(_run_one(argparse.Namespace(**{**vars(args), "context_length": n,
                                             "context_lengths": None}))
               for n in dict.fromkeys(args.context_lengths))


def _run_one(args) -> int:
    request, profile = fill_request(args)
    if args.dry_run:
        args.changes_store = False              # nothing written: no listener to tell
        return _dry_run(args, request, profile)
    return _fill_json(request) if args.json else _fill_shown(request)


class CellCount:
    """The cells this run computed (the others were finished by another process) and its ETA
    (`engine.eta`), from the events of `run_fill`."""

    def __init__(self) -> None:
        from engine.eta import EtaWatch  # lazy: polars, duckdb, pyarrow

        self.computed = 0
        self.watch = EtaWatch()
        self.start = time.perf_counter()

    def observe(self, event: dict) -> float | None:
        """Counts a computed cell; the run's ETA in seconds, None unknown."""
        self.computed += event["event"] == "cell" and event["computed"]
        if self.watch.eta is None:
            return None
        self.watch.eta.observe(event)
        return self.watch.eta.seconds()

    def seconds(self) -> float:
        return time.perf_counter() - self.start


def _fill_json(request: FillRequest) -> int:
    """`fill --json`: each event of the run as one line (a cell with its ETA), then `done`."""
    from engine.fill import run_fill  # lazy: polars, duckdb, pyarrow

    count = CellCount()

    def on_event(event: dict) -> None:
        eta = count.observe(event)
        if event["event"] == "cell":
            event["eta_s"] = None if eta is None else round(eta, 1)
        emit_json(event)

    run_fill(request.paths, request.suite, request.models, request.tasks, request.regimes,
             request.options, on_event, count.watch)
    emit_json({"event": "done", "computed": count.computed, "seconds": round(count.seconds(), 3)})
    return 0


def _fill_shown(request: FillRequest) -> int:
    """`fill` on a terminal or into a log: the plan, a progress bar over the cells to compute,
    then what was computed (`FillProgress`)."""
    from engine.fill import run_fill  # lazy: polars, duckdb, pyarrow

    count = CellCount()
    shown = FillProgress(request, count)
    try:
        the_plan = run_fill(request.paths, request.suite, request.models, request.tasks,
                            request.regimes, request.options, shown.on_event, count.watch)
    finally:
        shown.stop()
    if the_plan.cells_missing == 0:
        console.print("nothing to compute: every requested cell is already in the store")
        return 0
    others = the_plan.cells_missing - count.computed
    console.print(f"computed {count.computed} cells in {count.seconds():.1f} s"
                  + (f" ({others} more were computed meanwhile by another process)"
                     if others else "") + f"; store: {request.paths.root}")
    return 0


class FillProgress:
    """What a fill shows as it runs: warnings, the plan line, the executor's messages and one
    progress bar over the cells to compute with each worker's latest throughput (a log file
    gets whole lines, one every LOG_EVERY_S)."""

    def __init__(self, request: FillRequest, count: CellCount) -> None:
        self.request, self.count = request, count
        self.shown = progress_console()
        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("cells"), TimeElapsedColumn(),
                                 TextColumn("ETA {task.fields[eta]}"), console=self.shown,
                                 transient=False)
        self.bar = None
        self.logged = time.monotonic()
        self.rates: dict[str, str] = {}    # the latest throughput of each worker that embedded

    def on_event(self, event: dict) -> None:
        eta = self.count.observe(event)
        if event["event"] == "warning":
            err_console.print(f"[yellow]warning:[/] {escape(event['message'])}")
        elif event["event"] == "plan":
            self.planned(event)
        elif event["event"] in ("remote_code", "jobs"):  # remote: which code at which commit
            console.print(escape(event["message"]), highlight=False)
        elif event["event"] == "executor":
            console.print(f"Ray cluster ({event['address']}): {event['nodes']} node(s), "
                          f"{event['cpus']:g} CPUs, {event['gpus']:g} GPUs")
        elif event["event"] == "placement":
            gpus = f"{event['gpus']:g} GPU" if event["gpus"] else "CPU"
            console.print(f"  {escape(event['model'])}: {event['actors']} actor(s), {gpus} each "
                          f"({escape(event['reason'])})")
        elif event["event"] == "embedded" and event["sequences_per_s"] is not None:
            self.rates[event["worker"]] = (f"{event['worker']} "
                                           f"{event['sequences_per_s']:,.0f} seq/s")
        elif event["event"] == "cell":
            self.advance(event, eta)

    def planned(self, event: dict) -> None:
        """The plan's line; the bar starts where there is anything to compute."""
        have = event["cells_total"] - event["cells_missing"]
        console.print(f"suite [bold]{escape(self.request.suite.name)}[/]: "
                      f"{self.request.shape(event.get('other_kinds', 0))} "
                      f"{event['cells_total']} cells; "
                      f"{have} in the store, {event['cells_missing']} to compute")
        if event["cells_missing"]:
            self.progress.start()
            self.bar = self.progress.add_task("fill", total=event["cells_missing"], eta="-")

    def advance(self, event: dict, eta: float | None) -> None:
        """One cell further; into a log file, the bar as a whole line every LOG_EVERY_S."""
        rate = f" · {escape(' · '.join(self.rates.values()))}" if self.rates else ""
        self.progress.update(self.bar, advance=1, eta="-" if eta is None else duration(eta),
                             description=f"{escape(event['model'])} "
                                         f"{escape(event['task'])}{rate}")
        if not self.shown.is_terminal and time.monotonic() - self.logged >= LOG_EVERY_S:
            self.shown.print(self.progress.get_renderable())
            self.logged = time.monotonic()

    def stop(self) -> None:
        if self.bar is not None:
            self.progress.stop()


def _dry_run(args, request: FillRequest, profile: DeviceProfile | None) -> int:
    """`--dry-run`: the plan and its estimates (`engine.dry_run`), nothing written."""
    from engine.dry_run import dry_run  # lazy: polars, duckdb, pyarrow

    warnings: list[str] = []

    def on_event(event: dict) -> None:
        if event["event"] == "warning":
            warnings.append(event["message"])
            if not args.json:
                err_console.print(f"[yellow]warning:[/] {escape(event['message'])}")

    found = dry_run(request.paths, request.suite, request.models, request.tasks,
                    request.regimes, request.options, on_event, profile)
    if args.json:
        emit_json({"event": "dry_run", "suite": request.suite.name,
                   "store": str(request.paths.root),
                   "cells_total": found.cells_total, "cells_missing": found.cells_missing,
                   "jobs": found.jobs, "jobs_reason": found.jobs_reason,
                   "device": found.device, "sizes": list(found.sizes),
                   "seconds": found.seconds, "unestimated": list(found.unestimated),
                   "warnings": warnings, "space": _space_json(found.space),
                   "models": [{**asdict(m), "probe_seconds": m.probe_seconds,
                               "seconds": m.seconds} for m in found.models]})
    else:
        _show_dry_run(request, found)
    return 0


def _show_dry_run(request: FillRequest, found: DryRun) -> None:
    """A dry run's plan on the terminal: its line, the task sizes, the table of estimates per
    model, where each estimate comes from, and the total."""
    console.print(f"dry run, nothing written: suite [bold]{escape(request.suite.name)}[/]: "
                  f"{request.shape(found.other_kinds)} "
                  f"{found.cells_total} cells; {found.cells_total - found.cells_missing} in "
                  f"the store, {found.cells_missing} to compute; estimated for "
                  f"{escape(found.device)}")
    for line in found.sizes:
        console.print(f"task sizes: {escape(line)}", highlight=False)
    table = FitTable("the plan and its estimated time",
                     [Col("model", key=True, style="bold"), Col("device"),
                      Col("tasks", justify="right"), Col("cells", justify="right"),
                      Col("embed", justify="right"), Col("reuse", justify="right"),
                      Col("sequences", justify="right"), Col("tokens", justify="right"),
                      Col("embedding", justify="right"), Col("probes", justify="right"),
                      Col("total", justify="right")])
    for m in found.models:
        table.add_row(escape(m.model), escape(m.device), str(m.tasks), str(m.cells),
                      str(m.splits_to_embed), str(m.splits_stored), f"{m.sequences:,}",
                      "-" if m.tokens is None else f"~{m.tokens:,}" if m.tokens else "0",
                      _seconds(m.embedding.seconds), duration(m.probe_seconds),
                      _seconds(m.seconds))
    table_console().print(table)
    console.print("embed / reuse: splits (train, test) to embed, and stored to reuse; tokens: "
                  "estimated, - where the encoder counts none; where each estimate comes from:")
    for m in found.models:
        console.print(f"  {escape(m.model)} embedding: {escape(m.embedding.note)}")
        if m.reach is not None:
            console.print(f"  {escape(m.model)} lengths: {escape(m.reach.line())}",
                          highlight=False)
        if m.memory is not None:
            held = PRECISION_SHOWN[request.options.encoder.dtype]
            fit = f"; {m.memory_fit}" if m.memory_fit else ""
            console.print(f"  {escape(m.model)} memory: "
                          f"{escape(m.memory.line(held, format_bytes) + fit)}", highlight=False)
        if m.memory_warning:
            err_console.print(f"[yellow]warning:[/] {escape(m.model)}: "
                              f"{escape(m.memory_warning)} (an estimate: the run is not refused)")
        for p in m.probes:
            console.print(f"  {escape(m.model)} probes {escape(p.protocol)} {p.regime} "
                          f"({p.cells} cells, {p.examples:,} training examples): "
                          f"{escape(p.note)}")
    console.print(f"total ≈ {duration(found.seconds)} with {found.jobs} probe worker(s) "
                  f"({escape(found.jobs_reason)})"
                  + (f"; not counted: {escape(', '.join(found.unestimated))} (see above)"
                     if found.unestimated else ""), highlight=False)
    if (space := found.space) is not None:
        from engine.space import OVERRIDE  # lazy: polars, duckdb

        console.print(escape(space.line()) + ("" if space.fits else
                      f" [red]: fill would refuse to start ({OVERRIDE} overrides)[/]"),
                      highlight=False)
        for m in space.models:
            console.print(escape(f"  {m.model}: {m.splits} split(s), {m.rows:,} rows x "
                                 f"{m.width:,} values (width: {m.basis}), about "
                                 f"{format_bytes(m.bytes)}"), highlight=False)


def _space_json(space) -> dict | None:
    """A dry run's embeddings to write and the free space, for `--json`."""
    if space is None:
        return None
    return {"bytes": space.bytes, "free": space.free, "fits": space.fits,
            "models": [asdict(m) for m in space.models]}


def _seconds(seconds: float | None) -> str:
    return "?" if seconds is None else duration(seconds)
