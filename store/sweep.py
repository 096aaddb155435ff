"""Temporary files whose writer is gone, found and removed at the start of every writing run.

- This version's temporary names (`store.atomic.TEMP_NAME`, files or folders): all of them when
  no other writer holds the store (the exclusive store lock, `store.locks.StoreSession`), else
  those of processes on this host that are no longer alive.
- Temporary files of the Delta log (`<entry>#<n>`, `_commit_*.tmp`), of zarr
  (`<name>.<hex>.partial`) and of geneb 0.1 (`*.tmp`, `.<name>.tmp<pid>`): only when no other
  writer holds the store.

Never removed here: `.partial` embedding splits (resumable work, `store.embeddings`), data files
(the results table's `vacuum` decides) and anything under `aside/`.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from store.atomic import HOST, pid_alive, temp_owner
from store.locks import StoreSession
from store.paths import StorePaths

# geneb 0.1's temporary names, delta-rs' (`<name>#<n>`, `_commit_*.tmp`) and zarr's
# (`<name>.<uuid hex>.partial`).
_OLD_TEMP = re.compile(r"(\.tmp|\.tmp\d+|#\d+|\.[0-9a-f]{32}\.partial)$")


def abandoned(name: str, alone: bool) -> bool:
    """Whether `name` is this version's temporary name (`store.atomic.TEMP_NAME`) of a writer
    that is gone: any such name when no other writer can be at work (`alone`), else one of a
    process on this host that is no longer alive."""
    owner = temp_owner(Path(name))
    if owner is None:
        return False
    host, pid = owner
    return alone or (host == HOST and not pid_alive(pid))


def stale_temps(paths: StorePaths, alone: bool) -> list[Path]:
    """Temporary files and folders nobody writes any more (see the module docstring)."""
    found: list[Path] = []
    if not paths.root.is_dir():
        return found
    for base, dirs, files in os.walk(paths.root):
        here = Path(base)
        if here == paths.root and paths.aside.name in dirs:
            dirs.remove(paths.aside.name)
        for name in [*dirs, *files]:
            if abandoned(name, alone) or (alone and temp_owner(Path(name)) is None
                                          and _OLD_TEMP.search(name)):
                found.append(here / name)
        dirs[:] = [d for d in dirs if here / d not in found]
    return found


def remove(found: list[Path]) -> None:
    for path in found:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def sweep(paths: StorePaths, session: StoreSession) -> list[Path]:
    """Remove the stale temporary files of the store; returns what was removed."""
    with session.exclusive() as alone:
        found = stale_temps(paths, alone)
        remove(found)
    return found
