"""The probes and metrics of the regression and variant kinds equal scikit-learn's and scipy's
(`engine.probes.kinds`, `engine.probes.scores`), and their protocols have hashes of their own."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cosine
from scipy.stats import pearsonr, spearmanr
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import average_precision_score, r2_score, roc_auc_score

from engine.data import KindTargets
from engine.probes.exact import few_shot_indices
from engine.probes.kinds import (
    cosine_distance,
    kind_rows,
    regression_draw,
    ridge_fit,
    variant_features,
)
from engine.probes.scores import auprc, auroc, pearson, r2, spearman
from store.vocab.kinds import ZERO_SHOT, TaskKind
from store.vocab.protocol import (
    GENEB_V1,
    KIND_PROTOCOLS,
    NAMED,
    RIDGE_V1,
    SEEDS,
    VARIANT_COSINE_V1,
    VARIANT_PROBE_V1,
    protocols_for,
)


@pytest.mark.parametrize("n, d", [(80, 12), (15, 40)])   # the primal and the dual solve
def test_ridge_is_scikit_learns_ridge(n, d):
    rng = np.random.default_rng(n)
    X = (rng.standard_normal((n, d)) * rng.uniform(0.01, 5, d) + 3).astype(np.float32)
    y = X[:, :3].sum(1) + rng.standard_normal(n)
    coef, intercept = ridge_fit(X, y, 1.0)
    ref = Ridge(alpha=1.0).fit(X.astype(np.float64), y)
    np.testing.assert_allclose(coef, ref.coef_, rtol=0, atol=1e-8)
    assert intercept == pytest.approx(ref.intercept_, abs=1e-8)


def test_correlations_and_r2_are_scipys_and_scikit_learns_with_ties():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 6, 50).astype(float)           # many ties in both
    p = np.round(y + rng.standard_normal(50), 1)
    assert pearson(y, p) == pytest.approx(pearsonr(y, p).statistic, abs=1e-12)
    assert spearman(y, p) == pytest.approx(spearmanr(y, p).statistic, abs=1e-12)
    assert r2(y, p) == pytest.approx(r2_score(y, p), abs=1e-12)
    assert np.isnan(pearson(y, np.full(50, 2.0)))      # constant predictions: undefined


def test_auroc_and_auprc_are_scikit_learns_with_ties():
    rng = np.random.default_rng(4)
    for _ in range(20):
        y = rng.integers(0, 2, 40)
        y[:2] = (0, 1)
        s = np.round(rng.standard_normal(40) + y, 1)    # tied scores across the labels
        assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        assert auprc(y, s) == pytest.approx(average_precision_score(y, s), abs=1e-12)


def test_the_cosine_distance_is_scipys():
    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((6, 9)), rng.standard_normal((6, 9))
    plain = [cosine(a, b) for a, b in zip(A, B, strict=True)]
    np.testing.assert_allclose(cosine_distance(A, B), plain, atol=1e-12)


@pytest.fixture(scope="module")
def variant_cell():
    """Distinct-sequence embeddings of two splits and a variant task's targets over them:
    each reference shared by three variants."""
    rng = np.random.default_rng(6)
    X_train = rng.standard_normal((120, 5)).astype(np.float32)
    X_test = rng.standard_normal((60, 5)).astype(np.float32)

    def pairs(n_ref: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        refs = np.repeat(np.arange(n_ref), 3)
        rows = np.stack([refs, n_ref + np.arange(len(refs))], 1)[:n]
        return rows, (np.arange(len(rows)) % 3 == 0).astype(np.int64)

    (r_train, y_train), (r_test, y_test) = pairs(30, 90), pairs(15, 45)
    return X_train, X_test, KindTargets(TaskKind.VARIANT, r_train, y_train, r_test, y_test)


def test_the_variant_probe_is_geneb_v1s_logistic_regression_on_ref_alt_and_their_difference(
        variant_cell):
    X_train, X_test, t = variant_cell
    rows = kind_rows(X_train, X_test, t, ((VARIANT_PROBE_V1, ("full", "10shot")),))
    plain_train = np.array([np.concatenate([X_train[r], X_train[a], X_train[a] - X_train[r]])
                            for r, a in t.rows_train])
    plain_test = np.array([np.concatenate([X_test[r], X_test[a], X_test[a] - X_test[r]])
                           for r, a in t.rows_test])
    np.testing.assert_array_equal(variant_features(X_train, t.rows_train), plain_train)
    full = LogisticRegression(max_iter=1000).fit(plain_train, t.y_train)
    score = full.predict_proba(plain_test)[:, 1]
    by = {(r["regime"], r["seed"]): r for r in rows}
    assert len(rows) == 2 * len(SEEDS)
    for seed in SEEDS:
        assert by["full", seed]["auroc"] == pytest.approx(roc_auc_score(t.y_test, score),
                                                          abs=1e-12)
        assert by["full", seed]["auprc"] == pytest.approx(
            average_precision_score(t.y_test, score), abs=1e-12)
        assert by["full", seed]["shared_fit"] and by["full", seed]["kind"] == "variant"
    idx = few_shot_indices(t.y_train, 10, 42)
    shot = LogisticRegression(max_iter=1000, random_state=42).fit(plain_train[idx],
                                                                   t.y_train[idx])
    assert by["10shot", 42]["auroc"] == pytest.approx(
        roc_auc_score(t.y_test, shot.predict_proba(plain_test)[:, 1]), abs=1e-12)
    assert by["10shot", 42]["n_train"] == 20 and by["10shot", 42]["n_test"] == 45


def test_the_zero_shot_score_is_one_row_per_seed_of_the_cosine_distance(variant_cell):
    X_train, X_test, t = variant_cell
    rows = kind_rows(X_train, X_test, t, ((VARIANT_COSINE_V1, (ZERO_SHOT,)),))
    score = [cosine(X_test[r].astype(float), X_test[a].astype(float)) for r, a in t.rows_test]
    assert [r["seed"] for r in rows] == list(SEEDS)
    assert [r["auroc"] for r in rows] == [pytest.approx(roc_auc_score(t.y_test, score),
                                                        abs=1e-12)] * len(SEEDS)
    assert all(r["n_train"] == 0 and r["regime"] == ZERO_SHOT for r in rows)


def test_ridge_rows_fit_all_train_rows_and_the_declared_draws():
    rng = np.random.default_rng(7)
    X_train, X_test = rng.standard_normal((50, 4)), rng.standard_normal((30, 4))
    rows_train = np.r_[np.arange(50), np.arange(10)]    # ten sequences used twice
    y_train = X_train[rows_train] @ [1, -2, 0, 0.5] + rng.standard_normal(60)
    y_test = X_test @ [1, -2, 0, 0.5] + rng.standard_normal(30)
    t = KindTargets(TaskKind.REGRESSION, rows_train, y_train, np.arange(30), y_test)
    rows = kind_rows(X_train, X_test, t, ((RIDGE_V1, ("full", "1shot")),))
    by = {(r["regime"], r["seed"]): r for r in rows}
    pred = Ridge(alpha=1.0).fit(X_train[rows_train], y_train).predict(X_test)
    assert by["full", 13]["pearson"] == pytest.approx(pearsonr(y_test, pred).statistic,
                                                      abs=1e-10)
    assert by["full", 13]["r2"] == pytest.approx(r2_score(y_test, pred), abs=1e-10)
    draw = np.random.RandomState(17).choice(60, size=2, replace=False)
    np.testing.assert_array_equal(regression_draw(60, 1, 17), draw)
    shot = Ridge(alpha=1.0).fit(X_train[rows_train][draw], y_train[draw]).predict(X_test)
    assert by["1shot", 17]["spearman"] == pytest.approx(spearmanr(y_test, shot).statistic,
                                                        abs=1e-10)
    assert by["full", 13]["n_train"] == 60 and by["1shot", 17]["n_train"] == 2


def test_the_kind_protocols_have_hashes_of_their_own_and_geneb_v1s_is_unchanged():
    assert GENEB_V1.hash == "7ca1440b4506"        # as recorded in every geneb-v1 result row
    kind_hashes = {p.hash for group in KIND_PROTOCOLS.values() for p in group}
    assert len(kind_hashes) == 5       # ridge-v1, the two variant ones, tracks', multilabel's
    assert {p.name: p.hash for group in KIND_PROTOCOLS.values() for p in group} == {
        "ridge-v1": "4afef3d31b75", "variant-cosine-v1": "d83cae041e56",   # as stored since
        "variant-probe-v1": "f9b28ab66d24",                                 # issue 44
        "ridge-tracks-v1": "7ea868d5c741", "ridge-multilabel-v1": "58a4761ec4aa"}
    assert kind_hashes.isdisjoint(p.hash for group in NAMED.values() for p in group)
    assert protocols_for("classification", [GENEB_V1]) == (GENEB_V1,)
    assert protocols_for("variant", [GENEB_V1]) == (VARIANT_COSINE_V1, VARIANT_PROBE_V1)
    assert VARIANT_COSINE_V1.regimes_of(["full", "1shot"]) == (ZERO_SHOT,)
    assert RIDGE_V1.regimes_of(["full", "1shot"]) == ("full", "1shot")
