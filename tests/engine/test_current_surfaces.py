"""Every surface sees that a checkpoint folder changed, the way `status` and `fill` do: after its
weights are re-saved, `report` (and so its figures), `export`, the site's data and the
dashboard leave the old weights' results out, each with the note, and the dashboard's
missing-evaluations screen counts those cells as missing; a model's results at two compute
precisions are two entries on each of them. (On 2dfd362 they showed the old scores unmarked
and the missing screen said 0 missing.)"""

from __future__ import annotations

import csv

import polars as pl
import pytest

from engine.cli import main
from engine.figures import figure_data
from engine.site.data import site_data
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot, missing_cells, run_precisions
from store.analyses.compute import compute
from store.analyses.question import Question
from store.catalog import ModelMeta
from store.current import with_entries
from store.db import Snapshot
from store.fingerprint import checkpoint_fingerprint
from store.tables.catalogs import models_with_builtins, register_models
from tests.store.test_current import TASKS, cell, checkpoint, store_with

NOTE = "m: 2 results of an earlier revision of {} left out; fill computes the current one"


def saved(tmp_path):
    """A store of m (a checkpoint folder, its two tasks done) and kmer-3."""
    folder = checkpoint(tmp_path)
    revision = checkpoint_fingerprint(folder)
    paths = store_with(tmp_path / "s", folder,
                       [cell("m", t.task_id, revision, 0.5 + i / 10) for i, t in enumerate(TASKS)]
                       + [cell("kmer-3", t.task_id, None, 0.1) for t in TASKS],
                       registered=revision)
    return paths, folder


@pytest.fixture
def resaved(tmp_path):
    """`saved`, whose folder's weights were re-saved since."""
    paths, folder = saved(tmp_path)
    checkpoint(tmp_path, weights=b"re-saved")
    return paths, folder


def report_frames(paths) -> dict[str, pl.DataFrame]:
    snap = Snapshot(paths)
    return compute(snap, with_entries(models_with_builtins(paths), snap.query),
                   Question(regime="full", metric="mcc", tasks=tuple(TASKS)))


def test_report_and_its_figures_leave_the_old_revision_out(tmp_path):
    paths, folder = saved(tmp_path)
    register_models(paths, [ModelMeta.one_off("m", path=str(folder), params=10**6)])

    def figures() -> dict:
        frames = report_frames(paths)
        return figure_data(frames, models_with_builtins(paths), regime="full")

    assert named(figures()) == {"m", "kmer-3"}      # the controlled pair of their scale bands
    checkpoint(tmp_path, weights=b"re-saved")
    assert Snapshot(paths).notes == [NOTE.format(folder)]
    assert "m" not in named(figures())


def named(value) -> set[str]:
    """Every `model` a figure's values name."""
    if isinstance(value, dict):
        return {v for k, v in value.items() if k in ("model", "model_a", "model_b")} | {
            m for v in value.values() for m in named(v)}
    if isinstance(value, list):
        return {m for v in value for m in named(v)}
    return set()


def test_report_leaves_the_old_revision_out_of_its_frames(resaved):
    paths, _ = resaved
    aggregates = report_frames(paths)["aggregates"]
    assert aggregates.select("model", "n_missing").rows() == [("kmer-3", 0)]


def test_site_data_leaves_the_old_revision_out(resaved):
    paths, _ = resaved
    snap = Snapshot(paths)
    data = site_data(snap, with_entries(models_with_builtins(paths), snap.query), tuple(TASKS),
                     suite="s", title="t", resamples=0, level=0.95, seed=0)
    assert [m["id"] for m in data["models"]] == ["kmer-3"]


def test_the_dashboard_leaves_it_out_and_counts_its_cells_missing(resaved):
    paths, folder = resaved
    snap = StoreSnapshot.load(paths)
    assert snap.notes == (NOTE.format(folder),)
    assert set(snap.scores["model"]) == {"kmer-3"}
    filters = Filters(suite="s", regime="full")
    assert missing_cells(snap, filters, ["m", "kmer-3"]) == [("m", "t1", "full"),
                                                              ("m", "t2", "full")]


def test_export_leaves_it_out_with_the_note(resaved, tmp_path, capsys):
    paths, folder = resaved
    out = tmp_path / "e.csv"
    assert main(["export", "--store", str(paths.root), "--suite", "s", "--csv", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"geneb-engine export: note: {NOTE.format(folder)}" in err
    rows = list(csv.DictReader(out.open()))
    assert {r["model"] for r in rows} == {"kmer-3"}
    assert {r["compute_precision"] for r in rows} == {"float32"}


def test_every_surface_shows_two_precisions_apart(tmp_path):
    folder = checkpoint(tmp_path)
    revision = checkpoint_fingerprint(folder)
    paths = store_with(tmp_path / "s", folder,
                       [cell("m", t.task_id, revision, 0.2, 0, precision="float16")
                        for t in TASKS]
                       + [cell("m", t.task_id, revision, 0.4, 5) for t in TASKS],
                       registered=revision)
    frames = report_frames(paths)
    agg = dict(zip(frames["aggregates"]["model"], frames["aggregates"]["macro"], strict=True))
    assert agg == pytest.approx({"m": 0.4, "m [float16]": 0.2})     # never their mean, 0.3
    snap = StoreSnapshot.load(paths)
    assert set(snap.scores["model"]) == {"m", "m [float16]"}
    assert snap.model_meta("m [float16]")["display"] == "m [float16]"
    filters = Filters(suite="s", regime="full")

    def missing(dtype: str) -> list[tuple[str, str, str]]:   # as the fill it runs computes
        return missing_cells(snap, filters, ["m"], None,
                             run_precisions(snap, ["m"], "cpu", dtype))

    assert missing("auto") == missing("float32") == missing("float16") == []
    assert missing("bfloat16") == [("m", "t1", "full"), ("m", "t2", "full")]
    snap = Snapshot(paths)
    data = site_data(snap, with_entries(models_with_builtins(paths), snap.query), tuple(TASKS),
                     suite="s", title="t", resamples=0, level=0.95, seed=0)
    assert sorted(m["id"] for m in data["models"]) == ["m", "m [float16]"]
