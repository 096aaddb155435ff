"""Probe protocols: plain data whose hash identifies which results may share a table.

geneb-v1 is the official GENEB protocol. Any change (scaling, C, probe kind, solver) makes a
different protocol with its own id and hash; results of different hashes are never pooled.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

SEEDS: tuple[int, ...] = (13, 17, 42, 123, 997)
REGIMES: tuple[str, ...] = ("full", "10shot", "1shot")
METRICS: tuple[str, ...] = ("mcc", "acc", "f1_macro")   # the stored metric columns
REGIME_K: dict[str, int | None] = {"full": None, "10shot": 10, "1shot": 1}


@dataclass(frozen=True)
class Protocol:
    """A probe protocol. `name` is a label; `hash` is what identifies it."""

    name: str = "geneb-v1"
    probe: str = "logreg"          # "logreg" or "mlp"
    solver: str = "sklearn-lbfgs"  # "sklearn-lbfgs" (exact official path) or "torch-lbfgs"
    C: float = 1.0
    max_iter: int = 1000
    standardize: bool = False
    tol: float | None = None       # solver tolerance where the solver is ours
    hidden: int | None = None      # MLP hidden width
    seeds: tuple[int, ...] = SEEDS
    regimes: tuple[str, ...] = REGIMES
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    def identity(self) -> dict:
        d = asdict(self)
        d.pop("name")
        # Which regimes a run covers does not change what a (regime, seed) cell means.
        d.pop("regimes")
        return d

    @property
    def hash(self) -> str:
        blob = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


GENEB_V1 = Protocol()
