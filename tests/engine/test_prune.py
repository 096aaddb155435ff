"""The embedding cache. `prune`: the embeddings of pairs whose every cell is done are removed
(a dry run first), results and predictions untouched (`report --json` byte for byte the same),
the pruned splits recorded (`doctor` tells them from missing ones), recomputed by `fill` only
for a new cell, never beside a fill holding the pair, and safe under kill -9. `fill
--storage-precision`: a member of a result's variant (on the same filled store)."""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from engine.cli import main  # noqa: E402
from store.db import Snapshot  # noqa: E402
from store.embeddings import as_float32, stored_values  # noqa: E402
from store.locks import pair_lock  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.prune import Policy, prunable  # noqa: E402
from store.sizes import tree_bytes  # noqa: E402
from tests.engine.processes import ROOT, env_of  # noqa: E402
from tests.helpers import digest, sweep_size  # noqa: E402

KILLS = sweep_size(10, 2)


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> tuple[Path, Path]:
    """(suite, store): kmer-3 on three small tasks, every geneb-v1 regime; read-only (copy it)."""
    from tests.engine.conftest import write_task

    suite = tmp_path_factory.mktemp("suite") / "tiny"
    suite.mkdir()
    for i, name in enumerate(("task_a", "task_b", "task_c")):
        write_task(suite / f"{name}.csv", 120, 50, 2 + i, 20 + i)
    store = tmp_path_factory.mktemp("filled") / "store"
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models",
                 "kmer-3"]) == 0
    return suite, store


def out_of(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def splits(store: Path) -> list[str]:
    return sorted(p.relative_to(store / "embeddings.zarr").as_posix()
                  for p in (store / "embeddings.zarr").glob("*/*/*") if p.is_dir())


def test_prune_removes_done_pairs_embeddings_and_nothing_else(tmp_path, filled, capsys):
    suite, original = filled
    store = tmp_path / "store"
    shutil.copytree(original, store)
    report = out_of(capsys, "report", "--store", str(store), "--json")
    tables = {t: digest(store / t) for t in ("results", "predictions")}
    everything = digest(store)
    on_disk = splits(store)
    assert len(on_disk) == 6
    # the dry run: what would go and its bytes, nothing removed
    plan = json.loads(out_of(capsys, "prune", "--store", str(store), "--json"))
    assert sorted(p["split"] for p in plan["splits"]) == on_disk and not plan["applied"]
    assert plan["bytes"] == sum(tree_bytes(store / "embeddings.zarr" / s) for s in on_disk)
    assert digest(store) == everything
    # narrowed: another model, a date before the run, another revision: nothing
    for extra in (["--models", "kmer-4"], ["--before", "2020-01-01"], ["--older-revisions"],
                  ["--suite", "geneb-mini"]):
        assert json.loads(out_of(capsys, "prune", "--store", str(store), "--json",
                                 *extra))["splits"] == []
    # narrowed to the suite, by its folder and by the name the store knows it by: all of it
    # (`--suite` raised a traceback: the options the suite reader reads had no default)
    for given in (str(suite), "tiny"):
        assert sorted(p["split"] for p in json.loads(out_of(
            capsys, "prune", "--store", str(store), "--json", "--suite", given))["splits"]) \
            == on_disk
    # a pair a running fill holds is left, and said so
    with pair_lock(StorePaths(store), "kmer-3", "task_a"):
        done = json.loads(out_of(capsys, "prune", "--store", str(store), "--json", "--apply"))
    assert sorted(p["task"] for p in done["busy"]) == ["task_a", "task_a"]
    assert splits(store) == ["kmer-3/task_a/test", "kmer-3/task_a/train"]
    out_of(capsys, "prune", "--store", str(store), "--apply")
    assert splits(store) == []
    assert {t: digest(store / t) for t in tables} == tables
    assert out_of(capsys, "report", "--store", str(store), "--json") == report
    record = json.loads((store / "pruned.json").read_text())["splits"]
    assert sorted(record) == on_disk
    # doctor: pruned, not missing, no problem
    found = json.loads(out_of(capsys, "doctor", "--store", str(store), "--json"))
    assert found["problems"] == [] and sorted(found["embeddings"]["pruned"]) == on_disk
    assert found["embeddings"]["missing"] == []
    # fill: nothing to compute, nothing embedded again; a new cell embeds its pair only
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models",
                 "kmer-3"]) == 0
    assert splits(store) == []
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
                 "--protocol", "geneb-v1-converged", "--regimes", "full", "--tasks",
                 "task_b"]) == 0
    assert splits(store) == ["kmer-3/task_b/test", "kmer-3/task_b/train"]
    found = json.loads(out_of(capsys, "doctor", "--store", str(store), "--json"))
    assert len(found["embeddings"]["pruned"]) == 4      # task_b's are back
    # a pair removed by hand is missing, not pruned
    shutil.rmtree(store / "embeddings.zarr" / "kmer-3" / "task_b")
    found = json.loads(out_of(capsys, "doctor", "--store", str(store), "--json"))
    assert found["embeddings"]["missing"] == [["kmer-3", "task_b"]]


def test_only_pairs_whose_every_cell_is_done_are_prunable(tmp_path, filled):
    """A pair with one regime left (its 1shot rows removed from the selection by filling
    another store with full only) keeps its embeddings."""
    suite, _ = filled
    store = tmp_path / "store"
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
                 "--regimes", "full", "10shot", "--tasks", "task_a"]) == 0
    assert prunable(StorePaths(store)) == []
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
                 "--regimes", "1shot", "--tasks", "task_a"]) == 0
    assert len(prunable(StorePaths(store), Policy(tasks=["task_a"]))) == 2


def doctor_clean(store: Path, what: str) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["doctor", "--store", str(store), "--json"]) == 0, f"{what}: {out.getvalue()}"


def test_a_prune_killed_anywhere_leaves_a_store_doctor_finds_clean(tmp_path, filled, capsys):
    """kill -9 at random moments (and at its write points: after a record, after a rename
    aside): the rerun finishes it, doctor finds nothing wrong, `report --json` is unchanged and
    `fill` completes with nothing to compute."""
    suite, original = filled
    report = out_of(capsys, "report", "--store", str(original), "--json")
    rng = random.Random(20261206)
    for trial in range(KILLS):
        store = tmp_path / f"store{trial}"
        shutil.copytree(original, store)
        point = rng.choice(["prune-recorded", "prune-renamed", None])
        extra = {"GENEB_FAILPOINT": f"{point}:{rng.randint(1, 6)}"} if point else {}
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "prune", "--store",
                                 str(store), "--apply"], cwd=ROOT, env=env_of("prune", **extra),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if point is None:
            time.sleep(rng.uniform(1.0, 3.0))
            proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        what = f"trial {trial} ({point or 'random'}, exit {proc.returncode})"
        out_of(capsys, "prune", "--store", str(store), "--apply")
        doctor_clean(store, what)
        assert splits(store) == [], what
        assert out_of(capsys, "report", "--store", str(store), "--json") == report.replace(
            str(original), str(store)), what
        plan = [json.loads(line) for line in out_of(
            capsys, "fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
            "--json").splitlines()]
        assert next(e for e in plan if e["event"] == "plan")["cells_missing"] == 0, what


def test_bfloat16_bits_are_torchs():
    x = (np.random.default_rng(0).standard_normal(10_000) * 10.0 ** np.arange(-5, 5).repeat(
        1_000)).astype(np.float32)
    ours = as_float32(stored_values(x, "bfloat16"), "bfloat16")
    assert np.array_equal(ours, torch.from_numpy(x).to(torch.bfloat16).float().numpy())


def test_storage_precision_is_a_variant_member(tmp_path, filled, capsys):
    """On a copy of test_prune's store (kmer-3, every regime): one cell at float16."""
    suite, original = filled
    store = tmp_path / "store"
    shutil.copytree(original, store)
    argv = ["fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
            "--regimes", "full", "--tasks", "task_a"]
    float32 = digest(store / "embeddings.zarr")
    assert main([*argv, "--storage-precision", "float16"]) == 0
    folder = store / "embeddings.zarr" / "kmer-3" / "task_a"
    assert sorted(p.name for p in folder.iterdir()) == [
        "test", "test@stored-float16", "train", "train@stored-float16", "zarr.json"]
    assert all(digest(store / "embeddings.zarr").get(k) == v for k, v in float32.items())
    snap = Snapshot(StorePaths(store))
    rows = snap.query("SELECT storage_precision, count(*) AS n FROM results_all "
                      "WHERE task = 'task_a' AND regime = 'full' "
                      "GROUP BY ALL ORDER BY storage_precision NULLS FIRST")
    assert rows.rows() == [(None, 5), ("float16", 5)]     # the five seeds of each
    entries = snap.query("SELECT entry FROM entries")["entry"].to_list()
    assert entries == ["kmer-3 [stored-float32]"]       # the newest variant shows as kmer-3
    # each variant's cells are done: neither run computes anything again
    capsys.readouterr()
    for extra in ([], ["--storage-precision", "float16"]):
        assert main([*argv, *extra, "--json"]) == 0
        plan = next(json.loads(line) for line in capsys.readouterr().out.splitlines()
                    if '"plan"' in line)
        assert plan["cells_missing"] == 0
