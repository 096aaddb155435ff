"""Garbage collection in the user's pauses: everything collected, survivors frozen, and the app
collects once input stops."""

from __future__ import annotations

import gc
import weakref

from conftest import settle

from geneb_tui.app import GenebApp
from geneb_tui.core import idle_gc


class Node:
    def __init__(self) -> None:
        self.other = self


def test_collect_now_frees_cycles_even_among_objects_an_earlier_pause_froze() -> None:
    try:
        kept = Node()
        idle_gc.collect_now()
        assert gc.get_freeze_count() > 0
        gone = weakref.ref(kept)
        del kept                      # garbage now, in the frozen generation
        gc.collect()
        assert gone() is not None     # a plain collection does not scan frozen objects
        idle_gc.collect_now()
        assert gone() is None
    finally:
        gc.unfreeze()


async def test_the_app_collects_once_input_stops(official_store, monkeypatch):
    calls = []
    import geneb_tui.app as app_module

    monkeypatch.setattr(app_module, "IDLE_S", 0.2)
    monkeypatch.setattr(idle_gc, "collect_now", lambda: calls.append(1))
    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.pause(0.6)
        after_load = len(calls)
        assert after_load >= 1        # once the table and its rank intervals are shown
        await pilot.pause(0.6)
        assert len(calls) == after_load   # once per pause, not again and again
        await pilot.press("question_mark")   # a key that changes no selection
        await pilot.pause(0.6)
        assert len(calls) == after_load + 1
