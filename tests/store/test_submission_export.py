"""Exporting local results as an official submission, and importing it back exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

from store.analyses import scores
from store.catalog import geneb_v1_tasks
from store.errors import GenebError
from store.official import read_official_files
from store.protocol import METRICS, REGIMES, SEEDS
from store.submission import export_submission, import_files
from tests.store.local_rows import local_rows, local_store

MODEL = "kmer-3"


def _local_rows(**kwargs):
    return local_rows(MODEL, **kwargs)


def _store(tmp_path, rows):
    return local_store(tmp_path / "store", MODEL, rows)


def test_export_then_import_round_trips_exactly(tmp_path):
    paths = _store(tmp_path, _local_rows())
    out = export_submission(paths, MODEL, tmp_path, harness_version="geneb-engine 0.1.0")
    assert out == tmp_path / f"{MODEL}.json"
    [sub] = read_official_files([out])  # a valid official submission
    assert (sub.model_id, sub.provenance, sub.harness_version) == (
        MODEL, "self-reported", "geneb-engine 0.1.0")
    assert (sub.meta["display"], sub.meta["params"]) == ("3-mer spectrum", 0)
    [outcome] = import_files(paths, [out])
    assert (outcome.source, outcome.rows) == ("self-reported", 300)
    for regime in REGIMES:
        for metric in METRICS:
            local = scores(paths, regime=regime, metric=metric, source="local").sort("task")
            back = scores(paths, regime=regime, metric=metric,
                          source="self-reported").sort("task")
            assert back.height == 100
            assert back.equals(local)  # exactly: the same floats


def test_exported_scores_are_the_seed_means(tmp_path):
    rows = _local_rows()
    paths = _store(tmp_path, rows)
    doc = json.loads(export_submission(paths, MODEL, tmp_path / f"{MODEL}.json").read_text())
    task = geneb_v1_tasks()[7].task_id
    ten = [r["f1_macro"] for r in rows if (r["regime"], r["task"]) == ("10shot", task)]
    assert len(ten) == 5
    assert doc["results"]["10shot"][task]["F1"] == pytest.approx(np.mean(ten), abs=1e-15)
    full = next(r for r in rows if (r["regime"], r["task"]) == ("full", task))
    assert doc["results"]["full"][task]["MCC"] == full["mcc"]
    assert list(doc["results"]) == list(REGIMES)
    assert list(doc["results"]["1shot"]) == [t.task_id for t in geneb_v1_tasks()]


def test_incomplete_results_are_refused_with_the_missing_cells(tmp_path):
    tasks = [t.task_id for t in geneb_v1_tasks()]
    rows = _local_rows(skip={("10shot", tasks[0]), ("full", tasks[5])},
                       seeds_of=lambda regime, task: SEEDS[:3] if (regime, task) == (
                           "1shot", tasks[2]) else SEEDS)
    paths = _store(tmp_path, rows)
    out = tmp_path / f"{MODEL}.json"
    with pytest.raises(GenebError) as info:
        export_submission(paths, MODEL, out)
    head, *lines = str(info.value).split("\n")
    assert head.startswith(f"{MODEL}: 3 of 300 cells incomplete, nothing exported")
    assert [line.strip() for line in lines] == [
        f"full {tasks[5]}: no result", f"10shot {tasks[0]}: no result",
        f"1shot {tasks[2]}: 3 of 5 seeds"]
    assert not out.exists()


def test_export_needs_local_results_and_the_official_file_name(tmp_path):
    paths = _store(tmp_path, _local_rows())
    with pytest.raises(GenebError, match="must be named kmer-3.json"):
        export_submission(paths, MODEL, tmp_path / "submission.json")
    with pytest.raises(GenebError, match="kmer-4: no local results under protocol"):
        export_submission(paths, "kmer-4", tmp_path / "kmer-4.json")
