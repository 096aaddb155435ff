"""The bytes a fill writes into the embeddings: `fill --dry-run` estimates them within 10 % of
what the run then writes, and `fill` refuses in one line to start a run whose estimate exceeds
the free space where the store is (`--ignore-free-space` starts it)."""

from __future__ import annotations

import json
import os
from collections import namedtuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from engine.cli import main  # noqa: E402
from store.sizes import split_bytes, tree_bytes  # noqa: E402
from tests.engine.in_process import refused  # noqa: E402
from tests.engine.test_fill_dry_run import dry_run  # noqa: E402

Usage = namedtuple("Usage", "total used free")


def test_the_dry_runs_estimate_is_within_ten_percent_of_what_fill_wrote(tmp_path, task_dir,
                                                                        capsys):
    """kmer-4 (256 wide, the encoder's own width) and a tiny BERT checkpoint (its
    config.json's hidden_size) on a small task: the estimate against the
    bytes of the files the fill wrote."""
    from tests.engine.tiny_models import build

    checkpoint = build("bert", tmp_path / "tiny-bert", max_len=64)
    store = tmp_path / "store"
    argv = ("--models", "kmer-4", str(checkpoint), "--regimes", "full", "--tasks", "tri_task")
    plan = dry_run(capsys, store, task_dir, *argv)
    space = plan["space"]
    assert {m["model"]: (m["splits"], m["rows"], m["basis"]) for m in space["models"]} == {
        "kmer-4": (2, 330, "the encoder's own"),
        "tiny-bert": (2, 330, "its checkpoint's config.json (hidden_size)")}
    assert space["fits"] and space["free"] > space["bytes"]
    assert not store.exists()
    assert main(["fill", "--store", str(store), "--suite", str(task_dir), *argv]) == 0
    for m in space["models"]:
        folder = "tiny-bert" if m["model"] == "tiny-bert" else m["model"]
        [written] = [tree_bytes(p) for p in (store / "embeddings.zarr").iterdir()
                     if p.name.startswith(folder)]
        assert abs(m["bytes"] - written) <= 0.1 * written, (m, written)
    # status gives the bytes on disk, per model and in total
    capsys.readouterr()
    assert main(["status", "--store", str(store), "--suite", str(task_dir), "--json"]) == 0
    sizes = json.loads(capsys.readouterr().out)["sizes"]
    root = store / "embeddings.zarr"

    def tasks_bytes(folder):     # its task folders (a model folder's zarr.json: 58 bytes)
        return sum(tree_bytes(p) for p in folder.iterdir() if p.is_dir())

    assert {m: at["embeddings"] for m, at in sizes["models"].items()} == {
        "kmer-4": tasks_bytes(root / "kmer-4"),
        "tiny-bert": tasks_bytes(next(root.glob("tiny-bert*")))}
    assert sizes["suite_embeddings"] == sizes["total"]["embeddings"] == sum(
        tasks_bytes(p) for p in root.iterdir() if p.is_dir())
    for table in ("results", "predictions"):
        on_disk = sum(f.stat().st_size for f in (store / table).rglob("*.parquet"))
        assert 0 < sizes["total"][table] == sum(at[table] for at in sizes["models"].values()) \
            <= on_disk
    # another task: the width is the model's stored splits'
    [m] = dry_run(capsys, store, task_dir, "--models", "kmer-4", "--regimes", "full",
                  "--tasks", "bin_task")["space"]["models"]
    assert (m["splits"], m["width"], m["basis"]) == (2, 256, "its stored embeddings")
    assert m["bytes"] == split_bytes(200, 256) + split_bytes(80, 256)


def test_fill_refuses_a_run_whose_embeddings_exceed_the_free_space(tmp_path, task_dir, capsys,
                                                                  monkeypatch):
    """A disk with 1 MB free: one line naming the sizes and the option, exit 2, the store as it
    was (here: a store with results already); the option starts the run."""
    import store.sizes

    store_root = tmp_path / "store"
    argv = ("fill", "--store", str(store_root), "--suite", str(task_dir), "--models", "kmer-3",
            "--regimes", "full")
    assert main([*argv, "--tasks", "bin_task"]) == 0
    monkeypatch.setattr(store.sizes.shutil, "disk_usage",
                        lambda path: Usage(10**12, 10**12 - 10**6, 10**6))
    err = refused(capsys, store_root, *argv, names=("--ignore-free-space", "977 KiB free",
                                                    "take about 1 MiB"))
    assert "geneb-engine fill: the embeddings of this run take about" in err
    # the dry run says so too, and the override runs it
    plan = dry_run(capsys, store_root, task_dir, "--models", "kmer-3", "--regimes", "full")
    assert plan["space"]["fits"] is False and plan["space"]["free"] == 10**6
    assert main([*argv, "--ignore-free-space"]) == 0
