"""`fill --dry-run` without the suite's data and without the model's weights: geneb-v1 sized from
the store's recorded profiles and the official accuracies (the rest assumed), a hub model never
fetched estimated from its parameter count on this machine or on a device of the device table
(`--device-profile`), each basis printed; nothing downloaded, nothing written."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
from huggingface_hub import constants  # noqa: E402

from engine import dry_run as dry_run_module  # noqa: E402
from engine.cli import main  # noqa: E402
from store.catalog import TaskProfile, geneb_v1_tasks  # noqa: E402
from store.devices import device_profiles  # noqa: E402
from store.paths import resolve_store  # noqa: E402
from store.tables.catalogs import register_tasks  # noqa: E402
from store.tables.results import append_rows  # noqa: E402
from store.task_sizes import ASSUMED_LENGTH, ASSUMED_TRAIN_PER_TEST  # noqa: E402
from tests.helpers import digest  # noqa: E402
from tests.store.local_rows import local_rows  # noqa: E402

RECORDED = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"
DERIVED = "deep4mc_E.coli_4mC"            # 3,721 test rows by the official accuracies
DERIVED_TEST = 3721
GROVER = 87_101_793                       # parameters (hub_id PoetschLab/GROVER)
# the derived task: test rows, assumed 4 x as many train rows, 400 nucleotides each
SEQUENCES = (1 + ASSUMED_TRAIN_PER_TEST) * DERIVED_TEST
TOKENS = SEQUENCES * ASSUMED_LENGTH       # one a nucleotide assumed
FIT_S_PER_ROW = 0.9 / 900                 # the recorded task's full-regime fit


@pytest.fixture
def store(tmp_path, monkeypatch):
    """No geneb-v1 data and an empty Hugging Face cache; the task catalog holds the recorded
    task's profile and data hash (as `data verify` leaves them) and GROVER's full-regime rows on
    that data (0.9 s for 900 training rows)."""
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))
    monkeypatch.delenv("GENEB_DATA_DIR", raising=False)
    paths = resolve_store(tmp_path / "store")
    [meta] = [t for t in geneb_v1_tasks() if t.task_id == RECORDED]
    register_tasks(paths, [meta], {RECORDED: "recorded-hash"},
                   profiles={RECORDED: TaskProfile(900, 100, 3, 0.3, 50, 200.0, 300)})
    rows = local_rows("GROVER", [RECORDED], ("full",))
    for r in rows:
        r.update(data_hash="recorded-hash", fit_seconds=0.9, n_train=900)
    append_rows(paths, rows)
    return paths


def plan_of(capsys, paths, *extra) -> dict:
    capsys.readouterr()
    assert main(["fill", "--store", str(paths.root), "--suite", "geneb-v1", "--tasks",
                 RECORDED, DERIVED, "--regimes", "full", "--dry-run", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_geneb_v1_without_data_and_a_hub_model_never_fetched_on_a_device_profile(store,
                                                                                capsys):
    before = digest(store.root)
    plan = plan_of(capsys, store, "--models", "GROVER", "--device-profile", "h100")
    assert digest(store.root) == before
    assert not (store.root.parent / "empty-hf-cache").exists()       # nothing downloaded
    # the recorded task's cell is done on the data the store recorded: one cell to compute
    assert (plan["cells_total"], plan["cells_missing"]) == (2, 1)
    assert plan["device"] == "the h100 profile (NVIDIA H100 SXM, datasheet)"
    assert plan["sizes"] == [
        "1 task(s) without data here: rows per split, classes and median length as the store "
        "recorded them from the data (fill, data verify)",
        "1 task(s) without data here: test rows from the official full-regime accuracies "
        "(their common denominator), train rows assumed 4 x test, 2 classes and 400 "
        "nucleotides per sequence assumed"]
    [m] = plan["models"]
    assert (m["device"], m["tasks"], m["sequences"], m["nucleotides"], m["tokens"]) == (
        "h100", 1, SEQUENCES, TOKENS, TOKENS)
    h100 = device_profiles()["h100"]
    assert m["embedding"]["source"] == "params"
    assert m["embedding"]["seconds"] == pytest.approx(2 * GROVER * TOKENS / (989.4e12 * 0.184))
    assert m["embedding"]["note"] == (
        f"estimated from params x tokens: 2 x 87.1M parameters x {TOKENS:,} tokens (one a "
        f"nucleotide assumed, the most a tokenizer makes) at {h100.basis_text}")
    assert h100.basis_text.startswith("18.4 % of the NVIDIA H100 SXM's datasheet 16-bit peak "
                                      "of 989.4 TFLOP/s (utilisation assumed: ")
    [probes] = m["probes"]
    assert (probes["source"], probes["examples"]) == ("store", ASSUMED_TRAIN_PER_TEST
                                                      * DERIVED_TEST)
    assert probes["seconds"] == pytest.approx(ASSUMED_TRAIN_PER_TEST * DERIVED_TEST
                                              * FIT_S_PER_ROW)


def test_the_device_profile_changes_the_estimate_and_an_unknown_one_is_refused(store, capsys):
    seconds = {name: plan_of(capsys, store, "--models", "GROVER", "--device-profile",
                             name)["models"][0]["embedding"]["seconds"]
               for name in ("h200", "a100")}
    # the same utilisation, the peaks 989.4 and 312 TFLOP/s
    assert seconds["a100"] / seconds["h200"] == pytest.approx(989.4 / 312.0)
    capsys.readouterr()
    assert main(["fill", "--store", str(store.root), "--suite", "geneb-v1", "--tasks", DERIVED,
                 "--models", "GROVER", "--regimes", "full", "--dry-run", "--device-profile",
                 "h200"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "estimated for the h200 profile (NVIDIA H200, measured)" in out
    assert ("at 18.4 % of the NVIDIA H200's 16-bit peak of 989.4 TFLOP/s, the share fill "
            "reached there (measured: bash bench/gpu.sh (issue 33's run") in out
    before = digest(store.root)
    capsys.readouterr()
    assert main(["fill", "--store", str(store.root), "--suite", "geneb-v1", "--models", "GROVER",
                 "--dry-run", "--device-profile", "h10"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert "--device-profile: unknown device profile 'h10' (did you mean h100, h100-pcie?)" in err
    assert digest(store.root) == before
    assert main(["fill", "--store", str(store.root), "--suite", "geneb-v1", "--models", "GROVER",
                 "--device-profile", "h100"]) == 2
    assert "--device-profile: only with --dry-run" in capsys.readouterr().err
    assert digest(store.root) == before


def test_on_this_machine_a_model_never_fetched_is_estimated_from_a_timed_matrix_product(
        store, capsys, monkeypatch):
    monkeypatch.setattr(dry_run_module, "run_device", lambda model, options: "cpu")
    monkeypatch.setattr(dry_run_module, "matmul_flops", lambda device, precision: 5e10)
    plan = plan_of(capsys, store, "--models", "GROVER", "kmer-3")
    assert plan["device"] == "this machine"
    grover, kmer = plan["models"]
    assert grover["embedding"]["seconds"] == pytest.approx(2 * GROVER * TOKENS / 5e10)
    assert grover["embedding"]["note"].endswith(
        "at the 50.0 GFLOP/s of a float32 1024x1024x4096 matrix product measured on this cpu "
        "now (a forward reaches less: the time is a lower bound)")
    # a weight-free baseline is calibrated here, on random sequences (no task's data is here)
    # of the sized tasks' median length (200 recorded, 400 assumed)
    assert kmer["embedding"]["source"] == "calibration"
    assert kmer["embedding"]["note"].startswith(
        "calibration: 256 random sequences of 300 nucleotides (no task's data is here) embedded "
        "on cpu in ")
    assert kmer["probes"][0]["note"] == "store: fit seconds of 1 cell(s) of other models"


def test_a_model_without_a_parameter_count_is_said_not_estimated(store, capsys):
    plan = plan_of(capsys, store, "--models", "GROVER", "org/unknown-size", "--device-profile",
                   "h100")
    grover, unknown = plan["models"]
    assert unknown["embedding"]["seconds"] is None and unknown["seconds"] is None
    assert unknown["embedding"]["note"].startswith("not estimated: the catalog gives no "
                                                   "parameter count for org/unknown-size")
    assert plan["unestimated"] == ["org/unknown-size"]
    assert plan["seconds"] == pytest.approx(grover["seconds"])
