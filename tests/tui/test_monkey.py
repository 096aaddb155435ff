"""Monkey test: seeded random keystrokes on every kind of store, at 80x24 and 160x45 (`make
test`: each kind at one of the two sizes, 500 keys; `make test-full`: both, 2,000 keys).

Every key of every screen (the actions registry), the dialogs' keys, the comparison views' tabs,
tab / arrows / Enter / Escape, the command palette and text typed into it: no exception, no
internal error reported by a worker, and no exit. Keys go in bursts (sent to the driver like
`pilot.press`, without waiting for idle after each); workers are awaited every few bursts. A fill
is never started for real: `geneb_tui.core.fill.start` is a stub that replays the engine's JSON
events. On failure the message gives the seed and the last keys, to replay with
`GENEB_MONKEY_SEED=<seed> pytest tests/tui/test_monkey.py -k <store>`.
"""

from __future__ import annotations

import os
import random
from collections import deque

import pytest
from conftest import STORE_KINDS, settle
from fake_engine import FakeProc, cell, plan
from textual import events

from geneb_tui.actions import SCREENS
from geneb_tui.app import GenebApp
from geneb_tui.core import fill
from tests.helpers import sweep_size, taking_turns

KEYS_PER_RUN = int(os.environ.get("GENEB_MONKEY_KEYS", sweep_size(2000, 500)))
BURST = int(os.environ.get("GENEB_MONKEY_BURST", "100"))   # keys sent before the app idles
SETTLE_EVERY = 4           # bursts between waits for the workers
SIZES = ((80, 24), (160, 45))
BASE_SEED = int(os.environ.get("GENEB_MONKEY_SEED", "20260")) 

_CHARS = {"slash": "/", "question_mark": "?", "space": " ", "full_stop": ".",
          "minus": "-", "plus": "+", "comma": ","}


def _registry_keys() -> list[str]:
    keys: list[str] = []
    for _, actions in SCREENS:
        for a in actions:
            keys += a.key.split(",")
    return keys


# Weighted pool: every registered key, navigation and dialog keys, the palette, and text.
NAVIGATION = ["tab", "shift+tab", "up", "down", "left", "right", "pageup", "pagedown", "home",
              "end", "enter", "escape", "backspace", "space"]
TEXT = list("abcdefghijklmnopqrstuvwxyz0123456789") + ["full_stop", "minus", "slash"]
POOL: list[str] = (
    _registry_keys() * 3
    + NAVIGATION * 4
    + ["escape"] * 10            # come back from screens often enough to visit the others
    + ["ctrl+p"] * 2 + ["ctrl+s", "ctrl+c", "ctrl+r", "ctrl+q"]
    + TEXT
)


def key_event(key: str) -> events.Key:
    if len(key) == 1:
        char = key
    else:
        char = _CHARS.get(key)
    return events.Key(key, char)


@pytest.fixture
def no_real_side_effects(monkeypatch, tmp_path):
    """No fill subprocess, exports and screenshots land in a temporary folder."""
    started: list[list[str]] = []

    def fake_start(cmd, cwd=None):
        started.append(cmd)
        return FakeProc([plan(2), cell(1, 2, model="m"), cell(2, 2, model="m"),
                         {"event": "done", "computed": 2, "seconds": 0.1}])

    monkeypatch.setattr(fill, "start", fake_start)
    monkeypatch.chdir(tmp_path)
    return started


async def monkey(app: GenebApp, size: tuple[int, int], seed: int, n: int) -> dict:
    rng = random.Random(seed)
    last: deque[str] = deque(maxlen=40)
    quits = 0

    def quit_pressed() -> None:   # q / Ctrl+Q / the palette's Quit: counted, the run goes on
        nonlocal quits
        quits += 1

    app.action_quit = quit_pressed                  # type: ignore[method-assign]
    app.deliver_screenshot = lambda *a, **k: None   # type: ignore[method-assign]
    screens: set[str] = set()
    push = app.push_screen

    def push_screen(screen, *args, **kwargs):       # which screens the keys opened
        screens.add(type(screen).__name__ if not isinstance(screen, str) else screen)
        return push(screen, *args, **kwargs)

    app.push_screen = push_screen                   # type: ignore[method-assign]

    def fail(why: str) -> None:
        pytest.fail(f"{why}\nseed {seed}, size {size[0]}x{size[1]}, after {sent} keys; "
                    f"last keys: {' '.join(last)}", pytrace=False)

    sent = 0
    async with app.run_test(size=size) as pilot:
        await settle(pilot, rounds=1)
        bursts = 0
        while sent < n:
            for _ in range(min(BURST, n - sent)):
                key = rng.choice(POOL)
                last.append(key)
                ev = key_event(key)
                ev.set_sender(app)
                app._driver.send_message(ev)
                sent += 1
            await pilot.pause()
            bursts += 1
            if bursts % SETTLE_EVERY == 0:
                await settle(pilot, rounds=1)
            if app._exception is not None:
                fail(f"the app raised {app._exception!r}")
            if app.internal_errors:
                fail(f"a worker failed: {app.internal_errors[0]}")
            if not app.is_running or app.return_code is not None:
                fail("the app exited")
        await settle(pilot, rounds=1)
        await settle(pilot, rounds=1)
        if app.internal_errors:
            fail(f"a worker failed: {app.internal_errors[0]}")
    if app._exception is not None:
        fail(f"the app raised {app._exception!r}")
    return {"keys": sent, "quits": quits, "screens": screens}


# Every kind of store at both sizes under `make test-full`; under `make test`, every kind at one
# of them (the kinds take turns), the same seeds.
RUNS = taking_turns(STORE_KINDS, SIZES)


@pytest.mark.idle   # random keys meet the pause's work as users do
@pytest.mark.parametrize(("kind", "size"), RUNS, ids=lambda v: v if isinstance(v, str)
                         else f"{v[0]}x{v[1]}")
async def test_monkey(kind, size, store_of_kind, no_real_side_effects):
    seed = BASE_SEED + STORE_KINDS.index(kind) * 10 + SIZES.index(size)
    app = GenebApp(store_of_kind(kind))
    report = await monkey(app, size, seed, KEYS_PER_RUN)
    assert report["keys"] >= KEYS_PER_RUN
    # the run went beyond the first screen (the pool's keys open the others)
    assert len(report["screens"]) >= (2 if kind == "empty" else 5), report
