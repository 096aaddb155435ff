"""`fill --dry-run`: what a fill would compute and about how long it would take; nothing is
written to the store.

The plan is fill's own: every task read and checked (`engine.fill.validate_tasks`), the missing
cells (`engine.planner.plan`), each model's weight-free checks (`engine.encoders.preflight`).
Per model: the tasks and cells to compute; the splits whose embeddings are to compute, and those
stored to reuse (`store.embeddings.EmbeddingStore.stored`: a complete split of the model on the
same data made with the revision the plan has for it, which fill reuses once it verifies and
was made with the same settings); the sequences, nucleotides and tokens to embed.

What a model is given of each sequence is the run's context policy's (`fill --context`,
`--context-length`; windows: each window a piece of its own) and then the model's limit
(`ModelMeta.token_limit`, at the tokens per nucleotide below): the sequences, nucleotides and
tokens to embed are those (`Reach`), and each model's line names the longest sequence, the
tokens of the longest piece it is given and the tokens of a batch of such pieces. Its memory
line adds the weights and the activations of the largest batch the run will make
(`engine.memory`: an estimate, its formula in `store.memory`) and whether they fit the device (a
warning where they do not; a run is never refused on an estimate).

Tasks whose data is not here (geneb-v1 before `geneb-engine data download`) are sized without
it (`store.task_sizes`: the store's recorded profile, else geneb-v1's test rows derived from the
official accuracies and the rest assumed, every basis printed), and planned on the data the
store last recorded for them (a task without a recorded data hash: every cell missing).

Each estimate says where it came from:

- embedding on a named device (`--device-profile NAME`, the device table
  `store.devices`) of a model with weights: params x tokens, 2 x parameters FLOPs per token at
  the share of the device's 16-bit peak the table gives (measured there, or the datasheet's
  peak with an assumed utilisation); tokens: the runs table's tokens per nucleotide of the model
  where it counted them on these tasks' data, else one a nucleotide (the most a tokenizer
  makes). The same on this machine for a model whose weights are not here (a hub model without
  a whole cached snapshot: the dry run never downloads), at this machine's GPU's row of the
  table, else at the FLOP/s of a matrix product measured here (`matmul_flops`; a forward
  reaches less, so that time is a lower bound); a model without a parameter count is not
  estimated (said so). A weight-free kind runs on the CPU: calibrated here, also for a profile.
- embedding, on the device the model would run on (a weight-free kind on the CPU, else
  `--device`'s rule): the runs table's measured throughput of that model on that device
  (`store.tables.telemetry.perf_summary`): tokens to embed over tokens per second, the tokens being
  the nucleotides to embed times the model's tokens per nucleotide where the runs table
  measured it on these tasks' data; else sequences over sequences per second. A model the
  runs table has not seen on that device is calibrated: `CALIBRATION_SEQUENCES` sequences
  drawn from the suite (every sequence equally likely, the same draw every time; random
  sequences of the sized tasks' median length when no task's data is here) embedded once
  after a warm-up, timed: nucleotides over nucleotides per second, tokens per nucleotide
  from what the encoder counted.
- probes, per protocol and regime: seconds per training example fitted, as the store's local
  result rows measured them (`fit_seconds` over `n_train`, a shared full-regime fit counted
  once): this model's rows where it has some, else every model's; else a calibration, the
  protocol fitted on the calibration sample's embeddings (labels alternating; random rows of
  ASSUMED_WIDTH dimensions for a model whose weights are not here), timed. A cell's
  examples: the training split once per fit (one fit for a shared full-regime fit, one per
  seed otherwise), k per class and seed for a k-shot regime.
- the total of a model: embedding, plus probes over the probe workers (`--jobs`), which fit
  while the next pair embeds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import polars as pl
from threadpoolctl import threadpool_limits

from engine.data import SPLITS, KindTargets, Sample, TaskData
from engine.embedding_import import check_imported
from engine.encoders import build_encoder, preflight, told_precision
from engine.encoders.context import pieces
from engine.encoders.hub import local_checkpoint
from engine.encoders.pins import trusted_commits
from engine.fill import Event, FillOptions, validate_tasks
from engine.memory import estimate, fit_of
from engine.pairs import embeddings_identity, refuse_headless
from engine.planner import PairWork, plan
from engine.probes import PROBE_THREADS, probe_rows
from engine.space import Space, space_needed, splits_to_embed
from engine.suites import Suite
from engine.workers import probe_jobs
from store.catalog import ModelMeta, TaskMeta, TaskProfile, params_text
from store.db import query
from store.devices import DeviceProfile, profile_of
from store.embeddings import EmbeddingStore
from store.memory import MemoryEstimate
from store.paths import StorePaths
from store.tables.catalogs import known_tasks
from store.tables.telemetry import perf_summary, read_runs
from store.task_sizes import TaskSize, basis_lines, task_sizes
from store.vocab.context import WINDOWS, ContextPolicy
from store.vocab.encoder_kinds import KINDS
from store.vocab.kinds import CLASSIFICATION, REAL_VALUED, SEVERAL_TARGETS, TaskKind
from store.vocab.protocol import REGIME_K, Probe, Protocol, seed_counts
from store.vocab.sources import LOCAL

CALIBRATION_SEQUENCES = 256     # sequences of the suite a calibration embeds
WARM_UP = 8                     # embedded first, untimed (allocations, first-batch costs)
ASSUMED_WIDTH = 1024            # dimensions of the rows a probe calibration without weights fits
MATMUL = (1024, 1024, 4096)     # the matrix product `matmul_flops` times (m x k @ k x n)


@dataclass
class Counts:
    """What the dry run notes of each task as `validate_tasks` reads it."""

    splits: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    lengths: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)   # per sequence
    classes: dict[str, np.ndarray] = field(default_factory=dict)   # train rows per class
    train_rows: dict[str, int] = field(default_factory=dict)   # a full fit's training rows
    sample: Sample = field(default_factory=lambda: Sample(CALIBRATION_SEQUENCES))
    sized: dict[str, TaskSize] = field(default_factory=dict)       # the tasks without data

    def size(self, task_id: str, size: TaskSize) -> None:
        """A task without data here, by its size (`store.task_sizes`): classes of equal size."""
        self.sized[task_id] = size
        for name, rows in (("train", size.n_train), ("test", size.n_test)):
            self.splits[task_id, name] = (rows, round(rows * size.length))
            self.lengths[task_id, name] = np.full(rows, round(size.length), dtype=np.int64)
        self.classes[task_id] = np.full(size.n_classes, size.n_train // size.n_classes)
        self.train_rows[task_id] = size.n_train

    def see(self, data: TaskData) -> None:
        for name in SPLITS:
            split = getattr(data, name)
            lengths = np.fromiter(map(len, split.sequences), dtype=np.int64,
                                  count=len(split.sequences))
            self.splits[data.task_id, name] = (len(split), int(lengths.sum()))
            self.lengths[data.task_id, name] = lengths
            self.sample.add(split.sequences)
        self.classes[data.task_id] = data.shot_groups
        self.train_rows[data.task_id] = data.profile.n_train   # variants, not sequences

    def examples(self, task: str, protocol: Protocol, regime: str) -> int:
        """Training examples one cell fits, over all its fits."""
        if protocol.zero_shot:
            return 0
        k, seeds = REGIME_K[regime], seed_counts([protocol])[protocol.hash]
        if k is None:
            fits = 1 if protocol.shares_full_fit else seeds
            return fits * self.train_rows[task]
        return seeds * int(np.minimum(self.classes[task], k).sum())


@dataclass(frozen=True)
class Estimate:
    seconds: float | None   # None: cannot be estimated (the note says why)
    source: str         # runs | store | calibration | params | none
    note: str           # where it came from, in words


@dataclass(frozen=True)
class ProbeEstimate(Estimate):
    protocol: str = ""
    regime: str = ""
    cells: int = 0
    examples: int = 0
    seconds_per_example: float | None = None


@dataclass(frozen=True)
class Reach:
    """What of the sequences to embed a model is given: the run's context policy
    (`engine.encoders.context.pieces`: crop, `--context-length`, windows), then the model's
    limit (`ModelMeta.token_limit`), at `per_nucleotide` tokens a nucleotide."""

    pieces: int                 # sequences, or their windows under windows
    windows: bool               # whether the pieces are windows
    nucleotides: int            # the letters given, after the policy and the limit
    longest: int                # the longest sequence to embed, in nucleotides
    longest_tokens: int         # the tokens of the longest piece given (estimated)
    limit: int | None           # the model's limit in tokens; None: none known
    batch_rows: int | None      # the batch size told (`--batch-size`, the entry's); None: not
    batch_tokens: int           # the longest piece's tokens times the rows of its batch (at
    #                             least the piece: every batch holds one)

    @classmethod
    def of(cls, lengths: np.ndarray, policy: ContextPolicy, limit: int | None,
           per_nucleotide: float, batch_rows: int | None) -> Reach:
        given = pieces(lengths, policy).astype(np.float64)
        tokens = given * per_nucleotide
        if limit:
            given, tokens = (np.minimum(given, limit / per_nucleotide),
                             np.minimum(tokens, limit))
        longest = round(float(tokens.max())) if tokens.size else 0
        return cls(int(given.size), policy.mode == WINDOWS, round(float(given.sum())),
                   int(np.max(lengths)) if len(lengths) else 0, longest, limit, batch_rows,
                   longest * (batch_rows or 1))

    def line(self) -> str:
        """The dry run's line of it (`fill --dry-run`)."""
        limit = (f"its limit {self.limit:,} tokens" if self.limit else
                 "no limit in its catalog entry")
        batch = (f"a batch of {self.batch_rows:,}: ~{self.batch_tokens:,} tokens"
                 if self.batch_rows else f"a batch at least ~{self.batch_tokens:,} tokens")
        return (f"longest sequence {self.longest:,} nt, given as ~{self.longest_tokens:,} "
                f"tokens ({limit}); {self.pieces:,} {'windows' if self.windows else 'sequences'}"
                f", {self.nucleotides:,} nt given; {batch}")


@dataclass(frozen=True)
class ModelPlan:
    model: str
    device: str
    tasks: int
    cells: int
    splits_to_embed: int
    splits_stored: int
    sequences: int
    nucleotides: int
    tokens: int | None             # estimated; None where the encoder counts none
    embedding: Estimate
    probes: tuple[ProbeEstimate, ...]
    jobs: int
    reach: Reach | None = None     # the lengths given (None: nothing to embed)
    memory: MemoryEstimate | None = None   # weights + the largest batch's activations
    memory_fit: str = ""           # whether they fit the device, in words (`memory_fit`)
    memory_warning: str = ""       # where they do not (an estimate: never a refusal)

    @property
    def probe_seconds(self) -> float:
        return sum(p.seconds for p in self.probes)

    @property
    def seconds(self) -> float | None:
        """None where the embedding cannot be estimated."""
        if self.embedding.seconds is None:
            return None
        return self.embedding.seconds + self.probe_seconds / self.jobs


@dataclass(frozen=True)
class DryRun:
    cells_total: int
    cells_missing: int
    jobs: int
    jobs_reason: str
    models: tuple[ModelPlan, ...]
    device: str                     # what it estimates for: this machine, or a profile's row
    sizes: tuple[str, ...] = ()     # where the sizes of the tasks without data come from
    other_kinds: int = 0            # tasks of another kind than classification (`plan`)
    space: Space | None = None      # the embeddings' bytes to write, the free space

    @property
    def seconds(self) -> float:
        """Over the models that could be estimated (`unestimated` names the others)."""
        return sum(m.seconds for m in self.models if m.seconds is not None)

    @property
    def unestimated(self) -> tuple[str, ...]:
        return tuple(m.model for m in self.models if m.seconds is None)


@dataclass(frozen=True)
class Rate:
    """The FLOP/s an estimate from params x tokens divides by, and what it rests on."""

    flops: float
    text: str


@dataclass(frozen=True)
class Calibrated:
    """One calibration: the sample embedded, timed."""

    sequences: int
    nucleotides: int
    tokens: int | None
    seconds: float
    embeddings: np.ndarray


def dry_run(paths: StorePaths, suite: Suite, models: list[ModelMeta], tasks: list[TaskMeta],
            regimes: list[str], options: FillOptions, on_event: Event,
            profile: DeviceProfile | None = None) -> DryRun:
    """The plan and its estimates (see the module), on this machine or, given `profile`, with
    each model's embedding on that device; reads the store, writes nothing."""
    counts = Counts()
    here = [t for t in tasks if suite.has_data(t.task_id)]
    checks = validate_tasks(suite, here, on_event, counts.see)
    hashes, rows = dict(checks.hashes), dict(checks.sizes)
    if len(here) < len(tasks):
        _size_without_data(paths, [t for t in tasks if t not in here], counts, hashes, rows)
    models, _ = trusted_commits(paths, models, options.encoder.trust_remote_code)   # no pins
    the_plan = plan(paths, models, tasks, regimes, list(options.protocols), hashes,
                    options.encoder, suite.kinds)
    for model in {w.model.model_id: w.model for w in the_plan.work}.values():
        preflight(model, options.encoder, device=profile is None, sample=checks.sample)
    refuse_headless(the_plan.work)
    check_imported(paths, [w for w in the_plan.work if w.task.task_id in hashes], hashes)
    jobs, line = probe_jobs(options.jobs, max(rows.values(), default=0))
    measured = Measured(paths, counts, hashes)
    unfetched = _Calibration(None, options, counts.sample, "cpu")   # shared: the same rows
    unfetched.stored = lambda: np.random.RandomState(0).standard_normal(
        (CALIBRATION_SEQUENCES, ASSUMED_WIDTH)).astype(np.float32)
    unfetched.rows = (f"{CALIBRATION_SEQUENCES} random rows of {ASSUMED_WIDTH:,} dimensions "
                      "(the model's embeddings cannot be made without its weights)")
    out = []
    for model in models:
        work = [w for w in the_plan.work if w.model.model_id == model.model_id]
        out.append(_model_plan(paths, model, work, counts, measured, options, jobs,
                               the_plan.revisions, profile, unfetched))
    device = f"the {profile.name} profile ({profile.label}, {profile.basis})" if profile \
        else "this machine"
    space = space_needed(paths, the_plan.work, {s: n for s, (n, _) in counts.splits.items()},
                         hashes, the_plan.revisions, options.encoder)
    return DryRun(the_plan.cells_total, the_plan.cells_missing, jobs,
                  line or f"--jobs {options.jobs}", tuple(out), device,
                  tuple(basis_lines(counts.sized)), len(suite.other_kinds(tasks)), space)


def _size_without_data(paths: StorePaths, tasks: list[TaskMeta], counts: Counts,
                       hashes: dict[str, str], rows: dict[str, int]) -> None:
    """Size the tasks whose data is not here (`store.task_sizes`) into `counts` and `rows`, and
    plan them on the data hash the store last recorded for them, where it has one."""
    ids = [t.task_id for t in tasks]
    known = known_tasks(paths).filter(pl.col("task_id").is_in(ids)).iter_rows(named=True)
    recorded: dict[str, TaskProfile] = {}
    for row in known:
        if (profile := TaskProfile.from_row(row)) is not None:
            recorded[row["task_id"]] = profile
        if row["data_hash"]:
            hashes[row["task_id"]] = row["data_hash"]
    for task_id, size in task_sizes(ids, recorded).items():
        counts.size(task_id, size)
        rows[task_id] = size.n_train + size.n_test
    if not counts.sample.sequences:
        lengths = [s.length for s in counts.sized.values()]
        counts.sample.random(max(1, round(float(np.median(lengths)))))


def weights_here(model: ModelMeta) -> bool:
    """Whether the dry run can load the model's weights without downloading them: a kind that
    loads none, a folder that exists, or a whole cached snapshot of its hub id
    (`engine.encoders.hub.local_checkpoint`)."""
    if not KINDS[model.encoder].source:
        return True
    source = model.path or model.hub_id
    return bool(source) and local_checkpoint(source, model.revision) is not None


def matmul_flops(device: str, precision: str | None) -> float:
    """FLOP/s of a `MATMUL` matrix product on `device` at the run's `precision` (16-bit where
    it names one, else float32), the best of three after a warm-up."""
    import torch  # lazy: torch

    dtype = (torch.bfloat16 if precision and "bfloat16" in precision else
             torch.float16 if precision and "float16" in precision else torch.float32)
    on = "cuda" if device != "cpu" else "cpu"
    m, k, n = MATMUL
    a = torch.ones(m, k, dtype=dtype, device=on)
    b = torch.ones(k, n, dtype=dtype, device=on)
    best = float("inf")
    for i in range(4):
        start = time.perf_counter()
        torch.matmul(a, b)
        if on == "cuda":
            torch.cuda.synchronize()
        if i:
            best = min(best, time.perf_counter() - start)
    return 2.0 * m * k * n / max(best, 1e-9)


def run_device(model: ModelMeta, options: FillOptions) -> str:
    """The device a model's embeddings would be computed on, as the runs table names it: the
    CPU for a weight-free kind, else `--device`'s rule (cuda when available)."""
    kind = KINDS[model.encoder]
    if not (kind.source or kind.user_code):
        return "cpu"
    from engine.encoders.device import device_name, pick_device  # lazy: torch

    return device_name(pick_device(options.encoder.device))


class Measured:
    """What the store measured: the runs table, and the fit seconds of its local result rows."""

    def __init__(self, paths: StorePaths, counts: Counts, hashes: dict[str, str]):
        self.paths, self.counts, self.hashes = paths, counts, hashes

    @cached_property
    def runs(self) -> pl.DataFrame:
        return read_runs(self.paths)

    @cached_property
    def fits(self) -> pl.DataFrame:
        if not self.paths.results.is_dir():
            return pl.DataFrame()
        return query(self.paths, "SELECT model, task, regime, protocol_hash, data_hash, n_train, "
                                 f"fit_seconds, shared_fit FROM results WHERE source = '{LOCAL}' "
                                 "AND fit_seconds IS NOT NULL AND n_train > 0")

    def throughput(self, model: str, device: str, precision: str | None) -> dict | None:
        """The runs table's totals of `model` on `device` at `precision` (None: any)."""
        runs = self.runs.filter(pl.col("model") == model, pl.col("device") == device)
        if precision is not None:
            runs = runs.filter(pl.col("dtype") == precision)
        summary = perf_summary(runs, by=("model", "device"))
        row = summary.row(0, named=True) if summary.height else None
        return row if row and row["seconds"] and row["sequences"] else None

    def tokens_per_nucleotide(self, model: str) -> float | None:
        """The model's tokens per nucleotide where the runs table counted its tokens on data
        these tasks hold now; None when it has not."""
        tokens = nucleotides = 0
        for r in self.runs.filter(pl.col("model") == model,
                                  pl.col("tokens").is_not_null()).iter_rows(named=True):
            known = self.counts.splits.get((r["task"], r["split"]))
            if known is not None and r["task"] not in self.counts.sized \
                    and self.hashes.get(r["task"]) == r["data_hash"]:
                tokens, nucleotides = tokens + r["tokens"], nucleotides + known[1]
        return tokens / nucleotides if tokens and nucleotides else None


def fit_rate(rows: pl.DataFrame) -> tuple[float, int] | None:
    """(seconds per training example, cells) over result rows [model, task, regime,
    protocol_hash, data_hash, n_train, fit_seconds, shared_fit]: per cell, a shared fit once
    (its seconds and examples on every seed's row), else every fit; None without examples."""
    if rows.is_empty():
        return None
    shared = pl.col("shared_fit").fill_null(False).any()
    cells = rows.group_by("model", "task", "regime", "protocol_hash", "data_hash").agg(
        pl.when(shared).then(pl.col("fit_seconds").max())
        .otherwise(pl.col("fit_seconds").sum()).alias("seconds"),
        pl.when(shared).then(pl.col("n_train").max())
        .otherwise(pl.col("n_train").sum()).alias("examples"))
    examples = cells["examples"].sum()
    return (cells["seconds"].sum() / examples, cells.height) if examples else None


def _model_plan(paths: StorePaths, model: ModelMeta, work: list[PairWork], counts: Counts,
                measured: Measured, options: FillOptions, jobs: int,
                revisions: Mapping[str, str | None], profile: DeviceProfile | None,
                unfetched: _Calibration) -> ModelPlan:
    kind = KINDS[model.encoder]
    on_profile = profile is not None and bool(kind.source or kind.user_code)
    device = profile.name if on_profile else run_device(model, options)
    embeddings = EmbeddingStore(paths)
    to_embed = splits_to_embed(paths, model, work, measured.hashes,
                               revisions.get(model.model_id), options.encoder)
    per_nucleotide = measured.tokens_per_nucleotide(model.model_id) or 1.0

    def given(lengths: np.ndarray) -> Reach:
        return Reach.of(lengths, options.encoder.context, model.token_limit, per_nucleotide,
                        options.encoder.batch_size or model.batch_size)

    reach = given(np.concatenate([counts.lengths[s] for s in to_embed])) if to_embed else None
    sequences, nucleotides = (reach.pieces, reach.nucleotides) if reach else (0, 0)
    calibration = _Calibration(model, options, counts.sample, device)
    calibration.given = lambda lengths: given(lengths).nucleotides
    hashed = [w.task.task_id for w in work if w.task.task_id in measured.hashes]
    if kind.imported and hashed:   # nothing embeds: its stored rows stand in
        task = hashed[0]
        expect = embeddings_identity(model, build_encoder(model), measured.hashes[task])
        calibration.stored = lambda: embeddings.load(model.model_id, task, "train",
                                                     expect)[0][:CALIBRATION_SEQUENCES]
    here = weights_here(model)
    if not here:                   # the dry run never downloads: probes fit random rows
        calibration = unfetched
    rate = (Rate(profile.flops, profile.basis_text) if on_profile else
            None if here else _machine_rate(model, options, device))
    embedding, tokens = _embedding(model, options, sequences, nucleotides, measured,
                                   calibration, rate)
    probes = _probes(model.model_id, work, counts, measured, calibration, options)
    dtype = options.encoder.dtype
    memory = estimate(paths, model, reach.longest_tokens, reach.batch_rows, device, dtype,
                      options.encoder.max_batch_tokens) if reach is not None else None
    fit, warning = fit_of(memory, device, dtype) if memory is not None else ("", "")
    return ModelPlan(model.model_id, device, len(work), sum(w.cells for w in work),
                     len(to_embed), 2 * len(work) - len(to_embed), sequences, nucleotides,
                     tokens, embedding, probes, jobs, reach, memory, fit, warning)


def _machine_rate(model: ModelMeta, options: FillOptions, device: str) -> Rate:
    """The FLOP/s of this machine for a model whose weights are not here: its GPU's row of the
    device table, else a matrix product timed here (see the module)."""
    if (row := profile_of(device)) is not None and device != "cpu":
        return Rate(row.flops, f"{row.basis_text}; this machine's {device}")
    precision = told_precision(model, options.encoder)
    flops = matmul_flops(device, precision)
    return Rate(flops, f"the {flops / 1e9:,.1f} GFLOP/s of a {precision or 'float32'} "
                       f"{'x'.join(map(str, MATMUL))} matrix product measured on this {device} "
                       "now (a forward reaches less: the time is a lower bound)")


class _Calibration:
    """The model's calibration, run at the first need and once."""

    def __init__(self, model: ModelMeta | None, options: FillOptions, sample: Sample,
                 device: str):
        self.model, self.options, self.sample, self.device = model, options, sample, device
        self.stored: Callable[[], np.ndarray] | None = None   # embeddings to use instead
        self.rows = "the embedded calibration sample"          # how a probe note names them
        self.fits: dict[tuple[str, str], tuple[float, str]] = {}   # (protocol hash, regime)
        # the nucleotides the model is given of sequences of these lengths (`Reach`)
        self.given: Callable[[np.ndarray], int] = lambda lengths: int(np.sum(lengths))

    @cached_property
    def result(self) -> Calibrated:
        from engine.encoders.streaming import ArraySink  # lazy: torch

        if self.stored is not None:
            rows = self.stored()
            return Calibrated(len(rows), 0, None, 0.0, rows)
        encoder = build_encoder(self.model, self.options.encoder)
        sequences = self.sample.sequences
        encoder.encode_into(sequences[:WARM_UP], ArraySink(min(WARM_UP, len(sequences))))
        sink = ArraySink(len(sequences))
        start = time.perf_counter()
        stats = encoder.encode_into(sequences, sink)
        seconds = max(time.perf_counter() - start, 1e-9)
        lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
        return Calibrated(len(sequences), self.given(lengths), stats.get("n_tokens"),
                          seconds, sink.array)

    @property
    def note(self) -> str:
        r = self.result
        return (f"calibration: {r.sequences} {self.sample.origin} embedded on "
                f"{self.device} in {r.seconds:.2f} s")


def from_runs(model: ModelMeta, options: FillOptions, sequences: int, nucleotides: int,
              measured: Measured) -> tuple[Estimate, int | None] | None:
    """(the seconds to embed `sequences` of `nucleotides` with `model` as `options` run it, the
    tokens they make) from the runs table's throughput of that model on that device at that
    precision (`run_device`, `engine.encoders.told_precision`): tokens over tokens per
    second where it counted the model's tokens per nucleotide on these tasks, else sequences
    over sequences per second;
    None where it has not run so (`fill --dry-run` and fill's ETA, `engine.eta`)."""
    device, precision = run_device(model, options), told_precision(model, options.encoder)
    known = measured.throughput(model.model_id, device, precision)
    if known is None:
        return None
    per_nucleotide = measured.tokens_per_nucleotide(model.model_id)
    on = f"{device} in {precision}" if precision else device
    seen = f"runs table: {known['splits']} split(s) of {model.model_id} embedded on {on}"
    tokens = round(nucleotides * per_nucleotide) if per_nucleotide else (
        round(sequences * known["tokens"] / known["sequences"]) if known["tokens"] else None)
    if per_nucleotide and known["tokens_per_s"]:
        return (Estimate(tokens / known["tokens_per_s"], "runs",
                         f"{seen}, {known['tokens_per_s']:,.0f} tokens/s"), tokens)
    return (Estimate(sequences / known["sequences_per_s"], "runs",
                     f"{seen}, {known['sequences_per_s']:,.0f} sequences/s"), tokens)


def _embedding(model: ModelMeta, options: FillOptions, sequences: int, nucleotides: int,
               measured: Measured, calibration: _Calibration, rate: Rate | None
               ) -> tuple[Estimate, int | None]:
    if not sequences:
        return Estimate(0.0, "none", "nothing to embed: every split is stored"), 0
    if rate is not None:
        return _from_params(model, nucleotides, measured, rate)
    if (known := from_runs(model, options, sequences, nucleotides, measured)) is not None:
        return known
    r = calibration.result
    tokens = round(nucleotides * r.tokens / r.nucleotides) if r.tokens else None
    return (Estimate(nucleotides * r.seconds / r.nucleotides, "calibration", calibration.note),
            tokens)


def _from_params(model: ModelMeta, nucleotides: int, measured: Measured,
                 rate: Rate) -> tuple[Estimate, int | None]:
    """Params x tokens at `rate` (see the module)."""
    per_nucleotide = measured.tokens_per_nucleotide(model.model_id)
    tokens = round(nucleotides * (per_nucleotide or 1.0))
    if not model.params:
        return Estimate(None, "none", f"not estimated: the catalog gives no parameter count "
                                      f"for {model.model_id} (give 'params' in its entry)"), \
            tokens
    counted = ("tokens per nucleotide from the runs table" if per_nucleotide else
               "one a nucleotide assumed, the most a tokenizer makes")
    note = (f"estimated from params x tokens: 2 x {params_text(model.params)} parameters x "
            f"{tokens:,} tokens ({counted}) at {rate.text}")
    return Estimate(2.0 * model.params * tokens / rate.flops, "params", note), tokens


def _probes(model: str, work: list[PairWork], counts: Counts, measured: Measured,
            calibration: _Calibration, options: FillOptions) -> tuple[ProbeEstimate, ...]:
    todo: dict[tuple[Protocol, str], list[str]] = {}
    for w in work:
        for protocol, regimes in w.todo:
            for regime in regimes:
                todo.setdefault((protocol, regime), []).append(w.task.task_id)
    out = []
    for (protocol, regime), tasks in todo.items():
        examples = sum(counts.examples(t, protocol, regime) for t in tasks)
        if protocol.zero_shot:
            rate, note, source = 0.0, f"{protocol.name}: nothing fitted (zero-shot)", "none"
            if protocol.probe is Probe.LLR:
                note += ("; its language model's forward passes (one per test variant, masked; "
                         "two, causal) are not estimated")
        elif (found := stored_fit_rate(measured, model, protocol, regime)) is not None:
            (rate, note), source = found, "store"
        else:
            rate, note = _calibrated_fits(calibration, protocol, regime, options)
            source = "calibration"
        out.append(ProbeEstimate(examples * rate, source, note, protocol.name, regime,
                                 len(tasks), examples, rate))
    return tuple(out)


def stored_fit_rate(measured: Measured, model: str, protocol: Protocol,
                    regime: str) -> tuple[float, str] | None:
    """(seconds per training example, where from) of `protocol` in `regime` as the store's
    local rows measured it: `model`'s where it has some, else every model's; None without
    (`fill --dry-run` and fill's ETA, `engine.eta`)."""
    fits = measured.fits
    same = fits.filter(pl.col("protocol_hash") == protocol.hash,
                       pl.col("regime") == regime) if not fits.is_empty() else fits
    mine = same.filter(pl.col("model") == model) if not same.is_empty() else same
    if (found := fit_rate(mine)) is not None:
        return found[0], f"store: fit seconds of {found[1]} cell(s) of {model}"
    if (found := fit_rate(same)) is not None:
        return found[0], f"store: fit seconds of {found[1]} cell(s) of other models"
    return None


def _calibrated_fits(calibration: _Calibration, protocol: Protocol, regime: str,
                     options: FillOptions) -> tuple[float, str]:
    """Seconds per training example of `protocol` in `regime`, fitted on the calibration
    sample's embeddings (three quarters to train, labels alternating), timed once."""
    key = (protocol.hash, regime)
    if key not in calibration.fits:
        calibration.fits[key] = _fit_calibration(calibration, protocol, regime, options)
    return calibration.fits[key]


def _calibration_targets(kind: TaskKind, y: np.ndarray, cut: int) -> KindTargets:
    """Targets of a regression, tracks or variant calibration over the sample's rows (`y`:
    labels alternating 0, 1): a regression's rows and their labels as reals (tracks,
    multilabel: and their complements), a variant task's pairs of neighbouring rows labelled
    alternately."""
    def rows(n: int) -> np.ndarray:
        return (np.stack([np.arange(n - 1), np.arange(1, n)], 1) if kind is TaskKind.VARIANT
                else np.arange(n))

    labels = y.astype(np.float64 if kind in REAL_VALUED else np.int64)
    if kind in SEVERAL_TARGETS:   # two targets: the labels and their complement
        labels = np.stack([labels, 1 - labels], 1)
    n_test = len(y) - cut
    return KindTargets(kind, rows(cut), labels[:len(rows(cut))], rows(n_test),
                       labels[cut:cut + len(rows(n_test))])


def _fit_calibration(calibration: _Calibration, protocol: Protocol, regime: str,
                     options: FillOptions) -> tuple[float, str]:
    X = calibration.result.embeddings
    y = np.arange(len(X)) % 2
    cut = len(X) * 3 // 4
    with threadpool_limits(PROBE_THREADS):
        if protocol.kind is CLASSIFICATION:
            rows = probe_rows(X[:cut], y[:cut], X[cut:], y[cut:], ((protocol, (regime,)),),
                              options.probe_device)
        else:
            from engine.probes.kinds import kind_rows  # lazy: sklearn

            rows = kind_rows(X[:cut], X[cut:], _calibration_targets(protocol.kind, y, cut),
                             ((protocol, (regime,)),))
    frame = pl.DataFrame([{"model": "", "task": "", "regime": r["regime"], "data_hash": "",
                           "protocol_hash": protocol.hash, "n_train": r["n_train"],
                           "fit_seconds": r["fit_seconds"], "shared_fit": r["shared_fit"]}
                          for r in rows])
    rate, _ = fit_rate(frame)
    return rate, (f"calibration: {protocol.name} fitted on the {cut} training rows of "
                  f"{calibration.rows}")
