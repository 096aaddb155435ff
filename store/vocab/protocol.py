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
  1,000 iterations, unscaled float32 features), its full regime run through scikit-learn's
  array-API dispatch on torch tensors, so that its loss and gradient run on the GPU
  (`engine.probes.array_api`); its few-shot regimes run geneb-v1's exact CPU path
  (`few_shot_solver`: small fits, which the GPU does not speed up and whose 1-3 lbfgs iterations
  the other order of torch's reductions changed visibly). Its full-regime reductions run in
  torch's order, not numpy's, so its numbers may differ from geneb-v1's in the last bits, and
  where lbfgs stops at 1,000 iterations, by more: a variant, never geneb-v1.
- mlp-h256 (for appendix E.1's linear-vs-MLP comparison): one hidden layer of 256 ReLU units,
  standardised features, C = 1 on both weight matrices, full-batch L-BFGS (float32) to 1e-5 or
  500 iterations, initialised from each row's seed (`engine.probes.mlp`).

The protocols of the other task kinds (`store.vocab.kinds`; `KIND_PROTOCOLS`, each with its own
hash, run on every task of their kind whatever `--protocol` names; `engine.probes.kinds`):

- ridge-v1 (regression): ridge regression with an intercept, alpha = 1.0, on the raw float32
  embeddings (scikit-learn's `Ridge(alpha=1.0)`), in the full regime on the whole train split
  and in the k-shot regimes on 2k train rows drawn uniformly without replacement by
  `numpy.random.RandomState(seed)` (as many rows as a binary task's k per class), seeds as
  geneb-v1's; Pearson r, Spearman rho, R^2 on the whole test split.
- ridge-tracks-v1 (tracks): ridge-v1's fit with one output per target (one closed-form solve
  with the targets as columns; the same alpha = 1.0, regimes, draws and seeds); each metric
  computed per target on the whole test split and averaged over the targets.
- ridge-multilabel-v1 (multilabel): the same fit on the 0/1 labels (a linear probability
  model: scikit-learn's `Ridge(alpha=1.0)` on the label matrix), its prediction of each label
  the score AUROC and AUPRC rank, per label on the whole test split, averaged over the labels.
- variant-cosine-v1 (variant, zero-shot): the cosine distance between the reference and the
  alternative sequence's embeddings as the score, nothing fitted (regime `zeroshot`, one score
  recorded for every seed); AUROC, AUPRC.
- variant-probe-v1 (variant): geneb-v1's probe (scikit-learn `LogisticRegression(max_iter=1000)`)
  on the features [ref, alt, alt - ref] of each variant, in geneb-v1's regimes and draws (k
  variants per label); its probability of label 1 scored by AUROC, AUPRC.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from functools import cached_property

from store.vocab.kinds import CLASSIFICATION, ZERO_SHOT, TaskKind

SEEDS: tuple[int, ...] = (13, 17, 42, 123, 997)
REGIMES: tuple[str, ...] = ("full", "10shot", "1shot")
METRICS: tuple[str, ...] = ("mcc", "acc", "f1_macro")   # the stored metric columns
REGIME_K: dict[str, int | None] = {"full": None, "10shot": 10, "1shot": 1}
"""Examples per class of each regime's training set; None: the whole train split."""
FEW_SHOT_REGIMES: tuple[str, ...] = tuple(r for r in REGIMES if REGIME_K[r] is not None)


def is_few_shot(regime: str) -> bool:
    """Whether `regime` fits on k examples per class (10shot, 1shot) rather than the whole train
    split: the one rule for every "few-shot" decision (sampling, degradation, the views)."""
    return REGIME_K[regime] is not None


class Probe(StrEnum):
    """The probe a protocol fits on the embeddings."""

    LOGREG = "logreg"   # L2 logistic regression (geneb-v1's)
    MLP = "mlp"         # one hidden layer of ReLU units
    RIDGE = "ridge"     # ridge regression with an intercept (regression tasks)
    COSINE = "cosine"   # the cosine distance of two embeddings, nothing fitted (variant tasks)
    LLR = "llr"         # a language-model head's log-likelihood ratio, nothing fitted (variant)


class Solver(StrEnum):
    """How a protocol's probe is fitted; each solver has one runner (`engine.probes.RUNNERS`)."""

    SKLEARN_LBFGS = "sklearn-lbfgs"                      # geneb-v1 exactly, as the official harness
    TORCH_LBFGS = "torch-lbfgs"                          # the batched solvers of the variants
    SKLEARN_LBFGS_ARRAY_API = "sklearn-lbfgs-array-api"  # scikit-learn's lbfgs on torch tensors
    CLOSED_FORM = "closed-form"                          # a linear system solved exactly (ridge)
    NONE = "none"                                        # nothing fitted (a zero-shot score)


@dataclass(frozen=True)
class Protocol:
    """A probe protocol. `name` is a label; `hash` is what identifies it."""

    name: str = "geneb-v1"
    probe: Probe = Probe.LOGREG
    solver: Solver = Solver.SKLEARN_LBFGS
    C: float = 1.0
    max_iter: int = 1000
    standardize: bool = False
    tol: float | None = None       # solver tolerance where the solver is ours
    hidden: int | None = None      # MLP hidden width
    seeds: tuple[int, ...] = SEEDS
    few_shot_solver: Solver | None = None   # the few-shot regimes' solver, where not `solver`
    kind: str = CLASSIFICATION     # the task kind it scores (`store.vocab.kinds`)
    alpha: float | None = None     # ridge's L2 weight
    features: str | None = None    # what a variant probe fits on ("ref,alt,alt-ref")

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", TaskKind(self.kind))
        # a plain string names its member (the hash is the same: a member is its string)
        object.__setattr__(self, "probe", Probe(self.probe))
        object.__setattr__(self, "solver", Solver(self.solver))
        if self.few_shot_solver is not None:
            object.__setattr__(self, "few_shot_solver", Solver(self.few_shot_solver))

    def solver_for(self, regime: str) -> Solver:
        """The solver that fits `regime`: `few_shot_solver` for a few-shot one where set, else
        `solver`."""
        if self.few_shot_solver is not None and is_few_shot(regime):
            return self.few_shot_solver
        return self.solver

    @property
    def zero_shot(self) -> bool:
        """Whether it fits nothing (its one regime is `ZERO_SHOT`)."""
        return self.solver is Solver.NONE

    def regimes_of(self, regimes: Sequence[str]) -> tuple[str, ...]:
        """The regimes it runs of the `regimes` a run asks for: a zero-shot protocol its one
        (`ZERO_SHOT`) whatever they are, every other protocol those."""
        return (ZERO_SHOT,) if self.zero_shot and regimes else tuple(regimes)

    @property
    def shares_full_fit(self) -> bool:
        """Whether one full-regime fit stands for every seed: the logistic probe's and ridge's
        (their fits do not depend on the seed), a zero-shot score's, not the MLP's
        (initialised from the seed)."""
        return self.probe is not Probe.MLP

    def identity(self) -> dict:
        """What the hash covers: every field but `name` (and `few_shot_solver` where unset)."""
        d = asdict(self)
        d.pop("name")
        # fields added later: unset, no earlier protocol's hash changes
        for field, unset in (("few_shot_solver", None), ("kind", CLASSIFICATION),
                             ("alpha", None), ("features", None)):
            if d[field] == unset:
                d.pop(field)
        d["extra"] = []   # a field once (always empty), kept so that no protocol's hash changes
        return d

    @cached_property   # read for every row a reader checks; the fields never change
    def hash(self) -> str:
        blob = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


GENEB_V1 = Protocol()
GENEB_V1_ARRAY_API = Protocol(name="geneb-v1-array-api", solver=Solver.SKLEARN_LBFGS_ARRAY_API,
                              few_shot_solver=Solver.SKLEARN_LBFGS)

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
    return Protocol(name=name, solver=Solver.TORCH_LBFGS, C=C, standardize=standardize,
                    max_iter=CONVERGED_MAX_ITER, tol=CONVERGED_TOL)


def sweep_protocols(Cs: Sequence[float] = SWEEP_CS,
                    standardize: bool = True) -> tuple[Protocol, ...]:
    """One converged protocol per C, in the order given (increasing C for the paper's sweep)."""
    return tuple(converged_protocol(C, standardize) for C in Cs)


def mlp_protocol(hidden: int = MLP_HIDDEN, C: float = 1.0, standardize: bool = True) -> Protocol:
    """The one-hidden-layer MLP probe, named `mlp-h<hidden>`."""
    return Protocol(name=f"mlp-h{hidden}", probe=Probe.MLP, solver=Solver.TORCH_LBFGS, C=C,
                    standardize=standardize, max_iter=MLP_MAX_ITER, tol=MLP_TOL, hidden=hidden)


GENEB_V1_CONVERGED = converged_protocol()
MLP = mlp_protocol()

RIDGE_V1 = Protocol(name="ridge-v1", kind=TaskKind.REGRESSION, probe=Probe.RIDGE,
                    solver=Solver.CLOSED_FORM, alpha=1.0)
RIDGE_TRACKS_V1 = Protocol(name="ridge-tracks-v1", kind=TaskKind.TRACKS, probe=Probe.RIDGE,
                           solver=Solver.CLOSED_FORM, alpha=RIDGE_V1.alpha)
RIDGE_MULTILABEL_V1 = Protocol(name="ridge-multilabel-v1", kind=TaskKind.MULTILABEL,
                               probe=Probe.RIDGE, solver=Solver.CLOSED_FORM,
                               alpha=RIDGE_V1.alpha)
VARIANT_COSINE_V1 = Protocol(name="variant-cosine-v1", kind=TaskKind.VARIANT,
                             probe=Probe.COSINE, solver=Solver.NONE)
VARIANT_PROBE_V1 = Protocol(name="variant-probe-v1", kind=TaskKind.VARIANT,
                            features="ref,alt,alt-ref")

VARIANT_LLR_V1 = Protocol(name="variant-llr-v1", kind=TaskKind.VARIANT, probe=Probe.LLR,
                          solver=Solver.NONE)

KIND_PROTOCOLS: dict[TaskKind, tuple[Protocol, ...]] = {
    TaskKind.REGRESSION: (RIDGE_V1,),
    TaskKind.VARIANT: (VARIANT_COSINE_V1, VARIANT_PROBE_V1),
    TaskKind.TRACKS: (RIDGE_TRACKS_V1,),
    TaskKind.MULTILABEL: (RIDGE_MULTILABEL_V1,),
}
"""The protocols every task of a kind beyond classification runs (`protocols_for`)."""


OPT_IN: tuple[Protocol, ...] = (VARIANT_LLR_V1,)
"""Protocols of the other kinds a run names (`--protocol`) to run them beside its kind's: they
need what not every model has (variant-llr-v1: a language-model head)."""


READ_PROTOCOLS: dict[TaskKind, tuple[Protocol, ...]] = {
    CLASSIFICATION: (GENEB_V1,),
    TaskKind.REGRESSION: (RIDGE_V1,),
    TaskKind.VARIANT: (VARIANT_PROBE_V1, VARIANT_COSINE_V1),
    TaskKind.TRACKS: (RIDGE_TRACKS_V1,),
    TaskKind.MULTILABEL: (RIDGE_MULTILABEL_V1,),
}
"""The protocols whose results the readers of each kind show (`report --kind`, the site, the
figures, `recommend`), the first by default: the one probed in geneb-v1's regimes (the
zero-shot `variant-cosine-v1` has its one regime, `zeroshot`)."""


def read_protocol(kind: str) -> Protocol:
    """The protocol a reader of `kind` shows by default (`READ_PROTOCOLS`)."""
    return READ_PROTOCOLS[TaskKind(kind)][0]


def protocols_for(kind: str, requested: Sequence[Protocol]) -> tuple[Protocol, ...]:
    """The protocols a task of `kind` runs: a classification task those a run names
    (`--protocol`) of its kind, a task of another kind its kind's (`KIND_PROTOCOLS`) and
    those of `OPT_IN` of its kind the run names."""
    kind = TaskKind(kind)
    named = tuple(p for p in requested if p.kind is kind)
    if kind is CLASSIFICATION:
        return named
    return KIND_PROTOCOLS[kind] + tuple(p for p in named if p in OPT_IN)


NAMED: dict[str, tuple[Protocol, ...]] = {
    GENEB_V1.name: (GENEB_V1,),
    GENEB_V1_ARRAY_API.name: (GENEB_V1_ARRAY_API,),
    "sweep": sweep_protocols(),
    "sweep-unscaled": sweep_protocols(standardize=False),
    **{p.name: (p,) for p in (*sweep_protocols(), *sweep_protocols(standardize=False), MLP)},
    **{p.name: (p,) for p in OPT_IN},
}
"""Every protocol name -> the protocols it stands for (a group: a whole C sweep), in the order
the names are listed: geneb-v1 (the official one), its array-API twin, the groups, every named
protocol."""

_BY_NAME = {p.name: p for group in NAMED.values() for p in group}
_BY_HASH = {p.hash: p for p in (*_BY_NAME.values(),
                                 *(p for group in KIND_PROTOCOLS.values() for p in group))}


def protocols_named(names: Iterable[str]) -> tuple[Protocol, ...]:
    """The protocols of `names` (a group: each of its members), each once, in order. The names
    are known ones (`store.did_you_mean.check_names` refuses the others first)."""
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



def seed_counts(protocols: Iterable[Protocol | str]) -> dict[str, int]:
    """Protocol hash -> how many seeds a done cell of it covers (`store.cells`), for protocols
    or their hashes: the one map every reader of the done rule asks with. A hash the table lacks
    (an imported or older protocol) counts geneb-v1's seeds, as every GENEB protocol has."""
    out = {}
    for p in protocols:
        protocol = p if isinstance(p, Protocol) else _BY_HASH.get(p, GENEB_V1)
        out[p if isinstance(p, str) else p.hash] = len(protocol.seeds)
    return out
