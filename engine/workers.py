"""Probe worker processes: they die with their parent (one BLAS thread each, as every probe:
`engine.pairs.PROBE_THREADS`).

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
