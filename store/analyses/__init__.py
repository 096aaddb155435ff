"""The analyses of GENEB, computed from the store: each function returns a polars frame.

Start from `scores(paths, regime=..., metric=...)` (per-task seed means), aggregate with
`aggregates`, then rank, correlate and compare. Definitions are in each function's docstring.
"""

from store.analyses.aggregates import SCOPES, aggregates, by_regime
from store.analyses.controlled import ATTRIBUTES, controlled_pairs
from store.analyses.degradation import degradation, degradation_summary
from store.analyses.difficulty import task_difficulty
from store.analyses.domains import domain_split, partial_aggregates
from store.analyses.leaders import category_leaders, leader_changes
from store.analyses.rankings import (
    borda,
    category_agreement,
    protocol_agreement,
    rank_shift,
    rankings,
    spearman,
    spearman_regimes,
)
from store.analyses.ranktests import (
    average_ranks,
    friedman,
    rank_tests,
    scope_average_ranks,
    wilcoxon_holm,
)
from store.analyses.scale import scale_correlation
from store.analyses.scores import scores, scores_of, seed_means
from store.analyses.uncertainty import (
    Draws,
    draw,
    leader_tie_group,
    rank_intervals,
    score_intervals,
    seed_rows,
    seed_rows_of,
    win_probabilities,
)

__all__ = [
    "ATTRIBUTES", "SCOPES", "aggregates", "borda", "by_regime",
    "category_agreement", "category_leaders", "controlled_pairs", "degradation",
    "degradation_summary", "domain_split", "leader_changes",
    "partial_aggregates", "protocol_agreement", "rank_shift",
    "rankings",
    "scale_correlation", "scores", "scores_of", "seed_means", "spearman", "spearman_regimes",
    "task_difficulty",
    "average_ranks", "friedman", "rank_tests", "scope_average_ranks", "wilcoxon_holm",
    "Draws", "draw", "leader_tie_group", "rank_intervals", "score_intervals", "seed_rows",
    "seed_rows_of", "win_probabilities",
]
