"""Inputs a user can get wrong: each ends in one line on stderr naming the thing and the fix,
exit status 2, the store byte for byte as it was, and never a traceback."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest

from engine.cli import main
from engine.data import read_flat_csv
from store.catalog import geneb_v1_tasks
from store.db import Snapshot
from store.paths import resolve_store
from store.vocab.protocol import REGIMES, SEEDS
from tests.conftest import SUBMISSIONS
from tests.engine.in_process import outputs, refused, run
from tests.helpers import digest

GOOD_ROWS = [("ACGTACGTAA", 0, "train"), ("CCGGCCGGTT", 1, "train"), ("ACGAACGAAT", 0, "train"),
             ("GGCCGGCCAT", 1, "train"), ("ACGTACGAAA", 0, "test"), ("GGCCGGCAAT", 1, "test")]


def write_rows(path: Path, rows, header=("text", "label", "split")) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store with content: one tiny task filled with kmer-3, full regime."""
    base = tmp_path_factory.mktemp("bad-inputs")
    suite = base / "tiny"
    suite.mkdir()
    write_rows(suite / "x.csv", GOOD_ROWS * 4)
    root = base / "store"
    assert main(["fill", "--store", str(root), "--suite", str(suite), "--models", "kmer-3",
                 "--regimes", "full", "--tasks", "x"]) == 0
    snap = Snapshot(resolve_store(root))
    try:
        assert snap.query("SELECT model, task, regime, source, count(*) AS n FROM results "
                          "GROUP BY ALL").rows() == [("kmer-3", "x", "full", "local", len(SEEDS))]
    finally:
        snap.close()
    # what "the store byte for byte as it was" compares holds each part a command may write
    assert {"catalog", "embeddings.zarr", "predictions", "results", "runs"} <= {
        name.split("/")[0] for name in digest(root)}
    return root


def fill_refused(capsys, store: Path, suite: Path, *names: str, extra=()) -> str:
    return refused(capsys, store, "fill", "--store", str(store), "--suite", str(suite),
                   "--models", "kmer-3", "--regimes", "full", *extra, names=names)


def suite_with(tmp_path: Path, name: str, data: bytes) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(data)
    return folder


def good_bytes() -> bytes:
    return "".join(f"{t},{lab},{s}\r\n" for t, lab, s in [("text", "label", "split"),
                                                          *GOOD_ROWS]).encode()


# 1. fields longer than the csv module's default limit (131072)

def test_a_200_kb_sequence_loads(tmp_path, store, capsys):
    long_seq = "ACGT" * 50_000
    path = write_rows(tmp_path / "long.csv", [*GOOD_ROWS, (long_seq, 1, "train")])
    task = read_flat_csv(path)
    assert len(task.train.sequences[-1]) == 200_000 and len(task.train) == 5


def test_a_field_over_the_limit_is_one_message(tmp_path, store, capsys, monkeypatch):
    from store import csv_in

    monkeypatch.setattr(csv_in, "FIELD_LIMIT", 1000)
    default = csv.field_size_limit(1000)
    try:
        suite = suite_with(tmp_path, "x.csv", good_bytes() + b"A" * 2000 + b",1,train\r\n")
        fill_refused(capsys, store, suite, "x.csv", "line 8", "field larger than field limit")
    finally:
        csv.field_size_limit(default)


# 2. files that are not UTF-8

def test_non_utf8_file_names_the_absolute_byte_offset(tmp_path, store, capsys):
    body = good_bytes() * 3000                      # > 64 kB: past the reader's first chunk
    bad = body + b"ACG\xffT,1,train\r\n"
    suite = suite_with(tmp_path, "x.csv", bad)
    err = fill_refused(capsys, store, suite, "x.csv", "not UTF-8")
    assert f"byte offset {len(body) + 3} " in err and "0xff" in err


# 3. a UTF-8 BOM is accepted

def test_bom_file_hashes_like_the_file_without_bom(tmp_path):
    plain = tmp_path / "plain" / "x.csv"
    plain.parent.mkdir()
    plain.write_bytes(good_bytes())
    bom = tmp_path / "bom" / "x.csv"
    bom.parent.mkdir()
    bom.write_bytes(b"\xef\xbb\xbf" + good_bytes())
    assert read_flat_csv(bom).data_hash == read_flat_csv(plain).data_hash


def test_bom_manifest_is_read(tmp_path, capsys):
    suite = suite_with(tmp_path, "x.csv", good_bytes())
    (suite / "manifest.csv").write_bytes(b"\xef\xbb\xbftask_id,category\r\nx,Promoters\r\n")
    capsys.readouterr()
    assert main(["tasks", "--store", str(tmp_path / "s"), "--suite", str(suite), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["category"] == "Promoters"


# 4. task and model ids that cannot be used

@pytest.mark.parametrize("name", ["..csv", ".csv", "a\x01b.csv", "a\\b.csv", "a\u2028.csv"])
def test_task_file_name_that_gives_no_usable_id(tmp_path, store, capsys, name):
    suite = suite_with(tmp_path, "y.csv", good_bytes())
    (suite / name).write_bytes(good_bytes())
    fill_refused(capsys, store, suite, "task id", "cannot be used", "rename it")


def test_manifest_row_without_a_task_id(tmp_path, store, capsys):
    suite = suite_with(tmp_path, "x.csv", good_bytes())
    (suite / "manifest.csv").write_text("task_id,category\nx,Promoters\n,Enhancers\n")
    fill_refused(capsys, store, suite, "manifest.csv, line 3", "task id")


@pytest.mark.parametrize("task", ["..", "a/b", "x\n", ""])
def test_tasks_option_with_an_unusable_id(tmp_path, store, capsys, task):
    suite = suite_with(tmp_path, "x.csv", good_bytes())
    fill_refused(capsys, store, suite, "--tasks", "task id", extra=("--tasks", task))


@pytest.mark.parametrize("model", ["", "a\x00b", "org/..", "km\u2028er"])
def test_models_option_with_an_unusable_id(tmp_path, store, capsys, model):
    suite = suite_with(tmp_path, "x.csv", good_bytes())
    refused(capsys, store, "fill", "--store", str(store), "--suite", str(suite), "--models",
            model, "--regimes", "full", names=("--models", "cannot be used"))


@pytest.mark.parametrize("model_id", [".", "..", "a\\\\b", "x\\ny", "a/b/c"])
def test_catalog_entry_with_an_unusable_model_id(tmp_path, store, capsys, model_id):
    copy = tmp_path / "store"
    _copy(store, copy)
    (copy / "models.toml").write_text(f'[[model]]\nmodel_id = "{model_id}"\nhub_id = "o/x"\n')
    refused(capsys, copy, "models", "--store", str(copy),
            names=("models.toml", "model entry 1", "model_id", "cannot be used"))


def test_submission_with_an_unusable_model_id(tmp_path, store, capsys):
    path = write_submission(tmp_path, "..")
    err = refused(capsys, store, "import", "--store", str(store), str(path),
                  names=("nothing imported", f"{path}: model_id:", "cannot be used"))
    assert err.startswith(f"geneb-engine import: {path}: model_id:")


# 5. JSON nested too deep for the parser

def test_deeply_nested_json_is_a_problem_line(tmp_path, store, capsys):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    refused(capsys, store, "import", "--store", str(store), str(path),
            names=("nothing imported", f"{path}: (file):", "nested too deeply"))


# 6. parameter counts that do not fit the Int64 catalog column

def write_submission(folder: Path, model_id: str, params: int = 1000) -> Path:
    tasks = [t.task_id for t in geneb_v1_tasks()]
    doc = {"schema_version": "1.0", "model_id": model_id, "harness_version": "test",
           "meta": {"display": model_id, "params": params, "provenance": "self-reported"},
           "results": {r: {t: {"MCC": 0.5, "Acc": 0.75, "F1": 0.7} for t in tasks}
                       for r in REGIMES}}
    path = folder / (re.sub(r"[^A-Za-z0-9._-]", "_", model_id) + ".json")
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("fresh", [False, True])
def test_params_of_2_63_is_refused_before_anything_is_written(tmp_path, store, capsys, fresh):
    root = tmp_path / "new-store" if fresh else store
    path = write_submission(tmp_path, "huge-model", params=2**63)
    refused(capsys, root, "import", "--store", str(root), str(path),
            names=(f"{path}: meta.params:", "too large"))
    assert root.exists() != fresh


def test_catalog_params_of_2_63_is_refused(tmp_path, store, capsys):
    copy = tmp_path / "store"
    _copy(store, copy)
    (copy / "models.toml").write_text(f'[[model]]\nmodel_id = "m"\nhub_id = "o/m"\n'
                                      f'params = {2**63}\n')
    refused(capsys, copy, "models", "--store", str(copy), names=("models.toml", "'params'"))


# 7. a store path that is a file, or a folder this process cannot write

@pytest.mark.parametrize("command, rest", [
    (("fill",), ("--models", "kmer-3", "--suite", "geneb-mini")), (("import",), ("x.json",)),
    (("data", "download"), ()), (("status",), ("--suite", "geneb-mini")),
    (("export",), ("--csv", "o.csv")), (("tasks",), ("--suite", "geneb-mini")), (("models",), ()),
    (("report",), ("--suite", "geneb-mini")),
])
def test_store_path_that_is_a_file(tmp_path, capsys, command, rest):
    file = tmp_path / "store"
    file.write_text("not a store")
    refused(capsys, file, *command, "--store", str(file), *rest,
            names=(str(file), "is a file", "--store"))


def test_store_below_a_file_cannot_be_created(tmp_path, capsys):
    file = tmp_path / "file"
    file.write_text("x")
    refused(capsys, file, "fill", "--store", str(file / "store"), "--suite", "geneb-mini",
            "--models", "kmer-3", names=(str(file), "cannot be created"))


@pytest.mark.parametrize("command", [("fill", "--suite", "geneb-mini", "--models", "kmer-3"),
                                     ("import", "--official"), ("audit", "--suite", "geneb-mini")])
def test_a_mistyped_store_path_is_not_made_into_a_store(tmp_path, capsys, command):
    """A command that writes takes a store, an empty folder or a new folder inside an existing
    one: a path whose folder above is missing, or a folder of other files, is one line naming
    the store close to it, and nothing is created or written."""
    (tmp_path / "geneb-store" / "catalog").mkdir(parents=True)        # a store
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("mine")
    (project / "store" / "results").mkdir(parents=True)               # a store inside it
    typo = tmp_path / "geneb-stroe" / "x"
    refused(capsys, tmp_path, *command, "--store", str(typo),
            names=(f"store {typo}: no such folder {typo.parent};",))
    assert not typo.parent.exists()
    err = refused(capsys, tmp_path, *command, "--store", str(project),
                  names=(f"store {project}: holds files but no store (did you mean the store "
                         f"{project / 'store'}?)",))
    assert "an empty folder or a new folder inside an existing one" in err


def test_a_new_store_is_said_first(tmp_path, capsys):
    grover = str(SUBMISSIONS / "GROVER.json")
    rc, out, _ = outputs(capsys, "import", "--store", str(tmp_path / "other"), grover)
    assert rc == 0 and out.splitlines()[0] == f"new store at {tmp_path / 'other'} (no folder " \
                                              "there yet)"
    rc, out, _ = outputs(capsys, "import", "--store", str(tmp_path / "other"), grover)
    assert rc == 0 and "new store" not in out              # a store now
    # a read-only command reads a folder of other files as empty, saying so with the store
    (tmp_path / "notes.txt").write_text("x")
    rc, err = run(capsys, "status", "--store", str(tmp_path), "--suite", "geneb-mini")
    assert rc == 0 and err == (f"geneb-engine status: warning: store {tmp_path} (--store) holds "
                               f"no store (did you mean the store {tmp_path / 'other'}?); it "
                               "reads as an empty store (check the path)\n")


@pytest.mark.parametrize("command, rest", [
    (("fill",), ("--models", "kmer-3", "--regimes", "full")), (("import",), ("x.json",)),
    (("data", "download"), ()),
])
def test_store_folder_that_is_not_writable(tmp_path, store, capsys, monkeypatch, command, rest):
    copy = tmp_path / "store"
    _copy(store, copy)
    suite = suite_with(tmp_path, "x.csv", good_bytes())
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False
                        if Path(p) == copy and mode & os.W_OK else real_access(p, mode, *a, **k))
    extra = ("--suite", str(suite)) if command == ("fill",) else ()
    refused(capsys, copy, *command, "--store", str(copy), *extra, *rest,
            names=(str(copy), "not writable"))


@pytest.mark.parametrize("command", [("status", "--suite", "geneb-mini"), ("models",),
                                     ("export", "--csv", "out.csv"), ("data", "where")])
@pytest.mark.parametrize("named_by", ["--store", "$GENEB_HOME"])
def test_a_named_store_that_does_not_exist_is_said_so_then_reads_as_empty(
        tmp_path, capsys, monkeypatch, command, named_by):
    missing = tmp_path / "stroe"
    monkeypatch.chdir(tmp_path)
    if named_by == "--store":
        rc, err = run(capsys, *command, "--store", str(missing))
    else:
        monkeypatch.setenv("GENEB_HOME", str(missing))
        rc, err = run(capsys, *command)
    assert rc == 0 and "Traceback" not in err
    assert err == (f"geneb-engine {command[0]}: warning: store {missing} ({named_by}) does not "
                   "exist; it reads as an empty store (check the path)\n")
    assert not missing.exists()


def test_the_default_store_that_does_not_exist_yet_reads_as_empty_without_a_word(
        tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GENEB_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    rc, err = run(capsys, "status", "--suite", "geneb-mini")
    assert (rc, err) == (0, "")
    assert not (tmp_path / ".geneb").exists()


def test_an_unknown_task_of_geneb_mini_writes_nothing(tmp_path, store, capsys):
    """geneb-mini's data is written by the first load, after every name was checked: a typo
    in --tasks leaves an existing store, and a new one, as they were."""
    copy = tmp_path / "store"
    _copy(store, copy)
    for root in (copy, tmp_path / "new"):
        refused(capsys, root, "fill", "--store", str(root), "--suite", "geneb-mini", "--models",
                "kmer-3", "--tasks", "mini_promoter_tat", names=("mini_promoter_tata",))
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("command", ["tasks", "status", "report"])
def test_reading_geneb_mini_writes_nothing(tmp_path, store, capsys, command):
    copy = tmp_path / "store"
    _copy(store, copy)
    for root in (copy, tmp_path / "new"):
        before = digest(root)
        rc, err = run(capsys, command, "--store", str(root), "--suite", "geneb-mini")
        assert rc in (0, 1) and "Traceback" not in err, err   # report: 1 = nothing to report
        assert digest(root) == before, command
    assert not (tmp_path / "new").exists()


# 8. export --csv to a folder, or into a folder that does not exist

@pytest.mark.parametrize("target, message", [("", "is a folder"), ("no/x.csv", "does not exist"),
                                             ("file/x.csv", "is not a folder")])
def test_export_csv_path_that_cannot_be_written(tmp_path, store, capsys, target, message):
    (tmp_path / "file").write_text("x")
    out = str(tmp_path / target) if target else str(tmp_path)
    refused(capsys, store, "export", "--store", str(store), "--csv", out,
            names=("--csv", out, message))
    assert not (tmp_path / "no").exists()


# 9. counts below 1, and every usage error in one line

@pytest.mark.parametrize("option, value", [("--jobs", "0"), ("--limit", "0"),
                                           ("--batch-size", "-1"), ("--subsample", "0"),
                                           ("--jobs", "two")])
def test_counts_below_one_are_refused(tmp_path, store, capsys, option, value):
    err = refused(capsys, store, "fill", "--store", str(store), "--suite", "geneb-mini",
                  "--models", "kmer-3", f"{option}={value}", names=(option, ">= 1"))
    assert err.startswith("geneb-engine fill: argument ") \
        and err.endswith("(see geneb-engine fill --help)\n")


@pytest.mark.parametrize("argv, names", [
    (("fill",), ("geneb-engine fill:", "--models", "(see geneb-engine fill --help)")),
    (("fill", "--models", "kmer-3", "--regimes", "2shot"), ("--regimes", "'2shot'")),
    (("nope",), ("geneb-engine:", "'nope'", "(see geneb-engine --help)")),
    (("data", "download", "--bogus"), ("geneb-engine data", "--bogus")),
    (("status", "--subsample", "-5"), ("geneb-engine status:", "--subsample")),
])
def test_usage_errors_are_one_line(tmp_path, store, capsys, argv, names):
    refused(capsys, store, *argv, names=names)


# 10. rows that are skipped: counted in one warning per file

def test_skipped_rows_are_counted_in_one_warning(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(good_bytes() + b"AAAA,0,valid\r\nCCCC,1,valid\r\nGGGG,0,valid\r\n"
                                    b"AAAA\r\nACGT,1\r\nACGT,1,train,extra\r\n")
    task = read_flat_csv(path)
    assert len(task.train) == 4 and len(task.test) == 2
    assert task.warnings == (f"{path}: skipped 6 row(s): 3 with split 'valid', 1 with extra "
                             "fields, 2 with missing fields (only rows with every field and "
                             "split 'train' or 'test' are used)",)


def test_hub_layout_skips_short_rows_with_one_warning_per_file(tmp_path):
    from engine.data import read_hub_task

    folder = tmp_path / "tasks" / "t"
    folder.mkdir(parents=True)
    write_rows(folder / "train.csv", [(s, lab) for s, lab, _ in GOOD_ROWS[:4]] + [("ACGT",)],
               header=("text", "label"))
    write_rows(folder / "test.csv", [(s, lab) for s, lab, _ in GOOD_ROWS[4:]],
               header=("text", "label"))
    task = read_hub_task(folder)
    assert len(task.train) == 4
    assert task.warnings == (f"{folder / 'train.csv'}: skipped 1 row(s): 1 with missing fields "
                             "(only rows with every field and split 'train' or 'test' are used)",)


# 11. CSV export: the dashboard's escaping, one function

def test_engine_export_escapes_like_the_dashboard(tmp_path, store, capsys):
    import geneb_tui.app as dashboard
    import store.csv_out as csv_out

    assert dashboard.write_csv is csv_out.write_csv   # the dashboard writes with the same one
    root = tmp_path / "store"
    _copy(store, root)
    assert main(["import", "--store", str(root), str(write_submission(tmp_path, "=cmd"))]) == 0
    out = tmp_path / "out.csv"
    assert main(["export", "--store", str(root), "--suite", "geneb-v1", "--csv", str(out),
                 "--models", "=cmd", "--regimes", "full"]) == 0
    with open(out, newline="") as f:
        header, *rows = list(csv.reader(f))
    assert header[:2] == ["model", "task"] and len(rows) == 100
    assert {r[0] for r in rows} == {csv_out.safe_cell("=cmd")} == {"'=cmd"}
    assert rows[0][header.index("mcc")] == "0.5" and rows[0][header.index("mcc_sd")] == ""


def _copy(src: Path, dst: Path) -> None:
    import shutil

    shutil.copytree(src, dst)
