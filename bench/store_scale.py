"""Does the store stay fast as GENEB grows? Reads of a 200-model store against a 40-model one.

Builds two synthetic stores of N models x the 100 geneb-v1 tasks x 15 rows (3 regimes x 5
seeds), written as `fill` writes them: pair by pair, one commit each through
`store.tables.pair_commit.append_pair` (the done-check under the pair's commit lock included),
partitions
compacted as they fill up and all of them at the end, from `--writers` processes at once. Then
times, as separate processes, and prints the median wall time and peak memory (max RSS) of:

- `geneb-engine report --json` (every analysis of the paper),
- `geneb-engine status --source local` (geneb-v1; no task files: the store's current data),
- the dashboard's first frame with the main table filled (headless, 100x30),

each against the 40-model store of the same run. Goal: the 200-model store within 2x of the
40-model one, and `report` under 2 s and 500 MB.

    .venv/bin/python bench/store_scale.py [--models 40 200] [--writers 2] [--runs 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DASHBOARD = r"""
import asyncio, sys
from geneb_tui.app import GenebApp
from store.paths import resolve_store

async def main():
    app = GenebApp(resolve_store(sys.argv[1]))
    async with app.run_test(size=(100, 30)) as pilot:
        while app.view is None:
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.pause()
        print(f"rows={len(app.view.rows)}", flush=True)

asyncio.run(main())
"""


def model_id(i: int) -> str:
    return f"synthetic-{i:03d}"


def write_models(root: str, first: int, count: int) -> None:
    """One writer process: the pairs of models first..first+count-1, one commit per pair."""
    import numpy as np

    from store.catalog import geneb_v1_tasks
    from store.paths import resolve_store
    from store.tables.pair_commit import append_pair
    from store.vocab.protocol import GENEB_V1, REGIMES, SEEDS, seed_counts

    paths = resolve_store(root)
    seeds = seed_counts([GENEB_V1])
    for i in range(first, first + count):
        rng = np.random.default_rng(i)
        skill = rng.uniform(0.2, 0.6)
        for task in geneb_v1_tasks():
            rows = []
            for regime in REGIMES:
                shared = rng.uniform(0, 1, 3)
                for seed in SEEDS:
                    mcc, acc, f1 = shared if regime == "full" else rng.uniform(0, 1, 3)
                    rows.append({
                        "model": model_id(i), "task": task.task_id, "regime": regime,
                        "seed": seed, "probe": "logreg", "protocol": GENEB_V1.name,
                        "protocol_hash": GENEB_V1.hash, "mcc": skill * mcc, "acc": acc,
                        "f1_macro": f1, "n_train": 1000, "n_test": 200, "degenerate": False,
                        "converged": False, "n_iter": 1000, "shared_fit": regime == "full",
                        "fit_seconds": 0.1, "source": "local", "data_revision": "synthetic",
                        "data_hash": f"h-{task.task_id}"[:24], "model_revision": None,
                        "engine_version": "bench"})
            append_pair(paths, rows, model=model_id(i), task=task.task_id,
                        data_hash=f"h-{task.task_id}"[:24], revision=None, seeds=seeds)


def build(root: Path, n_models: int, writers: int) -> float:
    """The store at `root`; returns the seconds per pair commit (wall / pairs)."""
    from store.catalog import ModelMeta, geneb_v1_tasks
    from store.paths import resolve_store
    from store.tables.catalogs import register_models, register_tasks
    from store.tables.results import compact, vacuum

    paths = resolve_store(root)
    tasks = geneb_v1_tasks()
    register_tasks(paths, tasks, {t.task_id: f"h-{t.task_id}"[:24] for t in tasks})
    register_models(paths, [ModelMeta(model_id(i), f"Synthetic {i}", 10**6 * (i + 1),
                                      "T-enc", "Transformer encoder", "k-mer", "k-mer", "human")
                            for i in range(n_models)])
    start = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")
    share = -(-n_models // writers)
    procs = [ctx.Process(target=write_models, args=(str(root), w * share,
                                                    min(share, n_models - w * share)))
             for w in range(writers) if w * share < n_models]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        if p.exitcode:
            raise SystemExit(f"a writer failed (exit {p.exitcode})")
    compact(paths)       # as `fill` does at the end of a run
    vacuum(paths)
    return (time.perf_counter() - start) / (n_models * len(tasks))


def run_measured(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of one command run as its own process (reaped
    with wait4, which gives that child's own peak memory)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, out.decode()


def commands(store: Path) -> dict[str, list[str]]:
    engine = [sys.executable, "-m", "engine.cli"]
    return {"report --json": [*engine, "report", "--json", "--store", str(store)],
            "status": [*engine, "status", "--source", "local", "--store", str(store)],
            "dashboard table": [sys.executable, "-c", DASHBOARD, str(store)]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, nargs=2, default=[40, 200], metavar=("BASE", "BIG"))
    ap.add_argument("--writers", type=int, default=2, help="writer processes (default 2)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="build the stores here and keep them")
    args = ap.parse_args()
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="geneb-scale-")
    base = args.keep or Path(tmp.name)
    figures: dict[int, dict[str, tuple[float, float]]] = {}
    for n in args.models:
        store = base / f"models{n}"
        if not (store / "results").exists():
            per_pair = build(store, n, args.writers)
            print(f"built {store}: {n} models x 100 tasks x 15 rows, {n * 100} pair commits "
                  f"({per_pair * 1000:.1f} ms per pair with {args.writers} writers)", flush=True)
        from store.paths import resolve_store
        from store.tables.results import read_state

        state = read_state(resolve_store(store))
        print(f"  table version {state.version}, {len(state.files)} data files", flush=True)
        figures[n] = {}
        for name, cmd in commands(store).items():
            run_measured(cmd)   # warm the file cache
            runs = [run_measured(cmd) for _ in range(args.runs)]
            figures[n][name] = (statistics.median(r[0] for r in runs),
                                max(r[1] for r in runs))
    small, big = args.models
    print(f"\nmedian of {args.runs} runs, each a separate process (interpreter start included)")
    print(f"{'':18} {small:>4} models        {big:>4} models        ratio (time)")
    for name in figures[small]:
        (t0, m0), (t1, m1) = figures[small][name], figures[big][name]
        print(f"{name:18} {t0:6.2f} s {m0:6.0f} MB   {t1:6.2f} s {m1:6.0f} MB   {t1 / t0:5.2f}x")
    t_report, m_report = figures[big]["report --json"]
    ok = all(figures[big][k][0] <= 2 * figures[small][k][0] for k in figures[small])
    print(f"goal: {big} models within 2x of {small} ({'met' if ok else 'NOT met'}); report "
          f"{t_report:.2f} s (< 2 s: {'met' if t_report < 2 else 'NOT met'}), "
          f"{m_report:.0f} MB (< 500 MB: {'met' if m_report < 500 else 'NOT met'})")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
