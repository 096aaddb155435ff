"""`geneb-engine fill` end to end: only what is missing, crash-safe, input errors change nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from engine.cli import main
from store.db import query
from store.paths import resolve_store
from tests.engine.conftest import write_task
from tests.helpers import digest

COMPARE = ["model", "task", "regime", "seed", "mcc", "acc", "f1_macro", "n_train", "n_test",
           "converged", "degenerate", "n_iter", "shared_fit", "data_hash", "protocol_hash"]


def fill(store: Path, suite: Path, *extra: str) -> int:
    return main(["fill", "--store", str(store), "--suite", str(suite), *extra])


def results(store: Path) -> pl.DataFrame:
    return query(resolve_store(store), "SELECT * FROM results").select(COMPARE).sort(
        "model", "task", "regime", "seed")


def test_fill_computes_only_what_is_missing(tmp_path, task_dir, capsys):
    store = tmp_path / "store"
    assert fill(store, task_dir, "--models", "kmer-3", "--regimes", "full", "--json") == 0
    first = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert first[0] == {"event": "plan", "cells_total": 3, "cells_missing": 3, "pairs": 3}
    assert [e["done"] for e in first if e["event"] == "cell"] == [1, 2, 3]
    assert first[-1]["event"] == "done" and first[-1]["computed"] == 3

    # the same request again: nothing to do, nothing written
    before = digest(store)
    assert fill(store, task_dir, "--models", "kmer-3", "--regimes", "full") == 0
    assert "nothing to compute" in capsys.readouterr().out
    assert digest(store) == before

    # more regimes: only the new cells, and the embeddings are reused, not recomputed
    emb = {p: p.stat().st_mtime_ns for p in (store / "embeddings.zarr").rglob("c/*")}
    assert fill(store, task_dir, "--models", "kmer-3", "--json") == 0
    plan = json.loads(capsys.readouterr().out.splitlines()[0])
    assert plan["cells_missing"] == 6
    assert {p: p.stat().st_mtime_ns for p in (store / "embeddings.zarr").rglob("c/*")} == emb

    rows = query(resolve_store(store), "SELECT * FROM results")
    assert rows.height == 3 * 3 * 5
    assert rows.filter(pl.col("regime") == "full")["shared_fit"].all()
    assert rows["source"].unique().to_list() == ["local"]
    assert rows["data_revision"].null_count() == rows.height  # a plain folder has no revision
    assert rows.select(COMPARE).null_count().sum_horizontal().item() == 0


def test_parallel_jobs_give_bit_identical_results(tmp_path, task_dir):
    fill(tmp_path / "a", task_dir, "--models", "kmer-3", "kmer-4", "--jobs", "1")
    fill(tmp_path / "b", task_dir, "--models", "kmer-3", "kmer-4", "--jobs", "2")
    assert results(tmp_path / "a").equals(results(tmp_path / "b"))


def test_changed_data_makes_results_stale(tmp_path, task_dir, capsys):
    store = tmp_path / "store"
    fill(store, task_dir, "--models", "kmer-3", "--regimes", "full")
    write_task(task_dir / "bin_task.csv", 200, 80, 2, seed=99)
    capsys.readouterr()
    fill(store, task_dir, "--models", "kmer-3", "--regimes", "full", "--json")
    plan = json.loads(capsys.readouterr().out.splitlines()[0])
    assert plan["cells_missing"] == 1


@pytest.mark.parametrize("body, message", [
    ("text,label,split\nACGT,0,train\n", "has no rows"),
    ("text,label,split\nAC;U,0,train\nACGT,1,test\n", "line 2: character(s) ';' in column"),
    ("seq,label,split\n", "missing column(s) text"),
])
def test_malformed_input_leaves_the_store_unchanged(tmp_path, task_dir, capsys, body, message):
    store = tmp_path / "store"
    fill(store, task_dir, "--models", "kmer-3", "--regimes", "1shot")
    before = digest(store)
    (task_dir / "zz_bad.csv").write_text(body)
    (task_dir / "manifest.csv").unlink()
    capsys.readouterr()
    assert fill(store, task_dir, "--models", "kmer-3", "kmer-4") == 2
    err = capsys.readouterr().err
    assert message in err and "zz_bad.csv" in err and "Traceback" not in err
    assert digest(store) == before


def test_unknown_model_and_task_are_named(tmp_path, task_dir, capsys):
    assert fill(tmp_path / "s", task_dir, "--models", "kmer-5") == 2
    assert "unknown model 'kmer-5'" in capsys.readouterr().err
    assert fill(tmp_path / "s", task_dir, "--models", "kmer-3", "--tasks", "nope") == 2
    assert "unknown task(s) nope" in capsys.readouterr().err
    assert not (tmp_path / "s" / "results").exists()


def test_sigkill_midway_then_rerun_equals_an_uninterrupted_run(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    for i in range(5):
        write_task(suite / f"t{i}.csv", 500, 150, 2 + i % 3, seed=i, length=200)
    args = ["--suite", str(suite), "--models", "kmer-6", "kmer-4"]
    fill(tmp_path / "clean", suite, *args[2:])

    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "fill", "--store", str(killed),
                             *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and not list((killed / "results").rglob("*.parquet")):
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = query(resolve_store(killed), "SELECT count(*) AS n FROM results")["n"].item()
    assert 0 < partial < 5 * 2 * 3 * 5, "the kill must land midway"

    fill(killed, suite, *args[2:])
    assert results(killed).equals(results(tmp_path / "clean"))
    dup = query(resolve_store(killed), "SELECT model, task, regime, seed, count(*) AS n "
                                       "FROM results_all GROUP BY ALL HAVING n > 1")
    assert dup.is_empty()


def test_a_model_that_cannot_run_stops_the_run_before_anything_is_written(tmp_path, task_dir,
                                                                         capsys):
    store = tmp_path / "store"
    assert fill(store, task_dir, "--models", "kmer-3", "dna_gpt3b_m") == 2
    assert "dna_gpt3b_m: its weights are not published" in capsys.readouterr().err
    assert not store.exists() or not any(store.rglob("*.parquet"))


def test_protocol_variants_write_rows_under_their_own_protocol(tmp_path, task_dir, capsys):
    store = tmp_path / "store"
    # one cell: an MLP fit runs up to 500 L-BFGS steps, about 2 s a seed on one core
    args = ("--models", "kmer-3", "--tasks", "bin_task", "--regimes", "full")
    fill(store, task_dir, *args)
    v1 = results(store)
    capsys.readouterr()
    assert fill(store, task_dir, *args, "--protocol", "geneb-v1", "mlp-h256", "converged-C0.1",
                "--json") == 0
    plan = json.loads(capsys.readouterr().out.splitlines()[0])
    assert plan["cells_missing"] == 2   # geneb-v1 is already there
    rows = query(resolve_store(store), "SELECT protocol, protocol_hash, probe, count(*) AS n "
                                       "FROM results GROUP BY ALL ORDER BY protocol")
    assert rows["protocol"].to_list() == ["converged-C0.1", "geneb-v1", "mlp-h256"]
    assert rows["probe"].to_list() == ["logreg", "logreg", "mlp"]
    assert rows["protocol_hash"].n_unique() == 3 and set(rows["n"]) == {5}   # 5 seeds
    # the official-protocol rows are untouched by the variants beside them
    assert results(store).filter(pl.col("protocol_hash") == v1["protocol_hash"][0]).equals(v1)
    assert fill(store, task_dir, "--models", "kmer-3", "--protocol", "nope") == 2
    assert "unknown protocol 'nope'" in capsys.readouterr().err
