"""SVG snapshots of the key screens (fixed sizes and store paths, cursor blink off).

Update after an intended change with `pytest tests/tui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import settle
from fake_engine import FakeProc, cell, plan
from fixture_store import build_official_store
from textual.widgets import Input

from geneb_tui.app import GenebApp
from store.paths import resolve_store

# A fixed location (not $TMPDIR): the store path is part of the pictures (header, empty screen).
ROOT = Path("/tmp/geneb-tui-snapshots")
# One worker takes them all under `pytest -n` (they share ROOT).
pytestmark = pytest.mark.xdist_group("snapshots")


@pytest.fixture(scope="module")
def snapshot_store():
    shutil.rmtree(ROOT, ignore_errors=True)
    paths = build_official_store(ROOT / "official")
    yield paths
    shutil.rmtree(ROOT, ignore_errors=True)


async def _ready(pilot) -> None:
    pilot.app.animation_level = "none"   # e.g. the tab underline slides otherwise
    for inp in pilot.app.query(Input):
        inp.cursor_blink = False
    await settle(pilot)
    for _ in range(50):   # a loaded store: until its table is built (a busy machine is slower)
        snap, view = pilot.app.snapshot, pilot.app.view
        # ... with its rank intervals (a worker computes them after the table is shown)
        if snap is not None and (snap.is_empty or (
                view is not None and (view.intervals is not None or not view.rows))):
            break
        await settle(pilot, rounds=1)
    await settle(pilot)


async def _toast_gone(pilot, text: str) -> None:
    """Until the toast saying `text` has timed out (a short one, e.g. the 2 s "Reading the
    variant results…", may still show when a fast machine gets to the picture first)."""
    import asyncio

    from textual.widgets._toast import Toast

    for _ in range(100):
        if not any(text in t._notification.message for t in pilot.app.screen.query(Toast)):
            break
        await asyncio.sleep(0.1)
    await settle(pilot)


async def _computed(pilot, attribute: str) -> None:
    """Until the view on top has its content (`attribute` set by its worker's result)."""
    for _ in range(80):
        if getattr(pilot.app.screen, attribute, None) is not None:
            break
        await settle(pilot, rounds=1)
    await settle(pilot)


def test_main_view_snapshot(snap_compare, snapshot_store):
    assert snap_compare(GenebApp(snapshot_store), terminal_size=(100, 30), run_before=_ready)


def test_comparison_view_snapshot(snap_compare, snapshot_store):
    async def run_before(pilot) -> None:
        await _ready(pilot)
        await pilot.press("v", "3")          # comparison views, agreement tab
        await settle(pilot)

    assert snap_compare(GenebApp(snapshot_store), terminal_size=(100, 30),
                        run_before=run_before)


def test_significance_view_snapshot(snap_compare, snapshot_store):
    async def run_before(pilot) -> None:
        await _ready(pilot)
        await pilot.press("d")               # the Significance view: its CD diagram
        await _computed(pilot, "sig")

    assert snap_compare(GenebApp(snapshot_store), terminal_size=(100, 30),
                        run_before=run_before)


def test_recommend_view_snapshot(snap_compare, snapshot_store, fixed_machine):
    """The Recommend view on one category at 10shot: the leader, its tie group, the
    neighbouring regimes and the excluded (what runs here: `fixed_machine`'s)."""
    async def run_before(pilot) -> None:
        await _ready(pilot)
        await pilot.press("c", "c", "c", "c", "c", "r")   # Splice Sites, 10-shot
        await settle(pilot)
        await pilot.press("w")
        await _computed(pilot, "shown")

    assert snap_compare(GenebApp(snapshot_store), terminal_size=(100, 30),
                        run_before=run_before)


def test_empty_store_snapshot(snap_compare, snapshot_store):
    empty = ROOT / "empty"
    empty.mkdir(exist_ok=True)
    assert snap_compare(GenebApp(resolve_store(empty)), terminal_size=(80, 24),
                        run_before=_ready)


@pytest.fixture
def fixed_machine(monkeypatch):
    """What the missing-evaluations screen reads from the machine, fixed: 16 GiB of memory, no
    GPU, every package installed, the hub answering, no "stored here" line (a store's bytes
    vary with its files' timestamps, and are read in the background); and a stub engine (no
    fill runs)."""
    from geneb_tui.core import fill, perf
    from store import runnable
    from store.analyses import recommend
    from store.hf_cache import HubReach

    monkeypatch.setattr(runnable, "device_memory", lambda device: 16 * runnable.GIB)
    monkeypatch.setattr(runnable, "cuda_visible", lambda: False)
    monkeypatch.setattr(perf, "stored_lines", lambda *args: ({}, ""))
    monkeypatch.setattr(runnable, "package_installed", lambda package: True)
    monkeypatch.setattr(runnable, "hub_reach", lambda: HubReach(True, "the hub answered"))
    # the Recommend view's answer reads them through its own names
    monkeypatch.setattr(recommend, "device_memory", lambda device: 16 * runnable.GIB)
    monkeypatch.setitem(recommend.recommend.__kwdefaults__, "installed", lambda package: True)
    monkeypatch.setattr(fill, "start", lambda cmd, cwd=None: FakeProc(
        [plan(3), *(cell(i, 3, task="t") for i in (1, 2, 3)),
         {"event": "done", "computed": 3, "seconds": 2.5}]))


def test_missing_evaluations_snapshot(snap_compare, snapshot_store, fixed_machine):
    async def run_before(pilot) -> None:
        await _ready(pilot)
        await pilot.press("g")                # every catalog model, runnable ones first
        await settle(pilot)
        await pilot.press("space", "down", "down", "down")   # tick the 3-mer baseline
        await settle(pilot)

    assert snap_compare(GenebApp(snapshot_store), terminal_size=(110, 34),
                        run_before=run_before)


def test_missing_evaluations_after_a_run_snapshot(snap_compare, snapshot_store, fixed_machine):
    async def run_before(pilot) -> None:
        await _ready(pilot)
        await pilot.press("g")
        await settle(pilot)
        await pilot.press("r", "space", "g")  # full only, tick, run (the stub engine)
        await settle(pilot)

    assert snap_compare(GenebApp(snapshot_store), terminal_size=(80, 24),
                        run_before=run_before)


def test_variant_roc_snapshot(snap_compare, snapshot_store, kinds_stores):
    """geneb-kinds through the dashboard: the variant kind (k), a variant task's drill-down
    with the ROC curve of the 3-mer spectrum's test values."""
    root = ROOT / "kinds"   # a fixed path: the header shows it
    shutil.copytree(kinds_stores["kinds"].root, root, dirs_exist_ok=True)

    async def run_before(pilot) -> None:
        await _ready(pilot)
        await pilot.press("k")               # regression -> variant
        await _ready(pilot)
        await pilot.press("v", "6")
        await settle(pilot)
        await pilot.press("enter", "down")    # kinds_gata_loss; the 3-mer spectrum's row
        for _ in range(80):
            plot = pilot.app.screen.query("#task-plot")
            if plot and plot.first().data is not None:
                break
            await settle(pilot, rounds=1)
        await _toast_gone(pilot, "Reading the variant results")

    assert snap_compare(GenebApp(resolve_store(root)), terminal_size=(100, 40),
                        run_before=run_before)


def test_context_curve_snapshot(snap_compare, context_store):
    """A context sweep through the dashboard (issue 45): `l` draws score against context, a
    curve per model with its intervals, and the points below."""
    root = ROOT / "context"   # a fixed path: the header shows it
    shutil.copytree(context_store.root, root, dirs_exist_ok=True)

    async def run_before(pilot) -> None:
        await _ready(pilot)
        pilot.app.clear_notifications()     # what is current: each model's entries
        await pilot.press("l")
        await _computed(pilot, "curves")

    assert snap_compare(GenebApp(resolve_store(root)), terminal_size=(100, 36),
                        run_before=run_before)
