"""Every rule of the official validator, and the stricter ones: one malformed file per rule.

Each case mutates a real submission (or the real leaderboard) in a temporary folder, imports it
into a store that already holds the official results, and checks the one-line message naming
the file, the field and the rule, and that the store is byte-for-byte unchanged.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from store.official.submission import import_files
from store.paths import resolve_store
from store.vocab.errors import GenebError
from tests.conftest import LEADERBOARD, SUBMISSIONS
from tests.helpers import DELETE, digest, set_field

TASK = "iDHS-EL_DNase_I"
SOURCE = "BioFM-265M"


@pytest.fixture(scope="module")
def store(official_store, tmp_path_factory):
    root = tmp_path_factory.mktemp("validation") / "store"
    shutil.copytree(official_store.root, root)
    return resolve_store(root)


def _submission() -> dict:
    return json.loads((SUBMISSIONS / f"{SOURCE}.json").read_text())


def _problems(store, *paths: Path) -> list[str]:
    """The problem lines of importing `paths`; asserts the store did not change."""
    before = digest(store.root)
    with pytest.raises(GenebError) as info:
        import_files(store, list(paths))
    assert digest(store.root) == before
    head, *lines = str(info.value).split("\n")
    if not lines:   # a single problem is one line
        assert head.endswith("; nothing imported")
        return [head.removesuffix("; nothing imported")]
    assert head == f"{len(lines)} problem(s), nothing imported:"
    return [line.strip() for line in lines]


def _write(tmp_path: Path, doc, name: str = f"{SOURCE}.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path



# (field path in the document ('|' separated), new value, expected field, expected rule text)
CASES = [
    ("schema_version", "2.0", "schema_version", "must be '1.0' (the schema this tool reads)"),
    ("model_id", DELETE, "model_id", "required (a non-empty string)"),
    ("model_id", "", "model_id", "must be a non-empty string, got string ''"),
    ("model_id", 7, "model_id", "must be a non-empty string, got integer 7"),
    ("harness_version", DELETE, "harness_version", "required (a non-empty string)"),
    ("harness_version", " ", "harness_version", "must be a non-empty string"),
    ("meta", ["BioFM"], "meta", "must be an object with display, params and provenance, "
                                "got array"),
    ("meta|display", "", "meta.display", "must be a non-empty string, got string ''"),
    ("meta|params", True, "meta.params", "must be an integer >= 0 (a parameter count), "
                                         "got boolean True"),
    ("meta|params", -1, "meta.params", "got integer -1"),
    ("meta|params", 2.65e8, "meta.params", "got number 265000000.0"),
    ("meta|params", "265M", "meta.params", "got string '265M'"),
    ("meta|provenance", "community", "meta.provenance",
     "must be one of official, verified, reproduced, self-reported, got string 'community'"),
    ("meta|zero_shot", "no", "meta.zero_shot", "must be true or false, got string"),
    ("results", None, "results", "must be an object with the regimes full, 10shot, 1shot, "
                                 "got null"),
    ("results|1shot", DELETE, "results", "missing 1 regime(s): 1shot"),
    ("results|5shot", {}, "results", "1 unknown regime(s): 5shot"),
    ("results|10shot", [], "results.10shot", "must be an object mapping task ids to scores, "
                                             "got array"),
    (f"results|full|{TASK}", DELETE, "results.full",
     f"missing 1 task id(s) of the geneb-v1 spec: {TASK}"),
    ("results|full|my_task", {"MCC": 0.1, "Acc": 0.5, "F1": 0.5}, "results.full",
     "1 unknown task id(s) of the geneb-v1 spec: my_task"),
    (f"results|full|{TASK}", 0.5, f"results.full.{TASK}",
     "must be an object with MCC, Acc, F1, got number"),
    (f"results|full|{TASK}|F1", DELETE, f"results.full.{TASK}.F1",
     "missing (every task needs MCC, Acc and F1)"),
    (f"results|full|{TASK}|MCC", "0.5", f"results.full.{TASK}.MCC",
     "must be a number, got string '0.5'"),
    (f"results|full|{TASK}|Acc", True, f"results.full.{TASK}.Acc",
     "must be a number, got boolean True"),
    (f"results|1shot|{TASK}|MCC", float("nan"), f"results.1shot.{TASK}.MCC",
     "must be a finite number, got nan"),
    (f"results|1shot|{TASK}|F1", float("inf"), f"results.1shot.{TASK}.F1",
     "must be a finite number, got inf"),
    (f"results|10shot|{TASK}|MCC", 1.5, f"results.10shot.{TASK}.MCC",
     "1.5 out of range [-1, 1] (tolerance 1e-6)"),
    (f"results|10shot|{TASK}|Acc", -0.01, f"results.10shot.{TASK}.Acc",
     "-0.01 out of range [0, 1] (tolerance 1e-6)"),
]


@pytest.mark.parametrize(("where", "value", "field", "rule"), CASES,
                         ids=[f"{c[0]}={c[1]!r}" for c in CASES])
def test_one_rule_one_line(store, tmp_path, where, value, field, rule):
    path = _write(tmp_path, set_field(_submission(), where, value))
    problems = _problems(store, path)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{path}: {field}: ")
    assert rule in problems[0]


def test_not_json(store, tmp_path):
    path = _write(tmp_path, '{"schema_version": "1.0",')
    [problem] = _problems(store, path)
    assert problem.startswith(f"{path}: (file): not valid JSON (")


def test_not_an_object(store, tmp_path):
    [problem] = _problems(store, _write(tmp_path, "[1, 2]"))
    assert problem == f"{tmp_path / f'{SOURCE}.json'}: (top level): must be a JSON object, " \
                      "got array"


def test_file_name_must_be_the_sanitized_model_id(store, tmp_path):
    path = _write(tmp_path, _submission(), "BioFM_265M.json")
    [problem] = _problems(store, path)
    assert problem == (f"{path}: model_id: the file name must be the model id with characters "
                       "outside A-Za-z0-9._- replaced by _, plus .json: expected "
                       "BioFM-265M.json, got BioFM_265M.json")


def test_official_provenance_is_reserved_for_the_curated_models(store, tmp_path):
    doc = set_field(_submission(), "model_id", "my-model")
    [problem] = _problems(store, _write(tmp_path, doc, "my-model.json"))
    assert problem.startswith(f"{tmp_path / 'my-model.json'}: meta.provenance: 'official' is "
                              "reserved")


def test_scores_within_the_tolerance_are_accepted(store, tmp_path):
    doc = set_field(_submission(), f"results|full|{TASK}|Acc", 1 + 5e-7)
    doc["meta"]["provenance"] = "reproduced"
    [outcome] = import_files(store, [_write(tmp_path, doc)])
    assert (outcome.source, outcome.status) == ("reproduced", "imported")


def test_all_problems_of_all_files_in_one_error_and_nothing_stored(store, tmp_path):
    bad = _submission()
    bad["meta"]["params"] = None
    bad["results"]["full"][TASK]["MCC"] = float("-inf")
    del bad["results"]["10shot"]
    (tmp_path / "bad").mkdir()
    bad_path = _write(tmp_path / "bad", bad)
    good = _submission()
    good["meta"]["provenance"] = "verified"
    good_path = _write(tmp_path, good)
    problems = _problems(store, good_path, bad_path)  # the valid file is not stored either
    assert [p.split(": ")[:2] for p in problems] == [
        [str(bad_path), "meta.params"], [str(bad_path), "results"],
        [str(bad_path), f"results.full.{TASK}.MCC"]]


def test_the_same_model_and_provenance_twice(store, tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        doc = _submission()
        doc["meta"]["provenance"] = "verified"
        _write(tmp_path / folder, doc)
    before = digest(store.root)
    with pytest.raises(GenebError, match=r"model_id: 'BioFM-265M' with provenance 'verified' "
                                         r"is also in .*a/BioFM-265M.json"):
        import_files(store, [tmp_path / "a", tmp_path / "b"])
    assert digest(store.root) == before


def _board() -> dict:
    return json.loads(LEADERBOARD.read_text())


BOARD_CASES = [
    (lambda d: d.update(data=[]), "data", "must be an object with the regimes"),
    (lambda d: d["data"].pop("10shot"), "data", "missing 1 regime(s): 10shot"),
    (lambda d: d["data"].update(full={}), "data.full", "must be an array of model rows"),
    (lambda d: d["data"]["full"].append(d["data"]["full"][0]), "data.full[41].model",
     "'agro-nucleotide-transformer-1b' appears twice in the regime"),
    (lambda d: d["data"]["full"][0].update(params=False),
     "data.full.agro-nucleotide-transformer-1b.params", "got boolean False"),
    (lambda d: d["data"]["1shot"][3].update(submitted="unofficial"),
     "data.1shot.caduceus-ps_seqlen-131k_d_model-256_n_layer-16.submitted", "must be one of"),
    (lambda d: d["data"]["full"][0].update(micro_MCC=float("nan")),
     "data.full.agro-nucleotide-transformer-1b.micro_MCC", "must be a finite number, got nan"),
    (lambda d: d["data"]["full"][0]["cat_Acc"].pop("lncRNA"),
     "data.full.agro-nucleotide-transformer-1b.cat_Acc", "missing 1 category(ies): lncRNA"),
    (lambda d: d["data"]["full"][0]["cat_F1"].update(lncRNA=2.0),
     "data.full.agro-nucleotide-transformer-1b.cat_F1.lncRNA", "out of range [0, 1]"),
]


@pytest.mark.parametrize(("mutate", "field", "rule"), BOARD_CASES,
                         ids=[c[1] + ":" + c[2][:20] for c in BOARD_CASES])
def test_leaderboard_rules(store, tmp_path, mutate, field, rule):
    doc = _board()
    mutate(doc)
    path = _write(tmp_path, doc, "leaderboard.json")
    problems = _problems(store, path)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{path}: {field}: ")
    assert rule in problems[0]
