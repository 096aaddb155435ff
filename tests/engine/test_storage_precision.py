"""`fill --storage-precision`: the storage precision is a member of a result's variant (its rows
never pool with float32's), its embeddings are their own split, and float32 runs are as before."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from engine.cli import main  # noqa: E402
from store.db import Snapshot  # noqa: E402
from store.embeddings import as_float32, stored_values  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from tests.helpers import digest  # noqa: E402


def test_bfloat16_bits_are_torchs():
    x = (np.random.default_rng(0).standard_normal(10_000) * 10.0 ** np.arange(-5, 5).repeat(
        1_000)).astype(np.float32)
    ours = as_float32(stored_values(x, "bfloat16"), "bfloat16")
    assert np.array_equal(ours, torch.from_numpy(x).to(torch.bfloat16).float().numpy())


def test_storage_precision_is_a_variant_member(tmp_path, task_dir, capsys):
    store = tmp_path / "store"
    argv = ["fill", "--store", str(store), "--suite", str(task_dir), "--models", "kmer-3",
            "--regimes", "full", "--tasks", "bin_task"]
    assert main(argv) == 0
    float32 = digest(store / "embeddings.zarr")
    assert main([*argv, "--storage-precision", "float16"]) == 0
    folder = store / "embeddings.zarr" / "kmer-3" / "bin_task"
    assert sorted(p.name for p in folder.iterdir()) == [
        "test", "test@stored-float16", "train", "train@stored-float16", "zarr.json"]
    assert all(digest(store / "embeddings.zarr").get(k) == v for k, v in float32.items())
    snap = Snapshot(StorePaths(store))
    rows = snap.query("SELECT storage_precision, count(*) AS n FROM results_all "
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
