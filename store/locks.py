"""Advisory locks of a store, under `<store>/locks/`.

- **pair locks** (`locks/pairs/<model>/<task>.lock`): one process works on a (model, task) at a
  time (embeds it, probes it, commits its rows); another `fill` that meets a held pair moves on
  and comes back to find it done.
- **commit locks** (`<pair>.commit.lock`): held around "which of these cells are done now?" and
  the append that follows, so a retry or a second writer can never add a cell twice.
- **the store lock** (`locks/store.lock`): every writing process holds it *shared* for its whole
  run; whoever can take it *exclusively* knows no writer is alive, so it may remove every
  temporary file and finish interrupted work (`store.sweep`).
- **maintenance locks** (`locks/compact.lock`, `locks/catalog.lock`): one compaction at a time;
  catalog updates are read-modify-write and take turns.
- **import locks** (`locks/imports/<model>.lock` and `<model>.use.lock`): one
  `import-embeddings` of a model at a time (`import_lock`), and never beside a `fill` of it:
  every `fill` of imported embeddings holds the use lock shared for its whole run, an import
  exclusively (`embeddings_use`); neither waits: the one that comes second refuses.

All are `flock(2)` locks (the `filelock` package for the named locks): the kernel releases them
when the holder dies, even by SIGKILL, so a crash never leaves a stale lock. On NFS v4 Linux
emulates `flock` with byte-range locks that the server arbitrates between clients; NFS v3 needs
the `lockd` service; Lustre needs the `flock` mount option; CephFS and GPFS support it. Where the
filesystem refuses `flock`, `filelock` falls back to lock files created with `O_EXCL`, which
survive a crash and must then be removed by hand (`geneb-engine doctor` lists them).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from store.paths import StorePaths
from store.vocab.ids import path_part

POLL_S = 0.05


def _lock_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def pair_lock(paths: StorePaths, model: str, task: str) -> FileLock:
    """The lock of one (model, task): held while the pair is embedded, probed and written."""
    return FileLock(_lock_file(paths.locks / "pairs" / path_part(model)
                               / f"{path_part(task)}.lock"), poll_interval=POLL_S)


def commit_lock(paths: StorePaths, model: str, task: str) -> FileLock:
    """Held around the done-check and the append of one pair's rows."""
    return FileLock(_lock_file(paths.locks / "pairs" / path_part(model)
                               / f"{path_part(task)}.commit.lock"), poll_interval=POLL_S)


def named_lock(paths: StorePaths, name: str) -> FileLock:
    return FileLock(_lock_file(paths.locks / f"{name}.lock"), poll_interval=POLL_S)


def import_lock(paths: StorePaths, model: str) -> FileLock:
    """Held by an import of `model`'s embeddings for its whole run."""
    return FileLock(_lock_file(paths.locks / "imports" / f"{path_part(model)}.lock"),
                    poll_interval=POLL_S)


@contextmanager
def embeddings_use(paths: StorePaths, model: str, *, exclusive: bool) -> Iterator[bool]:
    """Take the use lock of `model`'s imported embeddings (see the module) shared or
    `exclusive`, without waiting; yields whether it is held (False: the other kind holds
    it, and nothing is taken)."""
    path = _lock_file(paths.locks / "imports" / f"{path_part(model)}.use.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)    # releases the lock


def try_acquire(lock: FileLock) -> bool:
    """Take `lock` if it is free now; False when another process holds it."""
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return False
    return True


class StoreSession:
    """The shared store lock of a writing process (see the module docstring).

    `exclusive()` tries to take the lock exclusively for a moment (no other writer alive) and
    returns to shared afterwards; `flock` conversions are not atomic, which only means another
    writer may slip in between, never that two hold it exclusively.
    """

    def __init__(self, paths: StorePaths):
        self.path = _lock_file(paths.locks / "store.lock")
        self._fd: int | None = None

    def __enter__(self) -> StoreSession:
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(self._fd, fcntl.LOCK_SH)
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.close(self._fd)   # releases the lock
            self._fd = None

    @contextmanager
    def exclusive(self) -> Iterator[bool]:
        """Yields True while this process is the only writer (then shared again)."""
        assert self._fd is not None, "enter the session first"
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(self._fd, fcntl.LOCK_SH)   # a failed conversion may have dropped it
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_SH)
