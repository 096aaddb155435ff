"""Named crash points, for the crash tests: `GENEB_FAILPOINT=<name>[:<n>]` kills the run with
SIGKILL the n-th time (default: the first) the process reaches `reach(<name>)`.

The run killed is `GENEB_FAILPOINT_PID` when set (`fill` sets it to its own pid, so a point
reached in a probe worker kills the parent, as `kill -9` of `fill` would; the worker must then
die with its parent), else the process itself. Unset, `reach` costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal
import time

_SPEC = os.environ.get("GENEB_FAILPOINT", "")
_NAME, _, _NTH = _SPEC.partition(":")
_HITS: dict[str, int] = {}


def reach(name: str) -> None:
    if name != _NAME:
        return
    _HITS[name] = _HITS.get(name, 0) + 1
    if _HITS[name] != int(_NTH or 1):
        return
    target = int(os.environ.get("GENEB_FAILPOINT_PID") or os.getpid())
    os.kill(target, signal.SIGKILL)
    if target != os.getpid():
        time.sleep(5)   # a worker: it must die with its parent before it writes anything more
