"""`geneb-engine import` and `geneb-engine report` as a user runs them."""

from __future__ import annotations

import json
import shutil
import urllib.error

from engine.cli import main
from store.official import fetch as official_fetch
from tests.conftest import LEADERBOARD, SUBMISSIONS
from tests.store.local_rows import local_rows, local_store


def test_import_then_reimport(tmp_path, capsys):
    store = str(tmp_path / "store")
    files = [str(SUBMISSIONS / "GROVER.json"), str(SUBMISSIONS / "MutBERT.json"),
             str(LEADERBOARD)]
    assert main(["import", "--store", store, *files]) == 0
    out = capsys.readouterr().out
    assert "3 file(s): 600 result rows written" in out
    assert main(["import", "--store", store, "--json", *files]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(f["model"], f["status"], f["rows"]) for f in doc["files"]] == [
        ("GROVER", "unchanged", 0), ("MutBERT", "unchanged", 0), (None, "unchanged", 0)]


def test_import_of_a_bad_file_prints_one_line_per_problem(tmp_path, capsys):
    doc = json.loads((SUBMISSIONS / "GROVER.json").read_text())
    doc["meta"]["params"] = True
    doc["results"]["full"]["iDHS-EL_DNase_I"]["MCC"] = float("nan")
    bad = tmp_path / "GROVER.json"
    bad.write_text(json.dumps(doc))
    assert main(["import", "--store", str(tmp_path / "store"), str(bad)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "geneb-engine import: 2 problem(s), nothing imported:",
        f"  {bad}: meta.params: must be an integer >= 0 (a parameter count), got boolean True",
        f"  {bad}: results.full.iDHS-EL_DNase_I.MCC: must be a finite number, got nan"]
    assert not (tmp_path / "store").exists()


def test_import_of_another_official_commit_offline(tmp_path, capsys, monkeypatch):
    """The pinned commit ships with the package; another one is downloaded, and offline that
    ends in one message saying what to download and where to put it."""
    def offline(url):
        raise urllib.error.URLError("Network is unreachable")

    monkeypatch.setattr(official_fetch, "fetch_url", offline)
    assert main(["import", "--store", str(tmp_path / "store"), "--official", "--commit",
                 "0123456789abcdef0123456789abcdef01234567"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("geneb-engine import: cannot download https://raw.githubusercontent")
    assert "then run `geneb-engine import " in err


def test_report_on_the_official_store(official_store, capsys):
    assert main(["report", "--store", str(official_store.root)]) == 0
    out = capsys.readouterr().out
    for title in ("Aggregates (full, mcc)", "Rankings per category", "Rank shift of macro",
                  "Spearman rho between the regimes", "Spearman rho between category rankings",
                  "Few-shot degradation of macro", "Few-shot degradation per category",
                  "Scale (full, mcc)", "Controlled pairs (full, mcc)", "Task difficulty",
                  "Category leaders (mcc)"):
        assert title in out
    assert "Imported leaderboard.json: 40 models in common" in out
    first = next(line for line in out.splitlines() if line.startswith("│ 1 │"))
    assert "GENERator" in first and "0.605" in first


def test_report_json_for_another_regime_and_metric(official_store, capsys):
    assert main(["report", "--store", str(official_store.root), "--json", "--regime", "1shot",
                 "--metric", "acc"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["regime"], doc["metric"], doc["protocol"]) == ("1shot", "acc", "geneb-v1")
    assert len(doc["aggregates"]) == 40
    assert len(doc["task_difficulty"]) == 100
    assert {r["difference"] for r in doc["leaderboard_differences"]} == {0.0}   # to the last bit


def test_report_on_an_empty_store_says_what_to_do(tmp_path, capsys):
    assert main(["report", "--store", str(tmp_path / "empty")]) == 1
    err = capsys.readouterr().err
    assert "no results for protocol geneb-v1" in err
    assert "`geneb-engine import --official`" in err and "`geneb-engine fill" in err


def test_export_submission_then_import_it(tmp_path, capsys):
    paths = local_store(tmp_path / "store", "kmer-3", local_rows("kmer-3"))
    store = str(paths.root)
    assert main(["export", "--store", store, "--submission", "kmer-3", "-o",
                 str(tmp_path)]) == 0
    out = tmp_path / "kmer-3.json"
    assert f"to {out}" in capsys.readouterr().out.replace("\n", "")
    assert json.loads(out.read_text())["harness_version"].startswith("geneb-engine ")
    assert main(["import", "--store", store, str(out)]) == 0
    assert "1 file(s): 300 result rows written" in capsys.readouterr().out
    assert main(["export", "--store", store, "--submission", "kmer-4", "-o",
                 str(tmp_path / "kmer-4.json")]) == 2
    assert "kmer-4: no local results" in capsys.readouterr().err


def test_report_keeps_local_and_official_entries_apart(official_store, tmp_path, capsys):
    shutil.copytree(official_store.root, tmp_path / "store")
    local_store(tmp_path / "store", "GROVER", local_rows("GROVER"))
    assert main(["report", "--store", str(tmp_path / "store")]) == 0
    out = capsys.readouterr().out
    assert "GROVER (local)" in out and "GROVER (official)" in out
    assert main(["report", "--store", str(tmp_path / "store"), "--json",
                 "--source", "local"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in doc["aggregates"]] == ["GROVER"]
