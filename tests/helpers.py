"""Plain helpers shared by the test packages (fixtures live in the conftest.py files)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


class _Delete:
    def __repr__(self) -> str:   # test ids stay the same in every process (pytest -n)
        return "DELETE"


DELETE = _Delete()   # `set_field`'s value that removes the field


def digest(root: Path) -> dict[str, str]:
    """Every file under `root` -> its sha256 (folders -> 'dir'); {} when `root` is missing: what
    "the store is unchanged, byte for byte" compares."""
    if not root.exists():
        return {}
    if root.is_file():
        return {".": hashlib.sha256(root.read_bytes()).hexdigest()}
    return {p.relative_to(root).as_posix(): "dir" if p.is_dir()
            else hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))}


def set_field(doc: dict, dotted: str, value) -> dict:
    """`doc` with the field at `dotted` ('|'-separated keys) set to `value` (DELETE: removed)."""
    *parents, last = dotted.split("|")
    node = doc
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return doc


class _Unimportable:
    """A finder that fails the import of `names` (top-level packages) and their submodules."""

    def __init__(self, names: frozenset[str], why: str) -> None:
        self.names, self.why = names, why

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r} ({self.why})")
        return None


def unimportable(names, why: str) -> None:
    """From now on in this process, importing any of `names` fails with a message that ends
    in `why`: a child process made to run as a machine without those packages would."""
    sys.meta_path.insert(0, _Unimportable(frozenset(names), why))


# `make test` runs each random sweep (kills at random moments, random key presses) on a fixed
# sample; `make test-full` (GENEB_TEST_FULL=1) runs it whole.
FULL = os.environ.get("GENEB_TEST_FULL") == "1"


def sweep_size(full: int, sampled: int) -> int:
    """How many rounds a random sweep runs: `full` under `make test-full`, else `sampled`."""
    return full if FULL else sampled


def taking_turns(items, settings) -> list[tuple]:
    """(item, setting) pairs of a sweep over both: every pair under `make test-full`; under
    `make test` each item at one setting, the items taking turns (every setting still runs)."""
    items, settings = list(items), list(settings)
    return [(item, settings[(i + j) % len(settings)]) for i, item in enumerate(items)
            for j in range(sweep_size(len(settings), 1))]
