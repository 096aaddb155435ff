"""`geneb-engine` runs as real processes, marked so that a test can find them (and their
workers) in /proc: the command of a fill, its results and the temporary files it leaves; and
the same fill run in the test's own process (`fill_here`), for a run nobody kills."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from store.atomic import TEMP_NAME
from store.db import query
from store.paths import resolve_store
from store.tables.schema import KEY
from tests.engine.in_process import printed

ROOT = Path(__file__).resolve().parents[2]
MODELS = ("kmer-3", "kmer-4")
COMPARED = ("model, task, regime, seed, protocol_hash, data_hash, mcc, acc, f1_macro, n_train, "
            "n_test, degenerate, converged, shared_fit")


def fill_args(store: Path, suite: Path, *extra: str, models=MODELS) -> list[str]:
    """The arguments of the tests' fill (JSON lines out)."""
    return ["fill", "--suite", str(suite), "--models", *models, "--store", str(store), "--json",
            *extra]


def fill_cmd(store: Path, suite: Path, *extra: str, models=MODELS) -> list[str]:
    return [sys.executable, "-m", "engine.cli", *fill_args(store, suite, *extra, models=models)]


def fill_here(store: Path, suite: Path, *extra: str, models=MODELS) -> tuple[int, str]:
    """The same fill in this process (`tests.engine.in_process.printed`): (exit status, its
    JSON lines). A run that is not killed, not raced and not watched in /proc (a rerun that
    finishes a killed one, a reference) needs no process of its own, and spares a process's
    start, about 3 s of CPU (importing scikit-learn, polars, zarr); `--jobs 2` still spawns its
    workers."""
    return printed(*fill_args(store, suite, *extra, models=models))


def env_of(mark: str, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENEB_")}
    return {**env, "GENEB_TEST_RUN": mark, **extra}


def run(cmd: list[str], mark: str = "", **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, env=env_of(mark or uuid.uuid4().hex, **extra),
                          capture_output=True, text=True, timeout=300)


def processes_marked(mark: str) -> list[int]:
    """Live processes whose environment carries the run's mark (the fill and its workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"GENEB_TEST_RUN={mark}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def wait_no_orphans(mark: str, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := processes_marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def results_of(store: Path):
    return query(resolve_store(store), f"SELECT {COMPARED} FROM results ORDER BY ALL")


def duplicate_keys(store: Path) -> int:
    key = ", ".join(KEY)
    return query(resolve_store(store), f"SELECT count(*) FROM (SELECT {key} FROM results_all "
                                       f"GROUP BY ALL HAVING count(*) > 1)").item()


def temp_files(store: Path) -> list[Path]:
    """Every temporary name of the store (`store.sweep`'s) and every unfinished split."""
    from store.sweep import stale_temps

    return stale_temps(resolve_store(store), alone=True) + [
        p for p in store.rglob("*") if TEMP_NAME.match(p.name) or p.name.endswith(".partial")]
