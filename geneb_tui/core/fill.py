"""The engine's `fill --json` protocol, seen from the dashboard (no engine import: a subprocess).

The engine prints one JSON object per line: `warning` (a task file's skipped rows), `plan`,
one `cell` per finished (model, task, regime) with `done`, `total` and `computed` (False when
another process computed it meanwhile), then `done` with `computed`. A refusal or a failure
ends the process with a non-zero exit and one line `geneb-engine fill: <message>` on stderr.
Besides, `executor` (the executor and its resources), `placement` (a model's share of them) and
`embedded` (one (model, task) embedded by a worker, with its throughput); any other event is
ignored. Cancelling sends SIGTERM; the engine keeps the fragments it finished and never leaves
a partial one visible. `outcome` turns a finished run into its honest final state.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from store.vocab.executors import IN_PROCESS, check_address


def fill_command(store: Path, suite: str, models: Sequence[str], tasks: Sequence[str],
                 regimes: Sequence[str], python: str | None = None, *,
                 device: str | None = None, batch_size: int | None = None,
                 trust_remote_code: bool = False, executor: str = IN_PROCESS,
                 address: str = "", dtype: str = "auto") -> list[str]:
    """`geneb-engine fill --json` for these model specs (`id` or `id@<commit>`), tasks (none:
    the whole suite) and regimes; `device` None or "auto" leaves the engine's default, and
    `dtype` "auto" its precision (`--dtype`, `store.vocab.encoder_kinds.DTYPES`); the
    `ray` executor passes `--executor ray` and its `address` (none: the engine starts a local
    Ray instance); `local` is the engine's default."""
    cmd = [python or sys.executable, "-m", "engine.cli", "fill", "--store", str(store),
           "--suite", suite, "--json"]
    if models:
        cmd += ["--models", *models]
    if tasks:
        cmd += ["--tasks", *tasks]
    if regimes:
        cmd += ["--regimes", *regimes]
    if device and device != "auto":
        cmd += ["--device", device]
    if batch_size:
        cmd += ["--batch-size", str(int(batch_size))]
    if dtype != "auto":
        cmd += ["--dtype", dtype]
    if trust_remote_code:
        cmd.append("--trust-remote-code")
    if executor == "ray":
        cmd += ["--executor", "ray"]
        if address:
            cmd += ["--address", address]
    return cmd


@dataclass
class FillChoices:
    """What the missing-evaluations screen remembers while the dashboard runs: the ticked
    models and the run options (kept across openings of the screen)."""

    ticked: set[str] = field(default_factory=set)
    regimes: str = "all"              # "all" or one regime
    device: str = "auto"              # auto | cpu | cuda
    dtype: str = "auto"               # one of store.vocab.encoder_kinds.DTYPES
    batch_size: int | None = None
    trust_remote_code: bool = False
    executor: str = IN_PROCESS        # one of store.vocab.executors.EXECUTORS
    address: str = ""                 # the Ray cluster; "" starts a local Ray instance


def parse_batch_size(text: str) -> int | None:
    """'' -> None (the engine's default); a positive integer; ValueError otherwise."""
    t = text.strip()
    if not t:
        return None
    if not t.isdigit() or int(t) < 1:
        raise ValueError(f"batch size must be a positive whole number, not {t!r}")
    return int(t)


def parse_address(text: str) -> str:
    """'' -> '' (the engine starts a local Ray instance); else an address as `fill --address`
    takes it (`store.vocab.executors.check_address`: the one rule); ValueError otherwise."""
    t = text.strip()
    return check_address(t) if t else ""


@dataclass(frozen=True)
class FillEvent:
    kind: str               # warning | plan | cell | done | executor | placement | embedded | log
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


def _is_num(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _num(value: object) -> str:
    """A count or rate as shown: whole numbers without decimals, small rates with one."""
    if not _is_num(value):
        return "?"
    return f"{value:.1f}" if abs(value) < 10 and value != round(value) else f"{value:.0f}"


def executor_text(ev: FillEvent) -> str:
    """An `executor` event in one line: "ray at auto: 1 node(s), 2 CPU(s), 0 GPU(s)"."""
    d = ev.data
    where = f" at {d['address']}" if d.get("address") else ""
    return (f"{d.get('kind', '?')}{where}: {_num(d.get('nodes'))} node(s), "
            f"{_num(d.get('cpus'))} CPU(s), {_num(d.get('gpus'))} GPU(s)")


def placement_text(ev: FillEvent) -> str:
    """A `placement` event in one line: "GROVER on 1 GPU(s), 1 CPU(s) (reason)"."""
    d = ev.data
    why = f" ({d['reason']})" if d.get("reason") else ""
    return (f"{d.get('model', '?')} on {_num(d.get('gpus'))} GPU(s), "
            f"{_num(d.get('cpus'))} CPU(s){why}")


def worker_rate(ev: FillEvent) -> tuple[str, str] | None:
    """An `embedded` event's worker and its throughput as shown ("812 seq/s"); None when the
    event does not say."""
    worker, rate = ev.data.get("worker"), ev.data.get("sequences_per_s")
    if not worker or not _is_num(rate):
        return None
    return str(worker), f"{_num(rate)} seq/s"


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


def engine_message(stderr: str) -> str:
    """The engine's one-line message from its stderr: the last `geneb-engine ...:` line that is
    not a warning, else the last line of a traceback, else the last line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if ln.startswith("geneb-engine") and ": warning:" not in ln:
            return ln
    return lines[-1] if lines else ""


@dataclass(frozen=True)
class FillOutcome:
    state: str          # done | failed | cancelled
    message: str


def outcome(events: Sequence[FillEvent], returncode: int, cancelled: bool,
            stderr: str) -> FillOutcome:
    """The honest final state of a run: `done` when the engine said so (its `done` event, or
    every planned cell finished before a cancel landed), `cancelled` only when the user
    cancelled before the end, `failed` otherwise, with the engine's one-line message."""
    cells = [e for e in events if e.kind == "cell"]
    warnings = sum(e.kind == "warning" for e in events)
    tail = f"; {warnings} warning(s) about the task files" if warnings else ""
    finished = next((e for e in reversed(events) if e.kind == "done"), None)
    if finished is not None:
        computed = int(finished.data.get("computed", 0))
        others = len(cells) - computed
        secs = finished.data.get("seconds")
        took = f" in {secs:.1f} s" if isinstance(secs, int | float) else ""
        extra = f" ({others} more were computed meanwhile by another process)" if others > 0 \
            else ""
        nothing = " Nothing was missing." if not cells and computed == 0 else ""
        return FillOutcome("done", f"Done: {computed} cell(s) computed{took}{extra}.{nothing}"
                                   f"{tail}")
    plan = next((e for e in events if e.kind == "plan"), None)
    total = plan.total if plan is not None else (cells[-1].total if cells else 0)
    done = cells[-1].done if cells else 0
    if cancelled and plan is not None and done >= total:
        return FillOutcome("done", f"Done: all {total} planned cell(s) finished (the cancel "
                                   f"came after the last one){tail}.")
    if cancelled:
        of = f" after {done} of {total} cells" if plan is not None else " before the plan"
        return FillOutcome("cancelled", f"Cancelled{of}. Finished cells are kept; run again to "
                                        f"continue{tail}.")
    message = engine_message(stderr)
    if returncode == 0:
        message = message or "the engine ended without its done event"
    return FillOutcome("failed", message or f"geneb-engine fill ended with exit {returncode}")
