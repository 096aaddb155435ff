"""`geneb-engine recommend`: a directory suite with hand-set scores (the tie group, P and the
exclusions computed by hand), constraints that exclude every model, a one-task scope, the label
budget's warning, the official store's three documented questions against `report` and the
Significance view, and every bad input one line, exit 2, the store unchanged."""

from __future__ import annotations

import io
import json
import shlex
import shutil
from contextlib import redirect_stdout

import pytest

from engine.cli import main
from store.paths import resolve_store
from store.tables.results import append_rows
from store.vocab.protocol import GENEB_V1, SEEDS
from tests.engine.conftest import write_task
from tests.engine.test_cli_names import run, state

# Full-regime MCC per task t1..t4 (one category). Hand-computed: four tasks cannot separate two
# models at 95 % (the smallest sign-flip p is 2/2^4 = 0.125, above 0.05/3 for the leader's three
# comparisons), so every model is in the answer. METAGENE-1 - GROVER per task is -0.05, +0.3,
# -0.05, +0.3: of the 16 sign patterns the 8 that give both 0.3s one sign reach |0.5|, p = 0.5;
# over the resamples of the four tasks the difference is > 0 in all but the 1/16 drawing only
# t1 and t3 (P = 15/16) and its 95% interval is [-0.05, 0.3]. METAGENE-1 - MutBERT is 0.1 on
# every task: p = 0.125, [0.1, 0.1], P = 1; DNABERT-S (0.2) alike. Without METAGENE-1 (over 1B
# parameters), MutBERT leads and MutBERT - GROVER is -0.15, +0.2, -0.15, +0.2: > 0 when two or
# more of the four drawn tasks are t2 or t4, P = 11/16, interval [-0.15, 0.2].
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
    assert picks(a) == ["METAGENE-1", "MutBERT", "GROVER", "DNABERT-S"]
    assert a["small"] == ("4 tasks: too few to separate any model from the leader at 95 % when "
                          "it is compared with 3 others: the smallest possible p is 0.12, above "
                          "0.05/3")
    assert (a["compared"], a["threshold"]) == (3, pytest.approx(0.05 / 3))
    lead, mutbert, grover, dnabert = a["picks"]
    assert lead["score"] == pytest.approx(0.9) and lead["p_leader_beats"] is None
    assert lead["p_value"] is None
    assert grover["score"] == pytest.approx(0.775) and grover["diff"] == pytest.approx(0.125)
    assert (grover["p_value"], grover["wins"], grover["losses"]) == (0.5, 2, 2)
    assert (grover["diff_low"], grover["diff_high"]) == pytest.approx((-0.05, 0.3))
    assert grover["p_leader_beats"] == pytest.approx(15 / 16, abs=0.01)   # descriptive
    # behind on every task, P(leader > it) = 1 and the interval [0.1, 0.1]: still not worse
    assert (mutbert["p_value"], mutbert["wins"], mutbert["losses"]) == (0.125, 4, 0)
    assert mutbert["p_leader_beats"] == 1.0 and dnabert["p_value"] == 0.125
    assert (dnabert["diff_low"], dnabert["diff_high"]) == pytest.approx((0.2, 0.2))
    assert excluded(a, "worse") == {}
    assert excluded(a, "partial")["kmer-3"]["reasons"] == ["results on 1 of the 4 tasks at full"]
    # the manifest's domains: MutBERT's human pretraining holds t3, t4; DNABERT-S's is unknown
    assert lead["domain"] == {"inside": 0, "outside": 0, "unknown": 4}
    mutbert = answer("--store", str(store), "--suite", str(suite), "--max-params", "1B")
    assert picks(mutbert) == ["MutBERT", "GROVER", "DNABERT-S"]
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


def test_runs_here_is_no_offline_without_a_cached_snapshot_and_unknown_where_untold(
        mine, capsys, monkeypatch, tmp_path):
    """An empty Hugging Face cache: offline, each hub model's here is no with the reason and
    `--runnable-here` leaves them out; with the hub's reachability untold, ? (null), never yes;
    the fill line keeps them (a run is how it is found out)."""
    store, suite = mine
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-recorded-answer"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    a = answer("--store", str(store), "--suite", str(suite))
    hub = {p["model"]: p for p in a["picks"] if p["model"] in ("METAGENE-1", "GROVER")}
    assert [(m, p["runs_here"]) for m, p in hub.items()] == [("METAGENE-1", False),
                                                             ("GROVER", False)]
    assert hub["GROVER"]["runs_why"].startswith(
        "no cached snapshot of PoetschLab/GROVER and the hub is offline (HF_HUB_OFFLINE is "
        "set);")
    assert a["fill"] is None and hub["GROVER"]["fill"] is None
    here = answer("--store", str(store), "--suite", str(suite), "--runnable-here")
    assert here["picks"] == []
    assert excluded(here, "constraint")["GROVER"]["reasons"] == [
        "does not run here: no cached snapshot of PoetschLab/GROVER and the hub is offline "
        "(HF_HUB_OFFLINE is set)"]
    assert run("recommend", "--store", str(store), "--suite", str(suite)) == 0
    assert here_column(capsys.readouterr().out) == ["no", "no"]

    monkeypatch.delenv("HF_HUB_OFFLINE")
    a = answer("--store", str(store), "--suite", str(suite))
    hub = {p["model"]: p for p in a["picks"] if p["model"] in ("METAGENE-1", "GROVER")}
    assert [p["runs_here"] for p in hub.values()] == [None, None]
    assert "whether the hub can be reached is not known" in hub["GROVER"]["runs_why"]
    assert a["fill"].startswith(f"geneb-engine fill --store {store.resolve()} --models "
                                "METAGENE-1 ")
    assert " GROVER " in a["fill"]
    assert run("recommend", "--store", str(store), "--suite", str(suite)) == 0
    assert here_column(capsys.readouterr().out) == ["?", "?"]


def here_column(out: str) -> list[str]:
    """The here cells of the picks' table (its last column)."""
    rows = [[c.strip() for c in line.split("│")] for line in out.splitlines()]
    return [r[-2] for r in rows if len(r) > 2 and r[1] in ("METAGENE-1", "GROVER")]


def test_a_one_task_scope_separates_nothing(mine):
    store, suite = mine
    a = answer("--store", str(store), "--suite", str(suite), "--tasks", "t1")
    assert a["small"] == ("1 task: too few to separate any model from the leader at 95 % when "
                          "it is compared with 4 others: the smallest possible p is 1, above "
                          "0.05/4")
    assert a["resampled"] is False
    # every model with the task is in the answer, best first, no P nor interval
    assert set(picks(a)) == {"METAGENE-1", "GROVER", "MutBERT", "DNABERT-S", "kmer-3"}
    scores = [p["score"] for p in a["picks"]]
    assert scores == sorted(scores, reverse=True)
    assert all(p["p_leader_beats"] is None and p["low"] is None for p in a["picks"])
    assert [p["p_value"] for p in a["picks"][1:]] == [1.0] * 4


def test_a_two_task_scope_separates_nothing(mine):
    store, suite = mine
    a = answer("--store", str(store), "--suite", str(suite), "--tasks", "t1", "t2")
    assert a["small"] == ("2 tasks: too few to separate any model from the leader at 95 % when "
                          "it is compared with 3 others: the smallest possible p is 0.5, above "
                          "0.05/3")
    # MutBERT and DNABERT-S are behind on both tasks: p = 0.5, in the answer
    assert picks(a) == ["METAGENE-1", "MutBERT", "GROVER", "DNABERT-S"]
    assert excluded(a, "worse") == {}


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
                                                                          question,
                                                                          monkeypatch):
    from store import runnable
    from store.hf_cache import HubReach
    from store.runnable import assess
    from store.tables.catalogs import store_models

    # the hub answers (offline, no hub model runs here without a cached snapshot: the test of
    # runs here above)
    monkeypatch.setattr(runnable, "hub_reach", lambda: HubReach(True, "the hub answered"))

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


def test_the_tie_group_is_the_significance_views_rule(official_store):
    """On one category at 10shot, the entries the Significance view's two-model test (the one
    rule, as a comparison with the leader) does not separate from the leader are the answer's
    picks, with the same p-values."""
    from geneb_tui.core.filters import Filters
    from geneb_tui.core.query import StoreSnapshot
    from geneb_tui.core.significance import significance, two_models

    a = answer("--store", str(official_store.root), "--category", "Promoters",
               "--regime", "10shot", "--suite", "geneb-v1")
    sig = significance(StoreSnapshot.load(official_store),
                       Filters(regime="10shot", category="Promoters"))
    leader = a["picks"][0]["model"]
    assert leader == max(sig.entries, key=lambda e: sig.point[sig.entries.index(e)])
    tied = {leader}
    for other in sig.entries:
        if other != leader:
            pair = two_models(sig, leader, other)
            assert pair.compared == 39
            if not pair.differs:
                tied.add(other)
            found = excluded(a, "worse").get(other) or next(
                x for x in a["picks"] if x["model"] == other)
            assert (found["p_value"], found["p_leader_beats"]) == (pair.sign_flip_p,
                                                                   pair.p_a_beats_b)
    assert set(picks(a)) == tied and 1 < len(tied) < len(sig.entries)


# -- the findings on the official results --------------------------------------------

def test_three_plant_promoter_tasks_separate_no_model(official_store, capsys):
    """Issue 41: a 3-task scope called 20 models "separably worse, P = 1.000" because they
    trailed on all three tasks; a sign-flip test on three paired differences cannot go below
    p = 0.25. Now every eligible model is in the answer, and the answer says why."""
    ask = ("--store", str(official_store.root), "--suite", "geneb-v1", "--kingdom", "plants",
           "--category", "Promoters", "--labels-per-class", "10", "--memory-gb", "24",
           "--max-params", "500M")
    a = answer(*ask)
    assert len(a["question"]["tasks"]) == 3 and excluded(a, "worse") == {}
    assert a["small"].startswith("3 tasks: too few to separate any model from the leader at "
                                 "95 % when it is compared with ")
    assert a["small"].endswith("the smallest possible p is 0.25, above 0.05/"
                               f"{a['compared']}")
    assert min(p["p_value"] for p in a["picks"][1:]) == 0.25
    assert run("recommend", *ask) == 0
    out = capsys.readouterr().out
    assert "3 tasks: too few to separate" in out and "differs at" not in out
    assert "every other model is separably worse" not in out and "P(" not in out


@pytest.fixture(scope="module")
def with_splicebert(official_store, tmp_path_factory):
    """The official store with SpliceBERT 1024nt's self-reported submission (as `import
    --official` leaves a store), a copy: the session's store stays read-only."""
    import shutil

    from store.official.submission import import_files
    from store.paths import resolve_store
    from tests.conftest import SELF_REPORTED

    root = tmp_path_factory.mktemp("splicebert") / "store"
    shutil.copytree(official_store.root, root)
    paths = resolve_store(root)
    import_files(paths, [SELF_REPORTED / "splicebert-1024nt.json"])
    return paths


def test_splicebert_and_gena_lm_large_are_not_separable_on_promoters_at_10shot(with_splicebert):
    """Issue 41: on the 22 Promoters tasks at 10-shot the dashboard showed SpliceBERT 1024nt
    against gena-lm-bert-large-t2t with the bootstrap interval [0.006, 0.064] and P = 0.993
    beside 11 wins, 11 losses and Wilcoxon p = 0.085, and `recommend` listed gena-lm as
    separably worse. The rule: sign-flip p = 0.033 over the 22 tasks, against 0.05/40 for the
    leader's comparisons: not separable, in both."""
    from geneb_tui.core.filters import Filters
    from geneb_tui.core.query import StoreSnapshot
    from geneb_tui.core.significance import significance, two_models

    a = answer("--store", str(with_splicebert.root), "--category", "Promoters",
               "--regime", "10shot", "--suite", "geneb-v1")
    assert a["picks"][0]["model"] == "splicebert-1024nt"
    assert "gena-lm-bert-large-t2t" not in excluded(a, "worse")
    gena = next(p for p in a["picks"] if p["model"] == "gena-lm-bert-large-t2t")
    assert (gena["wins"], gena["losses"], a["compared"]) == (11, 11, 40)
    assert gena["p_value"] == pytest.approx(0.033, abs=0.004)
    assert gena["p_value"] > 0.05 / 40
    sig = significance(StoreSnapshot.load(with_splicebert),
                       Filters(regime="10shot", category="Promoters"))
    pair = two_models(sig, "splicebert-1024nt", "gena-lm-bert-large-t2t")
    assert not pair.differs and pair.sign_flip_p == gena["p_value"]
    assert (pair.low, pair.high) == pytest.approx((0.006, 0.064), abs=0.001)  # excludes 0
    assert "Not separable at 95 %: sign-flip p = 0.033 > 0.05/40 (22 tasks, sampled)" in \
        pair.note and "P(A > B)" not in pair.note


def test_why_a_pick_does_not_run_here_is_in_the_text_too(official_store, capsys, monkeypatch,
                                                        tmp_path):
    """Chromatin accessibility at 1shot: JanusDNA_72_w leads the official models, and its
    weights are not on the hub. The text says why beside "here: no" (before: only --json), and
    why "here: ?" cannot be told (before: "does not run here", which it did not know), each
    reason once with the picks it holds for."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))    # nothing cached,
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-recorded-answer"))  # the hub untold
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    argv = ("--store", str(official_store.root), "--category", "Chromatin Acc.", "--regime",
            "1shot", "--resamples", "200")
    a = answer(*argv)
    lead = a["picks"][0]
    assert (lead["model"], lead["runs_here"]) == ("JanusDNA_72_w", False)
    assert run("recommend", *argv) == 0
    out = capsys.readouterr().out.splitlines()
    unknown = [p["model"] for p in a["picks"] if p["runs_here"] is None]
    whys = {p["runs_why"] for p in a["picks"] if p["runs_here"] is None}
    assert len(unknown) > 1 and len(whys) == 1       # the hub's state: one line for them all
    assert f"whether {', '.join(unknown)} run here cannot be told: {whys.pop()}" in out
    for p in a["picks"]:                             # each other reason, with its models
        said = [line for line in out if line.endswith(f" not run here: {p['runs_why']}")]
        assert (p["runs_here"] is False) == bool(said) == any(
            p["model"] in line.split(" do")[0].split(", ") for line in said), p
    assert ("JanusDNA_72_w, JanusDNA_72_wo do not run here: weights not published on the Hugging "
            "Face hub (weights on Harvard Dataverse and code in the JanusDNA GitHub repository, "
            "not in Hugging Face format: run it with the GENEB harness extractor (encoder = "
            "\"official-extractor\"); pretrained at 1,024 tokens, padded to 1,024); add a "
            "registry entry") in " ".join(out)


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
        "weights not published on the Hugging Face hub (weights on Harvard Dataverse and code in "
        "the JanusDNA GitHub repository, not in Hugging Face format: run it with the GENEB "
        "harness extractor (encoder = \"official-extractor\"); pretrained at 1,024 tokens, "
        "padded to 1,024)")
    a = answer("--store", str(official_store.root), "--category", "Chromatin Acc.",
               "--regime", "1shot", "--runnable-here", "--resamples", "200")
    [janus] = [x for x in a["excluded"] if x["model"] == "JanusDNA_72_w"]
    assert janus["reasons"] == ["does not run here: " + cannot["JanusDNA_72_w"].reason]


def test_the_fill_line_runs_as_printed_on_the_store_it_answered(mine, tmp_path, monkeypatch,
                                                                capsys):
    """The fill line names the store it answered from where this shell's default store is
    another (`--store`; none where $GENEB_HOME is that store) and the suite as it was given (a
    folder's path: its name alone is no folder from elsewhere), each word quoted for a shell:
    split as a shell splits it and run as a dry run, it plans that store's cells. Before, it
    named neither and `--suite mine` failed."""
    store, suite = mine
    spaced = tmp_path / "my store"
    shutil.copytree(store, spaced)
    append_rows(resolve_store(spaced), [   # kmer-4 on every task: a pick that runs offline
        {"model": "kmer-4", "task": task, "regime": "full", "seed": seed, "probe": "logreg",
         "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash, "mcc": 0.95, "acc": 0.7,
         "f1_macro": 0.6, "source": "local", "shared_fit": True}
        for task in TASKS for seed in SEEDS])
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")        # the hub models do not run here: left out
    monkeypatch.chdir(tmp_path)
    fill = answer("--store", str(spaced), "--suite", str(suite))["fill"]
    assert shlex.split(fill) == ["geneb-engine", "fill", "--store", str(spaced.resolve()),
                                 "--models", "kmer-4", "--suite", str(suite), "--regimes",
                                 "full"], fill
    capsys.readouterr()
    assert main([*shlex.split(fill)[1:], "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["store"], plan["suite"], plan["cells_total"]) == (str(spaced.resolve()),
                                                                   "mine", 4)
    monkeypatch.setenv("GENEB_HOME", str(spaced))
    assert "--store" not in answer("--suite", str(suite))["fill"]
