"""What does `fill --executor ray` cost, and what would the full benchmark take on 1, 8, 64 GPUs?

1. Scheduling overhead. The same fill (geneb-mini, the k-mer baselines kmer-3, kmer-4, kmer-6,
   every regime of geneb-v1) in fresh temporary stores with the local executor (`--jobs` = the
   CPUs given) and with the Ray executor on a local instance of as many CPUs
   (`ray.init(num_cpus=N)` done before timing: Ray's start-up is not counted, the executor
   joins that instance). Baseline: the local executor, in the same process. Prints the wall time
   of each, the cells, seconds per cell, Ray's overhead per cell ((ray - local) / cells) and
   ray / local, and checks that every store holds identical results (the rows and columns
   `tests/engine/processes.py:results_of` compares). Goal: an overhead per cell small next to
   a cell of the real benchmark (seconds to minutes), and identical results.
2. A projection of geneb-v1 (the 40 official models x 100 tasks x 3 regimes = 12,000 cells),
   every model counted as a GPU model (also those whose kind has no adapter here):
   - a pair's embedding time = its sequences / the model's sequences/s, or its bp (one token
     per bp) / the model's tokens/s;
   - embedding (executor): each model's actors as `engine.cluster.placement.place` gives them on
     G GPUs (`--cpus-per-gpu` CPUs each); an actor embeds its share of the model's pairs back to
     back, largest first; the actors are list-scheduled longest first onto the GPUs (one under
     100M parameters takes half a GPU);
   - pair LPT: the same schedule with every pair free to take any GPU (the bound a finer
     placement could reach);
   - probes = the cells' probe seconds / the probe slots (G x CPUs per GPU, one per probe
     task); a cell's seconds measured here per sequence, scaled to the task's sequences (or
     `--probe-seconds`);
   - wall = max(embedding, probes) + Ray's overhead per cell (measured, at least 0) x cells /
     probe slots.
   Inputs, each labelled with its source: task sizes from the geneb-v1 files (`--data-dir`) or,
   as no task sizes ship with the project, one assumed size for every task; throughput measured
   here on CPU (a tiny BERT from `tests/engine/tiny_models.py`, through the same local fill, its
   figure taken for every model) or from `--throughput` (measured on a GPU: a JSON file
   {model_id: {"sequences_per_s": x} or {"tokens_per_s": y}}, a store whose runs table has
   CUDA runs (each model's tokens/s there, `store.tables.telemetry.perf_summary`; bench/gpu.sh
   leaves one), or one number of tokens/s per GPU for every model; a model it lacks takes its
   slowest figure). With `--throughput` part 1 is skipped (no Ray overhead counted): the
   projection alone, on the probe seconds of `--probe-seconds` or measured here.
   CPU-measured inputs show the scaling model, not real GPU times.

    .venv/bin/python bench/cluster.py                    # about a minute on 2 cores
    .venv/bin/python bench/cluster.py --runs 3 --throughput gpu.json --data-dir DIR
    .venv/bin/python bench/cluster.py --throughput 800000 --probe-seconds 20   # seconds
"""

from __future__ import annotations

import argparse
import heapq
import json
import logging
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.commands.common import duration, positive_int  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402

KMERS = ("kmer-3", "kmer-4", "kmer-6")
RATES = ("sequences_per_s", "tokens_per_s")
ASSUMED_SEQUENCES, ASSUMED_LENGTH = 30_000, 400   # per task, when no task files are given


# -- 1. the measured part ------------------------------------------------------------------

def timed_fill(root: Path, models: list[str], cluster, jobs: int = 1, limit: int | None = None,
               subsample: int | None = None, encoder=None) -> tuple[float, list[dict], Path]:
    """(seconds, events, store) of one fill of geneb-mini (its first `limit` tasks, capped at
    `subsample` sequences) into a fresh store under `root`; the suite is written and the
    models resolved before the clock starts."""
    from engine import mini
    from engine.commands.common import models_of
    from engine.encoders import EncoderOptions
    from engine.fill import FillOptions, run_fill
    from engine.suites import resolve_suite
    from store.paths import resolve_store
    from store.vocab.protocol import REGIMES

    store = Path(tempfile.mkdtemp(prefix="store-", dir=root))
    paths = resolve_store(store)
    mini.materialize(paths.suite_dir("geneb-mini"))     # what fill's first load would do
    suite = resolve_suite("geneb-mini", paths, subsample=subsample)
    metas = models_of(paths, models)
    options = FillOptions(jobs=jobs, cluster=cluster, encoder=encoder or EncoderOptions())
    events: list[dict] = []
    start = time.perf_counter()
    run_fill(paths, suite, metas, list(suite.tasks)[:limit], list(REGIMES), options,
             events.append)
    return time.perf_counter() - start, events, store


def computed(events: list[dict]) -> int:
    return sum(e["event"] == "cell" and e["computed"] for e in events)


def rates_of(events: list[dict]) -> dict[str, dict[str, float]]:
    """Per model: sequences/s (and tokens/s where the encoder counts them) over its pairs."""
    total: dict[str, list] = {}
    for e in events:
        if e["event"] == "embedded":
            t = total.setdefault(e["model"], [0, 0, 0.0])
            t[0] += e["sequences"]
            t[1] = t[1] + e["tokens"] if e["tokens"] is not None and t[1] is not None else None
            t[2] += e["seconds"]
    return {m: {"sequences_per_s": n / s, **({"tokens_per_s": k / s} if k else {})}
            for m, (n, k, s) in total.items() if s > 0}


def compare(runs: int, cpus: int, tmp: Path) -> dict:
    """Local and Ray executor on the same fill, `runs` times each (medians)."""
    import ray

    from engine.cluster import ClusterOptions
    from engine.cluster.executor import LOCAL_OBJECT_STORE
    from tests.engine.processes import results_of

    timed_fill(tmp, ["kmer-3"], None, limit=1)          # warm-up: imports, first allocations
    local = [timed_fill(tmp, list(KMERS), None, jobs=cpus) for _ in range(runs)]
    start = time.perf_counter()
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR, object_store_memory=LOCAL_OBJECT_STORE)
    ray_start = time.perf_counter() - start
    try:
        on_ray = [timed_fill(tmp, list(KMERS), ClusterOptions()) for _ in range(runs)]
    finally:
        ray.shutdown()
    cells = [computed(ev) for _, ev, _ in local + on_ray]
    if len(set(cells)) != 1:
        raise SystemExit(f"the fills computed different numbers of cells: {cells} (local "
                         f"runs first, then Ray)")
    want = results_of(local[0][2])
    same = all(results_of(store).equals(want) for _, _, store in local[1:] + on_ray)
    executor = next(e for e in on_ray[0][1] if e["event"] == "executor")
    return {"local": statistics.median(s for s, _, _ in local),
            "ray": statistics.median(s for s, _, _ in on_ray), "cells": cells[0],
            "rows": want.height, "same": same, "ray_start": ray_start, "executor": executor,
            "rates": rates_of(local[0][1])}


def tiny_bert_rates(tmp: Path, tasks: int, sequences: int) -> dict[str, float]:
    """The tiny BERT's throughput through the local fill on CPU: the first `tasks` tasks,
    `sequences` of each."""
    from transformers.utils import logging as hf_logging

    from engine.encoders import EncoderOptions
    from tests.engine.tiny_models import build

    hf_logging.disable_progress_bar()
    folder = build("bert", tmp / "tiny-bert", max_len=512)   # geneb-mini: up to 500 bp
    _, events, _ = timed_fill(tmp, [str(folder)], None, limit=tasks, subsample=sequences,
                              encoder=EncoderOptions(device="cpu"))
    return rates_of(events)["tiny-bert"]


def probe_per_sequence(tmp: Path, tasks: int) -> tuple[float, int, float]:
    """(seconds per cell per sequence, cells timed, mean sequences per pair): `probe_rows`, one
    BLAS thread as a probe task has, on the k-mer spectra of the first `tasks` tasks."""
    from threadpoolctl import threadpool_limits

    from engine.commands.common import models_of
    from engine.encoders import EncoderOptions, build_encoder
    from engine.probes import probe_rows
    from engine.suites import resolve_suite
    from store.paths import resolve_store
    from store.vocab.protocol import GENEB_V1, REGIMES

    paths = resolve_store(Path(tempfile.mkdtemp(prefix="probe-", dir=tmp)))
    suite = resolve_suite("geneb-mini", paths)
    seconds = sequences = cells = 0
    with threadpool_limits(1):
        for task in suite.tasks[:tasks]:
            data = suite.load(task.task_id)
            for model in models_of(paths, list(KMERS)):
                encoder = build_encoder(model, EncoderOptions())
                split = [(encoder.encode(s.sequences), s.labels) for s in (data.train, data.test)]
                start = time.perf_counter()
                probe_rows(*split[0], *split[1], ((GENEB_V1, tuple(REGIMES)),))
                seconds += time.perf_counter() - start
                sequences += len(data.train) + len(data.test)
                cells += len(REGIMES)
    pairs = cells // len(REGIMES)
    return seconds / cells / (sequences / pairs), cells, sequences / pairs


# -- 2. the projection ----------------------------------------------------------------------

def task_sizes(tmp: Path, data_dir: str | None, sequences: int, length: int
               ) -> tuple[list, str]:
    """([(sequences, mean bp)] per geneb-v1 task, where they come from)."""
    from store.catalog import geneb_v1_tasks

    if data_dir is None:
        n = len(geneb_v1_tasks())
        return [(sequences, length)] * n, (
            f"assumed: every task {sequences:,} sequences of {length:,} bp (no task sizes ship "
            "with the project; --data-dir reads geneb-v1's files)")
    from engine.suites import resolve_suite
    from store.paths import resolve_store

    suite = resolve_suite("geneb-v1", resolve_store(tmp / "sizes"), data_dir)
    sizes = []
    for task in suite.tasks:
        data = suite.load(task.task_id)
        seqs = data.train.sequences + data.test.sequences
        sizes.append((len(seqs), sum(map(len, seqs)) / len(seqs)))
    total = sum(n for n, _ in sizes)
    mean = sum(n * bp for n, bp in sizes) / total
    return sizes, (f"from the geneb-v1 files in {data_dir}: {total:,} sequences, mean "
                   f"{mean:,.0f} bp")


def read_throughput(path: str) -> dict[str, tuple[str, float]]:
    """{model: (rate kind, value)} of `--throughput`: one number of tokens/s (every model, the
    key "*"), a store folder (its runs table's CUDA runs), else a JSON file; ValueError naming
    what is wrong."""
    try:
        value = float(path)
    except ValueError:
        value = None
    if value is not None:
        if not 0 < value < math.inf:
            raise ValueError(f"--throughput {path}: give a positive number of tokens/s")
        return {"*": ("tokens_per_s", value)}
    if Path(path).is_dir():
        return store_throughput(path)
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--throughput {path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"--throughput {path}: not valid JSON ({exc})") from None
    if not isinstance(raw, dict) or not raw:
        raise ValueError(f"--throughput {path}: give an object {{model_id: "
                         f"{{\"sequences_per_s\": x}} or {{\"tokens_per_s\": y}}}}")
    out = {}
    for model, entry in raw.items():
        (kind, value), = entry.items() if isinstance(entry, dict) and len(entry) == 1 else [
            (None, None)]
        if (kind not in RATES or isinstance(value, bool) or not isinstance(value, int | float)
                or not value > 0):
            raise ValueError(f"--throughput {path}: entry {model!r} must be "
                             "{\"sequences_per_s\": x} or {\"tokens_per_s\": y}, one positive "
                             f"number, not {json.dumps(entry)}")
        out[model] = (kind, float(value))
    return out


def store_throughput(folder: str) -> dict[str, tuple[str, float]]:
    """Each model's tokens/s (else sequences/s) over its CUDA runs in a store's runs table."""
    import polars as pl

    from store.paths import resolve_store
    from store.tables.telemetry import perf_summary, read_runs

    runs = read_runs(resolve_store(Path(folder))).filter(pl.col("device") != "cpu")
    out = {}
    for r in perf_summary(runs, by=("model",)).iter_rows(named=True):
        kind = "tokens_per_s" if r["tokens_per_s"] else "sequences_per_s"
        if r[kind]:
            out[r["model"]] = (kind, float(r[kind]))
    if not out:
        raise ValueError(f"--throughput {folder}: its runs table has no run on a GPU")
    return out


def pair_seconds(rate: tuple[str, float], sizes: list) -> list[float]:
    kind, value = rate
    return [(n if kind == "sequences_per_s" else n * bp) / value for n, bp in sizes]


def makespan(jobs: list[tuple[float, float]], gpus: int) -> float:
    """List schedule, longest first, of (seconds, GPU share) jobs on `gpus` GPUs: a job takes
    the slots its share needs on the GPU where they are free first."""
    from engine.cluster.placement import SHARED_GPU

    per = round(1 / SHARED_GPU)
    free = [[0.0] * per for _ in range(gpus)]
    end = 0.0
    for seconds, share in sorted(jobs, reverse=True):
        need = max(1, round(share * per))
        gpu = min(free, key=lambda slots: sorted(slots)[need - 1])
        chosen = sorted(range(per), key=gpu.__getitem__)[:need]
        start = max(gpu[s] for s in chosen)
        for s in chosen:
            gpu[s] = start + seconds
        end = max(end, start + seconds)
    return end


def split_longest_first(seconds: list[float], actors: int) -> list[float]:
    """Each actor's busy time when `actors` pull a model's pairs, largest first."""
    busy = [0.0] * actors
    for s in sorted(seconds, reverse=True):
        heapq.heapreplace(busy, busy[0] + s)
    return busy


def project(times: dict[str, list[float]], models: dict, sizes: list, gpus: int,
            cpus_per_gpu: int, probe_cell: list[float], overhead: float) -> dict:
    """The projection on `gpus` GPUs (see the module docstring)."""
    from engine.cluster.placement import gpus_for, place
    from store.vocab.protocol import REGIMES

    placements = place({m: len(sizes) for m in models}, models, gpus * cpus_per_gpu, gpus,
                       None, 1)
    actors, pairs, asked = [], [], 0.0
    for p in placements:
        actors += [(busy, p.gpus) for busy in split_longest_first(times[p.model_id], p.actors)]
        pairs += [(s, gpus_for(models[p.model_id], gpus, None)[0]) for s in times[p.model_id]]
        asked += p.gpus * p.actors
    slots = gpus * cpus_per_gpu
    cells = len(models) * len(sizes) * len(REGIMES)
    probes = len(models) * len(REGIMES) * sum(probe_cell) / slots
    embedding = makespan(actors, gpus)
    ray = max(0.0, overhead) * cells / slots
    return {"asked": asked, "embedding": embedding, "pairs": makespan(pairs, gpus),
            "probes": probes, "ray": ray, "wall": max(embedding, probes) + ray}


def print_measured(args, m: dict, bert: dict | None, per_seq: float, probe_cells: int,
                   probe_n: float) -> float:
    """Print part 1 and the measured inputs; returns Ray's overhead per cell."""
    from store.vocab.protocol import REGIMES

    cells = m["cells"]
    print(f"geneb-mini x {', '.join(KMERS)} x {len(REGIMES)} regimes, fresh stores, median of "
          f"{args.runs} run(s) each; local executor --jobs {args.cpus}; Ray executor on a local "
          f"instance, ray.init(num_cpus={args.cpus}) before timing ({m['ray_start']:.1f} s, "
          f"not counted; {m['executor']['cpus']:g} CPUs, {m['executor']['gpus']:g} GPUs)")
    print(f"{'executor':10} {'wall':>9} {'cells':>6} {'s/cell':>8}")
    for name in ("local", "ray"):
        print(f"{name:10} {m[name]:7.2f} s {cells:6} {m[name] / cells:8.3f}")
    overhead = (m["ray"] - m["local"]) / cells
    print(f"Ray overhead per cell: {overhead:+.3f} s ((ray - local) / cells); "
          f"ray / local: {m['ray'] / m['local']:.2f}x")
    print(f"results: {'identical' if m['same'] else 'DIFFERENT'} in every store "
          f"({m['rows']} rows, the columns of tests/engine/processes.py:results_of)")

    print("embedding throughput, measured here on CPU (local executor):")
    measured = dict(m["rates"], **({"tiny-bert": bert} if bert else {}))
    for model, r in measured.items():
        tokens = f", {r['tokens_per_s']:,.0f} tokens/s" if "tokens_per_s" in r else ""
        print(f"  {model:10} {r['sequences_per_s']:10,.0f} sequences/s{tokens}")
    probe_label = (f"{args.probe_seconds:g} s per cell (--probe-seconds)"
                   if args.probe_seconds else
                   f"measured here on CPU: {per_seq * 1000:.3f} s per cell per 1,000 sequences "
                   f"(probe_rows, 1 BLAS thread, {probe_cells} cells of the k-mer baselines, "
                   f"{probe_n:,.0f} sequences per pair), scaled to each task's sequences")
    print(f"probes: {probe_label}")
    return overhead


def given_times(given: dict, models: dict, sizes: list, source: str
                ) -> tuple[dict[str, list[float]], str]:
    """({model: its pairs' embedding seconds}, where from) of the `--throughput` figures; a
    model they lack takes the slowest."""
    times_of = {i: pair_seconds(r, sizes) for i, r in given.items()}
    slowest = max(times_of, key=lambda i: sum(times_of[i]))
    have = sum(i in given for i in models)
    label = (f"{given['*'][1]:,.0f} tokens/s per GPU for every model ({source})" if "*" in given
             else f"from {source}: {have} of {len(models)} models; the others take its "
                  f"slowest figure ({slowest})")
    return {i: times_of.get(i, times_of[slowest]) for i in models}, label


def print_projection(args, m: dict, bert: dict | None, per_seq: float, given: dict | None,
                     sizes: list, sizes_from: str, overhead: float) -> None:
    """Print part 2, each input labelled with where it came from."""
    from store.catalog import load_models, official_model_ids
    from store.vocab.protocol import REGIMES

    models = {i: replace(meta, encoder="hf") for i, meta in load_models().items()
              if i in official_model_ids()}                  # every one as a GPU model
    if given:
        times, rate_label = given_times(given, models, sizes, args.throughput)
    else:
        ref, r = ("tiny-bert", bert) if bert else ("kmer-6", m["rates"]["kmer-6"])
        kind = "tokens_per_s" if "tokens_per_s" in r else "sequences_per_s"
        times = dict.fromkeys(models, pair_seconds((kind, r[kind]), sizes))
        rate_label = (f"measured here on CPU: {ref}'s {r[kind]:,.0f} {kind.replace('_per_s', '')}"
                      f"/s for every one of the {len(models)} models")
    probe_cell = [args.probe_seconds or per_seq * n for n, _ in sizes]
    n_cells = len(models) * len(sizes) * len(REGIMES)
    print(f"\nprojection: geneb-v1, {len(models)} official models x {len(sizes)} tasks x "
          f"{len(REGIMES)} regimes = {n_cells:,} cells")
    print(f"  task sizes: {sizes_from}")
    print(f"  embedding throughput: {rate_label}; a pair takes its sequences / sequences/s or "
          "its bp (one token per bp) / tokens/s")
    print(f"  executor: actors per model as engine.cluster.placement.place gives them "
          f"({args.cpus_per_gpu} CPUs per GPU), each embedding its pairs back to back, "
          "scheduled longest first; pair LPT: every pair free to take any GPU (the bound)")
    print(f"  probes: cells x seconds per cell / (GPUs x {args.cpus_per_gpu} CPUs, one per "
          f"probe task); Ray overhead: {max(0.0, overhead):.3f} s per cell x cells / those "
          "slots; wall = max(embedding, probes) + Ray overhead")
    print(f"{'GPUs':>5} {'asked':>6} {'embedding':>10} {'pair LPT':>10} {'probes':>10} "
          f"{'Ray':>8} {'wall':>10}")
    for g in args.gpus:
        p = project(times, models, sizes, g, args.cpus_per_gpu, probe_cell, overhead)
        print(f"{g:5} {p['asked']:6g} {duration(p['embedding']):>10} {duration(p['pairs']):>10} "
              f"{duration(p['probes']):>10} {duration(p['ray']):>8} {duration(p['wall']):>10}")
    print("  asked: the GPUs the placement's actors ask for (more than G wait in Ray's queue)")
    cpu_inputs = [what for what, given_elsewhere in (("embedding throughput", given),
                                                      ("probe times", args.probe_seconds))
                  if not given_elsewhere]
    if cpu_inputs:
        print(f"  {' and '.join(cpu_inputs)} measured on this machine's CPU: the projection "
              "shows the scaling model, not real GPU times")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=positive_int, default=1, metavar="N",
                    help="timed fills of each executor (median; default 1)")
    ap.add_argument("--cpus", type=positive_int, default=2, metavar="N",
                    help="the Ray instance's CPUs and the local executor's --jobs (default 2)")
    ap.add_argument("--no-hf", action="store_true",
                    help="skip the tiny BERT (the projection then uses kmer-6's throughput)")
    ap.add_argument("--hf-tasks", type=positive_int, default=2, metavar="N",
                    help="geneb-mini tasks the tiny BERT embeds (default 2)")
    ap.add_argument("--hf-sequences", type=positive_int, default=500, metavar="N",
                    help="sequences of each of those tasks (a stratified subsample; default 500)")
    ap.add_argument("--probe-tasks", type=positive_int, default=2, metavar="N",
                    help="geneb-mini tasks whose k-mer probes are timed per cell (default 2)")
    ap.add_argument("--throughput", metavar="FILE|STORE|TOKENS_PER_S",
                    help='JSON {model_id: {"sequences_per_s": x} or {"tokens_per_s": y}}, a '
                         "store (its runs table's GPU runs) or tokens/s per GPU for every model "
                         "(e.g. measured by bench/gpu.sh); models it lacks take its slowest "
                         "figure; skips the Ray comparison")
    ap.add_argument("--probe-seconds", type=float, metavar="S",
                    help="seconds per probe cell at geneb-v1's shapes (e.g. from "
                         "bench/probe.py), instead of the per-sequence figure measured here")
    ap.add_argument("--data-dir", metavar="DIR", help="geneb-v1 task files: their real sizes")
    ap.add_argument("--task-sequences", type=positive_int, default=ASSUMED_SEQUENCES, metavar="N",
                    help=f"assumed sequences per task without --data-dir "
                         f"(default {ASSUMED_SEQUENCES:,})")
    ap.add_argument("--task-length", type=positive_int, default=ASSUMED_LENGTH, metavar="BP",
                    help=f"assumed mean bp per task without --data-dir (default {ASSUMED_LENGTH})")
    ap.add_argument("--gpus", type=positive_int, nargs="+", default=[1, 8, 64], metavar="G",
                    help="GPU counts to project (default 1 8 64)")
    ap.add_argument("--cpus-per-gpu", type=positive_int, default=8, metavar="N",
                    help="CPUs per GPU of the projected cluster, one per probe task (default 8)")
    args = ap.parse_args()
    if args.probe_seconds is not None and not 0 < args.probe_seconds < math.inf:
        ap.error(f"--probe-seconds {args.probe_seconds:g}: give a positive number of seconds")
    try:
        given = read_throughput(args.throughput) if args.throughput else None
    except ValueError as exc:
        ap.error(str(exc))
    with tempfile.TemporaryDirectory(prefix="geneb-cluster-") as name:
        tmp = Path(name)
        try:
            sizes, sizes_from = task_sizes(tmp, args.data_dir, args.task_sequences,
                                           args.task_length)
        except GenebError as exc:
            ap.error(str(exc))
        if given is not None:       # the projection alone
            m, bert, overhead = {}, None, 0.0
            per_seq = 0.0 if args.probe_seconds else probe_per_sequence(tmp,
                                                                        args.probe_tasks)[0]
        else:
            m = compare(args.runs, args.cpus, tmp)
            bert = None if args.no_hf else tiny_bert_rates(tmp, args.hf_tasks,
                                                           args.hf_sequences)
            per_seq, probe_cells, probe_n = probe_per_sequence(tmp, args.probe_tasks)
    if given is None:
        overhead = print_measured(args, m, bert, per_seq, probe_cells, probe_n)
    print_projection(args, m, bert, per_seq, given, sizes, sizes_from, overhead)
    return 0


if __name__ == "__main__":
    sys.exit(main())
