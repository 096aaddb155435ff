"""The web leaderboard's two files: written from the store as the official
tools/build_leaderboard.py writes them from the submission files, read back by `import`
(leaderboard_tasks.json's rules, one case per rule), and the round trip through both.

Compared exactly, aggregates included: `store.analyses.aggregates` adds left to right in catalog
order and divides by a count, as the official script's `sum(values) / len(values)`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from store.db import Snapshot, query
from store.official.formats import LeaderboardTasks, read_official_file
from store.official.leaderboard import (
    GENERATOR,
    leaderboard_documents,
    source_order,
    store_submissions,
    write_leaderboard_files,
)
from store.official.submission import import_files
from store.output_folder import OutputFolder
from store.paths import resolve_store
from store.tables.catalogs import read_catalog
from store.vocab.errors import GenebError
from store.vocab.protocol import GENEB_V1
from tests.conftest import LEADERBOARD, OFFICIAL_TREE, SELF_REPORTED, SUBMISSIONS
from tests.helpers import digest
from tests.store.local_rows import local_rows, local_store

SPLICE = "splicebert-1024nt"


@pytest.fixture(scope="module")
def store(official_store, tmp_path_factory):
    """The 40 official submissions, leaderboard.json and the self-reported submission."""
    root = tmp_path_factory.mktemp("leaderboard-files") / "store"
    shutil.copytree(official_store.root, root)
    paths = resolve_store(root)
    import_files(paths, [SELF_REPORTED])
    return paths


def _documents(paths, sources=None) -> tuple[dict, dict]:
    snap = Snapshot(paths)
    entries, left_out = store_submissions(snap, sources=sources or source_order([]),
                                          protocol_hash=GENEB_V1.hash)
    assert left_out == []
    return leaderboard_documents(sub for _, sub in entries)


@pytest.fixture(scope="module")
def documents(store) -> tuple[dict, dict]:
    return _documents(store)


@pytest.fixture(scope="module")
def files(documents, tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("written")
    out = OutputFolder("-o", str(folder), folder, GENERATOR)
    return {p.name: p for p in write_leaderboard_files(out, documents)}


def assert_same_board(ours, theirs) -> None:
    """The same document to the last bit: keys and their order, nesting, types and values."""
    assert json.dumps(ours, separators=(",", ":")) == json.dumps(theirs, separators=(",", ":"))
    assert ours == theirs


def _official_build(paths: list[Path]) -> tuple[dict, dict]:
    """What tools/build_leaderboard.py builds from these submission files, in plain Python (no
    code of ours). One deviation: model_meta.json's display and params win over a file's meta,
    as in the published leaderboard.json of the pinned commit (three files state other params:
    caduceus-ps, eccdnamamba, enformer; the store's catalog holds model_meta.json's)."""
    spec = json.loads((OFFICIAL_TREE / "benchmark_spec.json").read_text())
    meta = json.loads((OFFICIAL_TREE / "model_meta.json").read_text())
    task_ids = [t["id"] for t in spec["tasks"]]
    category = {t["id"]: t["category"] for t in spec["tasks"]}
    by_category = {r: [] for r in spec["regimes"]}
    by_task = {r: [] for r in spec["regimes"]}
    for path in sorted(paths, key=lambda p: p.name):
        sub = json.loads(path.read_text())
        mid = sub["model_id"]
        mm = {**sub["meta"], **meta.get(mid, {})}
        head = {"model": mid, "disp": mm.get("display", mid), "params": mm.get("params", 0)}
        prov = mm.get("provenance", "self-reported")
        for regime in spec["regimes"]:
            row = {**head, "official": prov == "official",
                   "zero_shot": bool(mm.get("zero_shot", False)), "submitted": prov}
            task_row = dict(head)
            for metric in spec["metrics"]:
                values = {t: float(sub["results"][regime][t][metric]) for t in task_ids}
                cats = {}
                for c in spec["category_order"]:
                    xs = [values[t] for t in task_ids if category[t] == c]
                    cats[c] = sum(xs) / len(xs)
                micro = sum(values.values()) / len(values)
                macro = sum(cats.values()) / len(cats)
                row |= {f"micro_{metric}": micro, f"macro_{metric}": macro, f"cat_{metric}": cats}
                task_row |= {f"micro_{metric}": micro, f"macro_{metric}": macro,
                             f"task_{metric}": values}
            by_category[regime].append(row)
            by_task[regime].append(task_row)
    for regime in spec["regimes"]:
        by_category[regime].sort(key=lambda r: r["model"].lower())
        by_task[regime].sort(key=lambda r: r["model"].lower())
    tasks = [{"id": t["id"], "label": t["label"], "cat": t["category"]} for t in spec["tasks"]]
    return {"data": by_category}, {"tasks": tasks, "data": by_task}


# --- leaderboard -o: the two files --------------------------------------------------------

def test_leaderboard_rows_equal_the_published_leaderboard(documents):
    published = json.loads(LEADERBOARD.read_text())
    assert [r["model"] for r in documents[0]["data"]["full"]] == \
        [r["model"] for r in published["data"]["full"]]
    assert_same_board(documents[0], published)


def test_both_files_equal_an_independent_build_from_the_submission_files(documents):
    files = [*SUBMISSIONS.glob("*.json"), *SELF_REPORTED.glob("*.json")]
    expected = _official_build(files)
    assert_same_board(documents[0], expected[0])
    assert_same_board(documents[1], expected[1])
    splice = next(r for r in documents[0]["data"]["1shot"] if r["model"] == SPLICE)
    assert (splice["disp"], splice["params"], splice["official"], splice["submitted"]) == (
        "SpliceBERT 1024nt", 19_710_474, False, "self-reported")


def test_files_are_compact_utf8_json_of_the_documents(documents, files):
    assert sorted(files) == ["leaderboard.json", "leaderboard_tasks.json"]
    for doc, name in zip(documents, ("leaderboard.json", "leaderboard_tasks.json"), strict=True):
        text = files[name].read_bytes().decode("utf-8")
        assert json.loads(text) == doc
        assert text == json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def test_a_model_is_taken_from_the_first_complete_source(store, tmp_path):
    shutil.copytree(store.root, tmp_path / "store")
    task = "iDHS-EL_DNase_I"
    paths = local_store(tmp_path / "store", "GROVER",
                        local_rows("GROVER") + local_rows("kmer-3", skip={("1shot", task)}))
    snap = Snapshot(paths)
    entries, left_out = store_submissions(snap, sources=source_order(["local"]),
                                          protocol_hash=GENEB_V1.hash)
    assert ("official", "GROVER") in [(s, e.model_id) for s, e in entries]
    assert left_out == ["GROVER (local): its row is the official one",
                        f"kmer-3 (local): 1 of 300 cells incomplete (first: 1shot {task}: "
                        "no result)"]
    entries, _ = store_submissions(snap, sources=["local", "official"],
                                   protocol_hash=GENEB_V1.hash)
    grover = [(s, e) for s, e in entries if e.model_id == "GROVER"]
    assert [s for s, _ in grover] == ["local"]
    row = next(r for r in leaderboard_documents(e for _, e in entries)[0]["data"]["full"]
               if r["model"] == "GROVER")
    assert (row["official"], row["submitted"]) == (False, "self-reported")


# --- import: leaderboard_tasks.json ---------------------------------------------------------

def test_both_leaderboard_files_import_and_reimport_unchanged(files, tmp_path):
    paths = resolve_store(tmp_path / "store")
    outcomes = import_files(paths, [files["leaderboard_tasks.json"], files["leaderboard.json"]])
    assert [(o.kind, o.source, o.rows, o.status) for o in outcomes] == [
        ("leaderboard-tasks", "leaderboard", 41 * 300, "imported"),
        ("leaderboard", None, 41 * 3 * 3, "imported")]
    rows = query(paths, "SELECT * FROM results")
    assert rows.height == 41 * 300
    assert set(rows["source"]) == {"leaderboard"}
    assert rows["seed"].null_count() == rows["engine_version"].null_count() == rows.height
    assert set(rows["protocol_hash"]) == {GENEB_V1.hash}
    task = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"
    published = json.loads((SUBMISSIONS / "GROVER.json").read_text())["results"]["10shot"][task]
    row = rows.filter(model="GROVER", task=task, regime="10shot").row(0, named=True)
    assert (row["mcc"], row["acc"], row["f1_macro"]) == (
        published["MCC"], published["Acc"], published["F1"])
    splice = read_catalog(paths, "models").filter(model_id=SPLICE).row(0, named=True)
    assert (splice["display"], splice["params"], splice["provenance"]) == (
        "SpliceBERT 1024nt", 19_710_474, "self-reported")
    again = import_files(paths, [files["leaderboard_tasks.json"], files["leaderboard.json"]])
    assert [(o.rows, o.status) for o in again] == [(0, "unchanged"), (0, "unchanged")]


def test_round_trip_leaderboard_then_import_then_leaderboard(documents, files, tmp_path):
    paths = resolve_store(tmp_path / "store")
    import_files(paths, [files["leaderboard_tasks.json"]])
    snap = Snapshot(paths)
    entries, left_out = store_submissions(snap, sources=source_order(["leaderboard"]),
                                          protocol_hash=GENEB_V1.hash)
    assert left_out == [] and {s for s, _ in entries} == {"leaderboard"}
    again = leaderboard_documents(e for _, e in entries)
    assert_same_board(again[0], documents[0])     # official / submitted / disp / params too
    assert_same_board(again[1], documents[1])


def test_the_two_leaderboard_files_are_told_apart_by_content(files, tmp_path):
    swapped = {"leaderboard.json": "leaderboard_tasks.json",
               "leaderboard_tasks.json": "leaderboard.json"}
    for name, other in swapped.items():
        shutil.copy(files[name], tmp_path / other)
    doc, problems = read_official_file(tmp_path / "leaderboard.json")
    assert problems == [] and isinstance(doc, LeaderboardTasks) and len(doc.models) == 41
    doc, problems = read_official_file(tmp_path / "leaderboard_tasks.json")
    assert problems == [] and type(doc).__name__ == "Leaderboard"


def test_a_bad_tasks_file_imports_nothing_and_two_are_refused(store, files, tmp_path):
    doc = json.loads(files["leaderboard_tasks.json"].read_text())
    doc["data"]["full"][0]["task_MCC"]["iDHS-EL_DNase_I"] = 1.5
    bad = tmp_path / "leaderboard_tasks.json"
    bad.write_text(json.dumps(doc))
    before = digest(store.root)
    with pytest.raises(GenebError, match=r"task_MCC\.iDHS-EL_DNase_I: 1\.5 out of range"):
        import_files(store, [SUBMISSIONS / "GROVER.json", bad])
    (tmp_path / "copy").mkdir()
    shutil.copy(files["leaderboard_tasks.json"], tmp_path / "copy")
    with pytest.raises(GenebError, match="^leaderboard files: more than one given; import one "
                                         "leaderboard_tasks.json; nothing imported$"):
        import_files(store, [files["leaderboard_tasks.json"], tmp_path / "copy"])
    assert digest(store.root) == before


M0 = "agro-nucleotide-transformer-1b"    # the first row of every regime
T0 = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"
LAST = "iDHS-EL_DNase_I"


def _row(d, regime="full", i=0) -> dict:
    return d["data"][regime][i]


# (mutation, field, rule): each mutation of the valid file breaks exactly one rule
TASK_FILE_CASES = [
    (lambda d: d.update(tasks={}), "tasks",
     "must be an array of {id, label, cat} objects (the geneb-v1 tasks), got object"),
    (lambda d: d["tasks"].append(7), "tasks[100]",
     "must be an object with id, label and cat, got integer"),
    (lambda d: d["tasks"].append({"id": 5}), "tasks[100].id",
     "must be a task id (a string), got integer 5"),
    (lambda d: d["tasks"].append(dict(d["tasks"][0])), "tasks[100].id", f"'{T0}' appears twice"),
    (lambda d: d["tasks"].append({"id": "my_task", "label": "mine", "cat": "Promoters"}),
     "tasks", "1 unknown task id(s) of the geneb-v1 spec: my_task"),
    (lambda d: d["tasks"].pop(), "tasks", f"missing 1 task id(s) of the geneb-v1 spec: {LAST}"),
    (lambda d: d["tasks"][0].update(cat="Promoters"), f"tasks.{T0}.cat",
     "must be 'Histone Mod.' (the task's geneb-v1 category), got string 'Promoters'"),
    (lambda d: d["tasks"][0].update(label=""), f"tasks.{T0}.label",
     "must be a non-empty string, got string ''"),
    (lambda d: d.update(data=[]), "data", "must be an object with the regimes"),
    (lambda d: d["data"].pop("1shot"), "data", "missing 1 regime(s): 1shot"),
    (lambda d: d["data"]["10shot"].pop(0), "data.10shot",
     f"missing 1 model(s) of the other regimes: {M0}"),
    (lambda d: d["data"]["full"].append(dict(_row(d))), "data.full[41].model",
     f"'{M0}' appears twice in the regime"),
    (lambda d: _row(d).update(model=".."), "data.full[0].model",
     "cannot be used as a model id"),
    (lambda d: _row(d, "1shot").update(disp="agro"), f"data.1shot.{M0}.disp",
     "'agro' differs from data.full's 'agro-NT-1b' (one display name per model)"),
    (lambda d: _row(d, "1shot").update(params=1), f"data.1shot.{M0}.params",
     "1 differs from data.full's 1000000000 (one parameter count per model)"),
    (lambda d: _row(d).update(params=-1), f"data.full.{M0}.params",
     "must be an integer >= 0 (a parameter count), got integer -1"),
    (lambda d: _row(d).pop("micro_Acc"), f"data.full.{M0}.micro_Acc", "missing"),
    (lambda d: _row(d).update(macro_F1=float("nan")), f"data.full.{M0}.macro_F1",
     "must be a finite number, got nan"),
    (lambda d: _row(d).update(task_MCC=[]), f"data.full.{M0}.task_MCC",
     "must be an object with the 100 task scores, got array"),
    (lambda d: _row(d)["task_F1"].pop(LAST), f"data.full.{M0}.task_F1",
     f"missing 1 task id(s) of the geneb-v1 spec: {LAST}"),
    (lambda d: _row(d)["task_F1"].update(my_task=0.5), f"data.full.{M0}.task_F1",
     "1 unknown task id(s) of the geneb-v1 spec: my_task"),
    (lambda d: _row(d)["task_Acc"].update({LAST: "0.5"}), f"data.full.{M0}.task_Acc.{LAST}",
     "must be a number, got string '0.5'"),
    (lambda d: _row(d)["task_MCC"].update({LAST: -1.5}), f"data.full.{M0}.task_MCC.{LAST}",
     "-1.5 out of range [-1, 1] (tolerance 1e-6)"),
]


@pytest.mark.parametrize(("mutate", "field", "rule"), TASK_FILE_CASES,
                         ids=[f"{c[1]}:{c[2][:24]}" for c in TASK_FILE_CASES])
def test_leaderboard_tasks_rules(files, tmp_path, mutate, field, rule):
    doc = json.loads(files["leaderboard_tasks.json"].read_text())
    mutate(doc)
    path = tmp_path / "leaderboard_tasks.json"
    path.write_text(json.dumps(doc))
    result, problems = read_official_file(path)
    assert result is None
    assert [(p.file, p.field) for p in problems] == [(path, field)], problems
    assert rule in problems[0].rule
    assert str(problems[0]) == f"{path}: {field}: {problems[0].rule}"
