"""The tests' wait for the dashboard's workers (`waiting.workers_done`) meets a worker that a
newer one of its exclusive group supersedes while it waits, as a key pressed during a pause
does (stop 28's CI failure): it waits for the newer one, where Textual's own
`wait_for_complete` raises."""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.worker import WorkerCancelled
from waiting import workers_done


async def superseded_while_waiting(wait) -> tuple:
    """Start a worker, wait with `wait`, supersede the worker meanwhile; the two workers and
    how the wait ended."""
    app = App()
    async with app.run_test():
        gate = asyncio.Event()

        async def blocked():
            await gate.wait()

        async def answer():
            return 42

        old = app.run_worker(blocked(), group="tables", exclusive=True)
        await asyncio.sleep(0)
        waiting = asyncio.create_task(wait(app))
        await asyncio.sleep(0.05)
        assert not waiting.done()                # the wait is on `old` now
        new = app.run_worker(answer(), group="tables", exclusive=True)   # cancels `old`
        await asyncio.wait([waiting], timeout=5)
        assert waiting.done()
        return old, new, waiting.exception()


async def test_a_worker_superseded_during_the_wait_is_skipped_and_the_newer_one_waited_for():
    old, new, error = await superseded_while_waiting(workers_done)
    assert error is None
    assert old.is_cancelled and new.result == 42


async def test_textuals_own_wait_raises_there():
    """Why `settle` does not call `wait_for_complete` (it did before, and CI failed)."""
    old, _, error = await superseded_while_waiting(lambda app: app.workers.wait_for_complete())
    assert old.is_cancelled and isinstance(error, WorkerCancelled)
