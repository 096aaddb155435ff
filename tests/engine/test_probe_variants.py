"""Protocol variants: their identity, their result rows, and the seeded MLP probe."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from engine.probes.cell import run_cells
from engine.probes.exact import few_shot_indices
from engine.probes.mlp import BatchedMLPClassifier
from store.vocab.protocol import (
    GENEB_V1,
    GENEB_V1_CONVERGED,
    MLP,
    NAMED,
    REGIME_K,
    REGIMES,
    SEEDS,
    name_of,
    protocol_named,
    protocols_named,
    sweep_protocols,
)

ROW_KEYS = {"regime", "seed", "probe", "mcc", "acc", "f1_macro", "degenerate", "n_train",
            "n_test", "converged", "n_iter", "shared_fit", "fit_seconds", "pred"}


@pytest.fixture(scope="module")
def cell() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 16)).astype(np.float32) * 2 + 1
    y = (X[:, 0] - X[:, 1] + rng.normal(size=400) > 2).astype(int)
    return X[:300], y[:300], X[300:], y[300:]


def test_variant_hashes_differ_from_geneb_v1_and_from_each_other() -> None:
    variants = [group[0] for name, group in NAMED.items() if name != "geneb-v1" and len(group) == 1]
    hashes = [p.hash for p in variants]
    assert GENEB_V1.hash not in hashes
    assert len(set(hashes)) == len(hashes)
    assert NAMED["geneb-v1-converged"] == (GENEB_V1_CONVERGED,)
    assert [p.C for p in sweep_protocols()] == [0.01, 0.1, 1.0, 10.0, 100.0]


@pytest.mark.parametrize(("name", "hash_"), [
    ("geneb-v1", "7ca1440b4506"),
    ("geneb-v1-converged", "9750b993e2bb"),
    ("mlp-h256", "e4581e492350"),
    ("geneb-v1-array-api", "a2e2c2683d79"),
    ("converged-C0.01-unscaled", "0103cee5fe2f"),
])
def test_protocol_hashes_are_those_of_the_stored_results(name: str, hash_: str) -> None:
    assert protocol_named(name).hash == hash_
    assert name_of(hash_) == name


def test_the_table_lists_names_in_order_and_expands_groups_once() -> None:
    assert list(NAMED)[:5] == ["geneb-v1", "geneb-v1-array-api", "sweep", "sweep-unscaled",
                               "converged-C0.01"]
    assert list(NAMED)[-2:] == ["mlp-h256", "variant-llr-v1"]   # the opt-in kind protocols last
    assert NAMED["sweep"] == sweep_protocols()
    assert NAMED["sweep-unscaled"] == sweep_protocols(standardize=False)
    assert protocols_named(["geneb-v1-converged", "sweep", "geneb-v1"]) == (
        GENEB_V1_CONVERGED, *(p for p in sweep_protocols() if p != GENEB_V1_CONVERGED), GENEB_V1)
    assert protocol_named("sweep") is None and protocol_named("mlp") is None
    assert name_of("0123456789ab") == "0123456789ab"


def test_only_the_logistic_probe_shares_its_full_fit_across_seeds() -> None:
    assert GENEB_V1.shares_full_fit and GENEB_V1_CONVERGED.shares_full_fit
    assert not MLP.shares_full_fit


def test_converged_rows_cover_every_regime_and_seed_with_the_official_draws(cell) -> None:
    X, y, X_test, y_test = cell
    [rows] = run_cells(X, y, X_test, y_test, [GENEB_V1_CONVERGED], REGIMES)
    assert len(rows) == len(REGIMES) * len(SEEDS)
    assert all(set(r) == ROW_KEYS and r["probe"] == "logreg" and r["converged"] for r in rows)
    full = [r for r in rows if r["regime"] == "full"]
    assert all(r["shared_fit"] and r["n_train"] == 300 for r in full)
    assert len({r["mcc"] for r in full}) == 1
    for r in rows:
        if r["regime"] != "full":
            k = REGIME_K[r["regime"]]
            assert not r["shared_fit"]
            assert r["n_train"] == len(few_shot_indices(y, k, r["seed"]))
            assert r["n_test"] == 100


def test_a_sweep_batched_over_C_gives_the_rows_of_separate_runs(cell) -> None:
    X, y, X_test, y_test = cell
    protocols = sweep_protocols((0.1, 1.0, 10.0))
    together = run_cells(X, y, X_test, y_test, protocols, REGIMES)
    for p, rows in zip(protocols, together, strict=True):
        [alone] = run_cells(X, y, X_test, y_test, [p], REGIMES)
        assert [r["mcc"] for r in rows] == pytest.approx([r["mcc"] for r in alone], abs=1e-12)


def test_geneb_v1_is_not_a_variant(cell) -> None:
    with pytest.raises(ValueError, match="engine.probes.exact"):
        run_cells(*cell, [GENEB_V1], REGIMES)


def test_mlp_is_deterministic_given_the_seed(cell) -> None:
    X, y, X_test, _ = cell
    fit = dict(hidden=8, max_iter=30, dtype=torch.float64)  # float64: batch == single to 1e-6
    a = BatchedMLPClassifier(**fit).fit(X, np.stack([y, y]), seeds=[13, 17])
    b = BatchedMLPClassifier(**fit).fit(X, np.stack([y, y]), seeds=[13, 17])
    single = BatchedMLPClassifier(**fit).fit(X, y, seeds=[17])
    assert np.array_equal(a.theta_.numpy(), b.theta_.numpy())
    assert not np.array_equal(a.theta_.numpy()[0], a.theta_.numpy()[1])
    np.testing.assert_allclose(a.theta_.numpy()[1], single.theta_.numpy()[0], rtol=1e-6, atol=1e-9)
    assert np.array_equal(a.predict(X_test), b.predict(X_test))


def test_mlp_rows_carry_the_mlp_probe_and_seeded_full_fits(cell) -> None:
    X, y, X_test, y_test = cell
    small = dataclasses.replace(MLP, hidden=8, max_iter=20)
    [rows] = run_cells(X, y, X_test, y_test, [small], ("full", "1shot"))
    assert len(rows) == 2 * len(SEEDS)
    assert all(set(r) == ROW_KEYS and r["probe"] == "mlp" and not r["shared_fit"] for r in rows)
    assert small.hash != MLP.hash
