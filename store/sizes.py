"""What a store takes on disk, and what a run of `fill` would add to it.

- `StoreSizes` (`store_sizes`): the bytes of the embeddings (the files under each model's and
  task's folder of `embeddings.zarr`, partials included), of the results and of the
  predictions (the data files the tables' newest version lists, per model: a data file holds
  one model's rows of every task, so these are not split by task or suite) and in total.
  `status` shows them, per model and per suite (a suite's embeddings: those of its tasks).
- `split_bytes`: the bytes one split of `rows` rows of `width` values takes once written, by the
  layout of `store.embeddings` (chunks of `CHUNK_ROWS` rows, every chunk file whole, so a
  split's last chunk counts in full; labels and done flags beside; its metadata with one
  checksum per block). `fill --dry-run` adds them up over the splits it would embed, and
  `fill` refuses to start when they exceed the free space (`free_space`).
- `stored_width`: the width of a model's rows as its stored splits record it (what the
  estimate uses before the model is loaded; else the caller's basis).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from store.embeddings import CHUNK_ROWS, EmbeddingStore
from store.paths import StorePaths
from store.runnable import format_bytes
from store.vocab.ids import path_part

# The bytes of one split's metadata beyond its checksums (its group's attributes: identity,
# encoder settings, telemetry; its three arrays' zarr.json), and of one checksum as stored.
SPLIT_METADATA = 6_000
CHECKSUM_BYTES = 24
# labels (int64) and done (bool) per row
_ROW_EXTRA = 8 + 1


def split_bytes(rows: int, width: int, itemsize: int = 4) -> int:
    """The bytes a split of `rows` rows x `width` values of `itemsize` bytes takes when
    written (see the module)."""
    blocks = math.ceil(rows / CHUNK_ROWS)
    return (blocks * CHUNK_ROWS * (width * itemsize + _ROW_EXTRA)
            + SPLIT_METADATA + 2 * blocks * CHECKSUM_BYTES)


def tree_bytes(path: Path) -> int:
    """The bytes of the files under `path` (links not followed; 0 when it is not there)."""
    total = 0
    try:
        entries = list(os.scandir(path))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                total += tree_bytes(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return total


def free_space(root: Path) -> int:
    """The bytes free for this user on the filesystem that holds (or will hold) `root`."""
    for folder in (root, *root.parents):
        if folder.is_dir():
            return shutil.disk_usage(folder).free
    return shutil.disk_usage(Path.cwd()).free


def stored_width(paths: StorePaths, model: str) -> int | None:
    """The width of the rows of `model`'s stored splits (the first complete one found), from
    its attributes; None where it has none."""
    folder = EmbeddingStore(paths).root / EmbeddingStore(paths).model_folder(model)
    if not folder.is_dir():
        return None
    for meta in sorted(folder.glob("*/*/zarr.json")):
        try:
            attrs = json.loads(meta.read_bytes()).get("attributes", {})
            if attrs.get("complete") is True:
                return int(attrs["shape"][1])
        except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError):
            continue
    return None


@dataclass(frozen=True)
class StoreSizes:
    """Bytes on disk (see the module): embeddings per (model folder, task folder), results and
    predictions per model."""

    embeddings: Mapping[tuple[str, str], int] = field(default_factory=dict)
    results: Mapping[str, int] = field(default_factory=dict)
    predictions: Mapping[str, int] = field(default_factory=dict)

    def model_embeddings(self, folder: str) -> int:
        return sum(n for (m, _), n in self.embeddings.items() if m == folder)

    def task_embeddings(self, tasks: Iterable[str]) -> int:
        """The embeddings of the tasks `tasks` (ids), every model's."""
        folders = {path_part(t) for t in tasks}
        return sum(n for (_, t), n in self.embeddings.items() if t in folders)

    def of_model(self, model: str, folder: str) -> dict[str, int]:
        """`model`'s bytes (its embeddings under its folder `folder`,
        `store.embeddings.EmbeddingStore.model_folder`; its results and predictions files,
        which hold every task's rows)."""
        return {"embeddings": self.model_embeddings(folder),
                "results": self.results.get(model, 0),
                "predictions": self.predictions.get(model, 0)}

    @property
    def total(self) -> dict[str, int]:
        return {"embeddings": sum(self.embeddings.values()),
                "results": sum(self.results.values()),
                "predictions": sum(self.predictions.values())}


def store_sizes(paths: StorePaths) -> StoreSizes:
    """The sizes of `paths`' embeddings, results and predictions (reads only)."""
    from store.tables.data_files import RESULTS  # lazy: pyarrow
    from store.tables.predictions import PREDICTIONS  # lazy: polars, pyarrow
    from store.tables.results import read_state  # lazy: pyarrow

    embeddings: dict[tuple[str, str], int] = {}
    root = paths.embeddings
    if root.is_dir():
        for model in sorted(p for p in root.iterdir() if p.is_dir()):
            for task in sorted(p for p in model.iterdir() if p.is_dir()):
                embeddings[model.name, task.name] = tree_bytes(task)
    tables: list[dict[str, int]] = []
    for table in (RESULTS, PREDICTIONS):
        per_model: dict[str, int] = {}
        state = read_state(paths, table)
        for f in state.files if state is not None else ():
            per_model[f.model] = per_model.get(f.model, 0) + int(f.size)
        tables.append(per_model)
    return StoreSizes(embeddings, tables[0], tables[1])


def sizes_line(totals: Mapping[str, int]) -> str:
    """The store's sizes in one line (`status`; `StoreSizes.total`)."""
    return ", ".join(f"{name} {format_bytes(n)}" for name, n in totals.items())
