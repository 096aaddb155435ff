"""The geneb-v1 probe equals a straight re-implementation of the official harness loop."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from engine.encoders.kmer import KmerEncoder
from engine.probes.exact import few_shot_indices, probe_cell
from store.vocab.protocol import SEEDS


def official_idx(ytr: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The official recipe, written from its description in the reference data README of GENEB."""
    rng = np.random.RandomState(seed)
    picks = []
    for cls in sorted(set(ytr.tolist())):
        locs = [i for i, y in enumerate(ytr.tolist()) if y == cls]
        picks.append(rng.choice(np.array(locs), size=min(k, len(locs)), replace=False))
    return np.concatenate(picks)


def official_loop(Xtr, ytr, Xte, yte):
    """run_GENEB.fit_eval: every regime fitted for every seed, sequentially."""
    out = {}
    for regime, k in (("full", None), ("10shot", 10), ("1shot", 1)):
        for seed in SEEDS:
            sel = np.arange(len(ytr)) if k is None else official_idx(ytr, k, seed)
            clf = LogisticRegression(max_iter=1000, random_state=seed).fit(Xtr[sel], ytr[sel])
            p = clf.predict(Xte)
            out[regime, seed] = (matthews_corrcoef(yte, p), accuracy_score(yte, p),
                                 f1_score(yte, p, average="macro"))
    return out


@pytest.fixture(params=[2, 5], ids=["binary", "5-class"])
def cell(request):
    n_classes = request.param
    rng = np.random.default_rng(n_classes)
    seqs, labels = [], []
    for i in range(400):
        lab = i % n_classes
        p = np.full(4, 0.25)
        p[lab % 4] += 0.05
        seqs.append("".join(rng.choice(list("ACGT"), size=150, p=p / p.sum())))
        labels.append(lab)
    X = KmerEncoder(3).encode(seqs)
    y = np.array(labels)
    return X[:300], y[:300], X[300:], y[300:]


def test_probe_equals_official_loop_for_every_regime_and_seed(cell):
    Xtr, ytr, Xte, yte = cell
    expected = official_loop(Xtr, ytr, Xte, yte)
    rows = probe_cell(Xtr, ytr, Xte, yte, ["full", "10shot", "1shot"])
    assert len(rows) == 15
    for r in rows:
        mcc, acc, f1 = expected[r["regime"], r["seed"]]
        assert (r["mcc"], r["acc"], r["f1_macro"]) == (mcc, acc, f1)
    # the full regime is one fit recorded for every seed, and says so
    full = [r for r in rows if r["regime"] == "full"]
    assert all(r["shared_fit"] for r in full) and len({r["mcc"] for r in full}) == 1
    assert {r["n_train"] for r in rows if r["regime"] == "10shot"} == {10 * len(set(ytr))}


@pytest.mark.parametrize("k", [1, 10])
@pytest.mark.parametrize("seed", SEEDS)
def test_few_shot_indices_follow_the_official_recipe(k, seed):
    y = np.random.default_rng(0).integers(0, 4, size=97)
    y[y == 3] = 7  # non-contiguous labels; class 7 sorts last
    y[:3] = 7
    np.testing.assert_array_equal(few_shot_indices(y, k, seed), official_idx(y, k, seed))


def test_few_shot_takes_whole_class_when_smaller_than_k():
    y = np.array([0] * 50 + [1] * 4)
    idx = few_shot_indices(y, 10, 13)
    assert sorted(idx[10:].tolist()) == [50, 51, 52, 53]


def test_convergence_and_degenerate_predictions_are_flagged():
    rng = np.random.default_rng(0)
    Xtr = rng.normal(size=(60, 5)) * 1e4          # unscaled: lbfgs stops at max_iter
    ytr = (Xtr[:, 0] > 0).astype(int)
    Xte = np.zeros((10, 5))                        # every test point predicted the same
    yte = np.array([0, 1] * 5)
    from store.vocab.protocol import Protocol

    (row, *_) = probe_cell(Xtr, ytr, Xte, yte, ["full"], protocol=Protocol(max_iter=2))
    assert row["converged"] is False and row["n_iter"] == 2
    assert row["degenerate"] is True and row["mcc"] == 0.0


def test_metrics_equal_scikit_learns_bit_for_bit():
    """`evaluate` computes MCC, accuracy and macro-F1 itself: the same bits as scikit-learn on
    random predictions of 1 to 11 classes (labels not from 0, classes only predicted or only
    true, one class predicted, perfect predictions, string labels)."""
    import warnings

    from engine.probes.exact import evaluate

    def bits(x: float) -> bytes:
        return np.float64(x).tobytes()

    rng = np.random.default_rng(7)
    for i in range(300):
        n, k = int(rng.integers(1, 300)), int(rng.integers(1, 12))
        y = rng.integers(0, k, n) + (3 if i % 5 == 0 else 0)
        p = [rng.integers(0, k + 2, n) + y.min(), np.where(rng.random(n) < .8, y, y[::-1]),
             np.full(n, y[0]), y.copy()][i % 4]
        if i % 7 == 0:
            y, p = np.array([f"c{v}" for v in y]), np.array([f"c{v}" for v in p])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = (matthews_corrcoef(y, p), accuracy_score(y, p),
                        f1_score(y, p, average="macro"))
        got = evaluate(y, p)
        assert [bits(got[m]) for m in ("mcc", "acc", "f1_macro")] == [bits(e) for e in expected]
        assert got["degenerate"] == (len(set(p.tolist())) < 2)
