"""The engine's `fill --json` protocol, seen from the dashboard (no engine import: a subprocess).

The engine prints one JSON object per line: `plan`, then one `cell` per finished (model, task,
regime), then `done`; or `error` (exit code 2). Cancelling sends SIGTERM; the engine keeps the
fragments it finished and never leaves a partial one visible.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
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
    """Start the engine; stdout (the events) is a pipe read line by line, stderr goes to a
    temporary file (a pipe nobody reads could fill up and stall the engine)."""
    err = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1, cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
    proc.stderr_file = err  # type: ignore[attr-defined]
    return proc


def stderr_text(proc: subprocess.Popen) -> str:
    err = getattr(proc, "stderr_file", None)
    if err is None:
        return ""
    err.seek(0)
    text = err.read()
    err.close()
    return text
