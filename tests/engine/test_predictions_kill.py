"""Predictions survive kills like results do: `fill` killed with SIGKILL right after a pair's
predictions commit (before its results commit), then run again, leaves every result row with
exactly one current predictions row, equal to an uninterrupted run's (real processes, the
helpers of tests/engine/processes.py)."""

from __future__ import annotations

import signal
import sys
import uuid

import polars as pl
import pytest

from store.paths import resolve_store
from store.tables.predictions import PRED_KEY, PREDICTIONS, read_predictions
from store.tables.results import read_files, read_state
from tests.engine.conftest import write_task
from tests.engine.processes import (
    fill_cmd,
    fill_here,
    results_of,
    run,
    temp_files,
    wait_no_orphans,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="orphan checks read /proc")
KEY = ["model", "task", "regime", "seed", "protocol_hash", "data_hash"]


def predictions_of(store) -> pl.DataFrame:
    return read_predictions(resolve_store(store)).select(*KEY, "pred").sort(KEY)


def raw_predictions(store) -> pl.DataFrame:
    paths = resolve_store(store)
    rows, broken = read_files(paths, read_state(paths, PREDICTIONS).files, PREDICTIONS)
    assert broken == []
    return pl.from_arrow(rows)


@pytest.fixture(scope="module")
def suite_and_reference(tmp_path_factory):
    """Two tasks and an uninterrupted run's store (one job: the results and predictions of two
    jobs are the same, bit for bit)."""
    root = tmp_path_factory.mktemp("predictions-kill")
    suite = root / "suite"
    suite.mkdir()
    write_task(suite / "task_a.csv", 160, 60, 2, 11)
    write_task(suite / "task_b.csv", 150, 60, 3, 12)
    assert fill_here(root / "reference", suite)[0] == 0
    return suite, root / "reference"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_fill_killed_after_a_predictions_commit_resumes_to_the_reference(
        tmp_path, suite_and_reference, jobs):
    suite, reference = suite_and_reference
    store = tmp_path / "store"
    mark = uuid.uuid4().hex
    killed = run(fill_cmd(store, suite, "--jobs", jobs), mark,
                 GENEB_FAILPOINT="predictions-committed:2")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert wait_no_orphans(mark) == []
    # already in the killed store, every committed result row has its predictions
    partial = results_of(store)
    assert partial.select(KEY).join(predictions_of(store), on=KEY, how="anti").height == 0
    if jobs == "1":   # killed between the second pair's two commits: its predictions are in
        assert raw_predictions(store).filter(pl.col("kind") == "pred").height == 2 * 15
        assert partial.height == 15

    assert fill_here(store, suite, "--jobs", jobs)[0] == 0   # the rerun finishes the job
    results = results_of(store)
    assert results.equals(results_of(reference))
    preds = predictions_of(store)
    joined = results.select(KEY).join(preds, on=KEY, how="left")
    assert joined.height == results.height and joined["pred"].null_count() == 0
    assert preds.height == results.height           # exactly one current row per result row
    assert preds.equals(predictions_of(reference))
    # the superseded commit is still stored; the newest row per key is the one read
    raw = raw_predictions(store)
    assert raw.height > raw.unique(subset=list(PRED_KEY)).height
    assert temp_files(store) == []
