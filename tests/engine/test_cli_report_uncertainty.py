"""`geneb-engine report` with its uncertainty: intervals, rank intervals, P(A > B), the tie
group, the rank tests and the paper's claims, as a user gets them (`--json` and the tables)."""

from __future__ import annotations

import contextlib
import io
import json

import polars as pl
import pytest
from rich.cells import cell_len

from engine.cli import main
from store.analyses import ranktests as R
from store.analyses.aggregates import aggregates
from store.analyses.controlled import controlled_pairs
from store.analyses.scale import scale_correlation
from store.analyses.scores import scores
from store.tables.catalogs import models_with_builtins
from tests.store.local_rows import local_rows, local_store

SCOPES = 15                                   # micro, macro, 13 categories
BOOTSTRAP = ("score_intervals", "rank_intervals", "win_probabilities", "leader_tie_group",
             "leader_margin",
             "scale_rho_intervals", "controlled_pair_intervals", "leader_change_significance",
             "smaller_beats_larger", "smaller_beats_larger_summary", "bootstrap")


def _json(*argv: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", "--json", *argv]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def doc(official_store) -> dict:
    """The default report (10,000 resamples, level 0.95, seed 0) on the official store."""
    return _json("--store", str(official_store.root))


@pytest.fixture(scope="module")
def plain(official_store) -> dict:
    return _json("--store", str(official_store.root), "--resamples", "0")


def _frame(doc: dict, name: str) -> pl.DataFrame:
    return pl.DataFrame(doc[name], infer_schema_length=None)


def test_json_carries_intervals_and_rank_intervals_of_every_model_and_scope(doc):
    assert (doc["resamples"], doc["level"], doc["bootstrap_seed"]) == (10_000, 0.95, 0)
    boot = _frame(doc, "bootstrap")
    assert boot.select("regime", "resamples", "seed", "level", "seeds_resampled",
                       "n_entries").rows() == [(r, 10_000, 0, 0.95, False, 40)
                                               for r in ("full", "10shot", "1shot")]
    agg = _frame(doc, "aggregates")
    points = {(r["model"], r["scope"]): r["value"] for r in
              agg.unpivot(on=["micro", "macro", *agg.columns[4:17]], index="model",
                          variable_name="scope").iter_rows(named=True)}
    intervals = _frame(doc, "score_intervals")
    assert intervals.columns == ["model", "source", "scope", "value", "low", "high"]
    assert intervals.height == 40 * SCOPES and intervals["scope"].n_unique() == SCOPES
    one_task = {"Coding/NC", "Chromatin Acc."}      # geneb-v1's categories of one task
    for r in intervals.iter_rows(named=True):
        assert r["value"] == points[(r["model"], r["scope"])]     # the aggregates, exactly
        if r["scope"] in one_task:      # no task to resample: no interval, never a zero-width one
            assert r["low"] is None and r["high"] is None
        else:
            assert r["low"] <= r["high"]
    macro = intervals.filter(pl.col("scope") == "macro")
    assert (macro["low"] < macro["value"]).all() and (macro["value"] < macro["high"]).all()
    ranks = _frame(doc, "rank_intervals")
    assert ranks.columns == ["model", "source", "scope", "rank", "rank_low", "rank_high"]
    assert ranks.height == 40 * SCOPES
    assert ranks.filter(pl.col("scope").is_in(one_task))["rank_low"].null_count() == 80
    ranks = ranks.filter(~pl.col("scope").is_in(one_task))
    assert ((ranks["rank_low"] <= ranks["rank"]) & (ranks["rank"] <= ranks["rank_high"])).all()
    assert ranks["rank_low"].min() == 1 and ranks["rank_high"].max() <= 40
    macro_rank = dict(zip(_frame(doc, "rankings")["model"], _frame(doc, "rankings")["macro"],
                          strict=True))
    assert all(macro_rank[r["model"]] == r["rank"] for r in
               ranks.filter(pl.col("scope") == "macro").iter_rows(named=True))


def test_json_carries_every_ordered_pair_and_the_leaders_tie_group(doc):
    pairs = _frame(doc, "win_probabilities")
    assert pairs.height == 40 * 39
    assert pairs.select("model_a", "model_b").unique().height == 40 * 39
    total = pairs["p_a_beats_b"] + pairs["p_b_beats_a"] + pairs["p_tie"]
    assert (total == 1.0).all()
    back = {(r["model_b"], r["model_a"]): r["p_b_beats_a"] for r in pairs.iter_rows(named=True)}
    assert all(back[(r["model_a"], r["model_b"])] == r["p_a_beats_b"]
               for r in pairs.iter_rows(named=True))
    group = _frame(doc, "leader_tie_group")
    assert group.height == 40 and group["leader"].sum() == 1
    leader = group.filter("leader").row(0, named=True)
    assert leader["model"] == doc["aggregates"][0]["model"] and leader["tied_with_leader"]
    assert group["p_best"].sum() == pytest.approx(1.0, abs=0.01)   # ties at the top aside
    # the one rule decides the group, with its numbers on every row: the sign-flip p over
    # the 100 tasks against the threshold the leader's 39 comparisons share, and the interval
    others = group.filter(~pl.col("leader"))
    assert set(others["n_tasks"]) == {100} and set(others["method"]) == {"sampled"}
    assert others["threshold"][0] == pytest.approx(0.05 / 39)
    separated = (others["p_value"] <= 0.05 / 39) & ((others["delta_low"] > 0)
                                                    | (others["delta_high"] < 0))
    assert (others["tied_with_leader"] == ~separated).all()
    assert (others["wins"] + others["losses"] <= 100).all()


def test_json_rank_tests_are_ranktests_own(doc, official_store):
    tests = _frame(doc, "rank_tests")
    assert tests.columns == ["regime", "scope", "n_models", "n_tasks", "statistic", "p_value",
                             "critical_difference", "alpha"]
    # all, and the 8 categories with at least 5 tasks, per regime
    assert tests.height == 3 * 9 and set(tests["alpha"]) == {0.05}
    for regime in ("full", "10shot", "1shot"):
        s = scores(official_store, regime=regime)
        want = R.friedman(s).row(0, named=True)
        got = tests.filter((pl.col("regime") == regime) & (pl.col("scope") == "all")).row(
            0, named=True)
        assert got["critical_difference"] == want["critical_difference"]
        assert (got["statistic"], got["p_value"], got["n_models"], got["n_tasks"]) == (
            want["statistic"], want["p_value"], 40, 100)
    assert tests.filter(pl.col("scope") == "all")["critical_difference"][0] == pytest.approx(
        6.4, abs=0.05)                                  # the "about 6.4" at 40 models
    ranks = _frame(doc, "average_ranks")
    assert ranks.height == 3 * 9 * 40
    full = R.average_ranks(scores(official_store, regime="full"))
    assert ranks.filter((pl.col("regime") == "full") & (pl.col("scope") == "all")).select(
        "model", "source", "average_rank").equals(full)


def test_json_carries_the_claims(doc, official_store):
    models = models_with_builtins(official_store)
    agg = aggregates(scores(official_store, regime="full"))
    changes = _frame(doc, "leader_change_significance")
    assert changes.height == 2 * SCOPES
    for r in changes.iter_rows(named=True):
        # the one rule both ways, each against its regime's leader (39 comparisons)
        both = (r["p_value_to"] or 1) <= 0.05 / 39 and (r["p_value_from"] or 1) <= 0.05 / 39
        assert r["significant"] <= (r["changed"] and both)
        assert (r["p_new_beats_old"] is None) == (r["p_value_to"] is None) == (not r["changed"])
    one_task = changes.filter(pl.col("scope").is_in(["Coding/NC", "Chromatin Acc."]))
    assert not one_task["significant"].any()      # one task separates nothing
    macro = changes.filter((pl.col("regime_to") == "10shot") & (pl.col("scope") == "macro"))
    assert macro.select("leader_from", "leader_to", "changed").row(0) == (
        "GENERator-eukaryote-3b-base", "GenomeOcean-4B", True)
    rho = _frame(doc, "scale_rho_intervals")
    point = scale_correlation(agg, models)
    assert rho.select("source", "scope", "rho", "n").rows() == point.select(
        "source", "scope", "rho", "n").rows()
    # inside its interval (a one-task category resamples to itself: to the last bits)
    assert (rho["low"] <= rho["rho"] + 1e-12).all() and (rho["rho"] <= rho["high"] + 1e-12).all()
    deltas = _frame(doc, "controlled_pair_intervals")
    pairs = controlled_pairs(agg, models)
    assert deltas.height == pairs.height * (SCOPES - 1)              # macro and 13 categories
    macro_delta = {(r["model_a"], r["model_b"]): r["macro"] for r in pairs.iter_rows(named=True)}
    for r in deltas.filter(pl.col("scope") == "macro").iter_rows(named=True):
        assert r["delta"] == pytest.approx(macro_delta[(r["model_a"], r["model_b"])], abs=1e-12)
        assert r["low"] <= r["high"] and r["p_a_beats_b"] + r["p_b_beats_a"] <= 1
        assert r["differs"] == (r["p_value"] <= 0.05 and not r["low"] <= 0 <= r["high"])
    cases = _frame(doc, "smaller_beats_larger")
    assert (cases["params_small"] * 5 <= cases["params_large"]).all()
    assert (cases["value_small"] > cases["value_large"]).all()
    assert (cases["holds"] == ((cases["p_value"] <= 0.05) & (cases["low"] > 0))).all()
    summary = _frame(doc, "smaller_beats_larger_summary")
    counted = cases.group_by("regime", maintain_order=True).agg(
        pl.len().alias("n_cases"), pl.col("holds").sum().cast(pl.Int64).alias("n_hold"))
    assert summary.rows() == counted.rows() and summary["regime"].to_list() == [
        "full", "10shot", "1shot"]


def test_resamples_0_leaves_every_new_field_out(doc, plain):
    assert plain["resamples"] == 0
    new = {*BOOTSTRAP, "rank_tests", "average_ranks"}
    assert new <= set(doc) and not new & set(plain)
    assert set(doc) - new == set(plain)                 # the point analyses, unchanged
    # the in-domain pairs carry their interval and rule columns only with resamples
    interval = {"low", "high", "p_a_beats_b", "p_b_beats_a", "p_value", "method", "differs"}
    in_domain = [{c: v for c, v in r.items() if c not in interval}
                 for r in doc["controlled_pairs_in_domain"]]
    assert plain["controlled_pairs_in_domain"] == in_domain
    assert not interval & {c for r in plain["controlled_pairs_in_domain"] for c in r}
    assert all(plain[k] == doc[k] for k in plain
               if k not in ("resamples", "controlled_pairs_in_domain"))


@pytest.mark.parametrize("argv, said", [
    (["--level", "1.5"], "argument --level: 1.5 is not between 0 and 1 (exclusive); give a "
                         "level such as 0.95 or 0.9"),
    (["--level", "high"], "argument --level: 'high' is not a number; give a level between 0 "
                          "and 1, such as 0.95"),
    (["--resamples", "-5"], "argument --resamples: -5 is below 0; give a whole number of "
                            "resamples >= 0 (0 turns the intervals off)"),
    (["--resamples", "1e9"], "argument --resamples: '1e9' is not an integer"),
    (["--resamples", "200000"], "argument --resamples: 200000 is above 100,000"),
    (["--bootstrap-seed", "-1"], "argument --bootstrap-seed: -1 is below 0"),
])
def test_bad_uncertainty_options_are_one_line_and_exit_2(tmp_path, capsys, argv, said):
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--store", str(tmp_path / "store"), *argv])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"geneb-engine report: {said}")
    assert err.rstrip().endswith("(see geneb-engine report --help)")


@pytest.fixture(scope="module")
def seeded_store(tmp_path_factory):
    """Local results of four catalog models with five seeds per few-shot cell: GROVER (87M)
    far above evo-1-131k-base (7B) on every task, MutBERT and BioFM at random."""
    bio = [{**r, "mcc": r["mcc"] / 2 - 0.1} for r in local_rows("BioFM-265M")]
    rows = (local_rows("GROVER", value=0.6) + local_rows("evo-1-131k-base", value=0.1)
            + local_rows("MutBERT") + bio)
    return local_store(tmp_path_factory.mktemp("seeded") / "store", "GROVER", rows)


def test_local_seeds_are_resampled_and_a_clear_case_holds(seeded_store):
    doc = _json("--store", str(seeded_store.root), "--resamples", "400", "--level", "0.9",
                "--bootstrap-seed", "3")
    boot = _frame(doc, "bootstrap")
    assert boot.select("regime", "resamples", "seed", "level", "seeds_resampled").rows() == [
        ("full", 400, 3, 0.9, False), ("10shot", 400, 3, 0.9, True),
        ("1shot", 400, 3, 0.9, True)]
    assert "then seed within task" in boot["unit"][1]
    cases = _frame(doc, "smaller_beats_larger").filter(pl.col("model_large") == "evo-1-131k-base")
    grover = cases.filter(pl.col("model_small") == "GROVER")
    assert grover["regime"].to_list() == ["full", "10shot", "1shot"]
    assert grover["holds"].all() and (grover["p_small_beats_large"] == 1.0).all()
    assert _frame(doc, "score_intervals").height == 4 * SCOPES
    assert _json("--store", str(seeded_store.root), "--resamples", "400", "--level", "0.9",
                 "--bootstrap-seed", "3")["score_intervals"] == doc["score_intervals"]


@pytest.mark.parametrize("width", [80, 100])
def test_the_tables_show_the_intervals_within_the_width(seeded_store, capsys, monkeypatch,
                                                        width):
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["report", "--store", str(seeded_store.root), "--resamples", "300",
                 "--level", "0.9"]) == 0
    out = capsys.readouterr().out
    assert all(cell_len(line) <= width for line in out.splitlines()
               if not line.startswith("results as of"))   # the store path: never cut
    for title in ("90 % interval over 300 resamples of the tasks",
                  "Tie group of the macro leader (full, mcc, 90 %)",
                  "Friedman test and Nemenyi critical difference (mcc, 4 models)",
                  "Leader changes from full (mcc)", "Smaller beats 5x larger (mcc, macro"):
        assert " ".join(title.split()) in " ".join(out.split())
    first = next(line for line in out.splitlines() if line.startswith("│1 │"))
    assert "GROVER" in first and "[1-1]" in first
    assert "(leader)" in out


def test_examples_gives_each_local_cells_interval_over_its_test_examples(tmp_path, task_dir,
                                                                         official_store, capsys):
    """`--examples N`: per local cell of --regime, the MCC of its stored predictions (equal to
    the stored result) with an interval over N resamples of its test examples."""
    from store.db import query
    from store.paths import resolve_store

    store = str(tmp_path / "store")
    assert main(["fill", "--store", store, "--suite", str(task_dir), "--models", "kmer-3",
                 "--regimes", "10shot"]) == 0
    found = _json("--store", store, "--suite", str(task_dir), "--regime", "10shot",
                  "--resamples", "0", "--examples", "400")["example_intervals"]
    rows = query(resolve_store(store), "SELECT task, seed, mcc FROM results")
    stored = {(r["task"], r["seed"]): r["mcc"] for r in rows.iter_rows(named=True)}
    per_seed = {(r["task"], r["seed"]): r for r in found if r["seed"] is not None}
    assert per_seed.keys() == stored.keys() and len(stored) == 15       # 3 tasks x 5 seeds
    for key, r in per_seed.items():
        assert r["mcc"] == pytest.approx(stored[key], abs=1e-12)
        assert r["lo"] <= r["mcc"] <= r["hi"] and r["lo"] < r["hi"]
        assert r["n_resamples"] == 400 and r["n_test"] > 0
    assert len([r for r in found if r["seed"] is None]) == 3             # each task's mean
    capsys.readouterr()
    assert main(["report", "--store", str(official_store.root), "--resamples", "0",
                 "--examples", "10"]) == 0                 # imported: no predictions, said so
    out = " ".join(capsys.readouterr().out.split())
    assert "per-example MCC intervals: no local predictions of full; imported results carry no" \
        " predictions" in out
