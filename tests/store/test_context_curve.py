"""Score against context per category (`store.analyses.context`, issue 45): on a hand-made
suite of two categories, the curve at each scope is each context's category score (the mean of
that category's task scores) with that scope's interval from the one task bootstrap
(`score_intervals`); a suite of one category has the macro curve alone."""

from __future__ import annotations

import polars as pl
import pytest

from store.analyses import uncertainty as U
from store.analyses.context import context_curve, curve_scopes
from store.catalog import TaskMeta

ALPHA, BETA = ("a1", "a2"), ("b1", "b2", "b3")
# Entry -> its task scores (Alpha's, then Beta's); "other" holds one context policy only.
SCORES = {"m [crop-left-10]": (0.1, 0.3, 0.0, 0.3, 0.6),
          "m [crop-left-20]": (0.5, 0.7, 0.2, 0.2, 0.5),
          "m": (0.9, 0.8, 0.4, 0.4, 0.4),
          "other": (0.5, 0.5, 0.5, 0.5, 0.5)}
VARIANTS = pl.DataFrame({"entry": list(SCORES), "model": ["m", "m", "m", "other"],
                         "context_policy": ["crop-left-10", "crop-left-20", None, None]})
# By hand: the category score is the mean of its tasks', macro the mean of the categories'.
ALPHA_MEAN = {"crop-left-10": 0.2, "crop-left-20": 0.6, "crop": 0.85}
BETA_MEAN = {"crop-left-10": 0.3, "crop-left-20": 0.3, "crop": 0.4}
LENGTHS = {"crop-left-10": 10, "crop-left-20": 20, "crop": None}


def _intervals(categories: dict[str, str]) -> pl.DataFrame:
    tasks = [TaskMeta(t, t, categories[t], "hand", "hand") for t in (*ALPHA, *BETA)]
    scores = pl.DataFrame([{"model": e, "task": t.task_id, "value": v}
                           for e, values in SCORES.items()
                           for t, v in zip(tasks, values, strict=True)])
    draws = U.bootstrap(scores, tasks=tasks, regime="full", metric="mcc", n=200, seed=7)
    return U.score_intervals(draws, 0.95)


def test_each_category_curve_is_the_mean_of_its_tasks_at_each_length():
    intervals = _intervals({**dict.fromkeys(ALPHA, "Alpha"), **dict.fromkeys(BETA, "Beta")})
    scopes = curve_scopes(intervals)
    assert scopes == ("macro", "Alpha", "Beta")
    curve = context_curve(intervals, VARIANTS, scopes)
    want = {"Alpha": ALPHA_MEAN, "Beta": BETA_MEAN,
            "macro": {c: (ALPHA_MEAN[c] + BETA_MEAN[c]) / 2 for c in LENGTHS}}
    assert [(r["scope"], r["model"], r["context"], r["context_length"])
            for r in curve.iter_rows(named=True)] == [
        (s, "m", c, n) for s in scopes for c, n in LENGTHS.items()]     # "other": one policy
    for r in curve.iter_rows(named=True):
        assert r["value"] == pytest.approx(want[r["scope"]][r["context"]], abs=1e-12), r
        # the interval is the one bootstrap's, at that scope
        iv = intervals.filter((pl.col("model") == r["entry"]) & (pl.col("scope") == r["scope"]))
        assert (r["low"], r["high"]) == (iv["low"][0], iv["high"][0])
        assert r["low"] <= r["value"] <= r["high"]
    beta_own = curve.filter((pl.col("scope") == "Beta") & (pl.col("context") == "crop"))
    assert beta_own["low"][0] == beta_own["high"][0] == pytest.approx(0.4)   # equal tasks
    # the call as it was (the dashboard's): the macro curve alone, the same rows
    assert context_curve(intervals, VARIANTS).equals(curve.filter(pl.col("scope") == "macro"))


def test_a_suite_of_one_category_has_the_macro_curve_alone():
    intervals = _intervals(dict.fromkeys((*ALPHA, *BETA), "Alpha"))
    assert curve_scopes(intervals) == ("macro",)
    assert curve_scopes(pl.DataFrame()) == ("macro",)
    assert context_curve(intervals, VARIANTS, curve_scopes(intervals))["scope"].to_list() == [
        "macro"] * 3
