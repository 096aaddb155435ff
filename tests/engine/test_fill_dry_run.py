"""`fill --dry-run`: the plan per model (tasks, cells, embeddings to compute and to reuse,
sequences, nucleotides, tokens) and its estimated time, from what the store measured (the runs
table, the result rows' fit seconds) or else from a calibration, each estimate saying which; the
store's files byte for byte as they were."""

from __future__ import annotations

import json
import os
import shutil

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402

from engine.cli import main  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.tables.results import append_rows  # noqa: E402
from store.tables.telemetry import read_runs, record_runs, run_row  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.helpers import digest  # noqa: E402
from tests.store.local_rows import local_rows  # noqa: E402

# task_dir (tests/engine/conftest.py): bin_task 200 + 80, tri_task 240 + 90, quad_task 200 + 80
# sequences of 120 nucleotides; classes of equal size (100, 80 and 50 train rows each)
SEQUENCES = 280 + 330 + 280
TRAIN = 200 + 240 + 200


def dry_run(capsys, store, suite, *extra) -> dict:
    capsys.readouterr()
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--dry-run", "--json",
                 *extra]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1
    return json.loads(out)


def test_measured_throughput_and_fit_times_give_the_estimate(tmp_path, task_dir, capsys):
    """Hand-computed: kmer-3 embedded 1,000 sequences in 2 s (500/s) on the CPU; a full-regime
    fit took 0.5 s on 250 rows (one shared fit: 0.002 s per row), a 10-shot cell five fits of
    0.01 s on 20 rows (0.0005 s per row)."""
    paths = StorePaths(tmp_path / "store")
    record_runs(paths, [run_row("kmer-3", "elsewhere", "train",
                                {"n_encoded": 1000, "seconds": 2.0, "device": "cpu",
                                 "dtype": "float32"}, data_hash="h", worker="local",
                                engine_version="test")], model="kmer-3", task="elsewhere")
    rows = local_rows("kmer-3", ["elsewhere"], ("full", "10shot"))
    for r in rows:
        r.update(fit_seconds=0.5, n_train=250) if r["regime"] == "full" else \
            r.update(fit_seconds=0.01, n_train=20)
    append_rows(paths, rows)
    before = digest(paths.root)

    plan = dry_run(capsys, paths.root, task_dir, "--models", "kmer-3", "--regimes", "full",
                   "10shot")
    assert digest(paths.root) == before
    assert (plan["cells_total"], plan["cells_missing"], plan["jobs"]) == (6, 6, 1)
    [m] = plan["models"]
    assert (m["model"], m["device"], m["tasks"], m["cells"], m["splits_to_embed"],
            m["splits_stored"], m["sequences"], m["nucleotides"], m["tokens"]) == (
        "kmer-3", "cpu", 3, 6, 6, 0, SEQUENCES, SEQUENCES * 120, None)
    assert m["embedding"]["source"] == "runs"
    assert m["embedding"]["seconds"] == pytest.approx(SEQUENCES / 500)
    assert "runs table: 1 split(s) of kmer-3 embedded on cpu in float32, 500 sequences/s" \
        == m["embedding"]["note"]
    full, ten = m["probes"]
    assert (full["regime"], full["source"], full["examples"]) == ("full", "store", TRAIN)
    assert full["seconds"] == pytest.approx(TRAIN * 0.002)
    assert full["note"] == "store: fit seconds of 1 cell(s) of kmer-3"
    assert (ten["regime"], ten["source"], ten["examples"]) == ("10shot", "store",
                                                              5 * (2 + 3 + 4) * 10)
    assert ten["seconds"] == pytest.approx(450 * 0.0005)
    assert m["seconds"] == pytest.approx(SEQUENCES / 500 + TRAIN * 0.002 + 450 * 0.0005)


def test_without_measurements_a_calibration_and_nothing_is_created(tmp_path, task_dir,
                                                                   capsys):
    store = tmp_path / "new-store"
    capsys.readouterr()
    assert main(["fill", "--store", str(store), "--suite", str(task_dir), "--models", "kmer-3",
                 "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert not store.exists()
    assert out.startswith("dry run, nothing written: suite suite: 3 tasks × 1 models × 3 "
                          "regimes = 9 cells; 0 in the store, 9 to compute")
    assert "kmer-3 embedding: calibration: 256 sequences of the suite embedded on cpu in " in out
    assert out.count("calibration: geneb-v1 fitted on the 192 training rows") == 3
    plan = dry_run(capsys, store, task_dir, "--models", "kmer-3")
    assert not store.exists()
    [m] = plan["models"]
    assert m["embedding"]["source"] == "calibration" and m["embedding"]["seconds"] > 0
    assert [(p["regime"], p["source"]) for p in m["probes"]] == [
        ("full", "calibration"), ("10shot", "calibration"), ("1shot", "calibration")]


def test_stored_embeddings_are_reused_and_the_store_is_unchanged(tmp_path, task_dir, capsys):
    store = tmp_path / "store"
    assert main(["fill", "--store", str(store), "--suite", str(task_dir), "--models", "kmer-3",
                 "--regimes", "full"]) == 0
    before = digest(store)
    plan = dry_run(capsys, store, task_dir, "--models", "kmer-3")
    assert digest(store) == before
    [m] = plan["models"]
    assert (m["tasks"], m["cells"], m["splits_to_embed"], m["splits_stored"], m["sequences"],
            m["tokens"]) == (3, 6, 0, 6, 0, 0)
    assert m["embedding"] == {"seconds": 0.0, "source": "none",
                              "note": "nothing to embed: every split is stored"}
    assert [p["regime"] for p in m["probes"]] == ["10shot", "1shot"]


def test_a_checkpoint_is_calibrated_then_estimated_from_its_runs(tmp_path, capsys):
    """A character tokenizer with [CLS] and [SEP]: a sequence of 30 nucleotides is 32 tokens.
    Once fill has embedded the task (its embeddings then removed), the runs table's tokens per
    nucleotide and tokens per second on this data estimate what it took."""
    from tests.engine.tiny_models import build

    checkpoint = build("bert", tmp_path / "tiny-bert", max_len=64)
    suite = tmp_path / "suite"
    suite.mkdir()
    write_task(suite / "short_task.csv", 40, 20, 2, 1, length=30)
    store = tmp_path / "store"
    store.mkdir()
    plan = dry_run(capsys, store, suite, "--models", str(checkpoint))
    assert digest(store) == {}
    [m] = plan["models"]
    assert (m["model"], m["sequences"], m["nucleotides"], m["tokens"]) == (
        "tiny-bert", 60, 60 * 30, 60 * 32)
    assert m["embedding"]["source"] == "calibration"
    assert m["embedding"]["note"].startswith("calibration: 60 sequences of the suite embedded")

    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models",
                 str(checkpoint), "--regimes", "full"]) == 0
    shutil.rmtree(store / "embeddings.zarr")
    runs = read_runs(StorePaths(store))
    plan = dry_run(capsys, store, suite, "--models", "tiny-bert")
    [m] = plan["models"]
    assert (m["splits_to_embed"], m["tokens"], m["embedding"]["source"]) == (2, 60 * 32, "runs")
    assert runs["tokens"].sum() == 60 * 32
    assert m["embedding"]["seconds"] == pytest.approx(runs["seconds"].sum())
    assert m["embedding"]["note"].startswith("runs table: 2 split(s) of tiny-bert embedded on "
                                             "cpu in float32, ")
    assert m["embedding"]["note"].endswith(" tokens/s")
    # runs at another precision are not this one's figure: bfloat16 weights are calibrated
    [m] = dry_run(capsys, store, suite, "--models", "tiny-bert", "--dtype", "bfloat16")["models"]
    assert m["embedding"]["source"] == "calibration"
