"""SVG snapshots of the key screens (fixed sizes and store paths, cursor blink off).

Update after an intended change with `pytest tests/tui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import settle
from fixture_store import build_official_store
from textual.widgets import Input

from geneb_tui.app import GenebApp
from store.paths import resolve_store

# A fixed location (not $TMPDIR): the store path is part of the pictures (header, empty screen).
ROOT = Path("/tmp/geneb-tui-snapshots")


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


def test_main_view_snapshot(snap_compare, snapshot_store):
    assert snap_compare(GenebApp(snapshot_store), terminal_size=(100, 30), run_before=_ready)


def test_comparison_view_snapshot(snap_compare, snapshot_store):
    async def run_before(pilot) -> None:
        await _ready(pilot)
        await pilot.press("v", "3")          # comparison views, agreement tab
        await settle(pilot)

    assert snap_compare(GenebApp(snapshot_store), terminal_size=(100, 30),
                        run_before=run_before)


def test_empty_store_snapshot(snap_compare, snapshot_store):
    empty = ROOT / "empty"
    empty.mkdir(exist_ok=True)
    assert snap_compare(GenebApp(resolve_store(empty)), terminal_size=(80, 24),
                        run_before=_ready)
