"""geneb-v1-array-api against the exact CPU path: the largest |MCC difference| and the speed.

Both fit geneb-v1's probe (scikit-learn's `LogisticRegression(max_iter=1000)`, lbfgs, unscaled
float32 features, the geneb-v1 few-shot draws, full + 10-shot + 1-shot over five seeds): the exact
path on numpy arrays (`engine.probes.exact`), the variant on torch tensors through scikit-learn's
array-API dispatch (`engine.probes.array_api`) on `--device` (CUDA where present). Fixtures: the
13 geneb-mini tasks (`engine.mini`) as k-mer profiles (k = 3, 4, 6); where the k-mer encoder
cannot be imported (a bare GPU machine without zarr), synthetic embedding-like cells
(`bench/probe.py`'s) instead, which the first line says. Prints

- `max |MCC difference| ...` per regime, with how many rows differ at all;
- `<label>: <variant> s vs <exact> s: <exact / variant>x` for the whole fixture set (above 1x: the
  variant is faster), and for one cell of the benchmark's realistic shape (n = 30,000, d = 1,024).

    .venv/bin/python bench/array_api.py            # 1-3 minutes on 2 CPU cores
    .venv/bin/python bench/array_api.py --quick    # smoke test
    python bench/array_api.py --device cuda        # on a GPU (bench/gpu.sh)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from engine.probes.array_api import run_cells  # noqa: E402
from engine.probes.exact import probe_cell  # noqa: E402
from engine.probes.problems import resolve_device  # noqa: E402
from store.vocab.protocol import GENEB_V1_ARRAY_API, REGIMES  # noqa: E402

Cell = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def fixtures(quick: bool) -> tuple[str, list[tuple[str, Cell]]]:
    """(what they are, [(label, cell)]): geneb-mini k-mer cells, else synthetic ones."""
    from engine import mini
    try:
        from engine.encoders.kmer import KmerEncoder
    except ImportError as exc:
        from bench.probe import synthetic_cell
        shapes = [(300, 100, 16, 2)] if quick else [(2000, 500, 256, k) for k in (2, 4, 10)]
        return (f"synthetic cells (the k-mer encoder is not importable here: {exc})",
                [(f"synthetic n={n} d={d} {k} classes", synthetic_cell(n, m, d, k))
                 for n, m, d, k in shapes])
    cells = []
    specs, ks = (mini.SPECS[:2], (3,)) if quick else (mini.SPECS, (3, 4, 6))
    for spec in specs:
        seqs, y, splits = mini.generate(spec)
        train = np.array([s == "train" for s in splits])
        for k in ks:
            X = KmerEncoder(k).encode(seqs)
            cells.append((f"{spec.task_id} kmer-{k}", (X[train], y[train], X[~train], y[~train])))
    return (f"{len(specs)} geneb-mini tasks as k-mer profiles (k = {', '.join(map(str, ks))})",
            cells)


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two tasks, k = 3 (smoke test)")
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    a = ap.parse_args(argv)
    device = resolve_device(a.device)
    warnings.simplefilter("ignore", ConvergenceWarning)
    what, cells = fixtures(a.quick)
    print(f"# fixtures: {what}; variant on {device}", flush=True)
    worst: dict[str, tuple[float, str]] = {r: (0.0, "") for r in REGIMES}
    differ = {r: 0 for r in REGIMES}
    n_rows = {r: 0 for r in REGIMES}
    t_exact = t_variant = 0.0
    for label, cell in cells:
        t, exact = timed(probe_cell, *cell, REGIMES)
        t_exact += t
        t, (ours,) = timed(run_cells, *cell, [GENEB_V1_ARRAY_API], REGIMES, device)
        t_variant += t
        for a_row, b_row in zip(ours, exact, strict=True):
            regime, diff = a_row["regime"], abs(a_row["mcc"] - b_row["mcc"])
            differ[regime] += diff > 0
            n_rows[regime] += 1
            if diff > worst[regime][0]:
                worst[regime] = (diff, f"{label} seed {a_row['seed']}")
    for regime in REGIMES:
        value, where = worst[regime]
        print(f"max |MCC difference| geneb-v1-array-api ({device}) vs the exact CPU path, "
              f"{regime}: {value:.4f}{f' ({where})' if value else ''}; rows that differ: "
              f"{differ[regime]} of {n_rows[regime]}", flush=True)
    print(f"{len(cells)} cells: geneb-v1-array-api ({device}) vs exact CPU path: "
          f"{t_variant:.2f} s vs {t_exact:.2f} s: {t_exact / t_variant:.2f}x", flush=True)
    if not a.quick:
        from bench.probe import synthetic_cell
        for k in (2, 10):
            cell = synthetic_cell(30_000, 3_000, 1_024, k)
            te, _ = timed(probe_cell, *cell, REGIMES)
            tv, _ = timed(run_cells, *cell, [GENEB_V1_ARRAY_API], REGIMES, device)
            print(f"one cell n=30,000 d=1,024 {k} classes: geneb-v1-array-api ({device}) vs exact "
                  f"CPU path: {tv:.2f} s vs {te:.2f} s: {te / tv:.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
