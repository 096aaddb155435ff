"""`--domain in|out|unknown` on `report`, `status` and `export`: only the result cells whose
(model, task) pair is of that domain (`store.analyses.domains.keep_domain` over
`store.tables.catalogs.pair_domains`), report's aggregates over the partial matrix, the one-line
refusal when no cell is left, export's `filters` column."""

from __future__ import annotations

import csv

import pytest

from engine.cli import main
from store.catalog import TaskMeta
from store.paths import resolve_store
from store.tables.catalogs import register_tasks
from store.tables.results import append_rows
from tests.engine.test_cli_names import state
from tests.engine.test_cli_scopes import json_of
from tests.store.local_rows import full_mcc_rows

T1, T2, T3, T4, T5 = "prom_a", "prom_b", "prom_c", "enh_a", "enh_b"
META = {T1: ("Promoters", "human", "animals"), T2: ("Promoters", "human", "animals"),
        T3: ("Promoters", "Arabidopsis thaliana", "plants"),
        T4: ("Enhancers", "human", "animals"), T5: ("Enhancers", "multiple", "mixed")}
SUITE = tuple(TaskMeta(t, t.upper(), c, "mine", "other", o, k) for t, (c, o, k) in META.items())
# Three user models with domains (hum: human only; pla: plants; mul: animals and plants), alike
# but for their pretraining data (so each two are a controlled pair), and kmer-3 (no
# pretraining: every pair unknown). The domains, by store.domains.domain:
#   hum: T1 in, T2 in, T3 out, T4 in, T5 unknown (mixed kingdom)
#   pla: T1 out, T2 out, T3 in, T4 out, T5 unknown
#   mul: T1 in, T2 in, T3 in, T4 in, T5 unknown
#   kmer-3: all unknown
USER_MODELS = """
[[model]]
model_id = "hum"
hub_id = "me/hum"
pretraining_data = "human"
pretraining_kingdoms = ["animals"]
pretraining_organisms = ["human"]

[[model]]
model_id = "pla"
hub_id = "me/pla"
pretraining_data = "plant-genomes"
pretraining_kingdoms = ["plants"]

[[model]]
model_id = "mul"
hub_id = "me/mul"
pretraining_data = "multi-species"
pretraining_kingdoms = ["animals", "plants"]
"""
MCC = {"hum": {T1: 0.8, T2: 0.2, T3: 0.5, T4: 0.6, T5: 0.4},
       "pla": {T1: 0.3, T2: 0.5, T3: 0.9, T4: 0.5, T5: 0.7},
       "mul": {T1: 0.6, T2: 0.4, T3: 0.7, T4: 0.9, T5: 0.2},
       "kmer-3": {T1: 0.1, T2: 0.1, T3: 0.1, T4: 0.1, T5: 0.1}}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    paths = resolve_store(tmp_path_factory.mktemp("domains") / "store")
    register_tasks(paths, SUITE)
    paths.user_models.write_text(USER_MODELS)
    append_rows(paths, full_mcc_rows(MCC))
    return paths


def _rounded(rows: list[dict], *columns: str) -> list[tuple]:
    return [tuple(round(r[c], 12) if isinstance(r[c], float) else r[c] for c in columns)
            for r in rows]


@pytest.mark.parametrize("domain, expected", [
    # in: hum on T1, T2 (Promoters 0.5) and T4 (Enhancers 0.6): macro 0.55, micro 1.6 / 3;
    # mul on T1-T3 (Promoters 1.7 / 3) and T4 (0.9): macro (1.7 / 3 + 0.9) / 2, micro 2.6 / 4;
    # pla on T3 alone (Promoters 0.9, no Enhancers): macro = micro = 0.9; kmer-3 has none.
    ("in", [("hum", 0.55, 2, round(1.6 / 3, 12), 3, 0.5, 0.6),
            ("mul", round((1.7 / 3 + 0.9) / 2, 12), 2, 0.65, 4, round(1.7 / 3, 12), 0.9),
            ("pla", 0.9, 1, 0.9, 1, 0.9, None)]),
    # out: hum on T3 (0.5); pla on T1, T2 (Promoters 0.4) and T4 (Enhancers 0.5).
    ("out", [("hum", 0.5, 1, 0.5, 1, 0.5, None),
             ("pla", 0.45, 2, round(1.3 / 3, 12), 3, 0.4, 0.5)]),
    # unknown: kmer-3 everywhere, hum and pla on the mixed-kingdom T5 only.
    ("unknown", [("hum", 0.4, 1, 0.4, 1, None, 0.4), ("kmer-3", 0.1, 2, 0.1, 5, 0.1, 0.1),
                 ("mul", 0.2, 1, 0.2, 1, None, 0.2), ("pla", 0.7, 1, 0.7, 1, None, 0.7)]),
])
def test_report_aggregates_each_entry_over_its_cells_of_the_domain(store, domain, expected):
    doc = json_of("report", "--store", str(store.root), "--domain", domain)
    assert doc["domain"] == domain
    assert _rounded(doc["domain_aggregates"], "model", "macro", "n_categories", "micro",
                    "n_tasks", "Promoters", "Enhancers") == expected
    assert "aggregates" not in doc and "controlled_pairs" not in doc      # one task set each
    assert "controlled pairs" in doc["not_computed_under_domain"]


def test_report_text_under_a_domain(store, capsys):
    assert main(["report", "--store", str(store.root), "--domain", "in"]) == 0
    out = " ".join(capsys.readouterr().out.split())          # titles wrap at the width
    assert "Aggregates of the cells in their model's pretraining domain (full, mcc)" in out
    assert "not computed with --domain" in out and "Tie group" not in out


def test_status_counts_the_pairs_of_the_domain(store):
    doc = json_of("status", "--store", str(store.root), "--domain", "out", "--regimes", "full")
    assert doc["domain"] == "out"
    assert sorted((r["model"], r["category"], r["done"], r["total"]) for r in doc["rows"]) == [
        ("hum", "Promoters", 1, 1), ("pla", "Enhancers", 1, 1), ("pla", "Promoters", 2, 2)]


def test_export_writes_the_rows_of_the_domain_and_says_so(store, tmp_path):
    out = tmp_path / "in.csv"
    assert main(["export", "--store", str(store.root), "--csv", str(out),
                 "--domain", "in", "--kingdom", "animals"]) == 0
    rows = list(csv.DictReader(out.open()))
    assert sorted((r["model"], r["task"], r["domain"]) for r in rows) == [
        ("hum", T4, "in"), ("hum", T1, "in"), ("hum", T2, "in"),
        ("mul", T4, "in"), ("mul", T1, "in"), ("mul", T2, "in")]
    assert {r["filters"] for r in rows} == {"kingdom=animals; domain=in"}


@pytest.mark.parametrize("command", ["report", "status", "export"])
def test_a_domain_with_no_cell_is_one_line(store, capsys, tmp_path, command):
    before = state(store.root)
    out = tmp_path / "x.csv"
    extra = ("--csv", str(out)) if command == "export" else ()
    assert main([command, "--store", str(store.root), *extra, "--tasks", T5,
                 "--domain", "in"]) == 2
    printed, err = capsys.readouterr()
    assert printed == "" and err.splitlines() == [err.strip()]
    what = {"status": "(model, task) pairs", "export": "result rows"}.get(command,
                                                                          "result cells")
    # report's cells: T5 in each of the four models (full only); status: 4 pairs.
    assert err.strip() == (f"geneb-engine {command}: --domain in: none of the 4 {what} of the "
                           "selection is in their model's pretraining domain; theirs: "
                           "unknown (4)")
    assert state(store.root) == before and not out.exists()


def test_report_restates_the_controlled_pairs_on_tasks_in_both_domains(store, capsys):
    # Aggregates over the five tasks: pla 0.5833, mul 0.5583, hum 0.5, so the pairs are
    # (pla, mul), (pla, hum), (mul, hum), each differing in pretraining data alone.
    # mul and hum share T1, T2 (Promoters) and T4 (Enhancers) in domain: Promoters 0.5 vs 0.5
    # (a tie), Enhancers 0.9 vs 0.6 (mul), macro 0.7 - 0.55 = 0.15. The bootstrap draws the two
    # Promoters tasks (differences -0.2, +0.2) and keeps T4 (+0.3): delta 0.05, 0.15 or 0.25 with
    # probabilities 1/4, 1/2, 1/4, so the 95 % interval is [0.05, 0.25] and P(a > b) = 1.
    # pla and mul share T3 alone; pla and hum no task.
    doc = json_of("report", "--store", str(store.root), "--resamples", "2000")
    pairs = {(r["model_a"], r["model_b"]): r for r in doc["controlled_pairs_in_domain"]}
    assert set(pairs) == {("pla", "mul"), ("pla", "hum"), ("mul", "hum")}
    both = pairs[("mul", "hum")]
    assert (both["attribute"], both["n_tasks"], both["n_categories"]) == (
        "pretraining_data", 3, 2)
    assert both["macro"] == pytest.approx(0.15)
    assert (both["wins_a"], both["wins_b"], both["ties"]) == (1, 0, 1)
    assert (both["low"], both["high"]) == (pytest.approx(0.05), pytest.approx(0.25))
    assert both["p_a_beats_b"] == 1.0
    assert [(pairs[p]["n_tasks"], pairs[p]["macro"]) for p in (("pla", "mul"), ("pla", "hum"))
            ] == [(1, None), (0, None)]
    assert main(["report", "--store", str(store.root), "--resamples", "0"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Controlled pairs on in-domain tasks (full, mcc)" in out
    assert "fewer than 2 tasks in both domains" in out
