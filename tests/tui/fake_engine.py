"""A stand-in for the engine's `fill --json` subprocess (what `geneb_tui.core.fill.start`
returns): it prints the engine's JSON events, then exits; nothing runs for real."""

from __future__ import annotations

import io
import json
import threading


class FakeProc:
    """A `fill.start` result: prints `events` (dicts) on stdout; with `hold`, then waits until
    terminated or released (a run in progress); exits with `rc` (130 when terminated), `stderr`
    as given."""

    def __init__(self, events, rc=0, stderr="", hold=False):
        self._events = [json.dumps(e) for e in events]
        self._more: list[str] = []
        self._rc, self._hold = rc, hold
        self._stop = threading.Event()
        self.stderr_file = io.StringIO(stderr)
        self.returncode = None
        self.terminated = False
        self.stdout = self._lines()

    def _lines(self):
        for line in self._events:
            yield line + "\n"
        if self._hold:
            self._stop.wait(10)
            for line in self._more:
                yield line + "\n"

    def poll(self):
        return self.returncode

    def wait(self):
        self.returncode = 130 if self.terminated else self._rc
        return self.returncode

    def terminate(self):
        self.terminated = True
        self._stop.set()

    def release(self, events):
        """A held run goes on: prints `events`, then exits with `rc`."""
        self._more = [json.dumps(e) for e in events]
        self._stop.set()


def plan(n):
    return {"event": "plan", "cells_total": n, "cells_missing": n, "pairs": 1}


def cell(i, n, model="kmer-3", computed=True, task=None):
    return {"event": "cell", "model": model, "task": task or f"t{i}", "regime": "full",
            "protocol": "geneb-v1", "done": i, "total": n, "computed": computed, "eta_s": 0.1}


def embedded(worker, sequences_per_s, model="kmer-3", task="t1"):
    return {"event": "embedded", "model": model, "task": task, "worker": worker,
            "sequences": 123, "tokens": 4567, "seconds": 1.5,
            "sequences_per_s": sequences_per_s, "tokens_per_s": 3044.7}
