"""The rules of `store.analyses.recommend` on hand-built cases: the label budget's regime and
its warning, tasks like a task, and the constraints' reasons."""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest

from store.analyses.recommend import Constraints, DomainCounts, like_tasks, regime_for_labels
from store.catalog import TaskMeta, load_models
from store.runnable import assess
from store.vocab.errors import GenebError
from store.vocab.protocol import FEW_SHOT_REGIMES, REGIME_K


@pytest.mark.parametrize("n, regime, between", [
    (1, "1shot", None), (2, "1shot", ("1shot", "10shot")), (3, "1shot", ("1shot", "10shot")),
    (4, "10shot", ("1shot", "10shot")), (10, "10shot", None),
    (30, "10shot", ("10shot", "full")), (31, "full", ("10shot", "full")),
    (99, "full", ("10shot", "full")), (100, "full", None), (5000, "full", None),
])
def test_a_label_budget_answers_for_the_nearest_regime(n, regime, between):
    got, warning = regime_for_labels(n)
    assert got == regime
    if between is None:
        assert warning is None
    else:
        assert warning.startswith(f"{n} labels per class lie between {between[0]} ")
        assert f"and {between[1]} (" in warning and warning.endswith(f"the nearest, {regime}")


def test_the_label_counts_are_the_regimes_k():
    """Each few-shot regime answers its own k (`protocol.REGIME_K`: the k its training sets are
    drawn with) without a warning, and the warning between two says those k."""
    for regime in FEW_SHOT_REGIMES:
        assert regime_for_labels(REGIME_K[regime]) == (regime, None)
    _, warning = regime_for_labels(2)
    assert (f"between 1shot ({REGIME_K['1shot']} per class) and 10shot "
            f"({REGIME_K['10shot']} per class)") in warning


TASKS = tuple(TaskMeta(t, t, "Promoters", "s", "other", "x", k)
              for t, k in (("a", "plants"), ("b", "plants"), ("c", "plants"), ("d", "animals"),
                           ("e", "plants"), ("u", "unknown")))
# median lengths: b within a factor 2 of a's 300 (600 is), c not (601), e not recorded
KNOWN = pl.DataFrame({"task_id": ["a", "b", "c", "d", "e", "u"],
                      "kingdom": ["plants", "plants", "plants", "animals", "plants", "unknown"],
                      "length_median": [300.0, 600.0, 601.0, 300.0, None, 300.0]})


def test_tasks_like_a_task_share_its_kingdom_and_length_within_a_factor_two():
    tasks, rule = like_tasks("a", TASKS, KNOWN)
    assert [t.task_id for t in tasks] == ["a", "b", "e"]
    assert rule == ("tasks like a: kingdom plants and median length within a factor 2 of its "
                    "300 (2 tasks), and 1 of kingdom plants whose lengths are not recorded")
    tasks, rule = like_tasks("e", TASKS, KNOWN)     # no length of its own: kingdom alone
    assert [t.task_id for t in tasks] == ["a", "b", "c", "e"] and "not recorded" in rule
    with pytest.raises(GenebError, match="--like u: its kingdom is unknown"):
        like_tasks("u", TASKS, KNOWN)
    with pytest.raises(GenebError, match="--like zz: not a task of the suite"):
        like_tasks("zz", TASKS, KNOWN)


def test_every_constraint_a_model_fails_is_named():
    models = load_models(None)
    metagene, kmer = models["METAGENE-1"], models["kmer-3"]          # 7B decoder; no params
    c = Constraints(max_params=1_000_000_000, memory_gb=13, dtype="bfloat16",
                    architecture="Transformer encoder", in_domain=True)
    none_in = DomainCounts(0, 3, 1)
    assert c.reasons(metagene, none_in, assess(None, "x")) == (
        "7B parameters > 1B", "bfloat16 weights 13.04 GB > 13 GB",
        "architecture Transformer decoder",
        "in domain on none of the scope's tasks (0 in, 3 out, 1 unknown)")
    # 14 GB of bfloat16 weights fit in 14 GB; float32's 28 GB do not
    assert Constraints(memory_gb=14, dtype="bfloat16").reasons(metagene, none_in, None) == ()
    assert Constraints(memory_gb=14).reasons(metagene, none_in, None) == (
        "auto weights 26.08 GB > 14 GB",)
    assert Constraints(max_params=10, min_context=100).reasons(kmer, none_in, None) == (
        "context unknown",)                                     # weight-free: no parameters
    dnabert2 = models["dnabert2-no-flashattention"]
    assert Constraints(max_params=10).reasons(
        replace(dnabert2, params=0), none_in, None) == ("parameter count unknown",)
    assert Constraints(max_params=10).reasons(None, none_in, None) == (
        "not in the model catalog",)
    assert Constraints().reasons(None, none_in, None) == ()
