"""`geneb-engine leaderboard -o DIR` as a user runs it: the two files, which source each row
comes from, the round trip through `import`, and bad input (exit 2, one line, nothing
written)."""

from __future__ import annotations

import json
import shutil

import pytest

from engine.cli import main
from store.official.leaderboard import LEADERBOARD_FILES
from tests.conftest import LEADERBOARD
from tests.store.local_rows import local_rows, local_store

TASK = "iDHS-EL_DNase_I"


def _run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out, err


def _rows(path) -> dict[str, dict]:
    return {r["model"]: r for r in json.loads(path.read_text())["data"]["full"]}


def test_writes_both_files_from_the_official_store(official_store, tmp_path, capsys):
    out = tmp_path / "site" / "data"
    rc, text, err = _run(capsys, "leaderboard", "--store", official_store.root, "-o", out)
    assert (rc, err) == (0, "")
    assert text == (f"wrote leaderboard.json and leaderboard_tasks.json to {out}: 40 models "
                    "(40 official), protocol geneb-v1, results as of version 1\n")
    ours, published = _rows(out / "leaderboard.json"), _rows(LEADERBOARD)
    assert list(ours) == [m for m in published if m != "splicebert-1024nt"]
    grover = ours["GROVER"]
    assert {k: grover[k] for k in ("disp", "params", "official", "zero_shot", "submitted")} == \
        {k: published["GROVER"][k] for k in ("disp", "params", "official", "zero_shot",
                                              "submitted")}
    assert grover["macro_MCC"] == published["GROVER"]["macro_MCC"]
    rc, text, _ = _run(capsys, "validate", out)
    assert (rc, text) == (0, "2 files valid\n")


def test_rows_come_from_the_first_source_that_has_every_cell(official_store, tmp_path, capsys):
    shutil.copytree(official_store.root, tmp_path / "store")
    store = local_store(tmp_path / "store", "GROVER",
                        local_rows("GROVER") + local_rows("kmer-3", skip={("10shot", TASK)}))
    rc, text, _ = _run(capsys, "leaderboard", "--store", store.root, "-o", tmp_path / "a")
    assert rc == 0
    assert text.splitlines()[:2] == [
        "left out: GROVER (local): its row is the official one",
        f"left out: kmer-3 (local): 1 of 300 cells incomplete (first: 10shot {TASK}: no result)"]
    assert _rows(tmp_path / "a" / "leaderboard.json")["GROVER"]["submitted"] == "official"
    # the same folder: its two files replaced by the new ones (its own, by its record)
    rc, text, _ = _run(capsys, "leaderboard", "--store", store.root, "-o", tmp_path / "a",
                       "--source", "local", "official", "--json")
    assert rc == 0
    doc = json.loads(text)
    assert {"model": "GROVER", "source": "local"} in doc["rows"]
    assert len(doc["rows"]) == 40 and doc["left_out"] == [
        "kmer-3 (local): 1 of 300 cells incomplete (first: 10shot "
        f"{TASK}: no result)", "GROVER (official): its row is the local one"]
    grover = _rows(tmp_path / "a" / "leaderboard.json")["GROVER"]
    assert (grover["official"], grover["submitted"]) == (False, "self-reported")


def test_round_trip_through_import(official_store, tmp_path, capsys):
    assert _run(capsys, "leaderboard", "--store", official_store.root, "-o", tmp_path / "a")[0] == 0
    first = tmp_path / "a" / "leaderboard_tasks.json"
    rc, text, _ = _run(capsys, "import", "--store", tmp_path / "store", first,
                       tmp_path / "a" / "leaderboard.json")
    assert rc == 0 and "leaderboard_tasks.json │ leaderboard" in text
    rc, text, _ = _run(capsys, "leaderboard", "--store", tmp_path / "store", "-o", tmp_path / "b")
    assert rc == 0 and "40 models (40 leaderboard)" in text
    before, after = json.loads(first.read_text()), json.loads(
        (tmp_path / "b" / "leaderboard_tasks.json").read_text())
    assert after["tasks"] == before["tasks"]
    for regime, rows in before["data"].items():
        again = after["data"][regime]
        assert [r["model"] for r in again] == [r["model"] for r in rows]
        for old, new in zip(rows, again, strict=True):
            assert {k: v for k, v in new.items() if k.startswith(("disp", "params", "task_"))} \
                == {k: v for k, v in old.items() if k.startswith(("disp", "params", "task_"))}
            assert new["micro_F1"] == old["micro_F1"]


@pytest.mark.parametrize(("argv", "names"), [
    (["--source", "offical"], ("--source: unknown source 'offical' (did you mean official?)",)),
    (["--protocol", "sweep"], ("--protocol sweep: stands for 5 protocols", "give one of them")),
    (["--protocol", "mlp-h256"], ("no model has all 300 mlp-h256 cells", "nothing written",
                                  "fill --protocol mlp-h256")),
    (["--source", "verified"], ("no model has all 300 geneb-v1 cells in source(s) verified",)),
])
def test_bad_input_is_one_line_and_writes_nothing(official_store, tmp_path, capsys, argv,
                                                  names):
    rc, text, err = _run(capsys, "leaderboard", "--store", official_store.root,
                         "-o", tmp_path / "out", *argv)
    assert (rc, text) == (2, "")
    assert len(err.splitlines()) == 1 and err.startswith("geneb-engine leaderboard: ")
    for name in names:
        assert name in err, err
    assert not (tmp_path / "out").exists()


def test_output_that_is_a_file_and_an_empty_store(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    rc, _, err = _run(capsys, "leaderboard", "--store", tmp_path / "store", "-o",
                      tmp_path / "file")
    assert rc == 2 and "is a file, not a folder; give the folder" in err
    rc, _, err = _run(capsys, "leaderboard", "--store", tmp_path / "store", "-o", tmp_path / "o")
    assert rc == 2 and "import the official results with `geneb-engine import --official`" in err
    assert not (tmp_path / "o").exists() and not (tmp_path / "store").exists()


def test_the_folder_keeps_what_geneb_did_not_write(official_store, tmp_path, capsys):
    """-o is an output folder (`store.output_folder`): the folder's other files are kept, a
    `leaderboard.json` geneb did not write is refused in one line with nothing written, and a
    folder an earlier version wrote (the two files alone, without the record) is its own."""
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<p>mine</p>")
    (web / "leaderboard.json").write_text("[]")
    rc, text, err = _run(capsys, "leaderboard", "--store", official_store.root, "-o", web)
    assert (rc, text) == (2, "") and len(err.splitlines()) == 1
    assert (f"-o {web}: leaderboard.json is not what geneb-engine leaderboard wrote there" in err
            and "nothing was written" in err), err
    assert sorted(p.name for p in web.iterdir()) == ["index.html", "leaderboard.json"]
    assert (web / "leaderboard.json").read_text() == "[]"
    (web / "leaderboard.json").unlink()
    assert _run(capsys, "leaderboard", "--store", official_store.root, "-o", web)[0] == 0
    assert (web / "index.html").read_text() == "<p>mine</p>"
    board = (web / "leaderboard.json").read_bytes()
    old = tmp_path / "old"
    old.mkdir()
    for name in LEADERBOARD_FILES:
        (old / name).write_text("{}")
    assert _run(capsys, "leaderboard", "--store", official_store.root, "-o", old)[0] == 0
    assert (old / "leaderboard.json").read_bytes() == board
    assert _run(capsys, "validate", old)[:2] == (0, "2 files valid\n")   # not its record
