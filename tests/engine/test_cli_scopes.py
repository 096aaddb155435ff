"""Scopes on `report`, `status` and `export` (`--category`, `--tasks`, `--organism`, `--kingdom`,
`--source-benchmark`): the task set `store.scopes.scope_tasks` makes of them, its one-line
refusals, and the scope's leader, runner-up and margin in `report`."""

from __future__ import annotations

import csv
import io
import json
import re
from contextlib import redirect_stdout

import pytest

from engine.cli import main
from store.catalog import TaskMeta, geneb_v1_tasks
from store.paths import resolve_store
from store.scopes import scope_tasks
from store.tables.catalogs import register_tasks, tasks_frame
from store.tables.results import append_rows
from store.vocab.errors import GenebError
from store.vocab.scopes import SCOPE_FIELDS, Scope
from tests.engine.test_cli_names import state
from tests.store.local_rows import full_mcc_rows

T1, T2, T3, T4 = "prom_a", "prom_b", "prom_c", "enh_a"
# The suite `mine` as a `fill` of its folder registers it (the task catalog's rows), and the
# (organism, kingdom) its catalog records; yeast_task is of another suite.
META = {T1: ("human", "animals"), T2: ("human", "animals"),
        T3: ("Arabidopsis thaliana", "plants"), T4: ("human", "animals"),
        "yeast_task": ("Saccharomyces cerevisiae", "fungi")}
MINE = tuple(TaskMeta(t, t.upper(), c, "mine", "other", *META[t])
             for t, c in ((T1, "Promoters"), (T2, "Promoters"), (T3, "Promoters"),
                          (T4, "Enhancers")))
# Full-regime MCC per model and task (T1-T3 Promoters, T4 Enhancers).
MCC = {"kmer-3": {T1: 0.8, T2: 0.2, T3: 0.5, T4: 0.6},
       "kmer-4": {T1: 0.3, T2: 0.5, T3: 0.9, T4: 0.5},
       "kmer-5": {T1: 0.1, T2: 0.1, T3: 0.1, T4: 0.1}}


@pytest.fixture(scope="module")
def scoped(tmp_path_factory):
    """A store of local full-regime results of three models on the four tasks of suite `mine`,
    whose task catalog has organism and kingdom columns (and a task of another suite)."""
    paths = resolve_store(tmp_path_factory.mktemp("scopes") / "store")
    register_tasks(paths, [*MINE, TaskMeta("yeast_task", "Yeast", "Promoters", "other",
                                           "other", *META["yeast_task"])])
    append_rows(paths, full_mcc_rows(MCC))
    return paths


def json_of(*argv: str) -> dict:
    """`main`'s --json document of a command that succeeds."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main([*argv, "--json"]) == 0
    return json.loads(out.getvalue())


def test_a_scope_is_the_tasks_of_every_option_given(scoped):
    def ids(of=MINE, name="mine", **given):
        return [t.task_id for t in scope_tasks(scoped, of, Scope(**given), suite=name)]

    assert ids(organisms=("human",)) == [T1, T2, T4]
    assert ids(organisms=("human",), categories=("Promoters",)) == [T1, T2]
    assert ids(kingdoms=("plants", "animals"), tasks=(T3, T4)) == [T3, T4]
    assert ids() == [T1, T2, T3, T4]
    v1 = geneb_v1_tasks()           # a built-in suite, with the source benchmark of each task
    assert len(ids(v1, "geneb-v1", source_benchmarks=("NT",))) == len(
        [t for t in v1 if t.source_benchmark == "NT"]) > 4
    assert [f.name for f in SCOPE_FIELDS] == list(Scope.__dataclass_fields__)


@pytest.mark.parametrize("argv, message", [
    (("--organism", "hmuan"), "--organism: unknown organism 'hmuan' (did you mean human?)"),
    (("--kingdom", "plantz"), "--kingdom: unknown kingdom 'plantz' (did you mean plants?)"),
    (("--category", "Enhancer"), "--category: unknown category 'Enhancer' (did you mean "
                                 "Enhancers?)"),
    (("--organism", "Saccharomyces cerevisiae"),
     "--organism: no task of suite mine has organism Saccharomyces cerevisiae; its "
     "organism values: human, Arabidopsis thaliana"),
    (("--tasks", "yeast_task"), "--tasks: yeast_task is a task of other, not mine: add "
                                "--suite other"),
    (("--suite", "mine", "--tasks", "yeast_task"), "--tasks: yeast_task is a task of other, "
                                                   "not mine: give --suite other"),
    (("--organism", "Arabidopsis thaliana", "--category", "Enhancers"),
     "no task of suite mine is in the scope category Enhancers; organism Arabidopsis "
     "thaliana (each option matches tasks, but not together)"),
])
@pytest.mark.parametrize("command", ["report", "status", "export"])
def test_a_scope_that_names_nothing_is_one_line(scoped, capsys, tmp_path, command, argv,
                                                message):
    before = state(scoped.root)
    out = tmp_path / "x.csv"
    extra = ("--csv", str(out)) if command == "export" else ()
    assert main([command, "--store", str(scoped.root), *extra, *argv]) == 2
    printed, err = capsys.readouterr()
    assert err.splitlines() == [err.strip()] and printed == ""
    assert err.startswith(f"geneb-engine {command}: {message}"), err
    assert state(scoped.root) == before and not out.exists()


def test_a_suite_without_the_metadata_says_so(scoped):
    bare = tuple(TaskMeta(t.task_id, t.label, t.category, "bare", "other") for t in MINE)
    with pytest.raises(GenebError) as caught:     # organism and kingdom "unknown": none
        scope_tasks(scoped, bare, Scope(kingdoms=("plants",)), suite="bare",
                    known=tasks_frame(bare))
    assert str(caught.value) == (
        "--kingdom: no task of suite bare has kingdom metadata (task catalog column kingdom); "
        "`geneb-engine tasks --suite bare` shows what its tasks have")


def test_the_official_store_scopes_by_the_shipped_task_domains(official_store):
    doc = json_of("status", "--store", str(official_store.root), "--kingdom", "plants")
    assert len(doc["tasks"]) == 10          # store/catalogs/task_domains.csv: 10 plant tasks


def test_report_ranks_the_scope_with_its_leader_margin(scoped, capsys):
    # organism human: Promoters T1, T2 and Enhancers T4. macro = (Promoters + Enhancers) / 2:
    # kmer-3 (0.5 + 0.6) / 2 = 0.55, kmer-4 (0.4 + 0.5) / 2 = 0.45, kmer-5 0.1. The margin
    # kmer-3 - kmer-4 over a resample of Promoters' two tasks: T1 twice (0.5 + 0.1) / 2 = 0.3,
    # T2 twice (-0.3 + 0.1) / 2 = -0.1, one of each 0.1; so P = P(not T2 twice) = 3/4 and the
    # 95 % interval is [-0.1, 0.3] (each extreme holds a quarter of the resamples).
    doc = json_of("report", "--store", str(scoped.root), "--organism", "human",
                "--resamples", "4000")
    assert doc["scope"] == "scope: 3 of the 4 tasks of suite mine (organism human)"
    assert doc["tasks"] == [T1, T2, T4]
    assert [(r["model"], round(r["macro"], 12)) for r in doc["aggregates"]] == [
        ("kmer-3", 0.55), ("kmer-4", 0.45), ("kmer-5", 0.1)]
    [margin] = doc["leader_margin"]
    assert (margin["model"], margin["runner_up"]) == ("kmer-3", "kmer-4")
    assert margin["margin"] == pytest.approx(0.1)
    assert (margin["low"], margin["high"]) == (pytest.approx(-0.1), pytest.approx(0.3))
    assert margin["p_leader_beats"] == pytest.approx(0.75, abs=0.03)
    wins = next(r for r in doc["win_probabilities"]            # the same resamples
                if (r["model_a"], r["model_b"]) == ("kmer-3", "kmer-4"))
    assert margin["p_leader_beats"] == wins["p_a_beats_b"]
    # the one rule: macro weighs T1, T2 1/4 and T4 1/2, so the per-task contributions are
    # +0.125, -0.075, +0.05; of the 8 sign patterns 6 reach |0.1| (all but the two that
    # flip only one of -0.075 and +0.05 against the others): p = 0.75, not separable
    assert (margin["p_value"], margin["wins"], margin["losses"], margin["n_tasks"]) == (
        0.75, 2, 1, 3)
    assert not margin["differs"] and margin["threshold"] == pytest.approx(0.05 / 2)
    assert doc["leaderboard_differences"] == []            # a narrowed scope: not compared

    assert main(["report", "--store", str(scoped.root), "--organism", "human",
                 "--resamples", "4000"]) == 0
    out = capsys.readouterr().out
    assert "scope: 3 of the 4 tasks of suite mine (organism human)" in out
    line = " ".join(out[out.index("Leader of the scope"):].split("\n\n")[0].split())
    assert line.startswith("Leader of the scope (macro, full, mcc): 3-mer spectrum 0.550 "
                           "[0.40, 0.70], rank [1-2]; runner-up: 4-mer spectrum 0.450 "
                           "[0.40, 0.50], rank [1-2]")
    assert line.endswith("; margin 0.100 [-0.10, 0.30]; not separable at 95 %: sign-flip "
                         "p = 0.75 > 0.05/2 (3 tasks, exact), the leader wins 2, loses 1")
    assert "P(leader" not in out                  # a bootstrap share is never a claim's basis


def test_a_one_task_scope_has_a_margin_and_no_interval(scoped, capsys):
    assert main(["report", "--store", str(scoped.root), "--kingdom", "plants",
                 "--resamples", "500"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "scope: 1 of the 4 tasks of suite mine (kingdom plants)" in out
    assert ("Leader of the scope (macro, full, mcc): 4-mer spectrum 0.900 —, rank —; "
            "runner-up: 3-mer spectrum 0.500 —, rank —; margin 0.400; not separable at 95 %: "
            "sign-flip p = 1 > 0.05/2 (1 task, exact), the leader wins 1, loses 0") in out
    assert "a scope of one task has no interval" in out
    assert ("1 task: too few to separate any model from the leader at 95 % when it is "
            "compared with 2 others: the smallest possible p is 1, above 0.05/2") in out


def test_status_and_export_count_the_scope(scoped, capsys, tmp_path):
    assert main(["status", "--store", str(scoped.root), "--regimes", "full",
                 "--organism", "human", "--category", "Promoters"]) == 0
    out = capsys.readouterr().out
    assert "scope: 2 of the 4 tasks of suite mine (category Promoters; organism " \
           "human)" in out
    assert all(re.search(rf"kmer-{k} │ +2/2 │ none", out) for k in (3, 4, 5)), out
    doc = json_of("status", "--store", str(scoped.root), "--kingdom", "animals")
    assert doc["tasks"] == [T1, T2, T4]
    assert {(r["model"], r["category"], r["done"]) for r in doc["rows"]} == {
        (m, c, n) for m in MCC for c, n in (("Promoters", 2), ("Enhancers", 1))}

    out_csv = tmp_path / "human.csv"
    assert main(["export", "--store", str(scoped.root), "--csv", str(out_csv),
                 "--categories", "Promoters", "--organism", "human"]) == 0   # the old spelling
    assert "scope: 2 of the 4 tasks" in capsys.readouterr().out
    rows = list(csv.DictReader(out_csv.open()))
    assert sorted((r["model"], r["task"], float(r["mcc"])) for r in rows) == sorted(
        (m, t, MCC[m][t]) for m in MCC for t in (T1, T2))
    assert {r["filters"] for r in rows} == {"category=Promoters; organism=human"}


def test_a_category_scope_ranks_the_official_models_by_that_category(official_store):
    root = str(official_store.root)
    whole = json_of("report", "--store", root, "--source", "official", "--resamples", "0")
    doc = json_of("report", "--store", root, "--source", "official", "--category", "Promoters",
                "--resamples", "300")
    promoters = {t.task_id for t in geneb_v1_tasks() if t.category == "Promoters"}
    assert set(doc["tasks"]) == promoters and len(promoters) == 22
    # the scope's macro is the category's score of the whole report, to the last bit
    assert {r["model"]: r["macro"] for r in doc["aggregates"]} == {
        r["model"]: r["Promoters"] for r in whole["aggregates"]}
    ranked = sorted(whole["aggregates"], key=lambda r: -r["Promoters"])
    [margin] = doc["leader_margin"]
    assert (margin["model"], margin["runner_up"]) == (ranked[0]["model"], ranked[1]["model"])
    assert margin["margin"] == pytest.approx(ranked[0]["Promoters"] - ranked[1]["Promoters"])
    assert margin["low"] <= margin["margin"] <= margin["high"]


def test_report_models_keeps_those_models_and_checks_each_name(scoped, capsys):
    """`report --models`: the aggregates and ranks of those models only (their scores as in
    the whole report), a typo and a model without results each one line, exit 2."""
    store = str(scoped.root)
    every = json_of("report", "--store", store, "--resamples", "0")
    two = json_of("report", "--store", store, "--models", "kmer-5", "kmer-4", "--resamples",
                  "0")
    # macro: kmer-4 (0.5667 + 0.5) / 2, kmer-5 0.1; kmer-3 (0.55) left out
    assert [(r["model"], round(r["macro"], 12)) for r in two["aggregates"]] == [
        ("kmer-4", round((0.3 + 0.5 + 0.9) / 6 + 0.25, 12)), ("kmer-5", 0.1)]
    whole = {r["model"]: (r["macro"], r["micro"]) for r in every["aggregates"]}
    assert {r["model"]: (r["macro"], r["micro"]) for r in two["aggregates"]} == {
        m: whole[m] for m in ("kmer-4", "kmer-5")}
    assert two["models"] == ["kmer-5", "kmer-4"]
    assert main(["report", "--store", store, "--models", "kmer-4", "--resamples", "0"]) == 0
    assert "models: only kmer-4 (--models)" in capsys.readouterr().out
    before = state(scoped.root)
    for argv, message in (
            (("kmer4",), "--models: unknown model 'kmer4' (did you mean kmer-4?)"),
            (("kmer-4", "kmer-6"), "--models: kmer-6 has no results on the 4 tasks of suite "
                                   "mine; `geneb-engine status --models kmer-6` shows what is "
                                   "there")):
        assert main(["report", "--store", store, "--models", *argv]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"geneb-engine report: {message}"), err
    assert state(scoped.root) == before


def test_a_borda_count_of_0_is_shown_as_0_not_as_missing(scoped, capsys):
    """kmer-5 is last in both categories: n - rank = 0 points in each, a Borda count of 0
    (a number; "—" stands for a missing value)."""
    doc = json_of("report", "--store", str(scoped.root), "--resamples", "0")
    assert {r["model"]: r["borda"] for r in doc["borda"]} == {"kmer-3": 3, "kmer-4": 3,
                                                              "kmer-5": 0}
    assert main(["report", "--store", str(scoped.root), "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    borda = out[out.index("Borda count"):].split("\n\n")[0]
    row = next(line for line in borda.splitlines() if "│kmer-5" in line)
    assert [c.strip() for c in row.split("│")[1:-1]] == ["3", "kmer-5", "0", "3.0", "3", "3"]
