"""Probe benchmark: the official harness loop, our geneb-v1 path and the batched torch solver.

Synthetic embedding-like features (float32, as the official extractors return them: a decaying
spectrum under a random rotation, per-feature offsets, a planted linear signal) for one
(model, task) cell with 2 and with 10 classes. Each comparison prints one line ending in a ratio
`<label>: <ours> s vs <reference> s: <reference / ours>x` (above 1x: ours is faster):

- official loop: the harness's `fit_eval` for full, 10-shot and 1-shot (5 full fits + 10 k-shot
  fits, scikit-learn `LogisticRegression(max_iter=1000, random_state=seed)`, sequential, on the
  float32 embeddings; scikit-learn's lbfgs keeps float32, so its loss and gradient run in float32)
  vs our geneb-v1 path (`engine.probes.exact.probe_cell`: the full fit once, same k-shot fits); the
  metrics must be identical.
- scikit-learn converged (StandardScaler + `LogisticRegression(max_iter=10_000, tol=1e-6)` on
  float64 features: the same objective, tolerance and dtype; 1 full + 10 k-shot fits, sequential)
  vs the batched solver (`geneb-v1-converged`: the k-shot fits of the cell in one batch, tolerance
  1e-6, float64), on the CPU and, where present, on CUDA; with `--sweep`, the same for the
  five-protocol C sweep (C = 0.01 ... 100), and its full regime alone: the five full-regime
  problems of the sweep (`engine.probes.cell`) vs five scikit-learn fits, one per C, printed as
  `five-value C sweep, full regime: batched vs five scikit-learn fits: <ratio>x`.
- the host reads (`host_reads`: calls of the Tensor methods that wait for a GPU) of the batched
  full-regime fit, against its iterations: on CUDA one per `engine.probes.lbfgs.CHECK_EVERY`
  evaluations, not one per iteration and line-search trial (on the CPU, where a read costs
  nothing, the solver reads after every evaluation).

Every fit runs with `engine.probes.PROBE_THREADS` BLAS threads, as `fill` runs probes.

    python bench/probe.py            # n=30,000 train rows, d=1,024 (several minutes on 2 cores)
    python bench/probe.py --quick    # small shapes, seconds (smoke test)
    python bench/probe.py --sweep    # also the C sweep (adds about as much time again)
    python bench/probe.py --sweep --skip-official --n 10000 --d 256   # other shapes
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.probes import PROBE_THREADS  # noqa: E402
from engine.probes.cell import run_cells  # noqa: E402
from engine.probes.exact import evaluate, few_shot_indices, probe_cell  # noqa: E402
from engine.probes.lbfgs import check_interval  # noqa: E402
from store.vocab.protocol import (  # noqa: E402
    GENEB_V1_CONVERGED,
    REGIME_K,
    REGIMES,
    SEEDS,
    sweep_protocols,
)

Cell = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def synthetic_cell(n: int, n_test: int, d: int, k: int, seed: int = 0) -> Cell:
    """Train/test embeddings (float32) and labels with a planted linear signal."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n + n_test, d))
    spectrum = 4.0 / (1.0 + np.arange(d)) ** 0.7
    rotation, _ = np.linalg.qr(rng.normal(size=(d, d)))
    X = ((Z * spectrum) @ rotation + rng.normal(size=d)).astype(np.float32)
    r = min(32, d)  # the signal lives in the leading components
    logits = Z[:, :r] @ rng.normal(size=(r, k)) * 0.6 + rng.gumbel(size=(n + n_test, k))
    y = np.argmax(logits, axis=1)
    return X[:n], y[:n], X[n:], y[n:]


def official_loop(X: np.ndarray, y: np.ndarray, X_test: np.ndarray, y_test: np.ndarray) -> list:
    """The official harness's fit_eval over full, 10-shot and 1-shot: 15 sequential fits."""
    scores = []
    for regime in REGIMES:
        k = REGIME_K[regime]
        for seed in SEEDS:
            idx = np.arange(len(y)) if k is None else few_shot_indices(y, k, seed)
            clf = LogisticRegression(max_iter=1000, random_state=seed).fit(X[idx], y[idx])
            scores.append(evaluate(y_test, clf.predict(X_test))["mcc"])
    return scores


def sklearn_converged(X: np.ndarray, y: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
                      Cs: tuple[float, ...], regimes: tuple[str, ...] = REGIMES) -> list:
    """StandardScaler + LogisticRegression to the converged protocol's tolerance, on float64
    features: per C, 1 full fit and 10 k-shot fits (those of `regimes`)."""
    X = X.astype(np.float64)
    scores = []
    for C in Cs:
        for regime in regimes:
            k = REGIME_K[regime]
            for seed in SEEDS[:1] if k is None else SEEDS:
                idx = np.arange(len(y)) if k is None else few_shot_indices(y, k, seed)
                clf = make_pipeline(StandardScaler(), LogisticRegression(
                    C=C, max_iter=10_000, tol=GENEB_V1_CONVERGED.tol))
                clf.fit(X[idx], y[idx])
                scores.append(evaluate(y_test, clf.predict(X_test))["mcc"])
    return scores


SYNCING = ("item", "tolist", "cpu", "numpy", "nonzero", "__bool__", "__float__", "__int__")
"""Tensor methods that, on a GPU, wait for the device to return a host value."""


@contextmanager
def host_reads() -> Iterator[Counter]:
    """Count, by name, the calls of the `SYNCING` methods of every tensor made inside (on any
    device: a CPU run counts the reads it would make on a GPU; a call a counted one makes
    itself counts too)."""
    counts: Counter = Counter()
    originals = {name: getattr(torch.Tensor, name) for name in SYNCING}

    def counted(name: str, method: Callable) -> Callable:
        def call(self, *args, **kwargs):
            counts[name] += 1
            return method(self, *args, **kwargs)
        return call

    try:
        for name, method in originals.items():
            setattr(torch.Tensor, name, counted(name, method))
        yield counts
    finally:
        for name, method in originals.items():
            setattr(torch.Tensor, name, method)


def timed(fn: Callable[..., list], *args: object) -> tuple[float, list]:
    """Wall seconds of fn(*args), and its result."""
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def line(label: str, ours: float, reference: float) -> None:
    """`<label>: <ours> s vs <reference> s: <reference / ours>x` (x > 1: ours is faster)."""
    print(f"{label}: {ours:.2f} s vs {reference:.2f} s: {reference / ours:.1f}x", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small shapes (smoke test)")
    ap.add_argument("--sweep", action="store_true", help="also time the five-protocol C sweep")
    ap.add_argument("--skip-official", action="store_true",
                    help="skip the official loop vs geneb-v1 path comparison (scikit-learn only)")
    ap.add_argument("--classes", type=int, nargs="+", default=[2, 10])
    ap.add_argument("--device", default="auto", help="auto (CPU, plus CUDA where present), cpu, "
                                                     "or cuda for the batched solver")
    ap.add_argument("--n", type=int, help="train rows (default 30,000; 300 with --quick)")
    ap.add_argument("--d", type=int, help="features (default 1,024; 16 with --quick)")
    a = ap.parse_args()
    n, n_test, d = (300, 100, 16) if a.quick else (30_000, 3_000, 1_024)
    n, d = a.n or n, a.d or d
    n_test = min(n_test, max(n // 10, 100))
    devices = (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]) \
        if a.device == "auto" else [a.device]
    warnings.simplefilter("ignore", ConvergenceWarning)
    with threadpool_limits(PROBE_THREADS):
        print(f"# n={n} train, {n_test} test, d={d}; fit threads {torch.get_num_threads()} "
              f"(engine.probes.PROBE_THREADS); batched solver on {', '.join(devices)}", flush=True)
        for k in a.classes:
            compare(a, synthetic_cell(n, n_test, d, k), k, devices)


def compare(a: argparse.Namespace, cell: Cell, k: int, devices: list[str]) -> None:
    """The ratio lines of one synthetic cell with `k` classes."""
    if not a.skip_official:
        t_official, official = timed(official_loop, *cell)
        t_ours, rows = timed(probe_cell, *cell, REGIMES)
        same = [r["mcc"] for r in rows] == official
        print(f"# {k} classes: geneb-v1 path metrics identical to the official loop: {same}")
        line(f"{k} classes: geneb-v1 path vs official loop", t_ours, t_official)

    t_sk, sk = timed(sklearn_converged, *cell, (GENEB_V1_CONVERGED.C,))
    Cs = tuple(p.C for p in sweep_protocols())
    if a.sweep:
        t_sk_sweep, sk_sweep = timed(sklearn_converged, *cell, Cs)
        t_sk_full, sk_full = timed(sklearn_converged, *cell, Cs, ("full",))
    for device in devices:
        t_b, (rows,) = timed(run_cells, *cell, [GENEB_V1_CONVERGED], REGIMES, device)
        mcc = [r["mcc"] for r in rows if r["seed"] == SEEDS[0] or r["regime"] != "full"]
        print(f"# {k} classes, {device}: max |MCC difference| batched vs scikit-learn "
              f"converged {np.max(np.abs(np.subtract(mcc, sk))):.4f}; batched iterations "
              f"max {max(r['n_iter'] for r in rows)}")
        line(f"{k} classes: batched solver ({device}) vs scikit-learn converged", t_b, t_sk)
        with host_reads() as reads:
            full = run_cells(*cell, [GENEB_V1_CONVERGED], ("full",), device)[0][0]
        print(f"# {k} classes, {device}: host reads of the full-regime fit: "
              f"{sum(reads.values())} for {full['n_iter']} iterations (a check every "
              f"{check_interval(torch.device(device))} evaluations)", flush=True)
        if not a.sweep:
            continue
        t_bs, _ = timed(run_cells, *cell, sweep_protocols(), REGIMES, device)
        line(f"{k} classes: batched C sweep ({device}) vs scikit-learn converged sweep "
             f"({len(Cs)} C, {len(sk_sweep)} fits)", t_bs, t_sk_sweep)
        t_bf, full = timed(run_cells, *cell, sweep_protocols(), ("full",), device)
        mcc = [rows[0]["mcc"] for rows in full]
        print(f"# {k} classes, {device}: full-regime sweep {t_bf:.2f} s vs {t_sk_full:.2f} s; "
              f"max |MCC difference| {np.max(np.abs(np.subtract(mcc, sk_full))):.4f}; "
              f"iterations {[rows[0]['n_iter'] for rows in full]}", flush=True)
        print(f"{k} classes ({device}): five-value C sweep, full regime: batched vs five "
              f"scikit-learn fits: {t_sk_full / t_bf:.1f}x", flush=True)


if __name__ == "__main__":
    main()
