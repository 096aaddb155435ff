"""`geneb-engine recommend`: a directory suite with hand-set scores (the tie group, P and the
exclusions computed by hand), constraints that exclude every model, a one-task scope, the label
budget's warning, the official store's three documented questions against `report` and the
Significance view, and every bad input one line, exit 2, the store unchanged."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest

from engine.cli import main
from store.tables.results import append_rows
from store.vocab.bootstrap import ONE_TASK_NOTE
from store.vocab.protocol import GENEB_V1, SEEDS
from tests.engine.conftest import write_task
from tests.engine.test_cli_names import run, state

# Full-regime MCC per task t1..t4 (one category). Hand-computed, over the resamples of the four
# tasks: METAGENE-1 - GROVER per task is -0.05, +0.3, -0.05, +0.3, so the difference is > 0 in
# every resample but the 1/16 drawing only t1 and t3 (P = 15/16) and its 95% interval is
# [-0.05, 0.3]: tied. METAGENE-1 - MutBERT is 0.1 on every task: [0.1, 0.1], P = 1, worse; so
# is DNABERT-S (0.2). Without METAGENE-1 (over 1B parameters), MutBERT leads and MutBERT -
# GROVER is -0.15, +0.2, -0.15, +0.2: > 0 when two or more of the four drawn tasks are t2 or
# t4, P = 11/16, interval [-0.15, 0.2]: tied.
MCC = {"METAGENE-1": (0.9, 0.9, 0.9, 0.9), "GROVER": (0.95, 0.6, 0.95, 0.6),
       "MutBERT": (0.8, 0.8, 0.8, 0.8), "DNABERT-S": (0.7, 0.7, 0.7, 0.7)}
TASKS = ("t1", "t2", "t3", "t4")


@pytest.fixture(scope="module")
def mine(tmp_path_factory):
    """A directory suite of four Promoters tasks (t1, t2 plants, t3, t4 human: its manifest's
    organism and kingdom columns), kmer-3 filled on t1 alone, and the hand-set rows of MCC."""
    root = tmp_path_factory.mktemp("recommend")
    suite = root / "mine"
    suite.mkdir()
    for i, t in enumerate(TASKS):
        write_task(suite / f"{t}.csv", 40, 20, 2, i, length=60)
    (suite / "manifest.csv").write_text(
        "task_id,category,label,organism,kingdom\n"
        "t1,Promoters,T1,Arabidopsis thaliana,plants\nt2,Promoters,T2,Arabidopsis thaliana,plants\n"
        "t3,Promoters,T3,Homo sapiens,animals\nt4,Promoters,T4,Homo sapiens,animals\n")
    store = root / "store"
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
                 "--tasks", "t1", "--regimes", "full"]) == 0
    from store.paths import resolve_store

    append_rows(resolve_store(store), [
        {"model": model, "task": task, "regime": "full", "seed": seed, "probe": "logreg",
         "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash, "mcc": mcc, "acc": 0.7,
         "f1_macro": 0.6, "source": "local", "shared_fit": True}
        for model, scores in MCC.items() for task, mcc in zip(TASKS, scores, strict=True)
        for seed in SEEDS])
    return store, suite


def answer(*argv: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["recommend", *argv, "--json"]) == 0
    return json.loads(out.getvalue())


def picks(a: dict) -> list[str]:
    return [p["model"] for p in a["picks"]]


def excluded(a: dict, kind: str) -> dict[str, dict]:
    return {x["model"]: x for x in a["excluded"] if x["kind"] == kind}


def test_the_tie_group_and_the_exclusions_are_the_hand_computed_ones(mine):
    store, suite = mine
    a = answer("--store", str(store), "--suite", str(suite))
    assert picks(a) == ["METAGENE-1", "GROVER"]
    lead, grover = a["picks"]
    assert lead["score"] == pytest.approx(0.9) and lead["p_leader_beats"] is None
    assert grover["score"] == pytest.approx(0.775) and grover["diff"] == pytest.approx(0.125)
    assert (grover["diff_low"], grover["diff_high"]) == pytest.approx((-0.05, 0.3))
    assert grover["p_leader_beats"] == pytest.approx(15 / 16, abs=0.01)
    worse = excluded(a, "worse")
    assert set(worse) == {"MutBERT", "DNABERT-S"}
    assert worse["MutBERT"]["p_leader_beats"] == 1.0
    assert (worse["DNABERT-S"]["diff_low"], worse["DNABERT-S"]["diff_high"]) == pytest.approx(
        (0.2, 0.2))
    assert excluded(a, "partial")["kmer-3"]["reasons"] == ["results on 1 of the 4 tasks at full"]
    # the manifest's domains: MutBERT's human pretraining holds t3, t4; DNABERT-S's is unknown
    assert lead["domain"] == {"inside": 0, "outside": 0, "unknown": 4}
    mutbert = answer("--store", str(store), "--suite", str(suite), "--max-params", "1B")
    assert picks(mutbert) == ["MutBERT", "GROVER"]
    assert mutbert["picks"][0]["domain"] == {"inside": 2, "outside": 2, "unknown": 0}
    assert mutbert["picks"][1]["p_leader_beats"] == pytest.approx(11 / 16, abs=0.015)
    assert (mutbert["picks"][1]["diff_low"], mutbert["picks"][1]["diff_high"]) == \
        pytest.approx((-0.15, 0.2))
    assert excluded(mutbert, "constraint")["METAGENE-1"]["reasons"] == ["7B parameters > 1B"]
    assert mutbert["question"]["suite"] == "mine" and mutbert["question"]["tasks"] == list(TASKS)


def test_a_constraint_that_excludes_every_model_is_an_answer(mine, capsys):
    store, suite = mine
    a = answer("--store", str(store), "--suite", str(suite), "--max-params", "1000")
    assert a["picks"] == [] and a["message"].startswith(
        "no model satisfies at most 1K parameters with results on every task")
    constraint = excluded(a, "constraint")
    assert constraint["GROVER"]["reasons"] == ["87.1M parameters > 1K"]
    # the weight-free k-mer baseline has no parameters: it satisfies the constraint, and lacks
    # three of the four tasks
    assert excluded(a, "partial")["kmer-3"]["reasons"] == ["results on 1 of the 4 tasks at full"]
    assert run("recommend", "--store", str(store), "--suite", str(suite),
               "--max-params", "1000") == 0
    out = capsys.readouterr().out
    assert "no model satisfies at most 1K parameters" in out and "87.1M parameters > 1K" in out


def test_a_one_task_scope_separates_nothing(mine):
    store, suite = mine
    a = answer("--store", str(store), "--suite", str(suite), "--tasks", "t1")
    assert ONE_TASK_NOTE in a["small"] and a["resampled"] is False
    # every model with the task is in the answer, best first, no P nor interval
    assert set(picks(a)) == {"METAGENE-1", "GROVER", "MutBERT", "DNABERT-S", "kmer-3"}
    scores = [p["score"] for p in a["picks"]]
    assert scores == sorted(scores, reverse=True)
    assert all(p["p_leader_beats"] is None and p["low"] is None for p in a["picks"])


def test_a_two_task_scope_separates_only_a_model_behind_on_both(mine):
    store, suite = mine
    a = answer("--store", str(store), "--suite", str(suite), "--tasks", "t1", "t2")
    assert a["small"] == ("a scope of two tasks: a model is separably worse only when it is "
                          "behind the leader on both")
    # METAGENE-1 - GROVER: -0.05 on t1, +0.3 on t2 (tied); MutBERT and DNABERT-S behind on both
    assert picks(a) == ["METAGENE-1", "GROVER"]
    assert set(excluded(a, "worse")) == {"MutBERT", "DNABERT-S"}


def test_tasks_like_a_task_and_the_scope_of_a_directory_suite(mine):
    store, suite = mine
    a = answer("--store", str(store), "--suite", str(suite), "--like", "t1")
    assert a["question"]["tasks"] == ["t1", "t2"]
    assert "tasks like t1: kingdom plants and median length within a factor 2 of its 60 " \
           "(1 tasks), and 1 of kingdom plants whose lengths are not recorded" in \
           a["question"]["notes"]
    b = answer("--store", str(store), "--suite", str(suite), "--kingdom", "animals",
               "--in-domain")
    assert b["question"]["tasks"] == ["t3", "t4"]
    assert picks(b) == ["MutBERT"] or picks(b)[0] == "MutBERT"
    assert "in domain on none of the scope's tasks (0 in, 0 out, 2 unknown)" in \
        excluded(b, "constraint")["METAGENE-1"]["reasons"]


def test_a_label_budget_between_regimes_warns_once(mine, capsys):
    store, suite = mine
    capsys.readouterr()
    assert run("recommend", "--store", str(store), "--suite", str(suite),
               "--labels-per-class", "5", "--json") == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == ["geneb-engine recommend: warning: 5 labels per class lie "
                                "between 1shot (1 per class) and 10shot (10 per class): "
                                "answering for the nearest, 10shot"]
    a = json.loads(out)
    assert a["question"]["regime"] == "10shot" and a["picks"] == []
    assert a["message"] == "no model has results on every task of the scope at 10shot"
    assert [n["regime"] for n in a["neighbours"]] == ["full", "1shot"]
    assert a["neighbours"][0]["leader"] == "METAGENE-1"


@pytest.mark.parametrize("argv, says", [
    (("--regime", "full", "--labels-per-class", "10"), "--regime and --labels-per-class both"),
    (("--labels-per-class", "-1"), "--labels-per-class: -1 is below 1"),
    (("--labels-per-class", "0"), "--labels-per-class: 0 is below 1"),
    (("--pretraining", "humna"), "did you mean human"),
    (("--architecture", "Transformer"), "--architecture: unknown architecture family"),
    (("--max-params", "lots"), "'lots' is not a parameter count"),
    (("--memory-gb", "-3"), "-3 is not a positive size"),
    (("--dtype", "bf16"), "unknown dtype 'bf16'"),
    (("--like", "t9"), "--like t9: not a task of the suite"),
    (("--resamples", "0"), "--resamples 0: recommend separates models"),
    (("--tasks", "t9"), "--tasks"),
])
def test_each_bad_input_is_one_line_and_leaves_the_store_as_it_was(mine, capsys, argv, says):
    store, suite = mine
    before = state(store)
    capsys.readouterr()
    assert run("recommend", "--store", str(store), "--suite", str(suite), *argv) == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("geneb-engine recommend: ") and says in err, err
    assert state(store) == before


# -- the official results: the three questions of the guide ------------------------------------
QUESTIONS = {
    "plant promoters, 10 labels, 24 GB": (("--kingdom", "plants", "--labels-per-class", "10",
                                           "--memory-gb", "24", "--dtype", "bfloat16"),
                                          ("--kingdom", "plants", "--regime", "10shot")),
    "human enhancers, full, under 100M": (("--category", "Enhancers", "--organism",
                                           "Homo sapiens", "--max-params", "100M"),
                                          ("--category", "Enhancers", "--organism",
                                           "Homo sapiens", "--regime", "full")),
    "splice sites, 1 label, runs here": (("--category", "Splice Sites", "--labels-per-class",
                                          "1", "--runnable-here"),
                                         ("--category", "Splice Sites", "--regime", "1shot")),
}


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_the_leader_is_reports_best_model_that_satisfies_the_constraints(official_store,
                                                                          question):
    from store.runnable import assess
    from store.tables.catalogs import store_models

    ask, same_scope = QUESTIONS[question]
    a = answer("--store", str(official_store.root), *ask)
    report = answer_of("report", "--store", str(official_store.root), *same_scope,
                       "--resamples", "0")
    assert a["question"]["tasks"] == report["tasks"]
    catalog = store_models(official_store)
    excluded_ = {x["model"] for x in a["excluded"] if x["kind"] == "constraint"}
    ranked = sorted(report["aggregates"], key=lambda r: -r["macro"])
    best = next(r["model"] for r in ranked if r["model"] not in excluded_)
    assert a["picks"][0]["model"] == best
    assert a["picks"][0]["score"] == pytest.approx(ranked[[r["model"] for r in ranked]
                                                          .index(best)]["macro"], abs=1e-12)
    for x in a["excluded"]:         # each constraint exclusion is the catalog's fact
        if x["kind"] == "constraint" and "--max-params" in ask:
            assert (catalog[x["model"]].params or 0) > 100_000_000 or \
                x["reasons"] == ["parameter count unknown"]
        if x["kind"] == "constraint" and "--runnable-here" in ask:
            assert not assess(vars_of(catalog[x["model"]]), x["model"]).runnable


def answer_of(*argv: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main([*argv, "--json"]) == 0
    return json.loads(out.getvalue())


def vars_of(meta) -> dict:
    from dataclasses import asdict

    return asdict(meta)


def test_the_tie_group_is_the_significance_views_paired_interval(official_store):
    """On one category at 10shot, the entries whose paired interval with the leader (the
    Significance view's `two_models`, same resamples) contains 0 are the answer's picks."""
    from geneb_tui.core.filters import Filters
    from geneb_tui.core.query import StoreSnapshot
    from geneb_tui.core.significance import significance, two_models

    a = answer("--store", str(official_store.root), "--category", "Splice Sites",
               "--regime", "10shot", "--suite", "geneb-v1")
    sig = significance(StoreSnapshot.load(official_store),
                       Filters(regime="10shot", category="Splice Sites"))
    leader = a["picks"][0]["model"]
    assert leader == max(sig.entries, key=lambda e: sig.point[sig.entries.index(e)])
    tied = {leader}
    for other in sig.entries:
        if other != leader:
            pair = two_models(sig, leader, other)
            if pair.low <= 0 <= pair.high:
                tied.add(other)
            worse = excluded(a, "worse").get(other)
            p = pair.p_a_beats_b
            assert (worse or next(x for x in a["picks"] if x["model"] == other))[
                "p_leader_beats"] == p
    assert set(picks(a)) == tied and 1 < len(tied) < len(sig.entries)


def test_why_a_pick_does_not_run_here_is_in_the_text_too(official_store, capsys):
    """Chromatin accessibility at 1shot: JanusDNA_72_w leads the official models, and its
    weights are not on the hub. The text says why beside "here: no" (before: only --json)."""
    argv = ("--store", str(official_store.root), "--category", "Chromatin Acc.", "--regime",
            "1shot", "--resamples", "200")
    a = answer(*argv)
    lead = a["picks"][0]
    assert (lead["model"], lead["runs_here"]) == ("JanusDNA_72_w", False)
    assert run("recommend", *argv) == 0
    out = " ".join(capsys.readouterr().out.split())     # the lines as printed, unwrapped
    for p in a["picks"]:
        line = f"{p['model']} does not run here: {p['runs_why']}"
        assert (line in out) == (not p["runs_here"]), line
    assert ("JanusDNA_72_w does not run here: weights not published on the Hugging Face hub "
            "(weights in the JanusDNA repository; padded to 1,024); add a registry entry") in out


def test_every_reason_a_model_cannot_run_keeps_its_parentheses_whole(official_store):
    """The reason shown without its fix (the models list, `recommend --runnable-here`) was
    cut at the first ";", inside a catalog note in parentheses: "(weights outside the hub
    (JanusDNA repository)"."""
    from store.runnable import assess
    from store.tables.catalogs import store_models

    reasons = {m: assess(vars_of(meta), m) for m, meta in store_models(official_store).items()}
    cannot = {m: r for m, r in reasons.items() if not r.runnable}
    assert {"JanusDNA_72_w", "dna_gpt3b_m", "deepgene"} <= set(cannot)
    for m, r in cannot.items():
        for text in (r.reason, r.short, r.why):
            assert text.count("(") == text.count(")"), (m, text)
        assert r.why.startswith(r.reason) and "; add a registry entry" not in r.reason, m
    assert cannot["JanusDNA_72_w"].reason == (
        "weights not published on the Hugging Face hub (weights in the JanusDNA repository; "
        "padded to 1,024)")
    a = answer("--store", str(official_store.root), "--category", "Chromatin Acc.",
               "--regime", "1shot", "--runnable-here", "--resamples", "200")
    [janus] = [x for x in a["excluded"] if x["model"] == "JanusDNA_72_w"]
    assert janus["reasons"] == ["does not run here: " + cannot["JanusDNA_72_w"].reason]
