"""`fill --dtype`: the weights' precision as a declared choice. `auto` keeps float32 on the CPU
(bf16 autocast on CUDA); `bfloat16` / `float16` cast the weights (no autocast) where the device
has them, else one clear refusal with the store unchanged; the precision is part of the
embeddings' identity."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from engine.encoders import EncoderOptions, build_encoder, preflight, told_precision  # noqa: E402
from engine.encoders.device import dtype_problem, precision_of  # noqa: E402
from engine.pairs import loaded  # noqa: E402
from engine.registry import resolve_model  # noqa: E402
from store.catalog import load_models  # noqa: E402
from store.db import query  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.engine.in_process import computed, outputs, refused, run  # noqa: E402
from tests.engine.tiny_models import catalogued_bert, one_task_fill, random_dna  # noqa: E402

SEQS = random_dna(9, 20, 80, seed=3)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return catalogued_bert(tmp_path_factory.mktemp("dtype"), max_len=128)


def encoder(bert, dtype: str):
    return build_encoder(resolve_model("tiny-bert", bert["catalog"]),
                         EncoderOptions(device="cpu", dtype=dtype))


def test_auto_and_float32_on_the_cpu_are_the_float32_weights_of_before(bert):
    auto, fp32 = encoder(bert, "auto"), encoder(bert, "float32")
    assert auto.settings == fp32.settings and auto.settings["dtype"] == "float32"
    assert {p.dtype for p in auto.model.parameters()} == {torch.float32}
    assert np.array_equal(auto.encode(SEQS), fp32.encode(SEQS))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16_bit_weights_are_cast_recorded_and_close(bert, dtype):
    enc = encoder(bert, dtype)
    assert {p.dtype for p in enc.model.parameters()} == {getattr(torch, dtype)}
    assert enc.autocast_dtype is None
    assert enc.settings["dtype"] == dtype                   # its own embeddings' identity
    assert enc.settings != encoder(bert, "auto").settings
    rows, exact = enc.encode(SEQS), encoder(bert, "auto").encode(SEQS)
    assert rows.dtype == np.float32
    diff = np.abs(rows - exact).max() / np.abs(exact).max()
    assert 0 < diff < 0.05, diff                            # rounded, not another model


def test_what_each_choice_means_on_cuda(monkeypatch):
    cuda = torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert precision_of(cuda, "auto", "m") == (None, torch.bfloat16)
    assert precision_of(cuda, "bfloat16", "m") == (torch.bfloat16, None)
    assert precision_of(cuda, "float16", "m") == (torch.float16, None)
    assert precision_of(cuda, "float32", "m") == (None, None)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a, **k: "Tesla V100")
    assert precision_of(cuda, "auto", "m") == (None, torch.float16)
    assert dtype_problem(cuda, "bfloat16") == ("--dtype bfloat16: Tesla V100 has no bfloat16; "
                                               "use --dtype float16, float32 or auto")
    with pytest.raises(GenebError, match="model m: --dtype bfloat16: Tesla V100 has no"):
        precision_of(cuda, "bfloat16", "m")
    assert dtype_problem(cuda, "float16") is None


def test_a_device_without_16_bit_weights_is_refused_before_the_store_changes(
        bert, tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    write_task(suite / "one_task.csv", 20, 10, 2, 1, length=40)
    store = tmp_path / "store"
    argv = ("fill", "--store", str(store), "--suite", str(suite), "--models",
            str(bert["folder"]))
    assert run(capsys, *argv, "--regimes", "full", "--device", "cpu")[0] == 0
    argv += ("--regimes", "1shot")                          # cells still to compute
    err = refused(capsys, store, *argv, "--device", "meta", "--dtype", "bfloat16",
                  names=("--dtype bfloat16", "not on meta"))
    assert err.startswith("geneb-engine fill: model tiny-bert: ")
    refused(capsys, store, *argv, "--dtype", "bf16", names=("bf16", "bfloat16"))


def test_evo_keeps_its_extractors_precision(bert):
    meta = resolve_model("tiny-bert", bert["catalog"])
    evo = type(meta)(**{**meta.__dict__, "encoder": "evo", "model_id": "tiny-evo"})
    with pytest.raises(GenebError, match="tiny-evo: --dtype float32: Evo-1 runs in its official"):
        preflight(evo, EncoderOptions(device="cpu", dtype="float32"), device=False)


def test_a_run_at_another_precision_is_computed_and_shown_apart(bert, tmp_path, capsys):
    """The precision is part of each result's identity (`store.vocab.variant`): `fill --dtype
    float16` then `fill --dtype float32` computes the second (on 2dfd362: "nothing to
    compute"), keeps both runs' embeddings and rows, and every reader shows them apart."""
    argv = one_task_fill(tmp_path, bert["folder"])
    store, suite = tmp_path / "store", tmp_path / "suite"

    def fill(*more: str) -> int:
        return computed(capsys, *argv, *more)

    assert fill("--dtype", "float16") == 1
    assert fill("--dtype", "float32") == 1
    assert fill("--dtype", "auto") == 0           # float32 on the CPU: the same cells
    assert fill("--dtype", "float16") == 0
    split = store / "embeddings.zarr" / "tiny-bert" / "one_task"
    assert sorted(p.name for p in split.iterdir() if p.is_dir()) == [
        "test", "test@float16", "train", "train@float16"]
    rows = query(StorePaths(store), "SELECT compute_precision, count(*) AS n FROM results "
                                    "GROUP BY ALL ORDER BY ALL")
    assert rows.rows() == [("float16", 5), ("float32", 5)]
    rc, out, err = outputs(capsys, "report", "--store", str(store), "--suite", str(suite),
                           "--resamples", "0", "--json")
    doc = json.loads(out)
    assert sorted(a["model"] for a in doc["aggregates"]) == ["tiny-bert", "tiny-bert [float16]"]
    assert doc["notes"] == ["tiny-bert: results at float32 shown as tiny-bert, at other "
                            "precisions apart as tiny-bert [float16] (never pooled)"]
    rc, out, _ = outputs(capsys, "status", "--store", str(store), "--suite", str(suite),
                         "--regimes", "full", "--json")
    doc = json.loads(out)
    assert doc["precisions"] == {"tiny-bert": "float32"}
    assert doc["other_precisions"] == {"tiny-bert": {"float16": 1}}
    assert [(r["done"], r["stale"]) for r in doc["rows"]] == [(1, 0)]


def test_the_precision_a_run_computes_in_is_told_before_it_is_built(bert):
    meta = resolve_model("tiny-bert", bert["catalog"])
    cpu = EncoderOptions(device="cpu")
    assert told_precision(meta, cpu) == encoder(bert, "auto").precision == "float32"
    for dtype in ("bfloat16", "float16", "float32"):
        assert told_precision(meta, EncoderOptions(device="cpu", dtype=dtype)) == \
            encoder(bert, dtype).precision == dtype
    kmer = load_models()["kmer-3"]
    assert told_precision(kmer, EncoderOptions(dtype="float16")) == "float32"   # its own
    evo = type(meta)(**{**meta.__dict__, "encoder": "evo", "model_id": "tiny-evo"})
    assert told_precision(evo, cpu) == "float32"
    imported = type(meta)(**{**meta.__dict__, "encoder": "imported", "model_id": "i"})
    assert told_precision(imported, cpu) is None


def test_an_encoder_that_computes_otherwise_than_planned_says_so(bert, tmp_path):
    """A Ray actor on another device than the driver's: the plan counted the model's cells at
    the driver's precision; the run says at which it computes, and counts them there."""
    meta = resolve_model("tiny-bert", bert["catalog"])
    actor = SimpleNamespace(revision="r", precision="bfloat16-autocast")
    paths = StorePaths(tmp_path / "store")
    event = loaded(paths, meta, actor, {"tiny-bert": "r"}, {"tiny-bert": "float32"})
    assert event["event"] == "warning" and event["message"].startswith(
        "model tiny-bert: computes in bfloat16-autocast here, not in float32 as planned")
    assert loaded(paths, meta, actor, {"tiny-bert": "r"},
                  {"tiny-bert": "bfloat16-autocast"}) is None
