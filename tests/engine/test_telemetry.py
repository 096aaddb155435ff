"""Throughput telemetry: what `encode_into` counts, the runs table `fill` writes, `status --perf`.

Tokens are the tokenizer's own count (truncation applied), padded tokens what the length-sorted
batch plan holds; every split a fill encodes gets one runs row and a reused split none.
"""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import pytest  # noqa: E402

from engine.encoders import EncoderOptions, build_encoder  # noqa: E402
from engine.encoders.streaming import (  # noqa: E402
    ArraySink,
    forward_tflops,
    plan_batches,
    utilisation,
)
from engine.registry import resolve_model  # noqa: E402
from store.catalog import load_models  # noqa: E402
from store.embeddings import EmbeddingStore  # noqa: E402
from store.paths import resolve_store  # noqa: E402
from store.tables.telemetry import perf_summary, read_runs  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.engine.tiny_models import build, random_dna  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> tuple[Path, Path]:
    """(the tiny checkpoint, a models.toml naming it with a 24-token context, batch 4)."""
    root = tmp_path_factory.mktemp("telemetry")
    folder = build("bert", root / "tiny-bert")
    toml = root / "models.toml"
    toml.write_text(f'[[model]]\nmodel_id = "tiny-bert-24"\npath = "{folder}"\n'
                    "max_tokens = 24\nbatch_size = 4\n")
    return folder, toml


def test_tokens_are_the_tokenizers_count_and_padding_the_batch_plans(bert):
    encoder = build_encoder(resolve_model("tiny-bert-24", load_models(bert[1])),
                            EncoderOptions(device="cpu"))
    seqs = random_dna(11, 10, 60, seed=3)
    sink = ArraySink(len(seqs))
    stats = encoder.encode_into(seqs, sink)
    lengths = np.array([min(len(ids), 24) for ids in encoder.tokenizer(seqs)["input_ids"]])
    assert stats["n_tokens"] == lengths.sum() and stats["n_encoded"] == 11
    assert stats["n_truncated"] == int((np.array(
        [len(ids) for ids in encoder.tokenizer(seqs)["input_ids"]]) > 24).sum())
    padded = sum(b.size * lengths[b].max() for b in plan_batches(
        lengths, 4, exact_length=encoder.exact_length))
    assert stats["n_padded_tokens"] == padded
    assert stats["n_batches"] == len(plan_batches(lengths, 4, exact_length=encoder.exact_length))
    assert (stats["device"], stats["dtype"], stats["batch_size"]) == ("cpu", "float32", 4)
    assert stats["params"] == sum(p.numel() for p in encoder.model.parameters())
    assert stats["peak_memory_bytes"] is None and stats["tflops"] is None   # CUDA only


def test_flops_and_utilisation_follow_the_forward_pass_rule():
    assert forward_tflops(100_000_000, 2_000_000) == pytest.approx(400.0)   # 2 x P x tokens/s
    assert utilisation("NVIDIA H100 80GB HBM3", "bfloat16-autocast", 494.7) == \
        pytest.approx(0.5)
    assert utilisation("NVIDIA H100 PCIe", "float16-autocast", 756.5) == pytest.approx(1.0)
    assert utilisation("NVIDIA H100 80GB HBM3", "float32", 100.0) is None   # no 16-bit peak
    assert utilisation("Some GPU", "bfloat16-autocast", 10.0) is None
    assert forward_tflops(None, 10.0) is None


def test_the_summary_totals_rows_per_model_and_device():
    runs = pl.DataFrame({
        "model": ["m", "m", "k"], "device": ["cpu"] * 3, "dtype": ["float32"] * 3,
        "sequences": [100, 300, 50], "tokens": [1_000, 3_000, None],
        "padded_tokens": [1_250, 3_750, None], "seconds": [1.0, 3.0, 0.5],
        "peak_memory_bytes": [None, None, None], "batch_size": [32, 16, None],
        "tflops": [None, None, None], "mfu": [None, None, None]},
        schema_overrides={"peak_memory_bytes": pl.Int64, "tflops": pl.Float64,
                          "mfu": pl.Float64, "batch_size": pl.Int64, "tokens": pl.Int64,
                          "padded_tokens": pl.Int64})
    out = {r["model"]: r for r in perf_summary(runs).iter_rows(named=True)}
    assert (out["m"]["splits"], out["m"]["sequences"], out["m"]["seconds"]) == (2, 400, 4.0)
    assert out["m"]["sequences_per_s"] == 100.0 and out["m"]["tokens_per_s"] == 1_000.0
    assert out["m"]["padding"] == pytest.approx(0.2) and out["m"]["batch_size"] == 16
    assert out["k"]["tokens"] is None and out["k"]["tokens_per_s"] is None
    assert out["m"]["tflops"] is None and out["m"]["mfu"] is None     # CPU rows: none
    gpu = runs.head(2).with_columns(pl.Series("tflops", [100.0, 200.0]),
                                    pl.Series("mfu", [0.1, None]))
    row = perf_summary(gpu).row(0, named=True)
    assert row["tflops"] == pytest.approx((100 * 1 + 200 * 3) / 4) and row["mfu"] == 0.1


def test_fill_records_one_run_per_encoded_split_and_status_perf_shows_them(tmp_path, bert):
    suite = tmp_path / "suite"
    suite.mkdir()
    write_task(suite / "task_a.csv", 30, 12, 2, 1, length=40)
    write_task(suite / "task_b.csv", 20, 10, 2, 2, length=40)
    store = tmp_path / "store"

    def engine(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "engine.cli", *argv], cwd=ROOT,
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})

    done = engine("fill", "--suite", str(suite), "--models", "kmer-3", str(bert[0]),
                  "--regimes", "full", "--store", str(store))
    assert done.returncode == 0, done.stderr
    runs = read_runs(resolve_store(store))
    assert runs.height == 2 * 2 * 2                     # models x tasks x splits
    sizes = {("task_a", "train"): 30, ("task_a", "test"): 12, ("task_b", "train"): 20,
             ("task_b", "test"): 10}
    for r in runs.iter_rows(named=True):
        assert r["sequences"] == sizes[r["task"], r["split"]]
        assert (r["worker"], r["device"], r["source"]) == ("local", "cpu", "local")
        assert (r["tokens"] is None) == (r["model"] == "kmer-3")
        assert r["seconds"] >= 0 and r["data_hash"]
    import zarr

    split = EmbeddingStore(resolve_store(store)).split_path("tiny-bert", "task_a", "train")
    kept = zarr.open_group(str(split), mode="r").attrs["telemetry"]    # with the embeddings
    row = runs.filter((pl.col("model") == "tiny-bert") & (pl.col("task") == "task_a")
                      & (pl.col("split") == "train")).row(0, named=True)
    assert (kept["n_encoded"], kept["n_tokens"], kept["device"]) == (30, row["tokens"], "cpu")
    again = engine("fill", "--suite", str(suite), "--models", "kmer-3", str(bert[0]),
                   "--store", str(store))                # other regimes: embeddings reused
    assert again.returncode == 0, again.stderr
    assert read_runs(resolve_store(store)).height == 8
    perf = engine("status", "--perf", "--json", "--store", str(store))
    assert perf.returncode == 0, perf.stderr
    rows = {r["model"]: r for r in json.loads(perf.stdout)["perf"]}
    assert rows["kmer-3"]["sequences"] == rows["tiny-bert"]["sequences"] == 72
    assert rows["tiny-bert"]["tokens"] == runs.filter(pl.col("model") == "tiny-bert")[
        "tokens"].sum()
    shown = engine("status", "--perf", "--store", str(store))
    assert shown.returncode == 0 and "tiny-bert" in shown.stdout and "seq/s" in shown.stdout
    typo = engine("status", "--perf", "--models", "kmer-33", "--store", str(store))
    assert typo.returncode == 2 and "kmer-3" in typo.stderr
