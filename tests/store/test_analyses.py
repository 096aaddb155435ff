"""The analyses: hand-checked definitions on tiny frames, and the official store's facts."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy.stats import permutation_test, spearmanr

from store.analyses.aggregates import aggregates
from store.analyses.controlled import controlled_pairs
from store.analyses.degradation import degradation, degradation_summary
from store.analyses.difficulty import task_difficulty
from store.analyses.leaders import category_leaders, leader_changes
from store.analyses.rankings import (
    EXACT_SPEARMAN,
    borda,
    category_agreement,
    rank_shift,
    rankings,
    spearman,
    spearman_regimes,
)
from store.analyses.scale import scale_correlation
from store.analyses.scores import scores, scores_of, seed_means
from store.catalog import CATEGORY_ORDER, TaskMeta
from store.tables.catalogs import read_catalog
from store.vocab.protocol import REGIMES

# A two-category suite: A has tasks a1, a2; B has b1.
TASKS = [TaskMeta("a1", "A one", "Promoters", "toy", "x"),
         TaskMeta("a2", "A two", "Promoters", "toy", "x"),
         TaskMeta("b1", "B one", "Enhancers", "toy", "x")]
CATS = {"a1": "Promoters", "a2": "Promoters", "b1": "Enhancers"}


def _scores(values: dict[str, dict[str, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        [{"model": m, "task": t, "category": CATS[t], "value": v}
         for m, per_task in values.items() for t, v in per_task.items()],
        schema={"model": pl.String, "task": pl.String, "category": pl.String,
                "value": pl.Float64})


def _agg(rows: dict[str, tuple[float | None, ...]], columns=("macro", *CATEGORY_ORDER)):
    return pl.DataFrame([{"model": m, **dict(zip(columns, v, strict=True))}
                         for m, v in rows.items()],
                        schema={"model": pl.String, **{c: pl.Float64 for c in columns}})


def test_aggregates_follow_the_official_definitions_and_never_average_what_exists():
    agg = aggregates(_scores({"m": {"a1": 0.2, "a2": 0.4, "b1": 0.9},
                              "n": {"a1": 0.5, "b1": 0.1}}),
                     tasks=TASKS, missing_by_category=True)
    assert agg.columns == ["model", "micro", "macro", "Promoters", "Enhancers", "n_missing",
                           "Promoters missing", "Enhancers missing"]
    m, n = agg.rows(named=True)
    assert m["Promoters"] == pytest.approx(0.3)
    assert m["micro"] == pytest.approx(0.5)           # mean of the 3 tasks
    assert m["macro"] == pytest.approx(0.6)           # mean of the 2 category means
    assert (m["n_missing"], m["Promoters missing"]) == (0, 0)
    assert (n["Promoters"], n["micro"], n["macro"]) == (None, None, None)
    assert n["Enhancers"] == 0.1
    assert (n["n_missing"], n["Promoters missing"], n["Enhancers missing"]) == (1, 1, 0)


def test_rankings_give_ties_the_best_rank_and_nulls_none():
    agg = _agg({"a": (0.5,), "b": (0.7,), "c": (0.5,), "d": (None,)}, ("macro",))
    ranks = dict(rankings(agg).iter_rows())
    assert ranks == {"a": 2, "b": 1, "c": 2, "d": None}


def test_borda_counts_points_over_complete_entries():
    cats = ("Promoters", "Enhancers")
    agg = _agg({"a": (0.9, 0.1), "b": (0.5, 0.5), "c": (0.1, 0.9), "d": (0.8, None)}, cats)
    result = {r["model"]: r for r in borda(agg, cats).iter_rows(named=True)}
    # 3 complete entries: points = 3 - rank; a: 2 + 0, b: 1 + 1, c: 0 + 2.
    assert [result[m]["borda"] for m in "abc"] == [2, 2, 2]
    assert [result[m]["borda_rank"] for m in "abc"] == [1, 1, 1]
    assert result["b"]["mean_rank"] == 2.0
    assert (result["d"]["borda"], result["d"]["borda_rank"]) == (None, None)


def test_rank_shift_is_positive_for_a_climb():
    full = _agg({"a": (0.9,), "b": (0.8,), "c": (0.7,), "d": (0.6,)}, ("macro",))
    few = _agg({"a": (0.1,), "b": (0.3,), "c": (0.2,), "d": (None,)}, ("macro",))
    shift = {r["model"]: (r["rank_a"], r["rank_b"], r["shift"])
             for r in rank_shift(full, few).iter_rows(named=True)}
    assert shift == {"a": (1, 3, -2), "b": (2, 1, 1), "c": (3, 2, 1)}


def test_spearman_agrees_with_scipy_and_is_null_when_undefined():
    """rho is scipy's; the p-value is scipy's t approximation above EXACT_SPEARMAN pairs and an
    exact permutation p-value up to it (`scipy.stats.permutation_test`, every pairing)."""
    x = [0.1, 0.4, 0.4, 0.9, None, 0.3, 0.7, 0.2, 0.5]
    y = [0.2, 0.1, 0.5, 0.8, 0.7, None, 0.6, 0.3, 0.9]
    both = [(a, b) for a, b in zip(x, y, strict=True) if a is not None and b is not None]
    xs, ys = (np.array(v) for v in zip(*both, strict=True))
    rho, p, n = spearman(x, y)
    exact = permutation_test((ys,), lambda b: spearmanr(xs, b).statistic,
                             permutation_type="pairings", n_resamples=math.inf)
    assert (rho, p, n) == (pytest.approx(spearmanr(xs, ys).statistic, abs=1e-12),
                           pytest.approx(exact.pvalue, abs=1e-12), 7)
    assert spearman([1.0, 2.0], [2.0, 1.0]) == (None, None, 2)
    assert spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) == (None, None, 3)
    # three entries in the same order: 2 of the 3! orderings reach |rho| = 1 (the t
    # approximation says p = 0, which three entries cannot show)
    assert spearman([1.0, 2.0, 3.0], [0.1, 0.2, 0.3]) == (pytest.approx(1.0),
                                                          pytest.approx(1 / 3), 3)
    big_x, big_y = list(range(12)), [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10]
    assert spearman(big_x, big_y)[1] == pytest.approx(spearmanr(big_x, big_y).pvalue, abs=1e-12)
    assert EXACT_SPEARMAN < 12


def test_degradation_drops_and_ratios():
    aggs = {"full": _agg({"a": (0.8,), "b": (0.0,)}, ("macro",)),
            "10shot": _agg({"a": (0.6,), "b": (0.1,)}, ("macro",)),
            "1shot": _agg({"a": (0.2,), "b": (None,)}, ("macro",))}
    deg = {r["model"]: r for r in degradation(aggs).iter_rows(named=True)}
    a, b = deg["a"], deg["b"]
    assert (a["drop_10shot"], a["rel_drop_10shot"], a["retention_10shot"]) == (
        pytest.approx(0.2), pytest.approx(0.25), pytest.approx(0.75))
    assert (a["drop_1shot"], a["retention_1shot"]) == (pytest.approx(0.6), pytest.approx(0.25))
    assert (b["drop_10shot"], b["rel_drop_10shot"], b["retention_10shot"]) == (
        pytest.approx(-0.1), None, None)  # no ratio unless full > 0
    assert b["drop_1shot"] is None
    summary = degradation_summary(degradation(aggs)).row(0, named=True)
    assert (summary["scope"], summary["n"]) == ("macro", 2)
    assert summary["10shot"] == pytest.approx(0.35)
    assert summary["retention_10shot"] == pytest.approx(0.75)  # b has none


MODELS = pl.DataFrame({
    "model_id": ["a", "b", "c", "z"],
    "params": [10_000_000, 300_000_000, 2_000_000_000, 0],
    "architecture_family": ["Mamba", "Mamba", "Transformer decoder", "Baseline"],
    "tokenization_family": ["k-mer", "BPE", "BPE", "k-mer"],
    "pretraining_data": ["human", "human", "human", "none"],
    "scale_band": ["<100M", "<100M", ">1B", "n/a"],
})


def test_controlled_pairs_differ_in_exactly_one_attribute():
    cats = ("macro", "Promoters", "Enhancers")
    agg = _agg({"a": (0.5, 0.6, 0.4), "b": (0.4, 0.6, 0.2), "c": (0.3, 0.2, 0.4),
                "z": (0.1, 0.1, 0.1)}, cats)
    pairs = controlled_pairs(agg, MODELS)
    assert pairs.select("model_a", "model_b", "attribute", "value_a", "value_b").rows() == [
        ("a", "b", "tokenization_family", "k-mer", "BPE")]
    row = pairs.row(0, named=True)
    assert (row["macro"], row["Promoters"], row["Enhancers"]) == (
        pytest.approx(0.1), 0.0, pytest.approx(0.2))
    assert (row["wins_a"], row["wins_b"], row["ties"]) == (1, 0, 1)
    named = controlled_pairs(agg, MODELS, pairs=[("b", "c")]).row(0, named=True)
    assert (named["attribute"], named["value_a"], named["value_b"]) == (
        "architecture_family, scale_band", "Mamba, <100M", "Transformer decoder, >1B")
    assert (named["wins_a"], named["wins_b"]) == (1, 1)


def test_task_difficulty_uses_the_sample_sd_and_the_thresholds():
    s = _scores({"m": {"a1": 0.9, "a2": 0.2, "b1": 0.5}, "n": {"a1": 0.7, "a2": 0.3, "b1": 0.5},
                 "o": {"a1": 0.8, "a2": 0.1}})
    rows = {r["task"]: r for r in task_difficulty(s, tasks=TASKS).iter_rows(named=True)}
    a1, a2, b1 = rows["a1"], rows["a2"], rows["b1"]
    assert (a1["mean"], a1["sd"], a1["best_model"]) == (
        pytest.approx(0.8), pytest.approx(0.1), "m")  # sd with ddof=1
    assert (a1["easy"], a1["hard"], a1["high_variance"]) == (True, False, False)
    assert (a2["hard"], a2["easy"]) == (True, False)
    assert (b1["n_models"], b1["sd"], b1["best_model"]) == (2, 0.0, "m")  # tie: first id
    custom = task_difficulty(s, easy=0.85, hard=0.1, high_var=0.05, tasks=TASKS)
    assert custom["easy"].to_list() == [False, False, False]
    assert custom["high_variance"].to_list() == [True, True, False]


def test_category_leaders_and_their_changes():
    aggs = {"full": _agg({"a": (0.9, 0.5), "b": (0.8, 0.6)}, ("macro", "Promoters")),
            "1shot": _agg({"a": (0.2, 0.5), "b": (0.3, 0.4)}, ("macro", "Promoters"))}
    leaders = category_leaders(aggs)
    assert leaders.select("regime", "scope", "model", "runner_up").rows() == [
        ("full", "macro", "a", "b"), ("full", "Promoters", "b", "a"),
        ("1shot", "macro", "b", "a"), ("1shot", "Promoters", "a", "b")]
    assert leaders["margin"].to_list() == pytest.approx([0.1, 0.1, 0.1, 0.1])
    assert leader_changes(leaders).rows() == [("macro", "a", "b", True),
                                              ("Promoters", "b", "a", True)]


# -- on the official store -------------------------------------------------------------------

def test_official_category_agreement_is_symmetric_and_matches_scipy(official_store):
    agg = aggregates(scores(official_store))
    square = category_agreement(agg)
    assert square.columns == ["category", *CATEGORY_ORDER]
    matrix = square.drop("category").to_numpy()
    assert (matrix == matrix.T).all()
    assert matrix.diagonal().tolist() == [1.0] * 13
    ref = spearmanr(agg["Promoters"].to_list(), agg["lncRNA"].to_list()).statistic
    assert square.filter(category="Promoters")["lncRNA"].item() == pytest.approx(ref, abs=1e-12)


def test_official_regime_agreement_and_leaders(official_store):
    means = seed_means(official_store, source="official")   # as `geneb-engine report` reads
    aggs = {r: aggregates(scores_of(means, regime=r, with_source=False)) for r in REGIMES}
    pairs = spearman_regimes(aggs)
    assert pairs.select("regime_a", "regime_b", "n").rows() == [
        ("full", "10shot", 40), ("full", "1shot", 40), ("10shot", "1shot", 40)]
    full, one = (aggs[r].sort("model") for r in ("full", "1shot"))
    ref = spearmanr(full["macro"], one["macro"])
    assert pairs["rho"][1] == pytest.approx(ref.statistic, abs=1e-12)
    assert pairs["p_value"][1] == pytest.approx(ref.pvalue, rel=1e-9)
    changes = leader_changes(category_leaders(aggs))
    macro = changes.filter(scope="macro").row(0, named=True)
    assert (macro["full"], macro["10shot"], macro["1shot"], macro["changed"]) == (
        "GENERator-eukaryote-3b-base", "GenomeOcean-4B", "GenomeOcean-4B", True)


def test_official_scale_correlation_matches_scipy_and_honours_exclusions(official_store):
    agg = aggregates(scores(official_store, source="official"))
    models = read_catalog(official_store, "models")
    scale = scale_correlation(agg, models)
    assert scale["scope"].to_list() == ["micro", "macro", *CATEGORY_ORDER]
    joined = agg.join(models.select(pl.col("model_id").alias("model"), "params"), on="model")
    ref = spearmanr(joined["params"], joined["macro"])
    macro = scale.filter(scope="macro").row(0, named=True)
    assert (macro["rho"], macro["p_value"], macro["n"]) == (
        pytest.approx(ref.statistic, abs=1e-12), pytest.approx(ref.pvalue, rel=1e-9), 40)
    fewer = scale_correlation(agg, models, exclude=["evo-1-131k-base", "METAGENE-1"])
    assert set(fewer["n"]) == {38}
