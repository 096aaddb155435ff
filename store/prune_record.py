"""The record of pruned embeddings (`<store>/pruned.json`, `StorePaths.pruned`): split path
under `embeddings.zarr` -> what it was and when it was pruned (`store.prune`). Written
atomically under its lock; a split written again (`store.embeddings.SplitWriter`) leaves it, so
a split the record names and the disk lacks was pruned and not made again since."""

from __future__ import annotations

import json

from store.atomic import write_text_atomic
from store.locks import named_lock
from store.paths import StorePaths
from store.vocab.errors import GenebError


def read_record(paths: StorePaths) -> dict[str, dict]:
    """split path -> its entry ({} without a record; an unreadable one: a GenebError naming
    it)."""
    path = paths.pruned
    if not path.is_file():
        return {}
    try:
        return dict(json.loads(path.read_bytes())["splits"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise GenebError(f"{path}: not a record of pruned embeddings (unreadable); move it "
                         "away to start a new one") from None


def _write(paths: StorePaths, entries: dict[str, dict]) -> None:
    write_text_atomic(paths.pruned, json.dumps(
        {"version": 1, "splits": dict(sorted(entries.items()))}, indent=1))


def add(paths: StorePaths, split: str, entry: dict) -> None:
    """Record `split` as pruned."""
    with named_lock(paths, "pruned"):
        _write(paths, {**read_record(paths), split: entry})


def forget(paths: StorePaths, split: str) -> None:
    """`split` is stored again: no longer pruned (nothing written without a record naming it;
    an unreadable record is left for `doctor` to name)."""
    if not paths.pruned.is_file():
        return
    with named_lock(paths, "pruned"):
        try:
            entries = read_record(paths)
        except GenebError:
            return
        if entries.pop(split, None) is not None:
            _write(paths, entries)
