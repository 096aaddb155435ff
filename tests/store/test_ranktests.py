"""Rank tests across tasks: a hand-computed case, scipy / autorank / scikit-posthocs on the
official results, Holm's correction by hand and by its textbook loop."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from store.analyses.ranktests import (
    average_ranks,
    critical_difference,
    friedman,
    rank_tests,
    scope_average_ranks,
    wilcoxon_holm,
)
from store.analyses.scores import scores
from store.catalog import CATEGORY_ORDER, TaskMeta, geneb_v1_tasks

ROOT = Path(__file__).resolve().parents[2]
TASKS4 = [TaskMeta(f"t{i}", f"T{i}", "Promoters", "toy", "x") for i in range(1, 5)]


def _frame(values: dict[str, dict[str, float]], category="Promoters", **extra) -> pl.DataFrame:
    return pl.DataFrame(
        [{"model": m, "task": t, "category": category, "value": v, **extra}
         for m, per_task in values.items() for t, v in per_task.items()],
        schema={"model": pl.String, "task": pl.String, "category": pl.String,
                "value": pl.Float64, **{k: pl.String for k in extra}})


# Three models on four tasks; on t2 A and B tie (ranks 1.5, 1.5). Ranks per task:
#   t1: A 1, B 2, C 3   t2: A 1.5, B 1.5, C 3   t3: B 1, C 2, A 3   t4: A 1, C 2, B 3
# rank sums A 6.5, B 7.5, C 10; N = 4, k = 3.
HAND = {"A": {"t1": 0.9, "t2": 0.8, "t3": 0.3, "t4": 0.7},
        "B": {"t1": 0.5, "t2": 0.8, "t3": 0.6, "t4": 0.2},
        "C": {"t1": 0.1, "t2": 0.2, "t3": 0.4, "t4": 0.5}}


def test_hand_computed_three_models_four_tasks_with_a_tie():
    frame = pl.concat([
        _frame(HAND),
        _frame({"D": {"t1": 0.99, "t2": 0.99, "t3": 0.99}}),   # misses t4: left out
        _frame({"A": {"other": 0.0}, "B": {"other": 1.0}}),      # not an expected task
    ])
    ranks = average_ranks(frame, tasks=TASKS4)
    assert ranks.columns == ["model", "average_rank"]
    assert ranks.rows() == [("A", 6.5 / 4), ("B", 7.5 / 4), ("C", 10 / 4)]

    row = friedman(frame, tasks=TASKS4).row(0, named=True)
    # 12 / (N k (k+1)) * sum R^2 - 3 N (k+1) = 0.25 * 198.5 - 48 = 1.625; one tie group of 2
    # gives C = 1 - (2^3 - 2) / (N k (k^2 - 1)) = 1 - 6 / 96; 1.625 / 0.9375 = 26 / 15.
    assert row["n_models"] == 3 and row["n_tasks"] == 4 and row["alpha"] == 0.05
    assert row["statistic"] == pytest.approx(26 / 15, rel=1e-12)
    assert row["p_value"] == pytest.approx(math.exp(-13 / 15), rel=1e-12)  # chi2(2): e^(-x/2)
    # Demsar (2006) table 5(a): q_0.05 = 2.343 for k = 3; CD = q sqrt(k (k+1) / (6 N)).
    assert row["critical_difference"] == pytest.approx(2.343 * math.sqrt(12 / 24), abs=1e-3)
    # Tukey's table: q(0.95; 3, inf) = 3.314 on the studentized range scale.
    assert row["critical_difference"] == pytest.approx(3.3145 / math.sqrt(2) * math.sqrt(0.5),
                                                       abs=1e-4)
    # without the tie correction the statistic would be 1.625: the correction is applied
    assert row["statistic"] != pytest.approx(1.625)


def test_entries_are_keyed_by_model_and_source():
    frame = pl.concat([_frame(HAND, source="official"),
                       _frame({"A": {t: v - 0.05 for t, v in HAND["A"].items()}},
                              source="local")])
    ranks = average_ranks(frame, tasks=TASKS4)
    assert ranks.columns == ["model", "source", "average_rank"]
    assert ranks.height == 4
    assert friedman(frame, tasks=TASKS4)["n_models"][0] == 4
    # a model under two sources is ambiguous for a named pair
    with pytest.raises(ValueError, match="several sources"):
        wilcoxon_holm(frame, [("A", "B")], tasks=TASKS4)


def test_undefined_statistics_are_null():
    two = _frame({m: HAND[m] for m in ("A", "B")})
    row = friedman(two, tasks=TASKS4).row(0, named=True)
    assert row["statistic"] is None and row["p_value"] is None   # Friedman needs k >= 3
    assert row["critical_difference"] == pytest.approx(critical_difference(2, 4))
    none = friedman(_frame({"A": {"t1": 0.5}}), tasks=TASKS4).row(0, named=True)
    assert none["n_models"] == 0 and none["critical_difference"] is None
    assert average_ranks(_frame({"A": {"t1": 0.5}}), tasks=TASKS4).height == 0
    ties = _frame({m: dict.fromkeys(("t1", "t2", "t3", "t4"), 0.5) for m in "ABC"})
    assert friedman(ties, tasks=TASKS4)["statistic"][0] is None   # every task ties everyone
    with pytest.raises(ValueError, match="alpha"):
        friedman(two, tasks=TASKS4, alpha=1.0)


def test_scopes_are_all_then_categories_with_enough_tasks():
    tasks = ([TaskMeta(f"p{i}", "", "Promoters", "toy", "x") for i in range(5)]
             + [TaskMeta(f"e{i}", "", "Enhancers", "toy", "x") for i in range(4)]
             + [TaskMeta(f"h{i}", "", "Histone Mod.", "toy", "x") for i in range(6)])
    rng = np.random.default_rng(3)
    rows = {m: {t.task_id: float(rng.uniform()) for t in tasks} for m in "ABCD"}
    del rows["D"]["h0"]          # D is complete on Promoters only
    frame = pl.concat([_frame({m: {t: v}}, category=next(x.category for x in tasks
                                                          if x.task_id == t))
                       for m, per in rows.items() for t, v in per.items()])
    tests = rank_tests(frame, tasks=tasks)
    assert tests.columns == ["scope", "n_models", "n_tasks", "statistic", "p_value",
                             "critical_difference", "alpha"]
    # CATEGORY_ORDER puts Histone Mod. first; Enhancers has 4 < 5 tasks
    assert tests.select("scope", "n_models", "n_tasks").rows() == [
        ("all", 3, 15), ("Histone Mod.", 3, 6), ("Promoters", 4, 5)]
    assert rank_tests(frame, tasks=tasks, min_tasks=4)["scope"].to_list() == [
        "all", "Histone Mod.", "Promoters", "Enhancers"]
    by_scope = scope_average_ranks(frame, tasks=tasks)
    assert by_scope.columns == ["scope", "model", "average_rank"]
    promoters = [t for t in tasks if t.category == "Promoters"]
    assert (by_scope.filter(pl.col("scope") == "Promoters").drop("scope")
            .equals(average_ranks(frame, tasks=promoters)))
    assert by_scope.filter(pl.col("scope") == "all")["model"].sort().to_list() == ["A", "B", "C"]


def _wide(frame: pl.DataFrame):
    """The (tasks x models) pandas matrix autorank and scikit-posthocs take."""
    return frame.pivot(on="model", index="task", values="value").to_pandas().set_index("task")


@pytest.fixture(scope="module")
def official_scores(official_store):
    return {m: scores(official_store, regime="full", metric=m, source="official")
            for m in ("mcc", "acc")}


@pytest.mark.parametrize("metric", ["mcc", "acc"])
def test_official_friedman_equals_scipy_in_every_scope(official_scores, metric):
    frame = official_scores[metric]
    tests = rank_tests(frame)
    big = [c for c in CATEGORY_ORDER
           if sum(t.category == c for t in geneb_v1_tasks()) >= 5]
    assert tests["scope"].to_list() == ["all", *big]
    assert len(big) == 8
    for row in tests.iter_rows(named=True):
        sub = frame if row["scope"] == "all" else frame.filter(pl.col("category") == row["scope"])
        matrix = _wide(sub).to_numpy()
        ref = stats.friedmanchisquare(*matrix.T)
        assert (row["n_models"], row["n_tasks"]) == (40, matrix.shape[0])
        assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("metric", ["mcc", "acc"])
def test_official_ranks_and_critical_difference_equal_autorank_and_scikit_posthocs(
        official_scores, metric):
    import scikit_posthocs as sp
    from autorank import autorank
    from statsmodels.stats.libqsturng import qsturng

    frame = official_scores[metric]
    wide = _wide(frame)
    ours = dict(average_ranks(frame).iter_rows())
    row = friedman(frame).row(0, named=True)
    cd = row["critical_difference"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = autorank(wide, alpha=0.05, verbose=False, order="descending",
                       force_mode="nonparametric")
    assert res.omnibus == "friedman" and res.posthoc == "nemenyi"
    assert res.pvalue == pytest.approx(row["p_value"], abs=1e-300)
    meanrank = res.rankdf["meanrank"]
    assert set(meanrank.index) == set(ours) and len(ours) == 40
    assert max(abs(meanrank[m] - v) for m, v in ours.items()) < 1e-6
    # autorank takes q from statsmodels' interpolated table (qsturng, ~3e-4 off the exact
    # quantile at k = 40); its formula is ours: the CDs differ by the quantiles' ratio only.
    exact_q = stats.studentized_range.ppf(0.95, 40, np.inf)
    assert res.cd / cd == pytest.approx(qsturng(0.95, 40, np.inf) / exact_q, rel=1e-9)
    assert res.cd == pytest.approx(cd, rel=1e-4)
    # scikit-posthocs' Nemenyi p-values use scipy's exact studentized range: at alpha = p_ij,
    # the critical difference is exactly the pair's average-rank difference.
    p = sp.posthoc_nemenyi_friedman(wide)
    checked = 0
    for i, a in enumerate(p.index):
        for b in p.index[i + 1:]:
            p_ab = float(p.loc[a, b])
            if 1e-4 < p_ab < 0.95:
                at = friedman(frame, alpha=p_ab)["critical_difference"][0]
                assert at == pytest.approx(abs(ours[a] - ours[b]), abs=1e-6)
                checked += 1
            # and at 0.05 the CD separates exactly the pairs scikit-posthocs rejects
            if abs(p_ab - 0.05) > 1e-9:
                assert (abs(ours[a] - ours[b]) > cd) == (p_ab < 0.05)
    assert checked > 100


def test_official_mcc_facts(official_scores):
    """The issue's numbers: CD about 6.4 for 40 models over 100 tasks, best average rank 4.8."""
    frame = official_scores["mcc"]
    assert friedman(frame)["critical_difference"][0] == pytest.approx(6.4273, abs=1e-4)
    best = average_ranks(frame).row(0, named=True)
    assert best == {"model": "GENERator-eukaryote-3b-base", "average_rank": pytest.approx(4.78)}


def _holm_loop(p: list[float], alpha: float) -> tuple[list[float], list[bool]]:
    """Holm's step-down as written in the textbooks: walk the sorted p-values, multiplier
    m - i, keep the running maximum; reject while p_(i) <= alpha / (m - i)."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted, reject, running, stopped = [0.0] * m, [False] * m, 0.0, False
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        adjusted[j] = running
        stopped = stopped or p[j] > alpha / (m - i)
        reject[j] = not stopped
    return adjusted, reject


def test_official_wilcoxon_equals_scipy_and_holm_equals_the_loop(official_scores):
    frame = official_scores["mcc"]
    ranked = average_ranks(frame)["model"].to_list()
    pairs = [("GenomeOcean-4B", "nucleotide-transformer-2.5b-multi-species"),
             (ranked[0], ranked[1]), (ranked[0], ranked[-1]), (ranked[3], ranked[4]),
             (ranked[10], ranked[12]), (ranked[20], ranked[21])]
    out = wilcoxon_holm(frame, pairs)
    assert out.columns == ["model_a", "model_b", "n_tasks", "mean_difference", "statistic",
                           "p_value", "p_holm", "reject"]
    wide = _wide(frame)
    for row, (a, b) in zip(out.iter_rows(named=True), pairs, strict=True):
        ref = stats.wilcoxon(wide[a].to_numpy(), wide[b].to_numpy())
        assert (row["model_a"], row["model_b"], row["n_tasks"]) == (a, b, 100)
        assert row["statistic"] == ref.statistic
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
        assert row["mean_difference"] == pytest.approx(float((wide[a] - wide[b]).mean()))
    adjusted, reject = _holm_loop(out["p_value"].to_list(), 0.05)
    assert out["p_holm"].to_list() == pytest.approx(adjusted, rel=1e-12)
    assert out["reject"].to_list() == reject
    assert out["reject"].to_list()[:3] == [False, True, True]   # #4/#5 of the issue: not separable


def test_wilcoxon_and_holm_by_hand():
    # Six tasks; A - B = +1..+6 (all positive), A - C has -1 at the smallest magnitude, A - D
    # -2 at the second smallest. Exact two-sided p (2^6 = 64 sign patterns):
    # B: 2 * 1/64, C: 2 * 2/64 (W- <= 1), D: 2 * 3/64 (W- <= 2: {}, {1}, {2}).
    tasks = [TaskMeta(f"t{i}", "", "Promoters", "toy", "x") for i in range(1, 7)]
    a = {f"t{i}": 0.5 + 0.01 * i for i in range(1, 7)}
    diff = {"B": [1, 2, 3, 4, 5, 6], "C": [-1, 2, 3, 4, 5, 6], "D": [1, -2, 3, 4, 5, 6]}
    values = {"A": a, "E": dict(a)}   # E equals A on every task: no test
    for m, d in diff.items():
        values[m] = {t: a[t] - 0.1 * x for t, x in zip(a, d, strict=True)}
    values["F"] = {t: a[t] - 0.1 * x for t, x in zip(a, [0, 1, 2, 3, 4, 5], strict=True)}
    frame = _frame(values)
    out = wilcoxon_holm(frame, [("A", "C"), ("A", "B"), ("A", "E"), ("A", "D")],
                        tasks=tasks, alpha=0.1)
    assert out["statistic"].to_list() == [1.0, 0.0, None, 2.0]
    assert out["p_value"].to_list() == pytest.approx([4 / 64, 2 / 64, None, 6 / 64])
    # Holm over the m = 3 tested pairs: sorted 2/64, 4/64, 6/64 -> 3 * 2/64 = 0.09375,
    # 2 * 4/64 = 0.125, max(0.125, 1 * 6/64) = 0.125.
    assert out["p_holm"].to_list() == pytest.approx([0.125, 0.09375, None, 0.125])
    assert out["reject"].to_list() == [False, True, None, False]
    assert out["n_tasks"].to_list() == [6, 6, 6, 6]
    assert out["mean_difference"].to_list() == pytest.approx([19 / 60, 0.35, 0.0, 17 / 60])
    # scipy's default zero handling drops the zero difference: A - F is +1..+5 on five tasks,
    # p = 2 / 2^5
    zero = wilcoxon_holm(frame, [("A", "F")], tasks=tasks).row(0, named=True)
    assert zero["p_value"] == pytest.approx(2 / 32) and zero["statistic"] == 0.0
    assert zero["n_tasks"] == 6


def test_wilcoxon_names_what_is_wrong():
    frame = _frame(HAND)
    with pytest.raises(ValueError, match="'Z' has no score"):
        wilcoxon_holm(frame, [("A", "Z")], tasks=TASKS4)
    with pytest.raises(ValueError, match="itself"):
        wilcoxon_holm(frame, [("A", "A")], tasks=TASKS4)
    with pytest.raises(ValueError, match="twice"):
        wilcoxon_holm(frame, [("A", "B"), ("B", "A")], tasks=TASKS4)
    empty = wilcoxon_holm(frame, [], tasks=TASKS4)
    assert empty.height == 0 and empty.columns[-1] == "reject"


def test_the_kept_nemenyi_q_are_scipys_and_the_view_tests_need_no_scipy_stats():
    """The q at alpha 0.05 kept for k = 2..200 are scipy's to the last bit, and so is one of
    another k; the Friedman row (statistic, p-value, CD) and a Wilcoxon pair (what the
    Significance view's first opening computes) need no scipy.stats import, and equal
    scipy's values."""
    from store.analyses.nemenyi_q import Q_05
    from store.analyses.ranktests import _nemenyi_q

    assert len(Q_05) == 199
    for k, q in enumerate(Q_05, start=2):
        assert q == float(stats.studentized_range.ppf(0.95, k, np.inf)) / math.sqrt(2), k
    assert _nemenyi_q(201, 0.05) == float(
        stats.studentized_range.ppf(0.95, 201, np.inf)) / math.sqrt(2)
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import polars as pl
        from store.analyses.ranktests import friedman, wilcoxon_holm
        from store.catalog import TaskMeta
        tasks = [TaskMeta(f"t{i}", f"T{i}", "Promoters", "toy", "x") for i in range(30)]
        values = np.random.default_rng(0).integers(0, 5, 360).astype(float)   # with ties
        frame = pl.DataFrame({"model": [f"m{j}" for i in range(30) for j in range(12)],
                              "task": [f"t{i}" for i in range(30) for j in range(12)],
                              "value": values})
        row = friedman(frame, tasks=tasks).row(0, named=True)
        pair = wilcoxon_holm(frame, [("m0", "m1")], tasks=tasks).row(0, named=True)
        print(repr(row["statistic"]), repr(row["p_value"]), repr(row["critical_difference"]),
              "scipy.stats" in sys.modules, repr(pair["statistic"]), repr(pair["p_value"]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.split()
    assert out[3] == "False"
    values = np.random.default_rng(0).integers(0, 5, 360).astype(float).reshape(30, 12)
    ref = stats.friedmanchisquare(*values.T)
    assert float(out[0]) == pytest.approx(ref.statistic, rel=1e-12)
    assert float(out[1]) == stats.chi2.sf(float(out[0]), 11)       # the same float
    assert float(out[2]) == Q_05[10] * math.sqrt(12 * 13 / (6 * 30))
    ref = stats.wilcoxon(values[:, 0], values[:, 1])           # ties and zeros: asymptotic
    assert (float(out[4]), float(out[5])) == (ref.statistic, ref.pvalue)


def test_average_ranks_equal_scipys_rankdata_with_ties_and_nan():
    from store.analyses.ranktests import _ranks

    rng = np.random.default_rng(1)
    values = rng.integers(0, 4, (50, 9)).astype(float)       # many ties
    values[3, 2], values[3, 5] = -0.0, 0.0                    # a tie too
    assert np.array_equal(_ranks(values), stats.rankdata(-values, method="average", axis=1))
    values[7, 1] = np.nan
    assert np.array_equal(_ranks(values), stats.rankdata(-values, method="average", axis=1),
                          equal_nan=True)
