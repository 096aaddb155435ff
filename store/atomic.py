"""Atomic file writes: a temporary name unique to this process, fsync, then rename into place.

Temporary names look like `.<name>.tmp-<host>-<pid>-<random>` beside the final file, so two
processes (on one machine or on two machines sharing the store) never write the same temporary
file, a reader never sees a half-written file, and a temporary file whose writer is gone can be
recognised and removed (`store.sweep`).
"""

from __future__ import annotations

import os
import re
import socket
import uuid
from collections.abc import Callable
from pathlib import Path

HOST = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "host"
# `.<name>.tmp-<host>-<pid>-<hex>`: what every temporary file of the store is called.
TEMP_NAME = re.compile(r"^\..+\.tmp-(?P<host>[A-Za-z0-9_]+)-(?P<pid>\d+)-[0-9a-f]{8}$")


def temp_path(final: Path) -> Path:
    """A temporary path beside `final`, unique to this process and call."""
    final = Path(final)
    return final.with_name(f".{final.name}.tmp-{HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, write: Callable[[Path], None]) -> Path:
    """Call `write(tmp)` to produce the file under a temporary name, fsync it and rename it to
    `path` (the folder is created when missing). On any error the temporary file is removed and
    `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    try:
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    return write_atomic(path, lambda tmp: tmp.write_bytes(data))


def write_text_atomic(path: Path, text: str) -> Path:
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def temp_owner(path: Path) -> tuple[str, int] | None:
    """(host, pid) of the process that writes a temporary file; None for any other name."""
    m = TEMP_NAME.match(Path(path).name)
    return (m["host"], int(m["pid"])) if m else None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
