"""The probes: the exact scikit-learn path (`exact`), the batched torch solvers and the runner
of each solver.

Modules import only numpy, torch, scikit-learn, the standard library and `store.vocab` at import
time, so they run on a bare GPU machine (no polars, zarr or duckdb there). This package itself
imports neither torch nor scikit-learn: a runner's module is imported when a protocol of its
solver first runs.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from store.vocab.protocol import Solver

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
