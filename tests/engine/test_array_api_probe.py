"""geneb-v1-array-api: scikit-learn's own lbfgs on torch tensors through its array-API dispatch,
a protocol of its own beside geneb-v1 (here on the CPU's torch; `bench/array_api.py` measures it
on CUDA where a device is lent)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import sklearn
import torch
from sklearn.linear_model import LogisticRegression

from engine.cli import main
from engine.encoders.kmer import KmerEncoder
from engine.probes import probe_rows, runner
from engine.probes.array_api import run_cells
from engine.probes.exact import probe_cell
from store.db import query
from store.paths import resolve_store
from store.vocab.protocol import (
    GENEB_V1,
    GENEB_V1_ARRAY_API,
    NAMED,
    REGIMES,
    Solver,
    protocol_named,
)
from tests.engine.in_process import refused, run


def fill(capsys, store, suite, *extra: str) -> int:
    return run(capsys, "fill", "--store", str(store), "--suite", str(suite), *extra)[0]


ROW_KEYS = {"regime", "seed", "probe", "mcc", "acc", "f1_macro", "degenerate", "n_train",
            "n_test", "converged", "n_iter", "shared_fit", "fit_seconds", "pred"}


@pytest.fixture(scope="module", params=[2, 4], ids=["binary", "4-class"])
def cell(request):
    """3-mer profiles of sequences whose base composition carries the class (as the parity
    fixtures of test_probe_parity)."""
    n_classes = request.param
    rng = np.random.default_rng(n_classes)
    seqs, labels = [], []
    for i in range(400):
        p = np.full(4, 0.25)
        p[i % n_classes] += 0.06
        seqs.append("".join(rng.choice(list("ACGT"), size=150, p=p / p.sum())))
        labels.append(i % n_classes)
    X, y = KmerEncoder(3).encode(seqs), np.array(labels)
    return X[:300], y[:300], X[300:], y[300:]


def test_it_is_its_own_protocol_with_its_own_runner() -> None:
    assert NAMED["geneb-v1-array-api"] == (GENEB_V1_ARRAY_API,)
    assert protocol_named("geneb-v1-array-api").hash == "a2e2c2683d79"
    assert GENEB_V1_ARRAY_API.hash != GENEB_V1.hash
    # the probe itself is geneb-v1's: only the solver (where its arithmetic runs) differs
    assert (GENEB_V1_ARRAY_API.C, GENEB_V1_ARRAY_API.max_iter, GENEB_V1_ARRAY_API.standardize) \
        == (GENEB_V1.C, GENEB_V1.max_iter, GENEB_V1.standardize)
    assert runner(GENEB_V1_ARRAY_API.solver) is run_cells


def test_only_its_full_regime_runs_on_tensors_the_few_shot_ones_run_the_exact_path(
        cell, monkeypatch) -> None:
    """`probe_rows` gives the array-API runner the full regime alone; the few-shot rows are the
    exact CPU path's, bit for bit, under the variant's name and hash."""
    X, y, X_test, y_test = cell
    assert [GENEB_V1_ARRAY_API.solver_for(r) for r in REGIMES] == [
        Solver.SKLEARN_LBFGS_ARRAY_API, Solver.SKLEARN_LBFGS, Solver.SKLEARN_LBFGS]
    asked = []
    monkeypatch.setattr("engine.probes.array_api.run_cells",
                        lambda *a: asked.append(a[5]) or run_cells(*a))
    rows = probe_rows(X, y, X_test, y_test, ((GENEB_V1_ARRAY_API, REGIMES),), "cpu")
    assert asked == [("full",)]
    exact = {(r["regime"], r["seed"]): r for r in probe_cell(X, y, X_test, y_test, REGIMES)}
    assert sorted((r["regime"], r["seed"]) for r in rows) == sorted(exact)
    assert {(r["protocol"], r["protocol_hash"]) for r in rows} == {
        ("geneb-v1-array-api", GENEB_V1_ARRAY_API.hash)}
    for a in rows:
        b = exact[a["regime"], a["seed"]]
        if a["regime"] != "full":
            assert (a["mcc"], a["n_iter"]) == (b["mcc"], b["n_iter"])
            np.testing.assert_array_equal(a["pred"], b["pred"])


def test_rows_match_the_exact_cpu_path_on_the_parity_fixtures(cell) -> None:
    """The same rows; the full fits (4-5 lbfgs iterations) predict identically. The k-shot fits
    stop after 1-3 iterations with decision values near 1e-4, where the array-API path's
    intercept (about 4e-4 apart from numpy's on the binary 10-shot draw of seed 997) flips a few
    test rows: MCC differs by up to 0.025 there (measured), which is why this is a protocol of
    its own."""
    X, y, X_test, y_test = cell
    ours = run_cells(X, y, X_test, y_test, [GENEB_V1_ARRAY_API], REGIMES, "cpu")[0]
    exact = probe_cell(X, y, X_test, y_test, REGIMES)
    assert len(ours) == len(exact) == 15
    flipped = 0
    for a, b in zip(ours, exact, strict=True):
        assert set(a) == ROW_KEYS and isinstance(a["pred"], np.ndarray)
        assert (a["regime"], a["seed"], a["n_train"], a["shared_fit"]) == \
            (b["regime"], b["seed"], b["n_train"], b["shared_fit"])
        assert a["converged"] and b["converged"] and abs(a["n_iter"] - b["n_iter"]) <= 1
        if a["regime"] == "full":
            np.testing.assert_array_equal(a["pred"], b["pred"])
        assert abs(a["mcc"] - b["mcc"]) <= 0.03
        flipped += int(np.sum(a["pred"] != b["pred"]))
    assert flipped <= 0.01 * 15 * len(y_test)


def test_the_fit_runs_on_torch_tensors_inside_scikit_learn() -> None:
    """What the runner hands scikit-learn: tensors (coefficients come back as tensors), and the
    coefficients agree with numpy's fit to float32 rounding."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 12)).astype(np.float32)
    y = np.argmax(X[:, :3] + rng.normal(size=(500, 3)), 1)
    reference = LogisticRegression(max_iter=1000, random_state=13).fit(X, y)
    with sklearn.config_context(array_api_dispatch=True):
        clf = LogisticRegression(max_iter=1000, random_state=13).fit(
            torch.as_tensor(X), torch.as_tensor(y))
    assert isinstance(clf.coef_, torch.Tensor) and clf.coef_.dtype == torch.float32
    np.testing.assert_allclose(clf.coef_.numpy(), reference.coef_, rtol=1e-4, atol=1e-5)


def test_fill_stores_its_rows_beside_geneb_v1(tmp_path, task_dir, capsys) -> None:
    store = tmp_path / "store"
    args = ("--models", "kmer-3", "--tasks", "bin_task", "tri_task", "--regimes", "full", "1shot")
    capsys.readouterr()
    assert main(["fill", "--store", str(store), "--suite", str(task_dir), *args, "--protocol",
                 "geneb-v1", "geneb-v1-array-api", "--probe-device", "cpu", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out.splitlines()[0])
    assert plan["cells_missing"] == 2 * 2 * 2
    rows = query(resolve_store(store), "SELECT protocol, protocol_hash, task, regime, seed, mcc "
                                       "FROM results ORDER BY protocol, task, regime, seed")
    v1 = rows.filter(pl.col("protocol") == "geneb-v1")
    twin = rows.filter(pl.col("protocol") == "geneb-v1-array-api")
    assert set(twin["protocol_hash"]) == {GENEB_V1_ARRAY_API.hash} and len(twin) == 2 * 2 * 5
    assert set(v1["protocol_hash"]) == {GENEB_V1.hash} and len(v1) == 2 * 2 * 5
    assert np.max(np.abs(twin["mcc"].to_numpy() - v1["mcc"].to_numpy())) < 0.05


def test_without_scipy_array_api_the_variant_is_refused_before_the_store_changes(
        tmp_path, task_dir, capsys, monkeypatch) -> None:
    store = tmp_path / "store"
    assert fill(capsys, store, task_dir, "--models", "kmer-3", "--tasks", "bin_task",
                "--regimes", "1shot") == 0
    monkeypatch.setenv("SCIPY_ARRAY_API", "0")
    refused(capsys, store, "fill", "--suite", str(task_dir), "--models", "kmer-3",
            "--store", str(store), "--protocol", "geneb-v1-array-api",
            names=("geneb-v1-array-api", "SCIPY_ARRAY_API=1", "'0'"))


def test_the_bench_prints_the_difference_and_the_ratio() -> None:
    bench = Path(__file__).resolve().parents[2] / "bench" / "array_api.py"
    out = subprocess.run([sys.executable, str(bench), "--quick", "--device", "cpu"],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    lines = out.splitlines()
    assert lines[0] == "# fixtures: 2 geneb-mini tasks as k-mer profiles (k = 3); variant on cpu"
    for line, regime in zip(lines[1:4], REGIMES, strict=True):
        assert re.fullmatch(r"max \|MCC difference\| geneb-v1-array-api \(cpu\) vs the exact "
                            rf"CPU path, {regime}: \d\.\d{{4}}.*; rows that differ: \d+ of 10",
                            line), line
    # the few-shot rows are the exact path's own
    assert lines[2].endswith("10shot: 0.0000; rows that differ: 0 of 10")
    assert lines[3].endswith("1shot: 0.0000; rows that differ: 0 of 10")
    for line, what in zip(lines[4:6], ("full regime", "all regimes"), strict=True):
        assert re.fullmatch(rf"2 cells, {what}: geneb-v1-array-api \(cpu\) vs exact CPU path: "
                            r"\d+\.\d\d s vs \d+\.\d\d s: \d+\.\d\dx", line), line
