"""The readers per task kind on geneb-kinds (kmer-3, kmer-6): `report --kind`,
`recommend --kind`, `site --kind` and `export --csv` read one kind's results under its protocol
and primary metric (values checked against the stored rows' seed means, computed here with
numpy), never put a variant task beside a regression one, say "too few tasks to decide" where a
kind has fewer tasks than a rank test needs, and the official submission format refuses a
model whose results are of these kinds only."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from store.analyses.presets import MIN_TASKS, TOO_FEW_TASKS
from store.db import Snapshot, snapshot_of
from store.paths import resolve_store
from tests.engine.in_process import outputs, refused

MODELS = ("kmer-3", "kmer-6")
REGRESSION = ("kinds_expression_ap1", "kinds_stability_are")
VARIANT = ("kinds_gata_loss", "kinds_ebox_gain")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """geneb-kinds filled with two k-mer baselines (about 9 s)."""
    from engine.cli import main

    root = tmp_path_factory.mktemp("kind-readers") / "store"
    assert main(["fill", "--store", str(root), "--suite", "geneb-kinds", "--models",
                 *MODELS]) == 0
    return root


def _seed_means(root: Path, protocol: str, metric: str, regime: str) -> dict:
    """(model, task) -> the mean over the stored seeds of `metric`, from the raw rows."""
    rows = Snapshot(resolve_store(root)).query(
        f"SELECT model, task, seed, {metric} AS v FROM results_all WHERE protocol = ? "
        "AND regime = ?", [protocol, regime])
    cells: dict = {}
    for r in rows.sort("seed").iter_rows(named=True):
        cells.setdefault((r["model"], r["task"]), []).append(r["v"])
    return {k: float(np.mean(v)) for k, v in cells.items()}


def _report(capsys, store: Path, *argv: str) -> dict:
    rc, out, err = outputs(capsys, "report", "--store", str(store), "--json",
                           "--resamples", "200", *argv)
    assert rc == 0, err
    return json.loads(out)


def test_report_kind_regression_reads_ridge_pearson_of_its_own_tasks(store, capsys):
    doc = _report(capsys, store, "--kind", "regression")
    assert (doc["protocol"], doc["kind"], doc["metric"]) == ("ridge-v1", "regression", "pearson")
    assert doc["tasks"] == list(REGRESSION)         # no variant task beside them
    means = _seed_means(store, "ridge-v1", "pearson", "full")
    for row in doc["aggregates"]:                   # one category: macro = micro = task mean
        want = np.mean([means[row["model"], t] for t in REGRESSION])
        assert row["macro"] == pytest.approx(want, abs=1e-12)
        assert row["micro"] == pytest.approx(want, abs=1e-12)
    assert {r["model"] for r in doc["aggregates"]} == set(MODELS)
    cells = len(MODELS) * len(VARIANT) * 4          # the cosine's one regime and the probe's 3
    assert f"{cells} results of variant tasks left out: this shows regression results only" \
        in " ".join(doc["notes"])
    assert "zero_shot_aggregates" not in doc            # the zero-shot protocol is a variant's


def test_report_kind_variant_reads_the_probes_auroc_and_spearman_on_request(store, capsys):
    doc = _report(capsys, store, "--kind", "variant", "--regime", "10shot")
    assert (doc["protocol"], doc["metric"]) == ("variant-probe-v1", "auroc")
    means = _seed_means(store, "variant-probe-v1", "auroc", "10shot")
    best = max(doc["aggregates"], key=lambda r: r["macro"])
    assert best["model"] == "kmer-6"
    assert best["macro"] == pytest.approx(np.mean([means["kmer-6", t] for t in VARIANT]))
    assert {r["n_tasks"] for r in doc["rank_tests"]} == {len(VARIANT)}
    cosine = _seed_means(store, "variant-cosine-v1", "auroc", "zeroshot")   # beside the probe
    assert {r["model"]: r["macro"] for r in doc["zero_shot_aggregates"]} == pytest.approx(
        {m: np.mean([cosine[m, t] for t in VARIANT]) for m in MODELS})
    assert all(r["tied_with_leader"] for r in doc["zero_shot_tie_group"])   # 2 tasks: p >= 0.5
    spearman = _report(capsys, store, "--kind", "regression", "--metric", "spearman")
    assert spearman["metric"] == "spearman"
    rho = _seed_means(store, "ridge-v1", "spearman", "full")
    assert sorted(r["macro"] for r in spearman["aggregates"]) == pytest.approx(
        sorted(np.mean([rho[m, t] for t in REGRESSION]) for m in MODELS))


def test_report_text_says_too_few_tasks_to_decide_for_a_small_kind(store, capsys):
    assert len(VARIANT) < MIN_TASKS
    rc, out, err = outputs(capsys, "report", "--store", str(store), "--kind", "variant",
                           "--resamples", "200")
    assert rc == 0, err
    assert TOO_FEW_TASKS in out and "auroc" in out
    rc, _, err = outputs(capsys, "report", "--store", str(store))   # classification: none
    assert rc == 1 and err.splitlines()[-1].endswith("give --kind regression or --kind variant")


def test_kind_and_metric_typos_are_one_line_exit_2(store, capsys):
    refused(capsys, store, "report", "--store", str(store), "--kind", "regresion",
            names=("regresion", "did you mean regression"))
    refused(capsys, store, "report", "--store", str(store), "--kind", "regression",
            "--metric", "auroc", names=("--metric auroc", "variant", "--kind regression"))
    refused(capsys, store, "recommend", "--store", str(store), "--kind", "variant",
            "--metric", "mcc", names=("--metric mcc", "classification"))
    refused(capsys, store, "report", "--store", str(store), "--kind", "variant",
            "--examples", "10", names=("--examples", "--kind variant"))
    refused(capsys, store, "report", "--store", str(store), "--kind", "regression",
            "--tasks", "kinds_gata_loss", lines=2,          # the note of the variant results
            names=("--kind regression", "outside the scope"))


def test_report_figures_of_a_kind_draw_its_metric_and_no_cd_of_too_few_tasks(store, capsys,
                                                                              tmp_path):
    rc, out, err = outputs(capsys, "report", "--store", str(store), "--kind", "regression",
                           "--resamples", "100", "--figures", str(tmp_path / "fig"))
    assert rc == 0, err
    drawn = json.loads((tmp_path / "fig" / "figures.json").read_text())
    assert "critical_difference" not in drawn and TOO_FEW_TASKS in out   # 2 tasks
    pearson = {r: _seed_means(store, "ridge-v1", "pearson", r) for r in ("full", "10shot")}
    macro = {r["scope"]: r for r in drawn["degradation"]["degradation_summary"]}["macro"]
    for regime, means in pearson.items():   # the mean over the entries of their macro
        assert macro[regime] == pytest.approx(np.mean(
            [np.mean([means[m, t] for t in REGRESSION]) for m in MODELS]))


def test_recommend_answers_within_one_kind(store, capsys):
    rc, out, err = outputs(capsys, "recommend", "--store", str(store), "--kind", "regression",
                           "--resamples", "200", "--json")
    assert rc == 0, err
    answer = json.loads(out)
    means = _seed_means(store, "ridge-v1", "pearson", "full")
    lead = answer["picks"][0]
    assert lead["model"] == "kmer-6"
    assert lead["score"] == pytest.approx(np.mean([means["kmer-6", t] for t in REGRESSION]))
    assert (answer["question"]["metric"], answer["question"]["kind"]) == ("pearson",
                                                                          "regression")
    assert sorted(answer["question"]["tasks"]) == sorted(REGRESSION)


def test_export_csv_carries_each_kinds_rows_with_its_kind_and_metrics(store, capsys, tmp_path):
    out = tmp_path / "kinds.csv"
    rc, _, err = outputs(capsys, "export", "--store", str(store), "--csv", str(out))
    assert rc == 0, err
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(MODELS) * (2 * 3 + 2 * 4)
    pearson = _seed_means(store, "ridge-v1", "pearson", "1shot")
    cosine = _seed_means(store, "variant-cosine-v1", "auroc", "zeroshot")
    for r in rows:
        assert r["mcc"] == ""                       # no classification metric on them
        if r["kind"] == "regression":
            assert r["auroc"] == "" and r["pearson"] != ""
            if r["regime"] == "1shot":
                assert float(r["pearson"]) == pytest.approx(pearson[r["model"], r["task"]])
        else:
            assert r["kind"] == "variant" and r["pearson"] == "" and r["auroc"] != ""
            if r["protocol"] == "variant-cosine-v1":
                assert r["regime"] == "zeroshot"
                assert float(r["auroc"]) == pytest.approx(cosine[r["model"], r["task"]])


def test_the_official_submission_format_refuses_these_kinds_in_one_line(store, capsys,
                                                                        tmp_path):
    refused(capsys, store, "export", "--store", str(store), "--submission", "kmer-6", "-o",
            str(tmp_path / "kmer-6.json"), names=("kmer-6", "classification tasks only"))
    assert not (tmp_path / "kmer-6.json").exists()


def test_site_kind_shows_that_kinds_boards(store, capsys, tmp_path):
    site = tmp_path / "site"
    rc, _, err = outputs(capsys, "site", "--store", str(store), "--kind", "variant",
                         "--resamples", "0", "-o", str(site))
    assert rc == 0, err
    doc = json.loads((site / "site.json").read_text())
    assert (doc["kind"], doc["protocol"], doc["metrics"]) == (
        "variant", "variant-probe-v1", ["auroc", "auprc"])
    assert [t["id"] for t in doc["tasks"]] == list(VARIANT)
    report = _report(capsys, store, "--kind", "variant", "--resamples", "0")
    macro = {r["model"]: r["macro"] for r in report["aggregates"]}
    models = [doc["models"][e["model"]]["id"] for e in doc["entries"]]
    at = doc["scopes"].index("macro")
    shown = {models[row["entry"]]: row["scores"][at]
             for row in doc["boards"]["auroc"]["full"]["rows"]}
    assert shown == pytest.approx(macro) and len(shown) == len(MODELS)


def test_a_snapshot_of_one_kind_is_not_read_as_another(store):
    snap = Snapshot(resolve_store(store), "regression")
    assert snapshot_of(snap, "regression") is snap
    with pytest.raises(ValueError, match="regression"):
        snapshot_of(snap, "variant")
    assert set(snap.query("SELECT DISTINCT task FROM results")["task"]) == set(REGRESSION)


def test_every_reader_of_a_store_of_other_kinds_alone_says_what_it_holds(store, capsys,
                                                                         tmp_path):
    """A store of geneb-kinds results alone, read without --suite or --kind: status and export
    take geneb-kinds (status counted geneb-v1 and said the store had no local results);
    report, recommend and site say in one line which kinds it holds and the --kind to give
    (recommend answered an empty geneb-v1 question, naming 44 models without results; site
    said to fill geneb-v1), recommend and site exit 2 with nothing written."""
    rc, out, _ = outputs(capsys, "status", "--store", str(store))
    assert rc == 0 and out.startswith(
        "suite geneb-kinds: the store's only suite with local results (--suite for another)")
    assert "│ kmer-3 │  6/6 │" in out and "│ kmer-3 │  8/8 │" in out   # regression; variant
    line = (f"no results of classification tasks in {resolve_store(store).root}; it holds "
            "results of regression and variant tasks: give --kind regression or --kind variant")
    rc, _, err = outputs(capsys, "report", "--store", str(store))
    assert rc == 1 and err.splitlines()[-1] == line
    refused(capsys, store, "recommend", "--store", str(store), names=(line,))
    refused(capsys, store, "site", "--store", str(store), "-o", str(tmp_path / "site"),
            names=(f"{line}; nothing written",))
    assert not (tmp_path / "site").exists()


def test_a_lone_model_is_never_said_to_beat_the_others(tmp_path, capsys):
    """One model with results (kmer-3 on the regression tasks): recommend says it has none to
    be compared with, not that "every other model is separably worse" (said of no model), and
    report's tie group says so instead of stating the rule "compared with 1 others"."""
    store = str(tmp_path / "store")
    assert outputs(capsys, "fill", "--store", store, "--suite", "geneb-kinds", "--models",
                   "kmer-3", "--tasks", *REGRESSION, "--regimes", "full")[0] == 0
    rc, out, err = outputs(capsys, "recommend", "--store", store, "--kind", "regression",
                           "--resamples", "100")
    assert rc == 0, err
    assert ("kmer-3 leads (pearson" in out
            and "; the only model eligible: none to compare it with" in out), out
    assert "every other model is separably worse" not in out
    rc, out, err = outputs(capsys, "report", "--store", store, "--kind", "regression",
                           "--resamples", "100")
    assert rc == 0, err
    assert ("Tie group of the macro leader (full, pearson, 95 %): 3-mer spectrum is the only "
            "entry with a macro score; none to compare it with") in " ".join(out.split())
    assert "compared with 1 others" not in out
