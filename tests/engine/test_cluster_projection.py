"""bench/cluster.py's projection from given throughput (`--throughput`: one figure, a store's
runs table, a JSON file) to the benchmark's wall time on G GPUs, on hand-computed cases."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import pytest

from store.catalog import load_models
from store.paths import resolve_store
from store.tables.results import open_for_writing
from store.tables.telemetry import RUNS, record_runs, run_row
from tests.engine.processes import ROOT

spec = importlib.util.spec_from_file_location("cluster_bench", ROOT / "bench" / "cluster.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def two_big_models() -> dict:
    """Two models of 200M parameters: one GPU per actor (`engine.cluster.placement`)."""
    metas = list(load_models().values())[:2]
    return {m.model_id: replace(m, encoder="hf", params=200_000_000) for m in metas}


@pytest.mark.parametrize("gpus, embedding, probes", [
    # two tasks of 1,000 sequences x 100 bp: 100,000 tokens at 10,000 tokens/s = 10 s a pair,
    # 20 s a model; probes: 2 models x 3 regimes x (1 + 1) s over G x 4 probe slots
    (1, 40.0, 3.0),     # both models back to back on the one GPU
    (2, 20.0, 1.5),     # one GPU each
    (8, 10.0, 0.375),   # every pair on its own GPU
])
def test_one_figure_projects_to_the_hand_computed_wall_time(gpus, embedding, probes):
    given = bench.read_throughput("1e4")
    assert given == {"*": ("tokens_per_s", 10_000.0)}
    models, sizes = two_big_models(), [(1_000, 100)] * 2
    times, label = bench.given_times(given, models, sizes, "1e4")
    assert times == dict.fromkeys(models, [10.0, 10.0])
    assert label.startswith("10,000 tokens/s per GPU for every model")
    p = bench.project(times, models, sizes, gpus, 4, [1.0, 1.0], 0.0)
    assert (p["embedding"], p["probes"], p["wall"]) == (embedding, probes, embedding)


def test_a_stores_gpu_runs_give_each_models_tokens_per_s(tmp_path):
    paths = resolve_store(tmp_path / "store")
    open_for_writing(paths, RUNS)
    for device, tokens, seconds in (("NVIDIA H200", 8_000_000, 10.0), ("cpu", 1_000, 1.0)):
        stats = {"device": device, "n_encoded": 100, "n_tokens": tokens, "seconds": seconds}
        record_runs(paths, [run_row("bert", "t", "train", stats, data_hash="h", worker="local",
                                    engine_version="0")], model="bert", task="t")
    assert bench.read_throughput(str(tmp_path / "store")) == {
        "bert": ("tokens_per_s", 800_000.0)}               # the CPU run left out


@pytest.mark.parametrize("text", ["0", "-5", "inf"])
def test_a_figure_that_is_no_throughput_is_refused(text):
    with pytest.raises(ValueError, match=f"--throughput {text}: give a positive number"):
        bench.read_throughput(text)
