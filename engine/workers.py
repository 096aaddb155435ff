"""Probe worker processes: they die with their parent (one BLAS thread each, as every probe:
`engine.probes.PROBE_THREADS`).

A worker whose parent is gone must never write: on Linux the kernel sends it SIGKILL the moment
the parent dies (`prctl(PR_SET_PDEATHSIG)`); elsewhere a thread polls the parent's pid. A worker
whose parent died before it could arm either exits at once.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1
_POLL_S = 0.2
# `--jobs auto`: what one probe worker may hold at once, per row of its pair: the embeddings
# (float32, up to WIDTH dimensions: kmer-6 and the widest official models have 4,096 or less)
# times COPIES (the worker's copy, scikit-learn's float64 copy of a regime's rows, its
# gradient and predictions).
_WIDTH = 4096
_COPIES = 3


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores or 1


def _memory_bound(largest_rows: int) -> tuple[int | None, int, int | None]:
    """(the probe workers the available memory holds for the largest pair, None when the
    memory is unknown; the bytes one worker may hold; the bytes available)."""
    per_worker = max(1, largest_rows) * _WIDTH * 4 * _COPIES
    memory = available_memory()
    return (memory // per_worker if memory else None), per_worker, memory


def auto_jobs(largest_rows: int) -> tuple[int, str]:
    """(probe workers, why) for `fill --jobs auto`: one per core the process may use, less one
    for the main process that embeds meanwhile, at most as many as the available memory holds
    for the largest pair (`largest_rows` train + test rows), at least one."""
    cores = usable_cores()
    by_memory, per_worker, memory = _memory_bound(largest_rows)
    jobs = max(1, min(cores - 1, cores if by_memory is None else by_memory))
    why = (f"{cores} cores (one embeds), {memory / 2**30:.1f} GiB available, up to "
           f"{per_worker / 2**30:.2f} GiB per worker for the largest pair ({largest_rows:,} rows)"
           if memory else f"{cores} cores (one embeds); available memory unknown")
    return int(jobs), why


def capped_jobs(requested: int, largest_rows: int) -> tuple[int, str | None]:
    """(probe workers, the line that says why when fewer than asked) for `fill --jobs N`: N,
    at most the cores this process may use and as many as the available memory holds for the
    largest pair (`auto_jobs`' estimate per worker), at least one."""
    cores = usable_cores()
    by_memory, per_worker, memory = _memory_bound(largest_rows)
    held = cores if by_memory is None else max(1, int(by_memory))
    if requested <= min(cores, held):
        return requested, None
    if held < cores:
        return held, (f"--jobs {requested}: capped at {held}, what the available memory holds "
                      f"({memory / 2**30:.1f} GiB available, up to {per_worker / 2**30:.2f} GiB "
                      f"per worker for the largest pair, {largest_rows:,} rows)")
    return cores, f"--jobs {requested}: capped at {cores}, the cores this process may use"


def probe_jobs(requested: int | None, largest_rows: int) -> tuple[int, str | None]:
    """(probe workers, the line a run prints about them, None when there is nothing to say)
    of `fill --jobs` (None: auto) for a run whose largest pair has `largest_rows` rows; the
    one decision of the local executor and of `fill --dry-run`."""
    if requested is None:
        jobs, why = auto_jobs(largest_rows)
        return jobs, f"--jobs auto: {jobs} probe worker(s) ({why})"
    return capped_jobs(requested, largest_rows)


def available_memory() -> int | None:
    """Bytes of memory available to new processes (Linux: MemAvailable), None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def die_with_parent(parent: int) -> None:
    armed = False
    if sys.platform.startswith("linux"):
        try:
            armed = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG,
                                                             signal.SIGKILL) == 0
        except (OSError, AttributeError):
            armed = False
    if not armed:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(_POLL_S)
            os.kill(os.getpid(), signal.SIGKILL)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    if os.getppid() != parent:      # the parent died before the guard was armed
        os.kill(os.getpid(), signal.SIGKILL)


def init_probe_worker(parent: int) -> None:
    """ProcessPoolExecutor initializer of `fill --jobs N` workers."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
