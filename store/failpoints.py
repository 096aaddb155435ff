"""Named crash points, for the crash tests: `GENEB_FAILPOINT=<name>[:<n>]` kills the run with
SIGKILL the n-th time (default: the first) the process reaches `reach(<name>)`.

The run killed is `GENEB_FAILPOINT_PID` when set (`fill` sets it to its own pid, so a point
reached in a probe worker kills the parent, as `kill -9` of `fill` would; the worker must then
die with its parent), else the process itself. Unset, `reach` costs one dictionary lookup.

`GENEB_FAULT=<name>:<raise|pause>:<marker file>[,...]`, for faults that a cluster must
survive: the first process of all to reach the point (the one that creates the marker file)
raises `InjectedFault` there (a task that fails once), or writes its pid into the marker and
sleeps (an actor for the test to kill mid-pair); every later one passes.
"""

from __future__ import annotations

import os
import signal
import time

_SPEC = os.environ.get("GENEB_FAILPOINT", "")
_NAME, _, _NTH = _SPEC.partition(":")
_HITS: dict[str, int] = {}
# point name -> (mode, marker file)
_FAULTS = {name: tuple(rest.split(":", 1)) for spec in os.environ.get("GENEB_FAULT", "").split(",")
           if spec for name, _, rest in [spec.partition(":")]}
_PAUSE_S = 120


class InjectedFault(RuntimeError):
    """Raised by a `GENEB_FAULT=<name>:raise:<marker>` point."""


def _fault(name: str) -> None:
    mode, path = _FAULTS[name]
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return                      # reached before, by this or another process
    with os.fdopen(fd, "w") as marker:
        marker.write(str(os.getpid()))
    if mode == "raise":
        raise InjectedFault(f"injected fault at {name}")
    time.sleep(_PAUSE_S)


def reach(name: str) -> None:
    if name in _FAULTS:
        _fault(name)
    if name != _NAME:
        return
    _HITS[name] = _HITS.get(name, 0) + 1
    if _HITS[name] != int(_NTH or 1):
        return
    target = int(os.environ.get("GENEB_FAILPOINT_PID") or os.getpid())
    os.kill(target, signal.SIGKILL)
    if target != os.getpid():
        time.sleep(5)   # a worker: it must die with its parent before it writes anything more
