"""`geneb-engine compare`: per-cell differences between stores, sources and submission files.

An imported store equals the files it was imported from; one value changed by 1e-3 is the one
cell named, with its difference; local per-seed rows are compared on their seed means; cells of
one side only are counted per model; every bad input is one line, exit 2, and no store is
written or created.
"""

from __future__ import annotations

import json
import shutil

import pytest
from rich.cells import cell_len

from engine.cli import main
from store.catalog import geneb_v1_tasks
from store.official.formats import METRIC_COLUMNS
from store.vocab.protocol import GENEB_V1, REGIMES, SEEDS
from tests.conftest import LEADERBOARD, SUBMISSIONS
from tests.engine.in_process import refused
from tests.helpers import digest
from tests.store.local_rows import local_store

BOX = set("│┃━─┏┗┡└")
OFFSETS = (-2e-3, -1e-3, 0.0, 1e-3, 2e-3)   # a k-shot cell's seeds around the official mean


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        rc = main(["compare", *argv])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    rc, out, err = run(capsys, *argv, "--json")
    assert rc in (0, 1), err
    return rc, json.loads(out)


def official(model: str) -> dict:
    return json.loads((SUBMISSIONS / f"{model}.json").read_text())


def reproduced_rows(model: str, skip=frozenset()) -> list[dict]:
    """Local geneb-v1 rows of `model` whose seed means are the official file's values: the
    full regime one shared fit, each k-shot cell five seeds spread around the official mean."""
    results = official(model)["results"]
    rows = []
    for regime in REGIMES:
        for task in geneb_v1_tasks():
            if (regime, task.task_id) in skip:
                continue
            values = {col: results[regime][task.task_id][m] for m, col in METRIC_COLUMNS.items()}
            for seed, offset in zip(SEEDS, OFFSETS, strict=True):
                shift = 0.0 if regime == "full" else offset
                rows.append({"model": model, "task": task.task_id, "regime": regime,
                             "seed": seed, "probe": "logreg", "protocol": GENEB_V1.name,
                             "protocol_hash": GENEB_V1.hash, "source": "local",
                             "shared_fit": regime == "full",
                             **{col: v + shift for col, v in values.items()}})
    return rows


FIRST, SECOND = (t.task_id for t in geneb_v1_tasks()[:2])
SKIPPED = frozenset({("full", FIRST), ("1shot", SECOND)})      # 6 cells the local run lacks


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, official_store):
    """The official store plus local GROVER rows reproducing the official file (but for the
    SKIPPED cells) and local full-regime rows of kmer-3 on two tasks (no official file)."""
    root = tmp_path_factory.mktemp("compare") / "store"
    shutil.copytree(official_store.root, root)
    kmer = [{"model": "kmer-3", "task": t, "regime": "full", "seed": seed, "probe": "logreg",
             "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash, "source": "local",
             "shared_fit": True, "mcc": 0.5, "acc": 0.75, "f1_macro": 0.7}
            for t in (FIRST, SECOND) for seed in SEEDS]
    local_store(root, "GROVER", reproduced_rows("GROVER", SKIPPED) + kmer)
    return root


@pytest.fixture
def grover(tmp_path):
    """A folder holding a copy of the official GROVER.json."""
    folder = tmp_path / "grover"
    folder.mkdir()
    shutil.copy(SUBMISSIONS / "GROVER.json", folder)
    return folder


def test_an_imported_store_equals_its_submission_files(official_store, capsys):
    before = digest(official_store.root)
    rc, doc = run_json(capsys, str(official_store.root), str(SUBMISSIONS))
    assert rc == 0 and doc["agrees"]
    assert doc["compared"] == 40 * len(REGIMES) * 100 * len(METRIC_COLUMNS)
    assert doc["beyond"] == 0 and doc["differences"] == []
    assert doc["largest"]["difference"] == 0
    assert (doc["only_in_a"], doc["only_in_b"]) == (0, 0)
    assert doc["a"]["kind"] == "store" and doc["b"]["kind"] == "submissions"
    for argv in ([str(SUBMISSIONS), f"{official_store.root}:official"],
                 ["--store", str(official_store.root), "official", str(SUBMISSIONS)]):
        rc, out, err = run(capsys, *argv)
        assert rc == 0, err
        assert "36000 cells compared, every one within 1e-12" in out
        assert "only in A: 0; only in B: 0" in out
    assert digest(official_store.root) == before


@pytest.mark.parametrize("columns", ["80", "100", "200"])
def test_one_changed_value_is_the_one_cell_named(official_store, grover, capsys, monkeypatch,
                                                 columns):
    doc = official("GROVER")
    task = geneb_v1_tasks()[7].task_id
    old = doc["results"]["10shot"][task]["Acc"]
    doc["results"]["10shot"][task]["Acc"] = old + 1e-3
    (grover / "GROVER.json").write_text(json.dumps(doc))
    rc, got = run_json(capsys, str(official_store.root), str(grover))
    assert rc == 1 and not got["agrees"]
    assert got["compared"] == 900 and got["beyond"] == 1
    [cell] = got["differences"]
    assert (cell["model"], cell["task"], cell["regime"], cell["metric"]) == (
        "GROVER", task, "10shot", "acc")
    assert (cell["a"], cell["b"]) == (old, old + 1e-3)
    assert cell["difference"] == pytest.approx(1e-3, abs=1e-12)
    assert got["largest"] == cell
    assert got["only_in_a"] == 39 * 900 and got["only_in_b"] == 0

    monkeypatch.setenv("COLUMNS", columns)
    rc, out, err = run(capsys, str(official_store.root), str(grover))
    assert rc == 1 and not err
    assert "GROVER" in out and task in out and "+0.001" in out
    assert "1 of 900 cells compared beyond 1e-12" in out
    wide = [line for line in out.splitlines() if cell_len(line) > int(columns) and BOX & set(line)]
    assert not wide, "\n".join(wide)
    rc, _, _ = run(capsys, str(official_store.root), str(grover), "--tol", "1e-2")
    assert rc == 0
    rc, _, _ = run(capsys, str(official_store.root), str(grover), "--tol", "0")
    assert rc == 1


def test_seed_means_and_the_cells_only_one_side_holds(mixed, grover, capsys):
    """Local per-seed GROVER rows (6 cells skipped) and kmer-3 against the official file."""
    before = digest(mixed)
    rc, doc = run_json(capsys, f"{mixed}:local", str(grover))
    assert rc == 0 and doc["beyond"] == 0
    assert doc["largest"]["difference"] != 0 and abs(doc["largest"]["difference"]) < 1e-15
    assert doc["compared"] == 900 - 2 * len(METRIC_COLUMNS)
    assert doc["only_in_a"] == 2 * len(METRIC_COLUMNS)
    assert doc["only_in_a_models"] == {"kmer-3": 2 * len(METRIC_COLUMNS)}
    assert doc["only_in_b"] == 2 * len(METRIC_COLUMNS)
    assert doc["only_in_b_models"] == {"GROVER": 2 * len(METRIC_COLUMNS)}

    rc, doc = run_json(capsys, "--store", str(mixed), "official", "local")
    assert rc == 0 and doc["compared"] == 900 - 6
    assert doc["only_in_a"] == 39 * 900 + 6 and doc["only_in_b"] == 6
    rc, out, _ = run(capsys, "--store", str(mixed), "local", "official")
    assert rc == 0
    assert "only in A: 6 (kmer-3); only in B: 35106 (BioFM-265M" in out

    rc, doc = run_json(capsys, "--store", str(mixed), "local", "official", "--tol", "1e-20")
    assert rc == 1 and 0 < doc["beyond"] <= doc["compared"]
    assert all(abs(d["difference"]) < 1e-15 for d in doc["differences"])
    assert digest(mixed) == before


def test_nothing_in_common_is_not_agreement(mixed, tmp_path, capsys):
    folder = tmp_path / "other"
    folder.mkdir()
    shutil.copy(SUBMISSIONS / "space.json", folder)
    rc, out, _ = run(capsys, f"{mixed}:local", str(folder))
    assert rc == 1
    assert "nothing compared" in out and "only in B: 900 (space)" in out


def test_bad_inputs_are_one_line_and_write_nothing(mixed, tmp_path, capsys):
    store, local = str(mixed), f"{mixed}:local"
    broken = tmp_path / "GROVER.json"
    broken.write_text('{"schema_version": "1.0",')
    empty = tmp_path / "empty"
    empty.mkdir()
    absent = tmp_path / "absent"
    cases = [
        (("compare", local, str(tmp_path / "missing.json")), ("B", "missing.json",
                                                              "no such file or folder")),
        (("compare", "--store", store, "locl", str(SUBMISSIONS)), ("A", "'locl'", "local")),
        (("compare", f"{store}:offical", str(SUBMISSIONS)), ("A", "'offical'", "official")),
        (("compare", f"{absent}:local", str(SUBMISSIONS)), ("no such store folder",)),
        (("compare", local, str(LEADERBOARD)), ("leaderboard.json", "leaderboard")),
        (("compare", local, str(broken)), ("GROVER.json", "not valid JSON")),
        (("compare", local, str(empty)), ("no *.json files", "not a store")),
        (("compare", store, str(SUBMISSIONS)), ("A", "GROVER", "local, official", ":local")),
        (("compare", f"{store}:verified", str(SUBMISSIONS)), ("no verified results",)),
        (("compare", store, str(SUBMISSIONS), "--tol", "-1"), ("--tol", ">= 0")),
        (("compare", store, str(SUBMISSIONS), "--tol", "nan"), ("--tol",)),
        (("compare", store, str(SUBMISSIONS), "--protocol", "mlp"), ("mlp-h256",)),
        (("compare", store, str(SUBMISSIONS), "--protocol", "sweep"),
         ("sweep: stands for 5 protocols", "one protocol at a time")),
        (("compare", store, str(SUBMISSIONS), "--protocol", "mlp-h256"), ("geneb-v1",)),
        (("compare", str(SUBMISSIONS)), ("B",)),
    ]
    for argv, names in cases:
        refused(capsys, mixed, *argv, names=names)
    refused(capsys, absent, "compare", "--store", str(absent), "local", str(SUBMISSIONS),
            names=("(--store) does not exist", "holds no local results"), lines=2)
    assert not absent.exists()
