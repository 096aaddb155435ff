"""The probes: the exact scikit-learn path (`exact`), the batched torch solvers, the runner of
each solver, and `probe_rows`, which sends each regime of a protocol to its solver's runner.

Modules import only numpy, torch, scikit-learn, the standard library and `store.vocab` at import
time, so they run on a bare GPU machine (no polars, zarr or duckdb there). This package itself
imports neither torch nor scikit-learn: a runner's module is imported when a protocol of its
solver first runs.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from store.vocab.protocol import Protocol, Solver

# BLAS threads of every probe fit, whichever executor runs it (inline, a --jobs worker, a Ray
# task): a thread count changes the order of floating-point sums, and with it the last bits of
# a fit that stops at max_iter, so results never depend on how a run was scheduled.
PROBE_THREADS = 1


RUNNERS: dict[Solver, str] = {
    Solver.SKLEARN_LBFGS: "engine.probes.exact",   # geneb-v1 exactly as the official harness
    Solver.TORCH_LBFGS: "engine.probes.cell",      # the batched solvers of the variants
    Solver.SKLEARN_LBFGS_ARRAY_API: "engine.probes.array_api",   # geneb-v1's lbfgs on tensors
}
"""Protocol solver -> the module whose `run_cells(X_train, y_train, X_test, y_test, protocols,
regimes, device)` fits that solver's protocols (one row list per protocol). A pair's rows are
made in this order."""


def runner(solver: Solver) -> Callable[..., list[list[dict]]]:
    """The `run_cells` of `solver`'s module."""
    return import_module(RUNNERS[solver]).run_cells


def probe_rows(X_train, y_train, X_test, y_test,
               todo: tuple[tuple[Protocol, tuple[str, ...]], ...],
               probe_device: str | None = None) -> list[dict]:
    """Rows of every (protocol, regimes) of one pair, each regime fitted by the runner of its
    protocol's solver for it (`Protocol.solver_for`; the calls in the order of `RUNNERS`):
    geneb-v1 exactly as the official harness, variants with the batched solvers. Protocols of one
    solver that need the same regimes share one call, so a C sweep shares its batches and warm
    starts. Each row carries its test predictions (`pred`), which `engine.pairs.probe_pair`
    stores apart, and its protocol's name and hash."""
    calls: dict[tuple[Solver, tuple[str, ...]], list[Protocol]] = {}
    for protocol, regimes in todo:
        by_solver: dict[Solver, list[str]] = {}
        for regime in regimes:
            by_solver.setdefault(protocol.solver_for(regime), []).append(regime)
        for solver, own in by_solver.items():
            calls.setdefault((solver, tuple(own)), []).append(protocol)
    order = list(RUNNERS)
    rows: list[dict] = []
    for (solver, regimes), protocols in sorted(calls.items(), key=lambda c: order.index(c[0][0])):
        per_protocol = runner(solver)(X_train, y_train, X_test, y_test, protocols, regimes,
                                      probe_device)
        for protocol, found in zip(protocols, per_protocol, strict=True):
            for r in found:
                r.update(protocol=protocol.name, protocol_hash=protocol.hash)
            rows += found
    return rows
