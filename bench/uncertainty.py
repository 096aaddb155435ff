"""How fast is the task bootstrap? `store.analyses.uncertainty` on the 40 official models.

Imports the 40 official submissions into a temporary store
(`store.official.submission.import_files` on
`store.official.data.official_tree()`), reads the per-task scores of the 3 regimes x 3 metrics,
then times, for each of the nine, `draw` (n = 10,000 resamples) + `score_intervals` +
`rank_intervals` + `win_probabilities` + `leader_tie_group` (macro), the rank tests
(`ranktests.rank_tests`: Friedman and Nemenyi, all tasks and every category with >= 5) and the
claims (`claims`: scale rho, controlled pairs, smaller beats 5x larger; leader changes from full
once per metric), and prints the total: points 1, 4 and 5 of the issue.

Baseline, in the same process: a straightforward loop over resamples (one Python iteration per
resample drawing its tasks and computing every entry's micro, category and macro scores and
their ranks with numpy / scipy, then the same intervals, P(A > B) and p_best from the stacked
results), run for `--loop-resamples` resamples and scaled to n. Goal: all nine under 3 s on 2
cores, well under 2 s.

    .venv/bin/python bench/uncertainty.py [--n 10000] [--runs 3] [--loop-resamples 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def official_scores() -> tuple[dict[tuple[str, str], object], object]:
    """({(regime, metric): scores frame}, the models frame) of the 40 official models, read
    from a fresh store."""
    from store.analyses.scores import scores_of, seed_means
    from store.official.data import official_tree
    from store.official.submission import import_files
    from store.paths import resolve_store
    from store.tables.catalogs import models_with_builtins
    from store.vocab.protocol import METRICS, REGIMES

    with tempfile.TemporaryDirectory(prefix="geneb-uncertainty-") as tmp:
        paths = resolve_store(Path(tmp) / "store")
        tree = official_tree()
        import_files(paths, [tree / "submissions", tree / "leaderboard.json"])
        means = seed_means(paths, source="official")
        models = models_with_builtins(paths)
    return {(r, m): scores_of(means, regime=r, metric=m, with_source=False)
            for r in REGIMES for m in METRICS}, models


def vectorised(scores_df, n: int, models, full=None) -> tuple[float, object]:
    """Seconds for every analysis of one (regime, metric), and its draws. With `full` (the
    full regime's draws of the same metric): the leader changes from full too."""
    from store.analyses import claims
    from store.analyses.ranktests import rank_tests
    from store.analyses.uncertainty import (
        draw,
        leader_tie_group,
        rank_intervals,
        score_intervals,
        win_probabilities,
    )

    start = time.perf_counter()
    d = draw(scores_df, n=n, seed=0)
    score_intervals(d)
    rank_intervals(d)
    win_probabilities(d)
    leader_tie_group(d)
    rank_tests(scores_df)
    claims.scale_rho_intervals(d, models)
    claims.controlled_pair_intervals(d, models)
    claims.smaller_beats_larger(d, models)
    if full is not None:
        claims.leader_change_significance({"full": full, "other": d})
    return time.perf_counter() - start, d


def nine(frames, n: int, models) -> dict:
    """Seconds per (regime, metric) of `vectorised`, full first in each metric."""
    out, fulls = {}, {}
    for (regime, metric), f in frames.items():
        out[regime, metric], d = vectorised(f, n, models, fulls.get(metric))
        if regime == "full":
            fulls[metric] = d
    return out


def loop(scores_df, n: int) -> float:
    """Seconds for the straightforward loop: one Python iteration per resample."""
    from scipy.stats import rankdata

    from store.analyses.aggregates import aggregates
    from store.analyses.uncertainty import suite_categories
    from store.catalog import geneb_v1_tasks

    start = time.perf_counter()
    tasks = geneb_v1_tasks()
    task_ids, categories = suite_categories(tasks)
    agg = aggregates(scores_df)
    wide = scores_df.pivot(on="task", index="model", values="value")
    x = (agg.select("model").join(wide, on="model", how="left", maintain_order="left")
         .select(task_ids).to_numpy())                              # (E, T), entries as draw
    members = [np.array([i for i, t in enumerate(tasks) if t.category == c])
               for c in categories]
    rng = np.random.default_rng(0)
    values, ranks = [], []
    for _ in range(n):
        micro = x[:, rng.integers(0, len(task_ids), len(task_ids))].mean(axis=1)
        cats = np.stack([x[:, m[rng.integers(0, len(m), len(m))]].mean(axis=1)
                         for m in members], axis=1)
        v = np.column_stack([micro, cats.mean(axis=1), cats])        # (E, S)
        values.append(v)
        ranks.append(rankdata(-v, method="min", axis=0))
    values, ranks = np.stack(values), np.stack(ranks)
    np.quantile(values, [0.025, 0.975], axis=0)
    np.quantile(ranks, 0.025, axis=0, method="lower")
    np.quantile(ranks, 0.975, axis=0, method="higher")
    macro = values[:, :, 1]
    (macro[:, :, None] > macro[:, None, :]).mean(axis=0)
    (ranks[:, :, 1] == 1).mean(axis=0)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="resamples (default 10,000)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of the nine (median)")
    ap.add_argument("--loop-resamples", type=int, default=200,
                    help="resamples of the baseline loop, scaled to --n (default 200)")
    args = ap.parse_args()
    frames, models = official_scores()
    nine(frames, 100, models)                  # warm up (imports, first allocations)
    runs = [nine(frames, args.n, models) for _ in range(args.runs)]
    per = {key: statistics.median(r[key] for r in runs) for key in frames}
    total = statistics.median(sum(r.values()) for r in runs)
    scale = args.n / args.loop_resamples
    base = {key: loop(f, args.loop_resamples) * scale for key, f in frames.items()}
    base_total = sum(base.values())
    print(f"40 official models, n = {args.n:,} resamples; median of {args.runs} runs; the loop: "
          f"{args.loop_resamples} resamples x {scale:g}")
    print(f"{'regime':8} {'metric':9} {'vectorised':>11} {'loop':>9} {'ratio':>7}")
    for (regime, metric), t in per.items():
        b = base[regime, metric]
        print(f"{regime:8} {metric:9} {t:9.3f} s {b:7.2f} s {b / t:6.0f}x")
    print(f"{'all nine':18} {total:9.3f} s {base_total:7.2f} s {base_total / total:6.0f}x")
    print(f"goal: all nine under 3 s ({'met' if total < 3 else 'NOT met'}), aim under 2 s "
          f"({'met' if total < 2 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
