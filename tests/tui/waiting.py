"""Waiting for the dashboard's workers in a test: the helpers that the pilot tests (through
`conftest`) and the tests' child processes share."""

from __future__ import annotations

import asyncio

from textual.worker import WorkerCancelled


async def workers_done(app) -> None:
    """Wait until every worker that has not been cancelled has finished. A worker superseded by
    a newer one of its exclusive group ends cancelled, which Textual's `wait_for_complete`
    raises: that is the dashboard working (a key pressed while a background build ran), not
    failing, so a cancelled worker is not waited for. A worker that failed still raises."""
    for _ in range(100):   # bounded: each round either ends or sees a newly cancelled worker
        live = [w for w in app.workers if not w.is_cancelled]
        try:
            if live:
                await asyncio.gather(*(w.wait() for w in live))
        except WorkerCancelled:
            continue   # one was cancelled while we waited: wait for the rest
        return
    raise AssertionError("workers kept being cancelled for 100 rounds")


async def settle(pilot, rounds: int = 3) -> None:
    """Let the workers finish and their messages be handled (no sleeps)."""
    for _ in range(rounds):
        await workers_done(pilot.app)
        await pilot.pause()


async def opened(pilot, key: str, screen_type):
    """The screen `key` opens, pressed once the store is read, its first content computed."""
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
    assert isinstance(pilot.app.screen, screen_type)
    return pilot.app.screen
