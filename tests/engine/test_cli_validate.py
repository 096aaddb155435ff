"""`geneb-engine validate`: one case per rule of the official validator
(tools/validate_submission.py), in its order, then the stricter ones; one line per problem, exit
1 on any, `--json`, bad usage exit 2, and no store opened or anything written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.cli import main
from tests.conftest import LEADERBOARD, SELF_REPORTED, SUBMISSIONS
from tests.helpers import DELETE, set_field

MODEL = "GROVER"
TASK = "iDHS-EL_DNase_I"



# (field path ('|' separated), new value, expected field, expected rule text)
OFFICIAL_RULES = [
    ("model_id", DELETE, "model_id", "required (a non-empty string)"),
    ("harness_version", "", "harness_version", "must be a non-empty string, got string ''"),
    ("meta|display", DELETE, "meta.display", "required (a non-empty string)"),
    ("meta|params", -5, "meta.params", "must be an integer >= 0 (a parameter count), got "
                                       "integer -5"),
    ("meta|provenance", "peer-reviewed", "meta.provenance",
     "must be one of official, verified, reproduced, self-reported, got string "
     "'peer-reviewed'"),
    ("meta|zero_shot", 1, "meta.zero_shot", "must be true or false, got integer"),
    ("results|10shot", DELETE, "results", "missing 1 regime(s): 10shot"),
    (f"results|1shot|{TASK}", DELETE, "results.1shot",
     f"missing 1 task id(s) of the geneb-v1 spec: {TASK}"),
    ("results|1shot|my_task", {"MCC": 0.0, "Acc": 0.5, "F1": 0.5}, "results.1shot",
     "1 unknown task id(s) of the geneb-v1 spec: my_task"),
    (f"results|full|{TASK}|Acc", DELETE, f"results.full.{TASK}.Acc",
     "missing (every task needs MCC, Acc and F1)"),
    (f"results|full|{TASK}|F1", None, f"results.full.{TASK}.F1", "must be a number, got null"),
    (f"results|full|{TASK}|MCC", -1.01, f"results.full.{TASK}.MCC",
     "-1.01 out of range [-1, 1] (tolerance 1e-6)"),
]
STRICTER_RULES = [
    ("schema_version", "0.9", "schema_version", "must be '1.0' (the schema this tool reads)"),
    ("meta", None, "meta", "must be an object with display, params and provenance, got null"),
    ("meta|params", True, "meta.params", "got boolean True"),
    ("results|full", [], "results.full", "must be an object mapping task ids to scores"),
    ("results|2shot", {}, "results", "1 unknown regime(s): 2shot"),
    (f"results|full|{TASK}|Acc", False, f"results.full.{TASK}.Acc",
     "must be a number, got boolean False"),
    (f"results|10shot|{TASK}|MCC", float("nan"), f"results.10shot.{TASK}.MCC",
     "must be a finite number, got nan"),
]


def _write(folder: Path, doc, name: str = f"{MODEL}.json") -> Path:
    path = folder / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def _doc() -> dict:
    return json.loads((SUBMISSIONS / f"{MODEL}.json").read_text())


def _validate(capsys, *argv: str) -> tuple[int, list[str], str]:
    capsys.readouterr()
    rc = main(["validate", *map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out.splitlines(), err


@pytest.fixture(autouse=True)
def no_store(tmp_path, monkeypatch):
    """GENEB_HOME points at a folder that must not appear: validate opens no store."""
    home = tmp_path / "geneb-home"
    monkeypatch.setenv("GENEB_HOME", str(home))
    yield
    assert not home.exists()


@pytest.mark.parametrize(("where", "value", "field", "rule"), OFFICIAL_RULES + STRICTER_RULES,
                         ids=[f"{c[0]}={c[1]!r}" for c in OFFICIAL_RULES + STRICTER_RULES])
def test_one_rule_one_line(capsys, tmp_path, where, value, field, rule):
    path = _write(tmp_path, set_field(_doc(), where, value))
    before = path.read_bytes()
    rc, out, err = _validate(capsys, path)
    assert (rc, err) == (1, "")
    [line, summary] = out
    assert line.startswith(f"{path}: {field}: ") and rule in line
    assert summary == "1 problem(s) in 1 of 1 file"
    assert list(tmp_path.iterdir()) == [path] and path.read_bytes() == before


def test_not_json_and_the_file_name_rule(capsys, tmp_path):
    broken = _write(tmp_path, '{"model_id": "GROVER",', "broken.json")
    misnamed = _write(tmp_path, _doc(), "grover.json")
    rc, out, _ = _validate(capsys, broken, misnamed)
    assert rc == 1
    assert out[0].startswith(f"{broken}: (file): not valid JSON (")
    assert out[1] == (f"{misnamed}: model_id: the file name must be the model id with characters "
                      "outside A-Za-z0-9._- replaced by _, plus .json: expected GROVER.json, "
                      "got grover.json")
    assert out[2] == "2 problem(s) in 2 of 2 files"


def test_official_provenance_is_reserved_for_the_curated_models(capsys, tmp_path):
    path = _write(tmp_path, set_field(_doc(), "model_id", "my-model"), "my-model.json")
    rc, [line, _], _ = _validate(capsys, path)
    assert rc == 1
    assert line.startswith(f"{path}: meta.provenance: 'official' is reserved for the benchmark "
                           "authors' 40 curated models")


def test_every_official_file_is_valid(capsys):
    rc, out, err = _validate(capsys, SUBMISSIONS, SELF_REPORTED, LEADERBOARD)
    assert (rc, out, err) == (0, ["42 files valid"], "")


def test_json_lists_every_problem_as_an_object(capsys, tmp_path):
    doc = set_field(_doc(), "meta|params", "12M")
    set_field(doc, f"results|full|{TASK}|MCC", 2)
    path = _write(tmp_path, doc)
    shutil.copy(LEADERBOARD, tmp_path / "leaderboard.json")
    rc, out, _ = _validate(capsys, "--json", tmp_path)
    assert rc == 1
    assert json.loads("\n".join(out)) == [
        {"file": str(path), "field": "meta.params",
         "rule": "must be an integer >= 0 (a parameter count), got string '12M'"},
        {"file": str(path), "field": f"results.full.{TASK}.MCC",
         "rule": "2 out of range [-1, 1] (tolerance 1e-6)"}]
    rc, out, _ = _validate(capsys, "--json", LEADERBOARD)
    assert (rc, json.loads("\n".join(out))) == (0, [])


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: p / "missing.json", "missing.json: no such file or folder"),
    (lambda p: (p / "empty").mkdir() or p / "empty", "empty: no *.json files in this folder"),
])
def test_bad_usage_is_one_line_and_exit_2(capsys, tmp_path, make, message):
    target = make(tmp_path)
    rc, out, err = _validate(capsys, target)
    assert (rc, out) == (2, [])
    assert err == f"geneb-engine validate: {tmp_path / message}\n"
