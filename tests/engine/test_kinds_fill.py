"""geneb-kinds through `fill` into the results: rows carry their kind and its metrics (equal to
scikit-learn's on the stored embeddings), each distinct sequence is embedded once, a
classification row's file keeps its columns, and the readers keep to classification rows (the
report of geneb-mini is the same with geneb-kinds results beside it, but for one note)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from scipy.stats import pearsonr
from sklearn.linear_model import Ridge
from sklearn.metrics import roc_auc_score

from engine.cli import main
from engine.commands.status import status_frame
from engine.kinds_mini import table
from engine.probes.kinds import cosine_distance
from engine.suites import resolve_suite
from store.db import Snapshot
from store.embeddings import EmbeddingStore
from store.paths import resolve_store
from store.tables.data_files import RESULTS
from store.tables.predictions import read_labels, read_predictions, read_values
from store.vocab.kinds import KIND_METRICS
from store.vocab.protocol import RIDGE_V1, VARIANT_COSINE_V1
from tests.engine.in_process import outputs, refused
from tests.engine.processes import COMPARED, run
from tests.helpers import FULL

MINI = ("--suite", "geneb-mini", "--tasks", "mini_promoter_tata", "mini_methyl_cpg",
        "--regimes", "full")


def _cli(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(list(argv)) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> dict:
    """A store with two geneb-mini tasks (kmer-3, full), its report and export, then the
    same after geneb-kinds (kmer-3) was filled into it."""
    root = tmp_path_factory.mktemp("kinds") / "store"
    at = ("--store", str(root))
    _cli("fill", *at, *MINI, "--models", "kmer-3")
    seen = {"root": root, "report": _cli("report", *at, "--suite", "geneb-mini", "--json"),
            "csv": root.parent / "before.csv",
            "columns": {tuple(pq.read_schema(f).names)
                        for f in (root / "results").rglob("*.parquet")}}
    _cli("export", *at, "--csv", str(seen["csv"]))
    _cli("fill", *at, "--suite", "geneb-kinds", "--models", "kmer-3")
    return seen


def test_the_classification_report_and_export_are_unchanged_but_for_one_note(store, capsys):
    rc, out, err = outputs(capsys, "report", "--store", str(store["root"]), "--suite",
                           "geneb-mini", "--json")
    before, after = json.loads(store["report"]), json.loads(out)
    note = ("14 results of regression and variant tasks left out: this shows classification "
            "results only (their metrics are never averaged with MCC)")
    assert rc == 0 and after.pop("notes") == [*before.pop("notes"), note]
    for key in ("table_version", "as_of"):      # the table has more commits now
        assert after.pop(key) != before.pop(key)
    assert after == before
    assert f"geneb-engine report: note: {note}" in err
    again = store["root"].parent / "after.csv"
    assert outputs(capsys, "export", "--store", str(store["root"]), "--csv", str(again))[0] == 0
    assert _rows(again) == _rows(store["csv"]) and len(_rows(again)) == 2


def _rows(path: Path) -> list[dict]:
    """An export's rows but for the table version it was read at."""
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k != "table_version"} for r in csv.DictReader(f)]


def test_rows_carry_their_kind_and_metrics_and_classification_files_their_old_columns(store):
    old = [c for c in RESULTS.file_schema.names if c not in RESULTS.sparse]
    assert store["columns"] == {tuple(old)}       # the geneb-mini rows' files, as ever
    rows = Snapshot(resolve_store(store["root"])).query(
        "SELECT * FROM results_all WHERE kind IS NOT NULL").to_dicts()
    assert {(r["kind"], r["protocol"], r["regime"]) for r in rows} == {
        ("regression", "ridge-v1", "full"), ("regression", "ridge-v1", "10shot"),
        ("regression", "ridge-v1", "1shot"), ("variant", "variant-cosine-v1", "zeroshot"),
        ("variant", "variant-probe-v1", "full"), ("variant", "variant-probe-v1", "10shot"),
        ("variant", "variant-probe-v1", "1shot")}
    assert len(rows) == 5 * (2 * 3 + 2 * 4)       # every seed of every cell
    for r in rows:
        assert r["mcc"] is None
        assert (r["pearson"] is not None) == (r["kind"] == "regression")
        assert (r["auroc"] is not None) == (r["kind"] == "variant")


def test_the_stored_scores_are_scikit_learns_on_the_stored_embeddings(store):
    paths = resolve_store(store["root"])
    suite = resolve_suite("geneb-kinds", paths)
    emb = EmbeddingStore(paths)

    def stored(task: str, split: str) -> np.ndarray:
        attrs = json.loads((emb.split_path("kmer-3", task, split) / "zarr.json").read_text())
        return emb.load("kmer-3", task, split, attrs["attributes"])[0]

    rows = {(r["task"], r["protocol"], r["regime"]): r for r in Snapshot(paths).query(
        "SELECT * FROM results_all WHERE kind IS NOT NULL AND seed = 13").to_dicts()}
    data = suite.load("kinds_expression_ap1")
    t = data.targets
    X_train, X_test = stored(data.task_id, "train"), stored(data.task_id, "test")
    assert len(X_train) == len(data.train.sequences)
    pred = Ridge(alpha=1.0).fit(X_train[t.rows_train].astype(np.float64),
                                t.y_train).predict(X_test[t.rows_test].astype(np.float64))
    assert rows[data.task_id, "ridge-v1", "full"]["pearson"] == pytest.approx(
        pearsonr(t.y_test, pred).statistic, abs=1e-8)
    data = suite.load("kinds_gata_loss")
    t = data.targets
    X_test = stored(data.task_id, "test")
    assert len(X_test) == len(data.test.sequences) == 4 * len(t.y_test) // 3   # refs shared
    score = cosine_distance(X_test[t.rows_test[:, 0]], X_test[t.rows_test[:, 1]])
    assert rows[data.task_id, "variant-cosine-v1", "zeroshot"]["auroc"] == pytest.approx(
        roc_auc_score(t.y_test, score), abs=1e-12)


def test_the_kinds_test_values_are_in_the_predictions_table_beside_their_targets(store):
    """A regression's predicted values (ridge = scikit-learn's on the stored embeddings) and a
    variant's scores (the cosine distances) are `value` rows with the test targets beside
    them; the classification readers of the table see none of them."""
    paths = resolve_store(store["root"])
    suite = resolve_suite("geneb-kinds", paths)
    emb = EmbeddingStore(paths)

    def stored(task: str, split: str) -> np.ndarray:
        attrs = json.loads((emb.split_path("kmer-3", task, split) / "zarr.json").read_text())
        return emb.load("kmer-3", task, split, attrs["attributes"])[0].astype(np.float64)

    values = {(r["task"], r["regime"], r["seed"], r["protocol_hash"]): r
              for r in read_values(paths, model="kmer-3").iter_rows(named=True)}
    assert len(values) == 2 * 3 * 5 + 2 * 4 * 5     # each result row: ridge, cosine + probe
    data = suite.load("kinds_expression_ap1")
    t = data.targets
    pred = Ridge(alpha=1.0).fit(stored(data.task_id, "train")[t.rows_train], t.y_train).predict(
        stored(data.task_id, "test")[t.rows_test])
    row = values[data.task_id, "full", 42, RIDGE_V1.hash]
    assert np.allclose(row["value"], pred, atol=1e-8) and row["target"] == t.y_test.tolist()
    data = suite.load("kinds_gata_loss")
    t, X = data.targets, stored("kinds_gata_loss", "test")
    row = values[data.task_id, "zeroshot", 13, VARIANT_COSINE_V1.hash]
    assert np.allclose(row["value"], cosine_distance(X[t.rows_test[:, 0]], X[t.rows_test[:, 1]]),
                       atol=1e-12)
    assert row["target"] == t.y_test.tolist()
    assert set(read_predictions(paths)["task"]) == {"mini_promoter_tata", "mini_methyl_cpg"}
    assert read_labels(paths, "kinds_gata_loss") is None


def test_a_second_fill_computes_nothing_and_status_counts_each_kind_in_its_table(store,
                                                                                capsys):
    at = ("--store", str(store["root"]))
    rc, out, _ = outputs(capsys, "fill", *at, "--suite", "geneb-kinds", "--models", "kmer-3")
    assert rc == 0 and "14 cells; 14 in the store, 0 to compute" in out
    rc, out, err = outputs(capsys, "status", *at, "--suite", "geneb-kinds", "--models", "kmer-3",
                           "kmer-4", "--regimes", "full", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["rows"] == [] and doc["tasks"] == []
    # the cells the results hold, counted apart: one per (protocol, task, regime) with 5 seeds
    cells = Snapshot(resolve_store(store["root"])).query(
        "SELECT kind, count(*) AS n FROM (SELECT kind, protocol_hash, task, regime FROM "
        "results_all WHERE kind IS NOT NULL AND regime IN ('full', 'zeroshot') GROUP BY ALL "
        "HAVING count(DISTINCT seed) = 5) GROUP BY kind")
    held = dict(cells.iter_rows())
    assert held == {"regression": 2, "variant": 4}      # 2 tasks; 2 tasks x (zeroshot, full)
    got = {(k["kind"], r["model"]): (r["done"], r["total"]) for k in doc["kinds"]
           for r in k["rows"]}
    assert got == {("regression", "kmer-3"): (2, 2), ("regression", "kmer-4"): (0, 2),
                   ("variant", "kmer-3"): (4, 4), ("variant", "kmer-4"): (0, 4)}
    assert [k["protocols"] for k in doc["kinds"]] == [["ridge-v1"],
                                                      ["variant-cosine-v1", "variant-probe-v1"]]
    rc, out, _ = outputs(capsys, "status", *at, "--suite", "geneb-kinds", "--kind", "variant")
    text = " ".join(out.split())
    assert rc == 0 and "variant cells (task × regime) done" in text and "regression" not in text
    assert "kmer-3 │ 8/8" in text
    refused(capsys, store["root"], "status", *at, "--suite", "geneb-kinds", "--kind",
            "classification", names=("--kind classification: suite geneb-kinds has no "
                                     "classification task in the scope (2 regression, 2 "
                                     "variant)",))
    # rows on other data than the task file's now: stale, by the rule of store.cells
    paths = resolve_store(store["root"])
    tasks = [t for t in resolve_suite("geneb-kinds", paths).tasks
             if t.task_id == "kinds_expression_ap1"]
    frame = status_frame(Snapshot(paths), tasks, ["full", "1shot"], "local", ["kmer-3"],
                         data_hashes={"kinds_expression_ap1": "0" * 16}, protocols=(RIDGE_V1,))
    assert frame.select("done", "stale", "total").row(0) == (0, 2, 2)


def _kind_rows(root: Path, tasks: tuple[str, ...]):
    """The compared columns of the kinds' result rows of `tasks` (every one but the times)."""
    return Snapshot(resolve_store(root)).query(
        f"SELECT {COMPARED}, kind, {', '.join(KIND_METRICS)} FROM results_all WHERE "
        "list_contains(?, task) ORDER BY ALL", [list(tasks)])


@pytest.mark.skipif(not FULL, reason="a Ray start: about 45 s; under make test-full only")
def test_a_ray_fill_of_a_regression_and_a_variant_task_equals_the_local_fill(store,
                                                                           tmp_path: Path):
    pytest.importorskip("ray")
    ray_store, tasks = tmp_path / "store", ("kinds_expression_ap1", "kinds_gata_loss")
    done = run([sys.executable, "-m", "engine.cli", "fill", "--store", str(ray_store),
                "--suite", "geneb-kinds", "--tasks", *tasks, "--models", "kmer-3",
                "--executor", "ray"])
    assert done.returncode == 0, done.stderr
    got, want = _kind_rows(ray_store, tasks), _kind_rows(store["root"], tasks)
    assert got.height == want.height == (3 + 1 + 3) * 5 and got.equals(want)
    values = [read_values(resolve_store(root), model="kmer-3").filter(
        pl.col("task").is_in(tasks)).sort("protocol_hash", "task", "regime", "seed")
        for root in (ray_store, store["root"])]
    assert values[0].height == 35 and values[0].equals(values[1])   # the test values too


def test_commands_that_read_class_labels_refuse_the_kinds_in_one_line(tmp_path: Path, capsys):
    store = tmp_path / "store"
    at = ("--store", str(store), "--suite", "geneb-kinds")
    refused(capsys, store, "audit", *at, names=(
        "audit takes classification tasks only; suite geneb-kinds has tasks of other kinds: "
        "kinds_expression_ap1 (regression)",))
    folder = tmp_path / "emb" / "kinds_gata_loss"
    folder.mkdir(parents=True)
    for split in ("train", "test"):
        np.save(folder / f"{split}.npy", np.zeros((3, 4), dtype=np.float32))
    refused(capsys, store, "import-embeddings", "m", str(folder.parent), *at, names=(
        "import-embeddings takes classification tasks only; suite geneb-kinds has tasks of "
        "other kinds: kinds_gata_loss (variant)",))


def _split_rows(data) -> list[list[tuple]]:
    """Per split, each row of a regression or variant task: its sequence(s) and label."""
    t = data.targets
    return [[(*(split.sequences[i] for i in np.atleast_1d(r)), float(y))
             for r, y in zip(rows, labels, strict=True)]
            for split, rows, labels in ((data.train, t.rows_train, t.y_train),
                                        (data.test, t.rows_test, t.y_test))]


def test_subsample_keeps_whole_variants_per_label_and_a_uniform_share_of_regression_rows(store):
    paths = resolve_store(store["root"])
    full, sub = (resolve_suite("geneb-kinds", paths, subsample=n) for n in (None, 500))
    for task in ("kinds_gata_loss", "kinds_expression_ap1"):
        whole, part = full.load(task), sub.load(task)
        assert part.data_hash == sub.load(task).data_hash != whole.data_hash   # deterministic
        assert len(part.train) + len(part.test) <= 500 < len(whole.train) + len(whole.test)
        for kept, given in zip(_split_rows(part), _split_rows(whole), strict=True):
            assert set(kept) <= set(given) and len(set(kept)) == len(kept)  # rows as they were
            if task == "kinds_gata_loss":       # (ref, alt, label): whole variants
                share = [sum(r[-1] == y for r in rows) for rows in (kept, given) for y in (0, 1)]
                assert share[0] / share[2] == pytest.approx(share[1] / share[3], abs=0.02)
        assert "subsampled" in part.warnings[-1] and "limit 500" in part.warnings[-1]
    # variants share reference windows: fewer sequences than rows, all of them kept variants'
    part = sub.load("kinds_gata_loss")
    used = {s for rows in _split_rows(part) for r in rows for s in r[:2]}
    assert used == set(part.train.sequences) | set(part.test.sequences)


def test_a_dry_run_plans_each_kinds_protocols_and_writes_nothing(tmp_path: Path, capsys):
    store = tmp_path / "store"
    rc, out, err = outputs(capsys, "fill", "--store", str(store), "--suite", "geneb-kinds",
                           "--models", "kmer-3", "--dry-run")
    assert rc == 0 and not store.exists(), err
    assert ("4 tasks × 1 models × 3 regimes, 4 of the tasks of other kinds "
            "(their kinds' protocols): 14 cells; 0 in the store, 14 to compute"
            ) in " ".join(out.split())
    assert "variant-cosine-v1 zeroshot (2 cells, 0 training examples)" in out
    assert "ridge-v1 full (2 cells, 1,200 training examples)" in out    # one fit, 600 rows


def test_the_docs_table_shows_each_cells_mean_over_the_seeds(store):
    paths = resolve_store(store["root"])
    means = Snapshot(paths).query(
        "SELECT task, regime, avg(pearson) AS r, avg(spearman) AS rho, avg(auroc) AS a, "
        "avg(auprc) AS p FROM results_all WHERE kind IS NOT NULL GROUP BY ALL")
    lines = table(paths).splitlines()
    assert lines[0] == "regression: pearson (spearman), mean over the seeds"
    one = means.filter(task="kinds_expression_ap1", regime="1shot").row(0, named=True)
    assert f"| `kinds_expression_ap1` | ridge-v1 | 1shot | {one['r']:.3f} ({one['rho']:.3f}) |" \
        in lines
    zero = means.filter(task="kinds_gata_loss", regime="zeroshot").row(0, named=True)
    assert (f"| `kinds_gata_loss` | variant-cosine-v1 | zeroshot | {zero['a']:.3f} "
            f"({zero['p']:.3f}) |") in lines


def test_tasks_counts_classes_only_for_the_kinds_that_have_them(store, capsys):
    """`tasks` on geneb-kinds: a variant task counts its two labels; a regression task has no
    classes (its recorded profile holds 0 and a share of 1): n/a, not "0" and "100%"."""
    at = ("--store", str(store["root"]), "--suite", "geneb-kinds")
    rc, out, _ = outputs(capsys, "tasks", *at, "--json")
    profile = {t["task_id"]: t["profile"] for t in json.loads(out)}
    assert rc == 0 and profile["kinds_expression_ap1"]["n_classes"] == 0
    assert profile["kinds_gata_loss"]["n_classes"] == 2
    assert 0 < profile["kinds_gata_loss"]["min_class_share"] < 1
    rc, out, _ = outputs(capsys, "tasks", *at)
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
            for line in out.splitlines() if line.startswith("│ kinds_")}
    regression, variant = rows["kinds_expression_ap1"], rows["kinds_gata_loss"]
    assert rc == 0 and "n/a" in regression and not {"0", "100%"} & set(regression), regression
    assert "2" in variant and "n/a" not in variant


def test_the_suite_taken_is_never_called_the_only_one_beside_another_kinds(store, capsys):
    """geneb-mini's classification results beside geneb-kinds': a reader given no --suite takes
    geneb-mini (as before geneb-kinds) and says it is the only suite with classification
    results, naming the suite with the other kinds' (it said "the only suite with results")."""
    rc, out, _ = outputs(capsys, "status", "--store", str(store["root"]))
    assert rc == 0 and out.splitlines()[0] == (
        "suite geneb-mini: the store's only suite with local classification results "
        "(geneb-kinds has results of other kinds: --suite geneb-kinds)")


@pytest.mark.parametrize("command", ["report", "recommend", "site"])
def test_a_suite_of_other_kinds_read_as_classification_names_its_kinds(store, capsys, tmp_path,
                                                                       command):
    """`--suite geneb-kinds` without --kind (classification): one line naming the kinds its
    tasks hold and the --kind to give, exit 2, nothing written (report said "no results on the
    tasks of suite geneb-kinds (its results are on the tasks of geneb-mini)")."""
    out = ("-o", str(tmp_path / "site")) if command == "site" else ()
    refused(capsys, store["root"], command, "--store", str(store["root"]), "--suite",
            "geneb-kinds", *out, lines=2 if command == "report" else 1, names=(
                "suite geneb-kinds: no task in the scope (4) holds classification results; its "
                "results are of regression and variant tasks: give --kind regression or --kind "
                "variant",))
    assert not (tmp_path / "site").exists()
