"""The paper's claims with their uncertainty (`store.analyses.claims`), on simulated
leaderboards whose truth is known, checked against straightforward loops over the resamples,
scipy and the point analyses they reuse."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from scipy.stats import rankdata, spearmanr

from store.analyses.aggregates import aggregates
from store.analyses.claims import (
    _row_spearman,
    controlled_pair_intervals,
    leader_change_significance,
    point_frame,
    scale_rho_intervals,
    smaller_beats_larger,
    smaller_beats_larger_summary,
)
from store.analyses.controlled import controlled_pairs
from store.analyses.leaders import category_leaders
from store.analyses.rankings import tie_mean_ranks
from store.analyses.scale import scale_correlation
from store.analyses.uncertainty import draw
from store.catalog import TaskMeta

# Two categories: Promoters with 6 tasks, Enhancers with 4.
TASKS = ([TaskMeta(f"p{i}", f"P {i}", "Promoters", "toy", "x") for i in range(6)]
         + [TaskMeta(f"e{i}", f"E {i}", "Enhancers", "toy", "x") for i in range(4)])
IDS = [t.task_id for t in TASKS]
CATEGORY = {t.task_id: t.category for t in TASKS}
N = 2_000


def _scores(values: dict[str, list[float]], source: str | None = None) -> pl.DataFrame:
    """[model, (source), task, category, value] from per-model task scores in TASKS order."""
    rows = [{"model": m, **({"source": source} if source else {}), "task": t,
             "category": CATEGORY[t], "value": float(v)}
            for m, vs in values.items() for t, v in zip(IDS, vs, strict=True)]
    return pl.DataFrame(rows)


def _level(base: float, rng, sd: float = 0.01) -> np.ndarray:
    """A model's task scores: `base`, a task effect shared by every model, and noise."""
    return base + np.linspace(-0.1, 0.1, len(IDS)) + rng.normal(0, sd, len(IDS))


# ±0.2 per task, averaging +0.002 in each category: B leads A by a hair everywhere, by noise.
NOISE = np.array([0.2, -0.2, 0.2, -0.2, 0.2, -0.188, 0.2, -0.2, 0.2, -0.192])


def _regimes():
    rng = np.random.default_rng(7)
    a_full = _level(0.7, rng)
    a_1shot = _level(0.3, rng)
    return {
        # A leads by 0.2 on every task
        "full": _scores({"A": a_full, "B": a_full - 0.2, "C": _level(0.4, rng)}),
        # B leads by 0.2 on every task: a real change
        "10shot": _scores({"A": _level(0.3, rng), "B": _level(0.5, rng),
                           "C": _level(0.2, rng)}),
        # B leads by 0.002 on average, ±0.2 task by task: noise
        "1shot": _scores({"A": a_1shot, "B": a_1shot + NOISE, "C": _level(0.1, rng)}),
    }


def _sign_flip_loop(draws, a: str, b: str, scope: str) -> float:
    """The two-sided sign-flip p of a - b's per-task differences with the scope's weights
    (categories: their tasks; macro: each category's mean weighs the same), every sign
    pattern one at a time."""
    ia, ib = (draws.entries["model"].to_list().index(m) for m in (a, b))
    cats = [CATEGORY[t] for t in IDS]
    if scope == "micro":
        w = np.full(len(IDS), 1 / len(IDS))
    elif scope == "macro":
        w = np.array([1 / (2 * cats.count(c)) for c in cats])
    else:
        w = np.array([1 / cats.count(c) if c == scope else 0.0 for c in cats])
    d = (draws.tasks[ia] - draws.tasks[ib])[w > 0] * w[w > 0]
    flips = [abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= abs(d.sum()) - 1e-12
             for signs in itertools.product((1, -1), repeat=len(d))]
    return sum(flips) / len(flips)


def _p_loop(draws, a: str, b: str, scope: str) -> float:
    """P(a beats b), one resample at a time."""
    ia, ib = (draws.entries["model"].to_list().index(m) for m in (a, b))
    j = draws.scopes.index(scope)
    return sum(bool(row[ia, j] > row[ib, j]) for row in draws.values) / draws.n


def test_a_real_leader_change_is_significant_and_noise_is_not():
    scores = _regimes()
    draws = {r: draw(s, tasks=TASKS, n=N, seed=3) for r, s in scores.items()}
    out = leader_change_significance(draws, level=0.95)
    assert out.columns == ["regime_from", "regime_to", "scope", "leader_from", "value_from",
                           "leader_to", "value_to", "changed", "p_new_beats_old",
                           "p_old_beats_new", "p_value_to", "p_value_from", "n_tasks",
                           "threshold_to", "threshold_from", "significant"]
    assert out.select("regime_to", "scope").rows() == [
        (r, s) for r in ("10shot", "1shot") for s in ("micro", "macro", "Promoters", "Enhancers")]
    rows = {(r["regime_to"], r["scope"]): r for r in out.iter_rows(named=True)}
    # The leaders are leaders.category_leaders' on the aggregates of the data.
    leaders = category_leaders({r: aggregates(s, tasks=TASKS) for r, s in scores.items()})
    for lead in leaders.filter(pl.col("regime") != "full").iter_rows(named=True):
        row = rows[(lead["regime"], lead["scope"])]
        assert (row["leader_to"], row["value_to"]) == (lead["model"], lead["value"])
        assert row["leader_from"] == "A"
    for scope in ("micro", "macro", "Promoters", "Enhancers"):
        real, noise = rows[("10shot", scope)], rows[("1shot", scope)]
        n = {"Promoters": 6, "Enhancers": 4}.get(scope, 10)
        # B ahead on every task: the smallest p of n tasks, separable with 10 tasks against
        # the threshold 0.05/2 the leader's two comparisons share; 6 or 4 tasks are too few
        assert real["p_value_to"] == real["p_value_from"] == 2 / 2 ** n
        assert real["threshold_to"] == real["threshold_from"] == pytest.approx(0.05 / 2)
        assert (real["leader_to"], real["changed"], real["significant"]) == (
            "B", True, n == 10)
        assert real["p_new_beats_old"] == real["p_old_beats_new"] == 1.0
        assert (noise["leader_to"], noise["changed"], noise["significant"]) == ("B", True, False)
        assert noise["p_value_to"] > 0.5                      # a coin flip, not a change
        assert 0.2 < noise["p_new_beats_old"] < 0.8
        assert noise["p_old_beats_new"] == 1.0                # A was ahead in full
        for row, regime in ((real, "10shot"), (noise, "1shot")):
            assert row["p_new_beats_old"] == _p_loop(draws[regime], "B", "A", scope)
            assert row["p_old_beats_new"] == _p_loop(draws["full"], "A", "B", scope)
            assert row["p_value_to"] == _sign_flip_loop(draws[regime], "B", "A", scope)


def test_an_unchanged_leader_has_no_probabilities_and_is_not_significant():
    scores = _regimes()
    draws = {r: draw(scores[r], tasks=TASKS, n=200, seed=0) for r in ("full", "10shot")}
    draws["10shot"] = draws["full"]                              # the same leader everywhere
    out = leader_change_significance(draws)
    assert out["changed"].to_list() == [False] * 4
    assert out["p_new_beats_old"].null_count() == out["p_old_beats_new"].null_count() == 4
    assert not out["significant"].any()
    with pytest.raises(ValueError, match="level"):
        leader_change_significance(draws, level=1.5)


MODELS = pl.DataFrame({
    "model_id": ["a", "b", "c", "d", "e", "kmer"],
    "params": [10_000_000, 40_000_000, 60_000_000, 300_000_000, 2_000_000_000, 0],
    "architecture_family": ["Mamba", "Mamba", "Transformer decoder", "Transformer decoder",
                            "Transformer decoder", "Baseline"],
    "tokenization_family": ["k-mer", "BPE", "BPE", "BPE", "BPE", "k-mer"],
    "pretraining_data": ["human", "human", "human", "human", "multi-species", "none"],
    "scale_band": ["<100M", "<100M", "<100M", "100M-1B", ">1B", "n/a"],
})


def _sized_scores() -> pl.DataFrame:
    rng = np.random.default_rng(11)
    return _scores({m: _level(base, rng, sd=0.05) for m, base in
                    (("a", 0.45), ("b", 0.40), ("c", 0.50), ("d", 0.52), ("e", 0.60),
                     ("kmer", 0.30))})


def test_scale_rho_interval_is_the_percentile_of_the_resampled_rho():
    scores = _sized_scores()
    draws = draw(scores, tasks=TASKS, n=500, seed=5)
    out = scale_rho_intervals(draws, MODELS, level=0.9)
    assert out.columns == ["scope", "rho", "p_value", "n", "low", "high"]
    # rho, p and n: scale_correlation's on the aggregates (kmer: no parameter count).
    point = scale_correlation(aggregates(scores, tasks=TASKS), MODELS)
    assert out.select("scope", "rho", "p_value", "n").equals(point)
    sized = [m for m in draws.entries["model"] if m != "kmer"]
    idx = [draws.entries["model"].to_list().index(m) for m in sized]
    params = [MODELS.filter(pl.col("model_id") == m)["params"][0] for m in sized]
    for r in out.iter_rows(named=True):
        j = draws.scopes.index(r["scope"])
        loop = [spearmanr(params, row[idx, j]).statistic for row in draws.values]
        assert (r["low"], r["high"]) == pytest.approx(tuple(np.quantile(loop, [0.05, 0.95])),
                                                      abs=1e-12)
        assert r["n"] == 5 and r["low"] <= r["rho"] <= r["high"]
    excluded = scale_rho_intervals(draws, MODELS, exclude=["e"], scopes=["macro"])
    assert excluded.select("scope", "n").rows() == [("macro", 4)]


def test_controlled_pair_delta_intervals_are_the_percentiles_of_the_paired_differences():
    scores = _sized_scores()
    draws = draw(scores, tasks=TASKS, n=500, seed=9)
    out = controlled_pair_intervals(draws, MODELS, level=0.95)
    point = controlled_pairs(aggregates(scores, tasks=TASKS), MODELS)
    # One row per (pair, scope): macro, then the categories.
    assert out.height == point.height * 3
    assert (out.filter(pl.col("scope") == "macro").select("model_a", "model_b", "attribute")
            .rows() == point.select("model_a", "model_b", "attribute").rows())
    models = draws.entries["model"].to_list()
    deltas = {(r["model_a"], r["model_b"]): r for r in point.iter_rows(named=True)}
    for r in out.iter_rows(named=True):
        j = draws.scopes.index(r["scope"])
        diff = (draws.values[:, models.index(r["model_a"]), j]
                - draws.values[:, models.index(r["model_b"]), j])
        assert r["delta"] == pytest.approx(deltas[(r["model_a"], r["model_b"])][r["scope"]],
                                           abs=1e-12)
        assert (r["low"], r["high"]) == pytest.approx(tuple(np.percentile(diff, [2.5, 97.5])),
                                                      abs=1e-15)
        assert r["p_a_beats_b"] == np.mean(diff > 0) and r["p_b_beats_a"] == np.mean(diff < 0)
        # the one rule: its sign-flip p, and "differs" only with p <= 0.05 and 0 outside
        assert r["p_value"] == pytest.approx(
            _sign_flip_loop(draws, r["model_a"], r["model_b"], r["scope"]), abs=1e-12)
        assert r["differs"] == (r["p_value"] <= 0.05 and not r["low"] <= 0 <= r["high"])
        assert r["n_tasks"] == {"Promoters": 6, "Enhancers": 4}.get(r["scope"], 10)
    assert out.filter(pl.col("scope") == "Enhancers")["differs"].sum() == 0   # 4 tasks: too few
    named = controlled_pair_intervals(draws, MODELS, pairs=[("a", "e")])
    assert named["attribute"].unique().to_list() == [
        "architecture_family, tokenization_family, pretraining_data, scale_band"]


def test_smaller_beats_larger_counts_the_cases_that_hold():
    rng = np.random.default_rng(2)
    base = _level(0.5, rng, sd=0.0)
    scores = _scores({
        "a": base + 0.10,                    # 10M: beats d (30x) and e (200x) on every task
        "b": base + NOISE / 2,               # 40M: beats d (7.5x) clearly, e (50x) by noise
        "c": base + 0.20,                    # 60M: d is exactly 5x larger: still a case
        "d": base - 0.30,                    # 300M
        "e": base,                           # 2B
        "kmer": base + 0.5,                  # no parameter count: never a case
    })
    draws = draw(scores, tasks=TASKS, n=N, seed=1)
    out = smaller_beats_larger(draws, MODELS, level=0.95)
    assert out.columns == ["model_small", "model_large", "params_small", "params_large",
                           "value_small", "value_large", "delta", "low", "high",
                           "p_small_beats_large", "p_value", "method", "n_tasks", "wins",
                           "losses", "holds"]
    cases = {(r["model_small"], r["model_large"]): r for r in out.iter_rows(named=True)}
    assert set(cases) == {("a", "d"), ("a", "e"), ("b", "d"), ("b", "e"), ("c", "d"),
                          ("c", "e")}
    for pair in [("a", "d"), ("a", "e"), ("c", "d"), ("c", "e"), ("b", "d")]:
        # ahead on all 10 tasks: the smallest p, a pair named by its sizes (threshold 0.05)
        assert cases[pair]["holds"] and cases[pair]["p_small_beats_large"] == 1.0
        assert (cases[pair]["p_value"], cases[pair]["wins"], cases[pair]["losses"],
                cases[pair]["method"]) == (2 / 2 ** 10, 10, 0, "exact")
    noise = cases[("b", "e")]
    assert noise["delta"] == pytest.approx(0.001) and not noise["holds"]
    assert noise["p_value"] == _sign_flip_loop(draws, "b", "e", "macro") > 0.5
    assert noise["p_small_beats_large"] == _p_loop(draws, "b", "e", "macro")
    models = draws.entries["model"].to_list()
    diff = draws.values[:, models.index("b"), 1] - draws.values[:, models.index("e"), 1]
    assert (noise["low"], noise["high"]) == tuple(np.quantile(diff, [0.025, 0.975]))
    assert noise["low"] < 0 < noise["high"]
    # sorted by the sign-flip p, lowest first
    assert out["p_value"].to_list() == sorted(out["p_value"])
    summary = smaller_beats_larger_summary({"full": out, "1shot": out.head(0)})
    assert summary.rows() == [("full", 6, 5), ("1shot", 0, 0)]
    # "5x larger" is params_small * 5 <= params_large; the ratio can be changed
    assert smaller_beats_larger(draws, MODELS, ratio=100).select(
        "model_small", "model_large").rows() == [("a", "e")]


def test_smaller_beats_larger_pairs_entries_of_one_source_only():
    rng = np.random.default_rng(4)
    base = _level(0.5, rng, sd=0.0)
    scores = pl.concat([_scores({"a": base + 0.1, "e": base}, source="official"),
                        _scores({"e": base + 0.3}, source="local"),
                        _scores({"a": base}, source="local")])
    out = smaller_beats_larger(draw(scores, tasks=TASKS, n=100), MODELS)
    assert out.select("source", "model_small", "model_large").rows() == [
        ("official", "a", "e")]


def test_point_frame_is_the_aggregates_and_ranks_average_ties():
    scores = _sized_scores()
    draws = draw(scores, tasks=TASKS, n=10)
    agg = aggregates(scores, tasks=TASKS).select("model", "micro", "macro", "Promoters",
                                                  "Enhancers")
    assert point_frame(draws).sort("model").equals(agg.sort("model"))
    x = np.random.default_rng(0).integers(0, 4, size=(50, 9)).astype(float)   # many ties
    assert np.array_equal(tie_mean_ranks(x), rankdata(x, method="average", axis=1))
    # Row by row Spearman: untied rows by sorted position, tied and constant rows ranked.
    fixed = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0])
    rows = np.vstack([x, np.random.default_rng(1).normal(size=(50, 9)), np.ones((1, 9))])
    got = _row_spearman(fixed, rows)
    want = [spearmanr(fixed, r).statistic for r in rows[:-1]]
    assert got[:-1] == pytest.approx(want, abs=1e-14) and np.isnan(got[-1])
