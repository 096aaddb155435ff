"""The engine's `fill --json` protocol, seen from the dashboard (no engine import: a subprocess).

The engine prints one JSON object per line: `plan`, then one `cell` per finished (model, task,
regime), then `done`; or `error` (exit code 2). Cancelling sends SIGTERM; the engine keeps the
fragments it finished and never leaves a partial one visible.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


def fill_command(store: Path, suite: str, models: Sequence[str], tasks: Sequence[str],
                 regimes: Sequence[str], python: str | None = None) -> list[str]:
    cmd = [python or sys.executable, "-m", "engine.cli", "fill", "--store", str(store),
           "--suite", suite, "--json"]
    if models:
        cmd += ["--models", *models]
    if tasks:
        cmd += ["--tasks", *tasks]
    if regimes:
        cmd += ["--regimes", *regimes]
    return cmd


@dataclass(frozen=True)
class FillEvent:
    kind: str               # plan | cell | done | error | log
    data: dict

    @property
    def done(self) -> int:
        return int(self.data.get("done", 0))

    @property
    def total(self) -> int:
        return int(self.data.get("total", self.data.get("cells_missing", 0)) or 0)


def parse_line(line: str) -> FillEvent:
    """One stdout line; anything that is not a JSON event is kept as a log line."""
    line = line.strip()
    try:
        obj = json.loads(line)
    except ValueError:
        return FillEvent("log", {"message": line})
    if not isinstance(obj, dict) or "event" not in obj:
        return FillEvent("log", {"message": line})
    return FillEvent(str(obj["event"]), obj)


def start(cmd: list[str], cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1, cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
