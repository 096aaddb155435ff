"""The GENEB reference data shipped in the package (store.official.data): exact and
self-consistent, imported offline by `geneb-engine import --official`, and rebuilt exactly."""

from __future__ import annotations

import csv
import hashlib
import json
import socket
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from engine.cli import main
from store.analyses.aggregates import aggregates
from store.analyses.scores import scores
from store.catalog import CATEGORY_ORDER, geneb_v1_tasks, official_model_ids
from store.official import data as official_data
from store.official.data import (
    OFFICIAL_COMMIT,
    OFFICIAL_REPO,
    REFERENCE_DATA,
    benchmark_spec,
    build,
    document_bytes,
    model_meta,
    official_tree,
    submission_documents,
    submission_headers,
    write_official_files,
)
from store.official.fetch import official_dir, official_file_names
from store.official.formats import Leaderboard, Submission, read_official_files
from store.official.reference import read_leaderboard
from store.paths import resolve_store
from store.vocab.errors import GenebError
from store.vocab.protocol import REGIMES

ROOT = Path(__file__).resolve().parents[2]
METRICS = {"MCC": "mcc", "Acc": "acc", "F1": "f1_macro"}
SELF_REPORTED = "splicebert-1024nt"


def published_leaderboard() -> dict:
    """The shipped `leaderboard.json` as published: {"data": {regime: [rows]}}."""
    return json.loads(official_data.leaderboard_bytes())


def _unreachable(*args, **kwargs):
    raise OSError("network unreachable (test)")


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """A store filled by `geneb-engine import --official --json` with the network unreachable;
    (store paths, the command's JSON document)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(urllib.request, "urlopen", _unreachable)
        mp.setattr(socket, "create_connection", _unreachable)
        store = tmp_path_factory.mktemp("official-data") / "store"
        capture = tmp_path_factory.mktemp("out") / "out.json"
        with capture.open("w") as out:
            old, sys.stdout = sys.stdout, out
            try:
                assert main(["import", "--store", str(store), "--official", "--json"]) == 0
            finally:
                sys.stdout = old
    return resolve_store(store), json.loads(capture.read_text())


# --- the shipped documents --------------------------------------------------------------------

def test_the_shipped_data_names_its_source_and_licence():
    assert official_data.source() == {"repository": OFFICIAL_REPO, "commit": OFFICIAL_COMMIT}
    notice = (REFERENCE_DATA / "NOTICE").read_text()
    for needle in (f"https://github.com/{OFFICIAL_REPO}", f"at commit {OFFICIAL_COMMIT}",
                   "Apache License, Version 2.0", "What was transformed", "submissions.parquet"):
        assert needle in notice
    assert "Apache License" in (REFERENCE_DATA / "LICENSE").read_text()
    shipped = sorted(p.name for p in REFERENCE_DATA.iterdir())
    assert shipped == sorted(["LICENSE", "NOTICE", "benchmark_spec.json", "leaderboard.json",
                              "model_meta.json", "submissions.json", "submissions.parquet"])
    assert sum(p.stat().st_size for p in REFERENCE_DATA.iterdir()) < 600_000


def test_an_installed_package_carries_the_shipped_data():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "official/reference_data/*" in conf["tool"]["setuptools"]["package-data"]["store"]


def test_the_41_submissions_parse_as_the_published_files():
    docs = submission_documents()
    assert len(docs) == 41
    official = submission_documents("official")
    assert sorted(official) == official_file_names()
    assert {d["model_id"] for d in official.values()} == official_model_ids()
    [(name, splice)] = submission_documents("self-reported").items()
    assert (name, splice["model_id"]) == (f"{SELF_REPORTED}.json", SELF_REPORTED)
    task_ids = [t["id"] for t in benchmark_spec()["tasks"]]
    heads = {h["file"]: h for h in submission_headers()}
    for name, doc in docs.items():
        assert list(doc) == ["schema_version", "model_id", "harness_version", "meta", "results"]
        assert doc["schema_version"] == "1.0" and name == f"{doc['model_id']}.json"
        assert list(doc["results"]) == list(REGIMES)
        for per_task in doc["results"].values():
            assert list(per_task) == task_ids
            for values in per_task.values():
                assert list(values) == list(METRICS)
                assert all(type(v) is float for v in values.values())
        # the published file, byte for byte (its SHA-256 is recorded when building)
        assert hashlib.sha256(document_bytes(doc)).hexdigest() == heads[name]["sha256"]
        assert json.loads(document_bytes(doc)) == doc


def test_spec_and_model_meta_agree_with_the_catalogs():
    spec = benchmark_spec()
    assert spec["category_order"] == list(CATEGORY_ORDER)
    assert [t["id"] for t in spec["tasks"]] == [t.task_id for t in geneb_v1_tasks()]
    assert set(model_meta()) == official_model_ids()
    for doc in submission_documents("official").values():
        assert model_meta()[doc["model_id"]]["display"] == doc["meta"]["display"]
    # As published: model_meta.json's params differ from the submissions' meta for three
    # models, and the leaderboard shows model_meta.json's (the submission's for the rest)
    differ = sorted(d["model_id"] for d in submission_documents("official").values()
                    if model_meta()[d["model_id"]]["params"] != d["meta"]["params"])
    assert differ == ["caduceus-ps_seqlen-131k_d_model-256_n_layer-16", "eccdnamamba_weights",
                      "enformer-official-rough"]
    params = {d["model_id"]: model_meta().get(d["model_id"], d["meta"])["params"]
              for d in submission_documents().values()}
    for regime in REGIMES:
        assert {r["model"]: r["params"] for r in published_leaderboard()["data"][regime]} == params


def test_the_leaderboard_is_the_official_builders_output_of_the_submissions():
    """tools/build_leaderboard.py: category = mean of its tasks, micro = mean of the 100 tasks,
    macro = mean of the 13 categories; rows sorted by model id, case-insensitive."""
    spec, board = benchmark_spec(), published_leaderboard()["data"]
    cat_of = {t["id"]: t["category"] for t in spec["tasks"]}
    docs = {d["model_id"]: d for d in submission_documents().values()}
    for regime in REGIMES:
        rows = board[regime]
        assert [r["model"] for r in rows] == sorted(docs, key=str.lower)
        for row in rows:
            per_task = docs[row["model"]]["results"][regime]
            for metric in METRICS:
                vals = {t: v[metric] for t, v in per_task.items()}
                cats = {}
                for c in spec["category_order"]:
                    xs = [vals[t] for t in vals if cat_of[t] == c]
                    cats[c] = sum(xs) / len(xs)
                assert row[f"cat_{metric}"] == pytest.approx(cats, abs=1e-12)
                assert row[f"micro_{metric}"] == pytest.approx(
                    sum(vals.values()) / len(vals), abs=1e-12)
                assert row[f"macro_{metric}"] == pytest.approx(
                    sum(cats.values()) / len(cats), abs=1e-12)
            assert row["submitted"] == docs[row["model"]]["meta"]["provenance"]


# --- geneb-engine import --official, offline ----------------------------------------------------

def test_import_official_offline_lands_41_submissions_and_the_leaderboard(imported):
    paths, doc = imported
    files = doc["files"]
    subs = [f for f in files if f["kind"] == "submission"]
    assert len(subs) == 41 and all(f["status"] == "imported" and f["rows"] == 300 for f in subs)
    assert sorted(f["source"] for f in subs) == ["official"] * 40 + ["self-reported"]
    assert next(f["model"] for f in subs if f["source"] == "self-reported") == SELF_REPORTED
    [board] = [f for f in files if f["kind"] == "leaderboard"]
    assert board["status"] == "imported"
    assert {Path(f["path"]).parent for f in files} == {official_dir(paths)}
    assert read_leaderboard(paths, regime="10shot", metric="acc").height == 41


@pytest.mark.parametrize("regime", REGIMES)
def test_aggregates_per_source_equal_the_shipped_leaderboard(imported, regime):
    paths, _ = imported
    published = {r["model"]: r for r in published_leaderboard()["data"][regime]}
    seen: dict[str, str] = {}
    checked = 0
    for source, n in (("official", 40), ("self-reported", 1)):
        for name, metric in METRICS.items():
            agg = aggregates(scores(paths, regime=regime, metric=metric, source=source))
            assert agg.height == n
            for r in agg.iter_rows(named=True):
                ref = published[r["model"]]
                assert ref["submitted"] == source and r["n_missing"] == 0
                assert r["micro"] == pytest.approx(ref[f"micro_{name}"], abs=1e-12)
                assert r["macro"] == pytest.approx(ref[f"macro_{name}"], abs=1e-12)
                for cat in CATEGORY_ORDER:
                    assert r[cat] == pytest.approx(ref[f"cat_{name}"][cat], abs=1e-12)
                seen[r["model"]] = source
                checked += 15
    assert sorted(seen) == sorted(published)            # the 41 rows, the 41st self-reported
    assert seen[SELF_REPORTED] == "self-reported"
    assert checked == 41 * 3 * 15


def test_import_official_again_is_unchanged(imported, tmp_path, monkeypatch, capsys):
    import shutil

    monkeypatch.setattr(urllib.request, "urlopen", _unreachable)
    shutil.copytree(imported[0].root, tmp_path / "store")
    assert main(["import", "--store", str(tmp_path / "store"), "--official", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {f["status"] for f in doc["files"]} == {"unchanged"}


# --- written files, the official validator, the rebuild -----------------------------------------

def test_written_files_pass_the_official_validator(tmp_path):
    files = write_official_files(tmp_path / "subs")
    assert sorted(f.name for f in files) == sorted(submission_documents())
    (tmp_path / "leaderboard.json").write_bytes(official_data.leaderboard_bytes())
    docs = read_official_files([*files, tmp_path / "leaderboard.json"])
    subs = [d for d in docs if isinstance(d, Submission)]
    assert len(subs) == 41 and sum(isinstance(d, Leaderboard) for d in docs) == 1
    shipped = submission_documents()
    for sub in subs:
        assert sub.results == shipped[sub.path.name]["results"]
        assert sub.provenance == ("self-reported" if sub.model_id == SELF_REPORTED
                                  else "official")
    assert [f.name for f in write_official_files(tmp_path / "o", "official")] == \
        official_file_names()


def _geneb_checkout(root: Path) -> Path:
    """The published files laid out as in the GENEB repository."""
    write_official_files(root / "submissions")
    (root / "benchmark").mkdir()
    (root / "leaderboard").mkdir()
    for folder, name in (("benchmark", "benchmark_spec.json"), ("benchmark", "model_meta.json"),
                         ("leaderboard", "leaderboard.json")):
        (root / folder / name).write_bytes((REFERENCE_DATA / name).read_bytes())
    return root


def test_a_rebuild_from_the_written_files_gives_the_same_values(tmp_path):
    out = tmp_path / "out"
    written = build(_geneb_checkout(tmp_path / "GENEB"), out)
    assert {p.name for p in written} == {p.name for p in REFERENCE_DATA.iterdir()} - {"LICENSE"}
    shipped, rebuilt = (pq.read_table(d / "submissions.parquet") for d in (REFERENCE_DATA, out))
    assert rebuilt.column_names == ["file", "model_id", "regime", "task", "MCC", "Acc", "F1"]
    assert rebuilt.num_rows == 41 * 300
    assert rebuilt.to_pydict() == shipped.to_pydict()          # exact float64 values, same order
    assert {str(rebuilt.schema.field(m).type) for m in METRICS} == {"double"}

    def strip(heads):
        return [{k: v for k, v in h.items() if k != "folder"} for h in heads]

    assert strip(submission_headers(out)) == strip(submission_headers())
    assert {h["folder"] for h in submission_headers(out)} == {"submissions"}
    for name in ("leaderboard.json", "benchmark_spec.json", "model_meta.json"):
        assert (out / name).read_bytes() == (REFERENCE_DATA / name).read_bytes()
    assert submission_documents(folder=out) == submission_documents()


@pytest.mark.parametrize("damage", ["an integer score", "pretty-printed", "a missing key"])
def test_a_rebuild_refuses_what_it_could_not_give_back_exactly(tmp_path, damage):
    src = _geneb_checkout(tmp_path / "GENEB")
    path = src / "submissions" / "GROVER.json"
    doc = json.loads(path.read_text())
    if damage == "an integer score":
        doc["results"]["full"]["iDHS-EL_DNase_I"]["Acc"] = 1
        path.write_bytes(document_bytes(doc))
    elif damage == "pretty-printed":
        path.write_text(json.dumps(doc, indent=2))
    else:
        del doc["harness_version"]
        path.write_bytes(document_bytes(doc))
    with pytest.raises(GenebError, match="GROVER.json"):
        build(src, tmp_path / "out")


def test_the_build_command_reports_what_it_wrote(tmp_path, capsys):
    assert official_data.main(["build", str(_geneb_checkout(tmp_path / "G")),
                               "--out", str(tmp_path / "out")]) == 0
    assert "submissions.parquet" in capsys.readouterr().out
    assert official_data.main(["build", str(tmp_path / "nothing-here"),
                               "--out", str(tmp_path / "out2")]) == 2


# --- the cached tree the tests read -------------------------------------------------------------

def test_the_tree_is_written_once_and_repaired_when_damaged(tmp_path):
    root = official_tree(tmp_path)
    assert root.name.startswith("geneb-official-")
    assert sorted(p.name for p in (root / "submissions").iterdir()) == official_file_names()
    assert [p.name for p in (root / "submissions-self-reported").iterdir()] == [
        f"{SELF_REPORTED}.json"]
    stamp = (root / "submissions" / "GROVER.json").stat().st_mtime_ns
    assert official_tree(tmp_path) == root
    assert (root / "submissions" / "GROVER.json").stat().st_mtime_ns == stamp   # reused
    (root / "submissions" / "GROVER.json").write_text("{}")
    (root / "submissions" / "extra.json").write_text("{}")
    assert official_tree(tmp_path) == root
    assert not (root / "submissions" / "extra.json").exists()
    assert json.loads((root / "submissions" / "GROVER.json").read_text())["model_id"] == "GROVER"
    assert [p.name for p in tmp_path.iterdir()] == [root.name]      # nothing left aside


def test_two_processes_write_the_tree_at_once(tmp_path):
    code = ("import sys; from store.official.data import official_tree; "
            "print(official_tree(sys.argv[1]))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs[0] == outs[1] == str(official_tree(tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == [Path(outs[0]).name]


def test_importing_the_module_is_cheap():
    code = ("import sys, store.official.data; "
            "print(sorted({'polars', 'pyarrow', 'torch', 'transformers', 'textual'} "
            "& set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_export_csv_flags_each_row_in_or_out_of_the_models_domain(imported, tmp_path, capsys):
    paths, _ = imported
    out = tmp_path / "x.csv"
    assert main(["export", "--store", str(paths.root), "--csv", str(out), "--regimes",
                 "full", "--source", "official"]) == 0
    with out.open() as f:
        rows = {(r["model"], r["task"]): r["domain"] for r in csv.DictReader(f)}
    h3 = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"
    human_promoters = "katarinagresova_Genomic_Benchmarks_human_nontata_promoters"
    assert rows[("hyenadna-large-1m-seqlen-hf", h3)] == "out"               # human-only, yeast
    assert rows[("hyenadna-large-1m-seqlen-hf", human_promoters)] == "in"
    assert rows[("nucleotide-transformer-v2-50m-multi-species", h3)] == "in"  # fungi included
    assert rows[("agro-nucleotide-transformer-1b", human_promoters)] == "out"
    assert rows[("dnabert2-no-flashattention", h3)] == "unknown"            # not established
    assert rows[("hyenadna-large-1m-seqlen-hf", "iDNA_ABF_5mC")] == "unknown"
    assert set(rows.values()) == {"in", "out", "unknown"}


def test_report_splits_each_models_scores_in_and_out_of_domain(imported, tmp_path, capsys,
                                                                monkeypatch):
    paths, _ = imported
    out = tmp_path / "x.csv"
    assert main(["export", "--store", str(paths.root), "--csv", str(out), "--regimes",
                 "full", "--source", "official"]) == 0
    with out.open() as f:
        rows = [r for r in csv.DictReader(f) if r["model"] == "hyenadna-large-1m-seqlen-hf"]
    by_flag = {flag: [float(r["mcc"]) for r in rows if r["domain"] == flag]
               for flag in ("in", "out", "unknown")}
    capsys.readouterr()
    argv = ["report", "--store", str(paths.root), "--source", "official", "--resamples", "0"]
    assert main([*argv, "--json"]) == 0
    split = {r["model"]: r for r in json.loads(capsys.readouterr().out)["domain_split"]}
    hyena = split["hyenadna-large-1m-seqlen-hf"]
    assert (hyena["n_in"], hyena["n_out"], hyena["n_unknown"]) == tuple(
        len(by_flag[f]) for f in ("in", "out", "unknown"))
    assert hyena["in_micro"] == pytest.approx(sum(by_flag["in"]) / len(by_flag["in"]))
    assert hyena["out_micro"] == pytest.approx(sum(by_flag["out"]) / len(by_flag["out"]))
    # by hand from task_domains.csv: 46 human tasks in; out: 38 outside animals and 9 of other
    # animals (6 mouse, 2 fly, 1 worm); unknown: the 6 unknown tasks and human-or-worm
    assert (hyena["n_in"], hyena["n_out"], hyena["n_unknown"]) == (46, 47, 7)
    assert split["dnabert2-no-flashattention"]["n_unknown"] == 100
    monkeypatch.setenv("COLUMNS", "200")
    assert main(argv) == 0
    assert "In and out of domain (full, mcc)" in capsys.readouterr().out
