"""Exporting results as an official submission (local ones, or an imported file given back
exactly), its metadata options, and importing it back exactly."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from engine.cli import main
from store.analyses.scores import scores
from store.catalog import geneb_v1_tasks, load_models
from store.official.formats import leaderboard_provenance, read_official_file, read_official_files
from store.official.submission import (
    META_FIELDS,
    entry_provenance,
    export_submission,
    import_files,
)
from store.paths import resolve_store
from store.vocab.errors import GenebError
from store.vocab.protocol import METRICS, REGIMES, SEEDS
from store.vocab.sources import DEFAULT_PROVENANCE, LOCAL, SUBMISSION_PROVENANCES
from tests.conftest import SELF_REPORTED, SUBMISSIONS
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


def test_a_submission_stating_no_provenance_is_self_reported_on_every_path(tmp_path):
    """One default (`DEFAULT_PROVENANCE`, the official tools' 'self-reported'): a local export
    states it, a file without `meta.provenance` is valid and imported as its rows' source, a
    leaderboard_tasks.json row of a model the authors did not curate has it, and the refusal of
    'official' for such a model names it."""
    assert DEFAULT_PROVENANCE == "self-reported" and DEFAULT_PROVENANCE in SUBMISSION_PROVENANCES
    assert leaderboard_provenance(MODEL) == entry_provenance(LOCAL, MODEL) == DEFAULT_PROVENANCE
    paths = _store(tmp_path, _local_rows())
    out = export_submission(paths, MODEL, tmp_path)
    doc = json.loads(out.read_text())
    assert doc["meta"].pop("provenance") == DEFAULT_PROVENANCE
    out.write_text(json.dumps(doc))
    [sub] = read_official_files([out])
    assert sub.provenance == DEFAULT_PROVENANCE
    [outcome] = import_files(paths, [out])
    assert outcome.source == DEFAULT_PROVENANCE
    doc["meta"]["provenance"] = "official"
    out.write_text(json.dumps(doc))
    with pytest.raises(GenebError, match=f"an external submission uses '{DEFAULT_PROVENANCE}'"):
        read_official_files([out])


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


# --- any source, the official metadata ------------------------------------------------------

@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """A store holding all 41 shipped submissions (40 official, 1 self-reported)."""
    paths = resolve_store(tmp_path_factory.mktemp("all-official") / "store")
    import_files(paths, [SUBMISSIONS, SELF_REPORTED])
    return paths


def test_an_imported_file_is_exported_back_exactly(imported, tmp_path):
    """export(import(x)) == x for every shipped file: values, metadata, harness version, and
    the bytes."""
    published = sorted([*SUBMISSIONS.glob("*.json"), *SELF_REPORTED.glob("*.json")])
    assert len(published) == 41
    for path in published:
        doc = json.loads(path.read_bytes())
        out = export_submission(imported, doc["model_id"], tmp_path,
                                source=doc["meta"]["provenance"])
        assert json.loads(out.read_bytes()) == doc, path.name
        assert out.read_bytes() == path.read_bytes(), path.name


def test_without_a_stored_header_the_catalog_and_our_engine_are_stated(imported, tmp_path):
    """An imported entry whose header the store lacks (a store imported before headers were
    kept) falls back to the catalog's metadata, the engine and the source's provenance."""
    paths = _copy(imported, tmp_path)
    paths.submission_headers.unlink()
    out = export_submission(paths, "GROVER", tmp_path, source="official",
                            engine="geneb-engine 9.9")
    doc = json.loads(out.read_text())
    known = load_models()["GROVER"]
    assert doc["harness_version"] == "geneb-engine 9.9"
    assert doc["meta"] == {"display": known.display, "params": known.params, "url": "",
                           "zero_shot": False, "training_data": known.pretraining_data,
                           "provenance": "official", "submitted_by": ""}
    assert doc["results"] == json.loads((SUBMISSIONS / "GROVER.json").read_text())["results"]


def test_a_changed_header_alone_is_imported(imported, tmp_path):
    paths = _copy(imported, tmp_path)
    doc = json.loads((SUBMISSIONS / "GROVER.json").read_text())
    doc["meta"]["url"] = "https://example.org/grover"         # the rows do not hold it
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "GROVER.json").write_text(json.dumps(doc))
    [outcome] = import_files(paths, [tmp_path / "new" / "GROVER.json"])
    assert (outcome.status, outcome.rows) == ("imported", 0)       # the rows are the same
    (tmp_path / "out").mkdir()
    out = export_submission(paths, "GROVER", tmp_path / "out", source="official")
    assert json.loads(out.read_text()) == doc
    [again] = import_files(paths, [tmp_path / "new" / "GROVER.json"])
    assert (again.status, again.rows) == ("unchanged", 0)


def _copy(paths, tmp_path):
    shutil.copytree(paths.root, tmp_path / "store")
    return resolve_store(tmp_path / "store")


def _cli(capsys, *argv) -> tuple[int, str, str]:
    """`main`'s exit status (usage errors, argparse exits, included), stdout and stderr."""
    capsys.readouterr()
    try:
        rc = main([*map(str, argv)])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("option, value, field, expected", [
    ("--display", "My k-mers", "display", "My k-mers"),
    ("--params", "4096", "params", 4096),
    ("--url", "https://example.org/kmer", "url", "https://example.org/kmer"),
    ("--zero-shot", None, "zero_shot", True),
    ("--training-data", "none (a baseline)", "training_data", "none (a baseline)"),
    ("--submitted-by", "A Lab", "submitted_by", "A Lab"),
    # verified only for results recomputed from imported embeddings: test_import_embeddings.py
    ("--provenance", "reproduced", "provenance", "reproduced"),
    ("--harness-version", "my-harness 2", None, "my-harness 2"),
])
def test_each_metadata_option_lands_in_the_file(tmp_path, capsys, option, value, field,
                                                expected):
    paths = _store(tmp_path, _local_rows())
    argv = [option] if value is None else [option, value]
    rc, _, err = _cli(capsys, "export", "--store", paths.root, "--submission", MODEL,
                      "-o", tmp_path, *argv)
    assert (rc, err) == (0, "")
    out = tmp_path / f"{MODEL}.json"
    doc, problems = read_official_file(out)
    assert problems == []
    if field is None:
        assert doc.harness_version == expected
    else:
        assert doc.meta[field] == expected
        assert doc.harness_version.startswith("geneb-engine ")
    defaults = {"display": "3-mer spectrum", "params": 0, "url": "", "zero_shot": False,
                "provenance": "self-reported", "submitted_by": ""}
    assert list(doc.meta) == list(META_FIELDS)
    assert {k: v for k, v in doc.meta.items() if k in defaults and k != field} == \
        {k: v for k, v in defaults.items() if k != field}


@pytest.mark.parametrize("argv, line", [
    (("--params", "-5"), "--params: must be an integer >= 0 (a parameter count), got "
                         "integer -5; nothing written"),
    (("--params", "5e3"), "argument --params: '5e3' is not an integer; give a parameter count "
                          "(a whole number >= 0)"),
    (("--provenance", "peer-reviewed"), "argument --provenance: unknown provenance "
                                        "'peer-reviewed'; choose from official, verified, "
                                        "reproduced, self-reported"),
    (("--provenance", "official"), "--provenance: 'official' is reserved for the benchmark "
                                   "authors' 40 curated models"),
    (("--display", " "), "--display: must be a non-empty string, got string ' '"),
    (("--harness-version", ""), "--harness-version: must be a non-empty string"),
    (("--source", "oficial"), "--source: unknown source 'oficial' (did you mean official?)"),
])
def test_a_bad_option_value_is_one_line_and_writes_nothing(tmp_path, capsys, argv, line):
    paths = _store(tmp_path, _local_rows())
    (tmp_path / "out").mkdir()
    rc, out, err = _cli(capsys, "export", "--store", paths.root, "--submission", MODEL,
                        "-o", tmp_path / "out", *argv)
    assert (rc, out) == (2, "")
    assert len(err.splitlines()) == 1 and line in err, err
    assert list((tmp_path / "out").iterdir()) == []


def test_the_cli_exports_an_imported_source_and_says_where_the_results_are(imported, tmp_path,
                                                                          capsys):
    rc, _, err = _cli(capsys, "export", "--store", imported.root, "--submission", "GROVER",
                      "-o", tmp_path)
    assert rc == 2
    assert err.strip().endswith("its results are of source official: give --source official")
    rc, out, _ = _cli(capsys, "export", "--store", imported.root, "--submission", "GROVER",
                      "--source", "official", "-o", tmp_path, "--json")
    assert rc == 0
    assert json.loads(out) == {"path": str(tmp_path / "GROVER.json"), "model": "GROVER",
                               "source": "official", "provenance": "official"}
    assert (tmp_path / "GROVER.json").read_bytes() == (SUBMISSIONS / "GROVER.json").read_bytes()
