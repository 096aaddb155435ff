"""Task sizes without the data (`store.task_sizes`) and the device table (`store.devices`): the
test rows derived from the official accuracies, the order of the bases, and every row of the
table read, checked and matched by the CUDA device's name."""

from __future__ import annotations

import pytest

from store import devices
from store.catalog import TaskProfile, geneb_v1_tasks
from store.official.data import score_columns
from store.task_sizes import DERIVED, RECORDED, basis_lines, official_test_rows, task_sizes
from store.vocab.errors import GenebError


def test_each_geneb_v1_tasks_test_rows_are_the_denominator_of_every_official_accuracy():
    """Every full-regime accuracy times the derived test rows is a whole count of correct
    predictions, and no smaller count of rows divides them all."""
    rows = official_test_rows()
    assert set(rows) == {t.task_id for t in geneb_v1_tasks()}
    scores = score_columns()
    accuracies: dict[str, list[float]] = {}
    for regime, task, acc in zip(scores["regime"], scores["task"], scores["Acc"], strict=True):
        if regime == "full":
            accuracies.setdefault(task, []).append(acc)
    for task, n in rows.items():
        assert all(abs(a * n - round(a * n)) < 1e-6 for a in accuracies[task]), task
        assert not any(all(abs(a * d - round(a * d)) < 1e-6 for a in accuracies[task])
                       for d in range(1, n) if n % d == 0), task
    assert rows["InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"] == 1497
    assert (min(rows.values()), max(rows.values()), sum(rows.values())) == (212, 67157, 612792)


def test_a_recorded_profile_comes_first_then_the_derived_rows_and_an_unsized_task_is_refused():
    recorded = {"mine": TaskProfile(900, 100, 3, 0.3, 50, 200.0, 300)}
    sizes = task_sizes(["mine", "deep4mc_E.coli_4mC"], recorded)
    assert (sizes["mine"].n_train, sizes["mine"].n_test, sizes["mine"].n_classes,
            sizes["mine"].length, sizes["mine"].basis) == (900, 100, 3, 200.0, RECORDED)
    e_coli = sizes["deep4mc_E.coli_4mC"]
    assert (e_coli.n_train, e_coli.n_test, e_coli.n_classes, e_coli.length, e_coli.basis) == (
        4 * 3721, 3721, 2, 400, DERIVED)
    assert basis_lines(sizes) == [f"1 task(s) without data here: {RECORDED}",
                                  f"1 task(s) without data here: {DERIVED}"]
    with pytest.raises(GenebError, match=r"^task\(s\) a, b: no data here and no recorded size"):
        task_sizes(["a", "deep4mc_E.coli_4mC", "b"], {})


def test_the_device_table_says_each_rows_basis_and_matches_cuda_names():
    table = devices.device_profiles()
    assert list(table) == ["h200", "h100", "h100-pcie", "a100", "l40s", "l4", "v100"]
    assert [p.name for p in table.values() if p.basis == "measured"] == ["h200"]
    assert "795,040 tokens/s" in table["h200"].utilisation_source
    assert all("datasheet" in p.peak_source for p in table.values())
    # the longest part of the name wins: PCIe before H100, L40S before L4
    assert devices.peak_tflops("NVIDIA H100 80GB HBM3") == 989.4
    assert devices.peak_tflops("NVIDIA H100 PCIe") == 756.5
    assert devices.peak_tflops("NVIDIA L40S") == 362.1 and devices.peak_tflops("NVIDIA L4") == 121
    assert devices.peak_tflops("cpu") is None
    assert table["h100"].flops == pytest.approx(989.4e12 * 0.184)


@pytest.mark.parametrize("edit, says", [
    (("\nbasis = \"measured\"", "\nbasis = \"guessed\""), "basis 'guessed' is not one of measured"),
    (("utilisation = 0.184", "utilisation = 1.5"), "utilisation in (0, 1]"),
    (("label = \"NVIDIA H200\"\n", ""), "fields ['label'] missing or unknown"),
    (("name = \"h100\"", "name = \"h200\""), "the name 'h200' is given twice"),
])
def test_a_malformed_row_is_one_error_naming_it(tmp_path, monkeypatch, edit, says):
    text = devices.DEVICES_FILE.read_text().replace(*edit, 1)
    (tmp_path / "devices.toml").write_text(text)
    monkeypatch.setattr(devices, "DEVICES_FILE", tmp_path / "devices.toml")
    devices.device_profiles.cache_clear()
    try:
        with pytest.raises(GenebError, match=r"devices.toml: device \d"):
            devices.device_profiles()
        with pytest.raises(GenebError) as caught:
            devices.device_profiles()
        assert says in str(caught.value)
    finally:
        devices.device_profiles.cache_clear()
