"""Named protocol variants fitted by the batched solvers (each has its own hash; never geneb-v1).

- geneb-v1-converged: the geneb-v1 objective (L2 logistic regression, C = 1) on standardised
  features, solved to the optimum (gradient max-norm <= 1e-6 of the mean-form objective) instead
  of stopping at scikit-learn's 1,000 lbfgs iterations.
- C sweep (appendix E): the same converged probe at C in {0.01, 0.1, 1, 10, 100}, named
  `converged-C<C>` (standardised) or `converged-C<C>-unscaled`; the standardised C = 1 member is
  geneb-v1-converged itself.
- mlp-h256 (for appendix E.1's linear-vs-MLP comparison): one hidden layer of 256 ReLU units,
  standardised features, C = 1 on both weight matrices, full-batch L-BFGS (float32) to 1e-5 or
  500 iterations, initialised from each row's seed (`engine.probes.mlp`).
"""

from __future__ import annotations

from collections.abc import Sequence

from store.protocol import Protocol

SWEEP_CS: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)
CONVERGED_TOL = 1e-6
CONVERGED_MAX_ITER = 10_000
MLP_HIDDEN = 256
MLP_TOL = 1e-5
MLP_MAX_ITER = 500


def converged_protocol(C: float = 1.0, standardize: bool = True) -> Protocol:
    """The L2 logistic probe solved to CONVERGED_TOL by the batched torch solver."""
    if C == 1.0 and standardize:
        name = "geneb-v1-converged"
    else:
        name = f"converged-C{C:g}{'' if standardize else '-unscaled'}"
    return Protocol(name=name, solver="torch-lbfgs", C=C, standardize=standardize,
                    max_iter=CONVERGED_MAX_ITER, tol=CONVERGED_TOL)


def sweep_protocols(Cs: Sequence[float] = SWEEP_CS,
                    standardize: bool = True) -> tuple[Protocol, ...]:
    """One converged protocol per C, in the order given (increasing C for the paper's sweep)."""
    return tuple(converged_protocol(C, standardize) for C in Cs)


def mlp_protocol(hidden: int = MLP_HIDDEN, C: float = 1.0, standardize: bool = True) -> Protocol:
    """The one-hidden-layer MLP probe, named `mlp-h<hidden>`."""
    return Protocol(name=f"mlp-h{hidden}", probe="mlp", solver="torch-lbfgs", C=C,
                    standardize=standardize, max_iter=MLP_MAX_ITER, tol=MLP_TOL, hidden=hidden)


GENEB_V1_CONVERGED = converged_protocol()
MLP = mlp_protocol()


def named_variants() -> dict[str, Protocol]:
    """Every named variant by name: both C sweeps (geneb-v1-converged among them) and mlp-h256."""
    protocols = [*sweep_protocols(), *sweep_protocols(standardize=False), MLP]
    return {p.name: p for p in protocols}
