"""The shared vocabulary of GENEB: the names every package decides by, in one home each.

Standard library only, so the engine, the store and the dashboard (even at its first frame)
import it freely. One module per decision:

- `errors`: the one error type a user can cause (`GenebError`);
- `ids`: what may name a task or a model;
- `protocol`: probe protocols, their hashes and names, regimes (`is_few_shot`), metrics,
  seeds (`seed_counts`), probes and solvers;
- `sources`: where a result row comes from (`LOCAL`, the submission provenances and the
  default one, `DEFAULT_PROVENANCE`);
- `suites`: the named suites and the suite of a command given none (`store_suite`);
- `revisions`: what names a commit (`commit_of`, `is_pinned`);
- `encoder_kinds`: the encoder kinds a model entry may name;
- `executors`: the executors `fill` offers and what names a Ray cluster;
- `pvalues`: how a p-value is shown (`p_text`, `p_is`).

The names most callers need are re-exported here.
"""

from store.vocab.errors import GenebError
from store.vocab.protocol import (
    FEW_SHOT_REGIMES,
    GENEB_V1,
    METRICS,
    REGIMES,
    SEEDS,
    Protocol,
    Solver,
    is_few_shot,
    seed_counts,
)
from store.vocab.revisions import commit_of, is_pinned
from store.vocab.sources import LOCAL, SOURCES, SUBMISSION_PROVENANCES
from store.vocab.suites import NAMED as SUITES
from store.vocab.suites import SuiteKind, SuiteSpec, store_suite

__all__ = [
    "FEW_SHOT_REGIMES", "GENEB_V1", "LOCAL", "METRICS", "REGIMES", "SEEDS", "SOURCES",
    "SUBMISSION_PROVENANCES", "SUITES", "GenebError", "Protocol", "Solver", "SuiteKind",
    "SuiteSpec", "commit_of", "is_few_shot", "is_pinned", "seed_counts", "store_suite",
]
