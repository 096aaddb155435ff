"""Score against context in the dashboard (issue 45, key `l`): the curve per model of a
context sweep has the points `report` gives for the same scope (`context_curve` over its
bootstrap), a category filter gives that category's curve, the view follows the selection,
and where no model has two context policies one line says what to run (nothing resampled)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json

import pytest
from conftest import settle

from geneb_tui.app import GenebApp
from geneb_tui.components.context_screen import ContextScreen
from geneb_tui.core import context as ctx
from geneb_tui.core.filters import Filters
from geneb_tui.core.query import StoreSnapshot

RESAMPLES = 1000   # the report's and the view's alike (the view's default: RESAMPLES, 10,000)
KEYS = ("model", "context", "context_length", "entry", "scope", "value", "low", "high")


@pytest.fixture(scope="module")
def swept(context_store):
    """The sweep's snapshot, its selection as the dashboard opens it, and `report --json`."""
    from engine.cli import main

    snap = StoreSnapshot.load(context_store)
    filters = snap.filters_for(Filters(), opening=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", "--store", str(context_store.root), "--suite",
                     str(context_store.root.parent / filters.suite), "--json",
                     "--resamples", str(RESAMPLES)]) == 0
    return snap, filters, json.loads(out.getvalue())


def test_the_curve_is_the_reports_context_curve(swept):
    snap, filters, report = swept
    curves = ctx.context_view(snap, filters, n=RESAMPLES)
    assert [{k: p[k] for k in KEYS} for p in curves.points] == [
        r for r in report["context_curve"] if r["scope"] == "macro"]
    assert [(p["model"], p["label"]) for p in curves.points] == [
        (m, x) for m in ("kmer-3", "kmer-4") for x in ("10 (left)", "20 (left)", "own limit")]
    assert curves.order == [("crop-left-10", "10 (left)"), ("crop-left-20", "20 (left)"),
                            ("crop", "own limit")]
    assert curves.models() == ["3-mer spectrum", "4-mer spectrum"]
    assert all(p["low"] <= p["value"] <= p["high"] for p in curves.points)
    assert "1,000 resamples, seed 0" in curves.note


def test_a_category_gives_that_categorys_curve(swept):
    """The category's scope of the same bootstrap (`report`'s score intervals there); a
    category of one task has no interval."""
    snap, filters, report = swept
    scored = {(r["model"], r["scope"]): (r["value"], r["low"], r["high"])
              for r in report["score_intervals"]}
    macro = ctx.context_view(snap, filters, n=RESAMPLES).points
    for category in ("Promoters", "Splice Sites"):
        curves = ctx.context_view(snap, filters.with_(category=category), n=RESAMPLES)
        assert curves.scope == category and curves.note.startswith(f"{category} score")
        assert [(p["entry"], p["context"]) for p in curves.points] == [
            (p["entry"], p["context"]) for p in macro]
        assert [(p["value"], p["low"], p["high"]) for p in curves.points] == [
            scored[p["entry"], category] for p in curves.points]
        assert [{k: p[k] for k in KEYS} for p in curves.points] == [   # report's category curve
            r for r in report["context_curve"] if r["scope"] == category]
    promoters = ctx.context_view(snap, filters.with_(category="Promoters"), n=RESAMPLES).points
    assert [p["value"] for p in promoters] != [p["value"] for p in macro]
    splice = ctx.context_view(snap, filters.with_(category="Splice Sites"), n=RESAMPLES).points
    assert {(p["low"], p["high"]) for p in splice} == {(None, None)}


def test_an_entry_without_every_task_is_left_out_and_said(swept, monkeypatch):
    """The curve compares entries on the same tasks: one without a task is no point, and the
    note counts it."""
    snap, filters, _ = swept
    scores = ctx.selection_scores

    def one_missing(*args, **kwargs):
        long = scores(*args, **kwargs)
        return long.filter(~((long["model"] == "kmer-3 [crop-left-10]")
                             & (long["task"] == "task_0")))

    monkeypatch.setattr(ctx, "selection_scores", one_missing)
    curves = ctx.context_view(snap, filters, n=RESAMPLES)
    assert [(p["model"], p["context"]) for p in curves.points] == [
        ("kmer-3", "crop-left-20"), ("kmer-3", "crop"),
        *(("kmer-4", c) for c in ("crop-left-10", "crop-left-20", "crop"))]
    assert "; 1 entry without every task left out." in curves.note


def test_a_store_moved_on_since_the_snapshot_asks_for_a_reload(swept):
    """The entries are read at the snapshot's version or not at all (a later version's could
    name other entries than the snapshot's scores)."""
    snap, filters, _ = swept
    older = dataclasses.replace(snap, version=snap.version - 1)
    assert ctx.context_view(older, filters).note == ctx.MOVED_ON


def test_a_store_without_a_sweep_says_what_to_run_and_resamples_nothing(official_store,
                                                                         monkeypatch):
    snap = StoreSnapshot.load(official_store)
    monkeypatch.setattr(ctx, "bootstrap", lambda *a, **k: pytest.fail("resampled"))
    curves = ctx.context_view(snap, snap.filters_for(Filters(), opening=True))
    assert curves.points == [] and curves.table().rows == []
    assert curves.note == ctx.none_line(Filters())
    assert "geneb-engine fill --suite geneb-v1 --models MODEL --context-lengths" in curves.note


async def test_the_view_follows_the_selection(context_store):
    """`l` opens the curve of the selection, `c` moves it to the next category's, `l` closes."""
    app = GenebApp(context_store)
    async with app.run_test(size=(110, 36)) as pilot:
        for _ in range(100):
            if app.snapshot is not None and app.view is not None:
                break
            await settle(pilot, rounds=1)
        await pilot.press("l")
        await _curve(pilot, "macro")
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        assert screen.query_one("#context-plot").data is screen.curves
        assert "10,000 resamples, seed 0" in screen.curves.note   # report's default
        await pilot.press("c")        # the next category: its curve
        await _curve(pilot, "Promoters")
        assert screen.query_one("#context-table").row_count == 6
        await pilot.press("l")        # back to the table
        await settle(pilot)
        assert app.screen is app.screen_stack[0]
        assert app.internal_errors == []


async def _curve(pilot, scope: str) -> None:
    for _ in range(100):
        curves = getattr(pilot.app.screen, "curves", None)
        if curves is not None and curves.scope == scope:
            break
        await settle(pilot, rounds=1)
    await settle(pilot)
    assert pilot.app.screen.curves.scope == scope
