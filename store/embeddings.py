"""Embeddings in Zarr v3: `<store>/embeddings.zarr/<model>/<task>/{train,test}`.

Each split group holds `embeddings` (n × d, float32 by default), `labels` (n) and `done` (n, one
flag per row), with chunks of 1,024 rows, no compression and no sharding (one writer per
array; disjoint chunks are safe). The task group's attributes carry the provenance: model id and
revision, encoder settings, data hash, dtype, engine version. A split is complete only when its
`complete` attribute is set, which happens after every row is written: an interrupted write is
never mistaken for a complete one, and resumes from its `done` flags.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import zarr

from store.paths import StorePaths
from store.results import safe_name

CHUNK_ROWS = 1024
# Attributes that must match for stored embeddings to be reused.
IDENTITY = ("model_id", "model_revision", "encoder", "data_hash", "dtype")


def _same(attrs: dict, expect: dict) -> bool:
    norm = json.loads(json.dumps({k: expect.get(k) for k in IDENTITY}))
    return all(attrs.get(k) == norm[k] for k in IDENTITY)


@dataclass
class SplitWriter:
    """Writes rows of one split at their original positions; `finish` marks it complete."""

    group: zarr.Group
    n: int
    dtype: str

    def _array(self, name: str):
        return self.group[name] if name in self.group else None

    def pending(self) -> np.ndarray:
        """Row indices not written yet (all of them for a fresh split)."""
        done = self._array("done")
        if done is None or self._array("embeddings") is None:
            return np.arange(self.n)
        return np.flatnonzero(~done[:])

    def write(self, rows: np.ndarray, block: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return
        emb = self._array("embeddings")
        if emb is None:
            emb = self.group.create_array(
                "embeddings", shape=(self.n, block.shape[1]), dtype=self.dtype,
                chunks=(CHUNK_ROWS, block.shape[1]), compressors=None, overwrite=True)
        block = np.asarray(block, dtype=self.dtype)
        if rows.size == rows[-1] - rows[0] + 1 and np.all(np.diff(rows) == 1):
            emb[int(rows[0]):int(rows[-1]) + 1] = block
            self.group["done"][int(rows[0]):int(rows[-1]) + 1] = True
        else:
            order = np.argsort(rows)
            emb.set_orthogonal_selection((rows[order], slice(None)), block[order])
            self.group["done"].set_orthogonal_selection(rows[order], True)

    def finish(self) -> None:
        left = self.pending().size
        if left:
            raise RuntimeError(f"{self.group.path}: {left} row(s) still missing")
        self.group.attrs["complete"] = True


class EmbeddingStore:
    def __init__(self, paths: StorePaths):
        self.root = paths.embeddings

    def _task_group(self, model: str, task: str, mode: str = "r") -> zarr.Group | None:
        path = f"{safe_name(model)}/{safe_name(task)}"
        if mode == "r":
            try:
                return zarr.open_group(self.root, path=path, mode="r")
            except (FileNotFoundError, zarr.errors.GroupNotFoundError):
                return None
        return zarr.open_group(self.root, path=path, mode="a")

    def load(self, model: str, task: str, split: str,
             expect: dict) -> tuple[np.ndarray, np.ndarray] | None:
        """(embeddings, labels) when the split is complete and made the way `expect` says."""
        g = self._task_group(model, task)
        if g is None or not _same(dict(g.attrs), expect) or split not in g:
            return None
        s = g[split]
        if not s.attrs.get("complete"):
            return None
        return s["embeddings"][:], s["labels"][:]

    def writer(self, model: str, task: str, split: str, labels: np.ndarray,
               expect: dict) -> SplitWriter:
        """A writer for the split; resumes a compatible partial write, else starts afresh."""
        g = self._task_group(model, task, mode="a")
        if not _same(dict(g.attrs), expect):
            for name in list(g.group_keys()):
                del g[name]
            g.attrs.clear()
            g.attrs.update(json.loads(json.dumps(expect)))
        n = len(labels)
        if split in g and g[split]["labels"].shape == (n,) and np.array_equal(
                g[split]["labels"][:], labels):
            s = g[split]
        else:
            s = g.create_group(split, overwrite=True)
            s.create_array("labels", data=np.asarray(labels, dtype=np.int64),
                           chunks=(max(n, 1),), compressors=None)
            s.create_array("done", shape=(n,), dtype=bool, fill_value=False,
                           chunks=(CHUNK_ROWS,), compressors=None)
        return SplitWriter(s, n, expect.get("dtype", "float32"))
