"""geneb-v1-array-api against the exact CPU path: the largest |MCC difference| and the speed.

Both fit geneb-v1's probe (scikit-learn's `LogisticRegression(max_iter=1000)`, lbfgs, unscaled
float32 features, the geneb-v1 few-shot draws, full + 10-shot + 1-shot over five seeds): the exact
path on numpy arrays (`engine.probes.exact`), the variant as `fill` runs it
(`engine.probes.probe_rows`): its full regime on torch tensors through scikit-learn's array-API
dispatch (`engine.probes.array_api`) on `--device` (CUDA where present), its few-shot regimes on
the exact CPU path (`Protocol.few_shot_solver`). Fixtures: the 13 geneb-mini tasks
(`engine.mini`) as k-mer profiles (k = 3, 4, 6); where the k-mer encoder cannot be imported (a
bare GPU machine without zarr), synthetic embedding-like cells (`bench/probe.py`'s) instead,
which the first line says. Prints

- `max |MCC difference| ...` per regime, with how many rows differ at all;
- `<label>: <variant> s vs <exact> s: <exact / variant>x` for the full regime and for the whole
  protocol over the fixture set (above 1x: the variant is faster), and for the full regime of
  one cell of the benchmark's realistic shape (n = 30,000, d = 1,024).

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

from engine.probes import probe_rows  # noqa: E402
from engine.probes.exact import probe_cell  # noqa: E402
from engine.probes.problems import resolve_device  # noqa: E402
from store.vocab.protocol import FEW_SHOT_REGIMES, GENEB_V1_ARRAY_API, REGIMES  # noqa: E402

PARTS: tuple[tuple[str, ...], ...] = (("full",), FEW_SHOT_REGIMES)
"""The regimes timed apart: the full regime (the one the variant runs on `--device`), then the
few-shot ones (the exact CPU path in both)."""

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
    t_exact = {part: 0.0 for part in PARTS}
    t_variant = {part: 0.0 for part in PARTS}
    for label, cell in cells:
        for part in PARTS:
            t, exact = timed(probe_cell, *cell, part)
            t_exact[part] += t
            t, ours = timed(probe_rows, *cell, ((GENEB_V1_ARRAY_API, part),), device)
            t_variant[part] += t
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
    full = PARTS[0]
    for what, tv, te in (("full regime", t_variant[full], t_exact[full]),
                         ("all regimes", sum(t_variant.values()), sum(t_exact.values()))):
        print(f"{len(cells)} cells, {what}: geneb-v1-array-api ({device}) vs exact CPU path: "
              f"{tv:.2f} s vs {te:.2f} s: {te / tv:.2f}x", flush=True)
    if not a.quick:
        from bench.probe import synthetic_cell
        for k in (2, 10):
            cell = synthetic_cell(30_000, 3_000, 1_024, k)
            te, _ = timed(probe_cell, *cell, full)
            tv, _ = timed(probe_rows, *cell, ((GENEB_V1_ARRAY_API, full),), device)
            print(f"one cell n=30,000 d=1,024 {k} classes, full regime: geneb-v1-array-api "
                  f"({device}) vs exact CPU path: {tv:.2f} s vs {te:.2f} s: {te / tv:.2f}x",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
