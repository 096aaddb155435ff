"""Probe protocols: plain data whose hash identifies which results may share a table, and the
table of named protocols (every name `fill --protocol` and `report --versus` take).

geneb-v1 is the official GENEB protocol. Any change (scaling, C, probe kind, solver) makes a
different protocol with its own id and hash; results of different hashes are never pooled.

The named variants (each has its own hash; never geneb-v1), fitted by the batched solvers:

- geneb-v1-converged: the geneb-v1 objective (L2 logistic regression, C = 1) on standardised
  features, solved to the optimum (gradient max-norm <= 1e-6 of the mean-form objective) instead
  of stopping at scikit-learn's 1,000 lbfgs iterations.
- C sweep (appendix E): the same converged probe at C in {0.01, 0.1, 1, 10, 100}, named
  `converged-C<C>` (standardised) or `converged-C<C>-unscaled`; the standardised C = 1 member is
  geneb-v1-converged itself. The groups `sweep` and `sweep-unscaled` name a whole sweep.
- geneb-v1-array-api: geneb-v1's probe and arithmetic (scikit-learn's own lbfgs, C = 1,
  1,000 iterations, unscaled float32 features), run through scikit-learn's array-API dispatch on
  torch tensors, so that its loss and gradient run on the GPU (`engine.probes.array_api`). Its
  reductions run in torch's order, not numpy's, so its numbers may differ from geneb-v1's in the
  last bits, and where lbfgs stops at 1,000 iterations, by more: a variant, never geneb-v1.
- mlp-h256 (for appendix E.1's linear-vs-MLP comparison): one hidden layer of 256 ReLU units,
  standardised features, C = 1 on both weight matrices, full-batch L-BFGS (float32) to 1e-5 or
  500 iterations, initialised from each row's seed (`engine.probes.mlp`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

SEEDS: tuple[int, ...] = (13, 17, 42, 123, 997)
REGIMES: tuple[str, ...] = ("full", "10shot", "1shot")
METRICS: tuple[str, ...] = ("mcc", "acc", "f1_macro")   # the stored metric columns
REGIME_K: dict[str, int | None] = {"full": None, "10shot": 10, "1shot": 1}


@dataclass(frozen=True)
class Protocol:
    """A probe protocol. `name` is a label; `hash` is what identifies it."""

    name: str = "geneb-v1"
    probe: str = "logreg"          # "logreg" or "mlp"
    solver: str = "sklearn-lbfgs"  # "sklearn-lbfgs" (exact official path), "torch-lbfgs" or
                                   # "sklearn-lbfgs-array-api" (engine.probes.RUNNERS)
    C: float = 1.0
    max_iter: int = 1000
    standardize: bool = False
    tol: float | None = None       # solver tolerance where the solver is ours
    hidden: int | None = None      # MLP hidden width
    seeds: tuple[int, ...] = SEEDS

    @property
    def shares_full_fit(self) -> bool:
        """Whether one full-regime fit stands for every seed: the logistic probe's (its fit does
        not depend on the seed), not the MLP's (initialised from the seed)."""
        return self.probe == "logreg"

    def identity(self) -> dict:
        """What the hash covers: every field but `name`."""
        d = asdict(self)
        d.pop("name")
        d["extra"] = []   # a field once (always empty), kept so that no protocol's hash changes
        return d

    @property
    def hash(self) -> str:
        blob = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


GENEB_V1 = Protocol()
GENEB_V1_ARRAY_API = Protocol(name="geneb-v1-array-api", solver="sklearn-lbfgs-array-api")

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

NAMED: dict[str, tuple[Protocol, ...]] = {
    GENEB_V1.name: (GENEB_V1,),
    GENEB_V1_ARRAY_API.name: (GENEB_V1_ARRAY_API,),
    "sweep": sweep_protocols(),
    "sweep-unscaled": sweep_protocols(standardize=False),
    **{p.name: (p,) for p in (*sweep_protocols(), *sweep_protocols(standardize=False), MLP)},
}
"""Every protocol name -> the protocols it stands for (a group: a whole C sweep), in the order
the names are listed: geneb-v1 (the official one), its array-API twin, the groups, every named
protocol."""

_BY_NAME = {p.name: p for group in NAMED.values() for p in group}
_BY_HASH = {p.hash: p for p in _BY_NAME.values()}


def protocols_named(names: Iterable[str]) -> tuple[Protocol, ...]:
    """The protocols of `names` (a group: each of its members), each once, in order. The names
    are known ones (`engine.commands.common.check_names` refuses the others first)."""
    out: dict[str, Protocol] = {}
    for name in names:
        out.update({p.hash: p for p in NAMED[name]})
    return tuple(out.values())


def protocol_named(name: str) -> Protocol | None:
    """The one protocol called `name`; None for a group or a name the table lacks."""
    return _BY_NAME.get(name)


def protocol_with_hash(protocol_hash: str) -> Protocol | None:
    """The named protocol with this hash; None for a hash the table lacks."""
    return _BY_HASH.get(protocol_hash)


def name_of(protocol_hash: str) -> str:
    """The name of the named protocol with this hash, else the hash itself."""
    protocol = _BY_HASH.get(protocol_hash)
    return protocol_hash if protocol is None else protocol.name
