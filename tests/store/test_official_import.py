"""Importing the 40 official submissions reproduces the official leaderboard exactly; the summary
counts the result rows of every kind of file."""

from __future__ import annotations

import json
import shutil

import polars as pl

from engine.cli import main
from store.analyses.aggregates import aggregates
from store.analyses.scores import scores
from store.catalog import CATEGORY_ORDER, load_models
from store.db import query
from store.official.formats import read_official_files
from store.official.leaderboard import GENERATOR, leaderboard_documents, write_leaderboard_files
from store.official.reference import leaderboard_differences, read_leaderboard
from store.official.submission import import_files
from store.output_folder import OutputFolder
from store.paths import resolve_store
from store.tables.catalogs import read_catalog
from store.vocab.protocol import GENEB_V1, REGIMES
from tests.conftest import LEADERBOARD, SUBMISSIONS

METRICS = {"MCC": "mcc", "Acc": "acc", "F1": "f1_macro"}


def _published() -> dict:
    return json.loads(LEADERBOARD.read_text())["data"]


def _copy(store, tmp_path):
    shutil.copytree(store.root, tmp_path / "store")
    return resolve_store(tmp_path / "store")


def _count(paths, sql: str) -> int:
    return query(paths, sql).item()


def test_aggregates_equal_the_leaderboard_for_every_model_regime_metric_and_category(
        official_store):
    published = _published()
    checked = 0
    for regime in REGIMES:
        rows = {r["model"]: r for r in published[regime]}
        for name, metric in METRICS.items():
            agg = aggregates(scores(official_store, regime=regime, metric=metric,
                                    source="official"))
            assert agg.height == 40
            for r in agg.iter_rows(named=True):
                ref = rows[r["model"]]
                assert r["n_missing"] == 0
                assert r["micro"] == ref[f"micro_{name}"]          # to the last bit
                assert r["macro"] == ref[f"macro_{name}"]
                for cat in CATEGORY_ORDER:
                    assert r[cat] == ref[f"cat_{name}"][cat]
                checked += 15
    assert checked == 3 * 3 * 40 * 15


def test_the_papers_headline_figures(official_store):
    means = {r: aggregates(scores(official_store, regime=r))["macro"].mean() for r in REGIMES}
    assert {r: round(m, 3) for r, m in means.items()} == {
        "full": 0.488, "10shot": 0.253, "1shot": 0.106}
    best = aggregates(scores(official_store, regime="full")).row(0, named=True)
    assert best["model"] == "GENERator-eukaryote-3b-base"
    assert round(best["macro"], 3) == 0.605


def test_imported_rows_keep_provenance_protocol_and_metric_names(official_store):
    rows = query(official_store, "SELECT * FROM results")
    assert rows.height == 40 * 3 * 100
    assert rows["seed"].null_count() == rows.height
    assert set(rows["source"]) == {"official"}
    assert set(rows["probe"]) == {"logreg"}
    assert set(rows["protocol"]) == {"geneb-v1"}
    assert set(rows["protocol_hash"]) == {GENEB_V1.hash}
    doc = json.loads((SUBMISSIONS / "BioFM-265M.json").read_text())
    task = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"
    row = rows.filter(model="BioFM-265M", task=task, regime="10shot").row(0, named=True)
    published = doc["results"]["10shot"][task]
    assert (row["mcc"], row["acc"], row["f1_macro"]) == (
        published["MCC"], published["Acc"], published["F1"])
    assert row["engine_version"] == doc["harness_version"]


def test_catalog_gets_the_tasks_and_keeps_the_projects_model_metadata(official_store):
    tasks = read_catalog(official_store, "tasks")
    assert tasks.height == 100 and set(tasks["suite"]) == {"geneb-v1"}
    models = read_catalog(official_store, "models")
    assert models.height == 40
    grover = models.filter(model_id="GROVER").row(0, named=True)
    known = load_models()["GROVER"]
    assert (grover["architecture_family"], grover["tokenization_family"],
            grover["display"]) == (known.architecture_family, known.tokenization_family,
                                   known.display)


def test_leaderboard_is_kept_as_a_reference_table(official_store):
    board = read_leaderboard(official_store, regime="1shot", metric="f1_macro")
    assert board.height == 41  # the 40 official models and one self-reported entry
    splice = board.filter(model="splicebert-1024nt").row(0, named=True)
    ref = next(r for r in _published()["1shot"] if r["model"] == "splicebert-1024nt")
    assert splice["provenance"] == "self-reported"
    assert splice["macro"] == ref["macro_F1"]
    assert splice["Coding/NC"] == ref["cat_F1"]["Coding/NC"]
    diffs = leaderboard_differences(
        aggregates(scores(official_store, regime="1shot", metric="f1_macro")), board)
    assert diffs["model"].n_unique() == 40
    assert diffs["difference"].abs().max() < 1e-9


def test_reimport_writes_nothing(official_store, tmp_path):
    paths = _copy(official_store, tmp_path)
    before = sorted(paths.results.rglob("*.parquet"))
    outcomes = import_files(paths, [SUBMISSIONS, LEADERBOARD])
    assert {o.status for o in outcomes} == {"unchanged"}
    assert sum(o.rows for o in outcomes) == 0
    assert sorted(paths.results.rglob("*.parquet")) == before
    assert _count(paths, "SELECT count(*) FROM results_all") == 12_000
    assert _count(paths, "SELECT count(*) FROM results") == 12_000


def test_changed_content_replaces_the_models_rows(official_store, tmp_path):
    paths = _copy(official_store, tmp_path)
    doc = json.loads((SUBMISSIONS / "GROVER.json").read_text())
    task = "iDHS-EL_DNase_I"
    doc["results"]["full"][task]["MCC"] = 0.5
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "GROVER.json").write_text(json.dumps(doc))
    [outcome] = import_files(paths, [tmp_path / "new" / "GROVER.json"])
    assert (outcome.status, outcome.rows) == ("imported", 300)
    assert _count(paths, "SELECT count(*) FROM results") == 12_000
    assert _count(paths, "SELECT count(*) FROM results_all") == 12_300
    assert _count(paths, f"SELECT mcc FROM results WHERE model = 'GROVER' AND task = '{task}' "
                         "AND regime = 'full'") == 0.5


def test_a_new_self_reported_model_is_registered_from_its_meta(official_store, tmp_path):
    paths = _copy(official_store, tmp_path)
    doc = json.loads((SUBMISSIONS / "GROVER.json").read_text())
    doc["model_id"] = "my/model v2"
    doc["meta"].update(display="My model", params=12_345, provenance="self-reported",
                       training_data="human")
    (tmp_path / "my_model_v2.json").write_text(json.dumps(doc))
    import_files(paths, [tmp_path / "my_model_v2.json"])
    entry = read_catalog(paths, "models").filter(model_id="my/model v2").row(0, named=True)
    assert (entry["display"], entry["params"], entry["provenance"], entry["pretraining_data"],
            entry["architecture_family"]) == ("My model", 12_345, "self-reported", "human",
                                              "Other")
    mine = scores(paths, source="self-reported")
    assert set(mine["model"]) == {"my/model v2"}
    both = aggregates(scores(paths)).filter(pl.col("model").is_in(["GROVER", "my/model v2"]))
    assert sorted(both["source"]) == ["official", "self-reported"]
    assert both["macro"].n_unique() == 1


def test_cli_counts_the_result_rows_of_a_leaderboard_tasks_file(tmp_path, capsys):
    subs = read_official_files([SUBMISSIONS])
    board = OutputFolder("-o", "board", tmp_path / "board", GENERATOR)
    [_, tasks_file] = write_leaderboard_files(board, leaderboard_documents(subs))
    store = str(tmp_path / "store")
    assert main(["import", "--store", store, str(tasks_file)]) == 0
    assert "1 file(s): 12000 result rows written" in capsys.readouterr().out
    assert _count(resolve_store(store), "SELECT count(*) FROM results "
                                        "WHERE source = 'leaderboard'") == 12_000
