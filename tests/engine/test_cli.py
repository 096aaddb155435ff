"""status, export, tasks and models on a filled store, human and --json."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from engine.cli import main
from store.catalog import CATEGORY_ORDER


@pytest.fixture
def filled(tmp_path, task_dir):
    store = tmp_path / "store"
    assert main(["fill", "--store", str(store), "--suite", str(task_dir),
                 "--models", "kmer-3", "--regimes", "full", "1shot"]) == 0
    return store, task_dir


def run_json(capsys, *argv):
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_status_counts_done_and_missing_cells(filled, capsys):
    store, suite = filled
    out = run_json(capsys, "status", "--store", str(store), "--suite", str(suite),
                   "--models", "kmer-3", "kmer-4")
    got = {(r["model"], r["category"]): (r["done"], r["total"]) for r in out["rows"]}
    # manifest: Promoters holds bin_task and quad_task, Enhancers tri_task; 3 regimes asked
    assert got == {("kmer-3", "Promoters"): (4, 6), ("kmer-3", "Enhancers"): (2, 3),
                   ("kmer-4", "Promoters"): (0, 6), ("kmer-4", "Enhancers"): (0, 3)}
    assert main(["status", "--store", str(store), "--suite", str(suite)]) == 0


def test_export_seed_means_agree_with_per_seed_rows(filled, tmp_path, capsys):
    store, _ = filled
    means, raw = tmp_path / "means.csv", tmp_path / "raw.csv"
    assert main(["export", "--store", str(store), "--csv", str(means)]) == 0
    assert main(["export", "--store", str(store), "--csv", str(raw), "--per-seed"]) == 0
    m, r = pl.read_csv(means), pl.read_csv(raw)
    assert m.height == 3 * 2 and r.height == 3 * 2 * 5
    for row in m.iter_rows(named=True):
        seeds = r.filter(task=row["task"], regime=row["regime"])["mcc"].to_numpy()
        assert row["mcc"] == pytest.approx(np.mean(seeds), abs=1e-15)
        assert row["mcc_sd"] == pytest.approx(np.std(seeds, ddof=1), abs=1e-15)
        assert row["n_seeds"] == 5
    assert set(m["category"]) == {"Promoters", "Enhancers"}


def test_export_filters_and_header_only_when_nothing_matches(filled, tmp_path):
    store, _ = filled
    out = tmp_path / "x.csv"
    main(["export", "--store", str(store), "--csv", str(out), "--categories", "Enhancers",
          "--regimes", "1shot"])
    f = pl.read_csv(out)
    assert f["task"].to_list() == ["tri_task"] and f["regime"].to_list() == ["1shot"]
    assert main(["export", "--store", str(store), "--csv", str(out), "--models", "kmer-6"]) == 0
    assert out.read_text().startswith("model,task,category,regime") \
        and len(out.read_text().splitlines()) == 1             # a known model, no results
    before = out.read_text()
    assert main(["export", "--store", str(store), "--csv", str(out), "--models", "nobody"]) == 2
    assert out.read_text() == before                           # an unknown one: refused
    assert main(["export", "--store", str(store), "--csv", str(tmp_path / "no" / "x.csv")]) == 2


def test_tasks_and_models_list_the_catalogs(capsys, tmp_path):
    tasks = run_json(capsys, "tasks", "--suite", "geneb-mini", "--store", str(tmp_path))
    assert [t["category"] for t in tasks] == list(CATEGORY_ORDER)
    models = run_json(capsys, "models", "--scale", "<100M", "--architecture", "Hyena")
    assert {m["model_id"] for m in models} == {"hyenadna-large-1m-seqlen-hf",
                                               "hyenadna-medium-160k-seqlen-hf"}
    assert {m["model_id"]: m["params"] for m in models} == {
        "hyenadna-large-1m-seqlen-hf": 54_600_000, "hyenadna-medium-160k-seqlen-hf": 14_200_000}
    kmers = run_json(capsys, "models", "--search", "kmer")
    assert [m["model_id"] for m in kmers] == ["kmer-3", "kmer-4", "kmer-6"]
    # no parameter count: null, as in every CSV, and "n/a" on screen
    assert [(m["params"], m["scale_band"]) for m in kmers] == [(None, "n/a")] * 3
    assert main(["models", "--search", "kmer-3"]) == 0
    assert " n/a " in capsys.readouterr().out


def test_status_on_a_store_without_results_says_what_to_do(tmp_path, capsys):
    assert main(["status", "--store", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no local results for suite geneb-v1" in out and "geneb-engine fill" in out


def test_report_on_a_local_suite_and_versus_a_variant_protocol(tmp_path, task_dir, capsys):
    from scipy.stats import spearmanr

    store = str(tmp_path / "store")
    for protocol in ("geneb-v1", "converged-C0.1"):
        assert main(["fill", "--store", store, "--suite", str(task_dir), "--regimes", "full",
                     "--models", "kmer-3", "kmer-4", "kmer-6", "--protocol", protocol]) == 0
    out = run_json(capsys, "report", "--store", store, "--suite", str(task_dir),
                   "--versus", "converged-C0.1")
    agg = {r["model"]: r for r in out["aggregates"]}
    assert set(agg) == {"kmer-3", "kmer-4", "kmer-6"}
    macro = {r["column"]: r for r in out["protocol_agreement"]}["macro"]
    means = pl.DataFrame(run_json(capsys, "report", "--store", store, "--suite", str(task_dir))
                         ["aggregates"])
    assert means.equals(pl.DataFrame(out["aggregates"]))
    # macro = mean of the two category means of the manifest (Promoters: 2 tasks, Enhancers: 1)
    for r in out["aggregates"]:
        assert r["macro"] == pytest.approx((r["Promoters"] + r["Enhancers"]) / 2, abs=1e-15)
    other = {r["model"]: r["value_b"] for r in out["protocol_rank_shift"]}
    rho = spearmanr([agg[m]["macro"] for m in sorted(agg)], [other[m] for m in sorted(agg)])[0]
    assert macro["n"] == 3 and macro["rho"] == pytest.approx(rho, abs=1e-12)
    assert main(["report", "--store", store, "--suite", str(task_dir), "--versus",
                 "mlp-h256"]) == 2
    assert "no local results for protocol 'mlp-h256'" in capsys.readouterr().err
    assert main(["report", "--store", store, "--suite", str(task_dir), "--versus", "mlp"]) == 2
    assert "unknown protocol 'mlp' (did you mean mlp-h256?)" in capsys.readouterr().err


def test_report_on_suites_without_geneb_categories_and_on_other_suites(tmp_path, task_dir,
                                                                         capsys):
    """Regression: `report` crashed on a store holding only local results of another suite
    (`concat_list needs one or more expressions`) and on a suite whose categories are its task
    ids (`cannot return empty fold`)."""
    bare = tmp_path / "bare"          # no manifest: each task is its own category
    bare.mkdir()
    for name in ("bin_task", "tri_task"):
        (bare / f"{name}.csv").write_bytes((task_dir / f"{name}.csv").read_bytes())
    store = str(tmp_path / "store")
    assert main(["fill", "--store", store, "--suite", str(bare), "--regimes", "full",
                 "--models", "kmer-3", "kmer-4"]) == 0
    out = run_json(capsys, "report", "--store", store, "--suite", str(bare))
    agg = {r["model"]: r for r in out["aggregates"]}
    for r in agg.values():
        assert r["macro"] == pytest.approx((r["bin_task"] + r["tri_task"]) / 2, abs=1e-15)
    borda = {r["model"]: r["borda"] for r in out["borda"]}
    assert sorted(borda.values()) == [0, 2] or sorted(borda.values()) == [1, 1]
    # with no --suite, the store's only suite; geneb-v1 has none of these results: no rows of
    # models without results on it, and a report that says so
    assert run_json(capsys, "report", "--store", store)["aggregates"] == out["aggregates"]
    capsys.readouterr()
    assert main(["report", "--store", store, "--suite", "geneb-v1", "--json"]) == 1
    empty = json.loads(capsys.readouterr().out)
    assert empty["empty"] is True and "no results" in empty["message"]


def test_the_progress_of_fill_in_a_log_file_is_whole_lines(tmp_path, task_dir, capsys,
                                                          monkeypatch):
    """stdout not a terminal (here: captured; a log file, a pipe): the progress line is never
    cut to a width ("0:04…"), even with $COLUMNS narrow, and one is written every
    LOG_EVERY_S (here: every cell) besides the last."""
    import re

    from engine.commands import fill as fill_cmd

    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setattr(fill_cmd, "LOG_EVERY_S", 0, raising=False)
    capsys.readouterr()
    assert main(["fill", "--store", str(tmp_path / "store"), "--suite", str(task_dir),
                 "--models", "kmer-3", "--regimes", "full"]) == 0
    out = capsys.readouterr().out
    assert "…" not in out
    lines = [line.rstrip() for line in out.splitlines() if line.startswith("kmer-3 ")]
    whole = re.compile(r" (\d)/3 cells \d+:\d\d:\d\d ETA (-|[\d.]+ (s|min|h))$")
    done = [whole.search(line) for line in lines]
    assert all(done) and [int(m.group(1)) for m in done] == [1, 2, 3, 3]   # 3 cells, the last
