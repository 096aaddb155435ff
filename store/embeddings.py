"""Embeddings in Zarr v3: `<store>/embeddings.zarr/<model>/<task>/<split>` (`train`, `test`;
the folders are `store.tables.schema.path_part` of the ids), `<split>@<precision>` for those
computed at another precision than the reference one (`store.vocab.variant.split_suffix`: the
precision is part of the embeddings' identity, so a run at another precision never replaces
them; the caller's `expect` names it, `compute_precision`), and `<split>@reference@4` (after
the precision's suffix, if any) for those of a recipe preset other than normalized
(`recipe_preset`, in `expect` only then), then `@stored-float16` / `@stored-bfloat16` for those
stored at half precision (`expect`'s `dtype`, the storage precision: `fill
--storage-precision`). A model whose embeddings were
imported keeps them in the folder its import record names instead of `<model>`
(`store.embedding_imports`: `<model>@<revision>`, one per import, so that an import switches
atomically); `EmbeddingStore.model_folder` says which.

Each split is a self-contained Zarr v3 group holding `embeddings` (n × d, float32 by default;
float16; or bfloat16 as its bit pattern in uint16, zarr 3.1 having no bfloat16 type: `STORED`;
fill value NaN), `labels` (n, int64) and `done` (n, one flag per row), all in chunks of 1,024
rows, uncompressed, unsharded, with every chunk written to its own file. The split's attributes
describe it: the identity and provenance the caller passes (model id and revision, encoder
settings, data hash, dtype, engine version), `shape`, `n_truncated`, the crc32 `checksums` of
every 1,024-row block, and `complete`.

Guarantees:

- A split is visible to readers only when whole. It is written as `<split>.partial` (resumable
  from its `done` flags after any crash; one writer per (model, task), the caller's lock) and
  renamed into place by `SplitWriter.finish` after its checksums and `complete` are recorded. A
  split it replaces is first renamed aside (`store.atomic.temp_path`), then removed.
- `EmbeddingStore.load` returns data only when it verifies: identity as expected, `complete`
  set, shapes and dtypes as recorded, every chunk file present at its full size, every row
  done, every checksum equal. Anything else, including a file that does not parse, is None:
  never fill values, never a traceback. Splits of the previous layout (no checksums) fail this
  check, so they are recomputed and replaced.
- A damaged or incompatible partial is removed and rebuilt by the next writer, so no crash
  can wedge a (model, task) pair.
- Every value is a finite number: a split holding NaN or an infinity does not verify, and a
  writer refuses to finish one (`NotFinite`).

`EmbeddingStore.load` returns float32 whatever the storage precision (a half-precision split's
values widened exactly), so the probes read float32. The checksums are of the stored values.

`EmbeddingStore.splits`, `inspect` and `drop` serve maintenance: list what is on disk, say in
one line what is wrong with a split, remove it. Nothing here imports torch or a UI.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shutil
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import zarr

from store.atomic import TEMP_NAME, fsync_dir, temp_path, write_text_atomic
from store.embedding_imports import read_import
from store.failpoints import reach
from store.paths import StorePaths
from store.prune_record import forget
from store.vocab.errors import GenebError
from store.vocab.ids import path_part
from store.vocab.variant import STORAGES, split_suffix

CHUNK_ROWS = 1024
# Attributes that must match for stored embeddings to be reused.
IDENTITY = ("model_id", "model_revision", "encoder", "data_hash", "dtype")
PARTIAL = ".partial"
ARRAYS = ("embeddings", "labels", "done")
_ARRAY_CONFIG = {"write_empty_chunks": True}
_SPLIT_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


class _Corrupt(Exception):
    """Why a split cannot be used, in one line."""


class NotFinite(GenebError):
    """A split's rows hold NaN or an infinity (`SplitWriter.finish` refuses to store them)."""


@dataclass(frozen=True)
class SplitCheck:
    state: str    # "complete", "partial" or "corrupt"
    reason: str
    resumable: bool = False    # a partial whose written rows the next writer keeps


@dataclass(frozen=True)
class SplitEntry:
    model_dir: str
    task_dir: str
    split: str
    path: Path
    partial: bool


def _normalise(expect: dict) -> dict:
    return json.loads(json.dumps(expect))


def _same(attrs: dict, expect: dict) -> bool:
    norm = _normalise({k: expect.get(k) for k in IDENTITY})
    return all(attrs.get(k) == norm[k] for k in IDENTITY)


# storage precision (the split's `dtype` attribute) -> the dtype of its embeddings array; float64
# is no storage precision a run chooses: the engine's own splits of float64 values (the zero-shot
# scores' cache, `engine.probes.kinds.LLR_SPLIT`), stored and read back as computed
STORED: dict[str, np.dtype] = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16),
                               "bfloat16": np.dtype(np.uint16), "float64": np.dtype(np.float64)}
_BF16_NAN = 0x7FC0


def _dtype(attrs: dict) -> np.dtype:
    """The dtype of the embeddings array of a split stored at `attrs`' `dtype`."""
    name = attrs.get("dtype") or "float32"
    if name not in STORED:
        raise _Corrupt(f"dtype {name!r} is not a storage precision")
    return STORED[name]


def storage_of(expect: dict) -> str | None:
    """The storage precision a split's folder name carries (`split_suffix`): float16 or
    bfloat16 (`store.vocab.variant.STORAGES`), else none."""
    dtype = expect.get("dtype")
    return dtype if dtype in STORAGES else None


def stored_values(X: np.ndarray, storage: str) -> np.ndarray:
    """float32 rows as stored at `storage`: cast to float16; bfloat16's bit pattern (the upper
    16 bits, rounded to nearest with ties to even); float32 (and float64 values) as they are."""
    if storage == "float64":
        return np.ascontiguousarray(X, dtype=np.float64)
    X = np.ascontiguousarray(X, dtype=np.float32)
    if storage != "bfloat16":
        with np.errstate(over="ignore"):    # an overflow is an infinity: refused by `finish`
            return X.astype(STORED[storage], copy=False)
    bits = X.view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def as_float32(values: np.ndarray, storage: str) -> np.ndarray:
    """Stored values widened to float32, exactly (float64 values as they are)."""
    if storage == "bfloat16":
        return (values.astype(np.uint32) << 16).view(np.float32)
    if storage == "float64":
        return values
    return values.astype(np.float32, copy=False)


def _layout(n: int, d: int, dtype: np.dtype) -> dict[str, tuple[tuple, np.dtype, tuple]]:
    """(shape, dtype, chunks) of each array of a split."""
    return {"embeddings": ((n, d), dtype, (CHUNK_ROWS, d)),
            "labels": ((n,), np.dtype(np.int64), (CHUNK_ROWS,)),
            "done": ((n,), np.dtype(bool), (CHUNK_ROWS,))}


def _crcs(values: np.ndarray) -> list[int]:
    """crc32 of the C-order (little-endian) bytes of every 1,024-row block."""
    data = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<"))
    return [zlib.crc32(data[i:i + CHUNK_ROWS]) for i in range(0, len(data), CHUNK_ROWS)]


def _describe(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"unreadable ({type(error).__name__}{': ' + text if text else ''})"


def _read_json(path: Path, label: str) -> dict:
    if not path.is_file():
        raise _Corrupt(f"{label} missing")
    try:
        meta = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError):
        raise _Corrupt(f"{label} not valid JSON") from None
    if not isinstance(meta, dict) or meta.get("zarr_format") != 3:
        raise _Corrupt(f"{label} is not Zarr v3 metadata")
    return meta


def _open_group(path: Path, mode: str = "r") -> zarr.Group:
    if not path.is_dir():
        raise _Corrupt("missing")
    if _read_json(path / "zarr.json", "zarr.json").get("node_type") != "group":
        raise _Corrupt("zarr.json is not a group")
    return zarr.open_group(str(path), mode=mode)


def _open_array(path: Path, name: str, mode: str = "r") -> zarr.Array:
    if _read_json(path / name / "zarr.json", f"{name}/zarr.json").get("node_type") != "array":
        raise _Corrupt(f"{name}/zarr.json is not an array")
    return zarr.open_array(str(path / name), mode=mode)


def _check_layout(array: zarr.Array, name: str, shape: tuple, dtype: np.dtype,
                  chunks: tuple) -> None:
    if array.shape != shape or array.dtype != dtype:
        raise _Corrupt(f"{name} is {array.dtype} {array.shape}, recorded {dtype} {shape}")
    if array.chunks != chunks or array.compressors or array.filters or array.shards:
        raise _Corrupt(f"{name} is not stored in uncompressed chunks of {chunks}")


def _chunk_problem(array: zarr.Array, folder: Path, name: str,
                   blocks: set[int] | None = None) -> str | None:
    """The first chunk file of `array` (of the row blocks `blocks`, default all) that is
    missing or not of a full chunk's size."""
    size = math.prod(array.chunks) * array.dtype.itemsize
    grid = [range(math.ceil(s / c)) for s, c in zip(array.shape, array.chunks, strict=True)]
    for index in itertools.product(*grid):
        if blocks is not None and index[0] not in blocks:
            continue
        key = "c/" + "/".join(map(str, index))
        file = folder / key
        if not file.is_file():
            return f"chunk {key} of {name} missing"
        if (got := file.stat().st_size) != size:
            return f"chunk {key} of {name} has {got} bytes, not {size}"
    return None


def _compare(checksums: dict, X: np.ndarray, y: np.ndarray) -> None:
    for name, values, what in (("embeddings", X, "rows"), ("labels", y, "labels of rows")):
        want, got = checksums.get(name), _crcs(values)
        if not isinstance(want, list) or len(want) != len(got):
            raise _Corrupt(f"checksums of {name} malformed")
        for block, (w, g) in enumerate(zip(want, got, strict=True)):
            if w != g:
                lo = block * CHUNK_ROWS
                hi = min(lo + CHUNK_ROWS, len(values)) - 1
                raise _Corrupt(f"checksum of {what} {lo}-{hi} differs")


def _verified(path: Path, group: zarr.Group) -> tuple[np.ndarray, np.ndarray]:
    """(embeddings, labels) of a complete split that passes every check; else _Corrupt."""
    attrs = group.attrs.asdict()
    if attrs.get("complete") is not True:
        raise _Corrupt("not marked complete")
    if not isinstance(attrs.get("checksums"), dict):
        raise _Corrupt("no checksums (written by an older version)")
    n, d = attrs["shape"]
    arrays = {name: _open_array(path, name) for name in ARRAYS}
    for name, spec in _layout(n, d, _dtype(attrs)).items():
        _check_layout(arrays[name], name, *spec)
    for name, array in arrays.items():
        if problem := _chunk_problem(array, path / name, name):
            raise _Corrupt(problem)
    X, y, done = (arrays[name][:] for name in ARRAYS)
    if not done.all():
        raise _Corrupt(f"{int((~done).sum())} row(s) not done")
    _compare(attrs["checksums"], X, y)
    X = as_float32(X, attrs.get("dtype") or "float32")
    if problem := not_finite(X):
        raise _Corrupt(problem)
    return X, y


def non_finite(X: np.ndarray) -> tuple[int, int, int] | None:
    """(row, column) of the first value of `X` that is not a finite number, and how many rows
    hold one (counted from 0); None when every value is one."""
    bad = ~np.isfinite(X)
    rows = np.flatnonzero(bad.any(axis=1))
    if rows.size == 0:
        return None
    return int(rows[0]), int(np.flatnonzero(bad[rows[0]])[0]), int(rows.size)


def not_finite(X: np.ndarray) -> str | None:
    """`non_finite` in words (rows and columns counted from 1)."""
    if (found := non_finite(X)) is None:
        return None
    row, column, rows = found
    more = f" ({rows} rows hold such values)" if rows > 1 else ""
    return f"row {row + 1}, column {column + 1} holds {X[row, column]}, not a finite number{more}"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def _browsable(folder: Path) -> None:
    """Give `folder` a plain group zarr.json (for browsing with zarr; nothing depends on it)."""
    try:
        meta = json.loads((folder / "zarr.json").read_bytes())
        if meta.get("node_type") == "group" and not meta.get("attributes"):
            return
    except (OSError, ValueError, AttributeError):
        pass
    plain = {"zarr_format": 3, "node_type": "group", "attributes": {}}
    write_text_atomic(folder / "zarr.json", json.dumps(plain))


class SplitWriter:
    """Writes rows of one split at their original positions into `<split>.partial`; `finish`
    records its checksums and renames it into place."""

    def __init__(self, group: zarr.Group, path: Path, final: Path, expect: dict, n: int):
        self._group, self.path, self.final, self.n = group, path, final, n
        self._expect, self.dtype = _normalise(expect), _dtype(expect)
        self.storage = expect.get("dtype") or "float32"
        self._emb = group["embeddings"] if "embeddings" in group else None
        self._done = group["done"]
        self.published: Callable[[], None] | None = None   # told once the split is in place

    def pending(self) -> np.ndarray:
        """Row indices not written yet (all of them for a fresh split)."""
        if self._emb is None:
            return np.arange(self.n)
        return np.flatnonzero(~self._done[:])

    def _embeddings(self, d: int) -> zarr.Array:
        if self._emb is None:
            shape, dtype, chunks = _layout(self.n, d, self.dtype)["embeddings"]
            self._emb = self._group.create_array(
                "embeddings", shape=shape, dtype=dtype, chunks=chunks,
                fill_value=_BF16_NAN if self.storage == "bfloat16" else np.nan,
                compressors=None, config=_ARRAY_CONFIG)
            reach("arrays-created")
        elif self._emb.shape[1] != d:
            raise ValueError(f"{self.path}: rows of {d} values, the split has {self._emb.shape[1]}")
        return self._emb

    def write(self, rows: np.ndarray, block: np.ndarray) -> None:
        """Store `block[i]` as row `rows[i]`, then mark those rows done."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return
        block = stored_values(block, self.storage)
        emb = self._embeddings(block.shape[1])
        if rows.size == rows[-1] - rows[0] + 1 and np.all(np.diff(rows) == 1):
            span = slice(int(rows[0]), int(rows[-1]) + 1)
            emb[span] = block
            reach("rows-written")
            self._done[span] = True
        else:
            order = np.argsort(rows)
            emb.set_orthogonal_selection((rows[order], slice(None)), block[order])
            reach("rows-written")
            self._done.set_orthogonal_selection(rows[order], True)
        reach("done-flags")

    def finish(self, stats: dict) -> None:
        """Check that every row is written, record the identity, `stats["n_truncated"]`, the
        encoder's other plain statistics (`telemetry`: throughput, device, batch size; as the
        runs table, `store.tables.telemetry`), the checksums and `complete`, and rename the split
        into place (replacing what was there)."""
        if left := self.pending().size:
            raise RuntimeError(f"{self.path}: {left} row(s) still pending")
        if self._emb is None:
            raise RuntimeError(f"{self.path}: an empty split cannot be stored")
        for name in ARRAYS:
            if problem := _chunk_problem(self._group[name], self.path / name, name):
                raise RuntimeError(f"{self.path}: {problem}")
        X, y = self._emb[:], self._group["labels"][:]
        if problem := not_finite(as_float32(X, self.storage)):
            _remove(self.path)
            raise NotFinite(f"{self.final}: {problem}; nothing of it is stored")
        self._group.attrs.update({
            **self._expect, "shape": list(X.shape),
            "n_truncated": int(stats.get("n_truncated", 0)),
            "telemetry": {k: v for k, v in stats.items()
                          if v is None or isinstance(v, int | float | str)},
            "checksums": {"embeddings": _crcs(X), "labels": _crcs(y)}})
        reach("checksum")
        self._group.attrs["complete"] = True
        reach("complete")
        self._publish()

    def _publish(self) -> None:
        old = None
        if os.path.lexists(self.final):
            old = temp_path(self.final)
            os.rename(self.final, old)
        os.rename(self.path, self.final)
        fsync_dir(self.final.parent)
        reach("split-renamed")
        if old is not None:
            _remove(old)
        if self.published is not None:
            self.published()


def _resume(path: Path, final: Path, labels: np.ndarray, expect: dict) -> SplitWriter | None:
    """A writer continuing the partial at `path`, when it is compatible and undamaged."""
    try:
        group = _open_group(path, mode="r+")
        if not _same(group.attrs.asdict(), expect):
            return None
        n = len(labels)
        emb, lab, done = (_open_array(path, name) for name in ARRAYS)
        if (lab.shape != (n,) or done.shape != (n,) or emb.shape[0] != n
                or emb.dtype != _dtype(expect) or _chunk_problem(lab, path / "labels", "labels")
                or not np.array_equal(lab[:], labels)):
            return None
        blocks = set((np.flatnonzero(done[:]) // CHUNK_ROWS).tolist())
        if _chunk_problem(emb, path / "embeddings", "embeddings", blocks):
            return None
        return SplitWriter(group, path, final, expect, n)
    except Exception:   # whatever a damaged partial raises: it is rebuilt
        return None


def _create(path: Path, final: Path, labels: np.ndarray, expect: dict) -> SplitWriter:
    _remove(path)
    group = zarr.create_group(str(path), zarr_format=3, attributes=_normalise(expect))
    reach("split-created")
    n = len(labels)
    group.create_array("labels", data=labels, chunks=(CHUNK_ROWS,), compressors=None,
                       config=_ARRAY_CONFIG)
    group.create_array("done", shape=(n,), dtype=bool, fill_value=False, chunks=(CHUNK_ROWS,),
                       compressors=None, config=_ARRAY_CONFIG)
    return SplitWriter(group, path, final, expect, n)


class EmbeddingStore:
    def __init__(self, paths: StorePaths, folders: dict[str, str] | None = None):
        """`folders`: model id -> the folder its splits are read from and written to here,
        in place of `model_folder`'s (an import writes its new revision's so)."""
        self.root, self.paths = paths.embeddings, paths
        self._folders = dict(folders or {})

    def model_folder(self, model: str) -> str:
        """The folder of `model`'s splits: the one its import record names when its
        embeddings were imported (`store.embedding_imports`), else `path_part(model)`; a
        record that cannot be read names none (its model's splits read as missing, and
        `doctor` says why)."""
        if model not in self._folders:
            try:
                record = read_import(self.paths, model)
            except GenebError:
                record = None
            self._folders[model] = record.embeddings if record else path_part(model)
        return self._folders[model]

    def split_path(self, model: str, task: str, split: str,
                   precision: str | None = None, preset: str | None = None,
                   context: str | None = None, storage: str | None = None) -> Path:
        """The split's folder; at `precision`, recipe `preset`, `context` policy and `storage`
        precision (`store.vocab.variant.split_suffix`)."""
        if not _SPLIT_NAME.match(split):
            raise ValueError(f"split name {split!r}: letters, digits, '_' and '-' only")
        return (self.root / self.model_folder(model) / path_part(task)
                / (split + split_suffix(precision, preset, context=context, storage=storage)))

    def load(self, model: str, task: str, split: str,
             expect: dict) -> tuple[np.ndarray, np.ndarray] | None:
        """(embeddings, labels) when the split is complete, intact and made the way `expect`
        says; else None."""
        path = self.split_path(model, task, split, expect.get("compute_precision"),
                               expect.get("recipe_preset"), expect.get("context_policy"),
                               storage_of(expect))
        try:
            group = _open_group(path)
            if not _same(group.attrs.asdict(), expect):
                return None
            return _verified(path, group)
        except Exception:   # _Corrupt, or whatever a damaged file raises
            return None

    def stored(self, model: str, task: str, split: str, data_hash: str,
               revision: str | None, expect: dict | None = None,
               precision: str | None = None, preset: str | None = None,
               context: str | None = None, storage: str | None = None) -> bool:
        """Whether a complete split of `model` on the data `data_hash`, made with the model's
        `revision` at `precision`, recipe `preset` and `context` policy (and, given `expect`, made
        the way it says, its variant included), is stored, by its attributes alone (what a plan
        counts on reusing, read fast): `load` verifies it, and the settings it was made with, before
        a run uses it."""
        if expect is not None:
            precision, preset = expect.get("compute_precision"), expect.get("recipe_preset")
            context = expect.get("context_policy")
            storage = storage_of(expect)
        try:
            attrs = _open_group(self.split_path(model, task, split, precision,
                                                preset, context, storage)).attrs.asdict()
        except Exception:   # _Corrupt, or whatever a damaged file raises
            return False
        return (attrs.get("complete") is True and attrs.get("model_id") == model
                and attrs.get("data_hash") == data_hash
                and attrs.get("model_revision") == revision
                and (expect is None or _same(attrs, expect)))

    def writer(self, model: str, task: str, split: str, labels: np.ndarray,
               expect: dict) -> SplitWriter:
        """A writer for the split; resumes a compatible partial write, else starts afresh.
        The caller holds the (model, task) lock."""
        final = self.split_path(model, task, split, expect.get("compute_precision"),
                                expect.get("recipe_preset"), expect.get("context_policy"),
                                storage_of(expect))
        final.parent.mkdir(parents=True, exist_ok=True)
        for folder in (self.root, final.parent.parent, final.parent):
            _browsable(folder)
        for leftover in final.parent.glob(f".{final.name}.tmp-*"):
            if TEMP_NAME.match(leftover.name):   # a replaced split a crash left behind
                _remove(leftover)
        path = final.with_name(final.name + PARTIAL)
        labels = np.asarray(labels, dtype=np.int64)
        writer = _resume(path, final, labels, expect) or _create(path, final, labels, expect)
        writer.published = partial(forget, self.paths,
                                   final.relative_to(self.root).as_posix())   # stored again
        return writer

    def splits(self) -> Iterator[SplitEntry]:
        """Every split and partial on disk, in name order."""
        def folders(parent: Path) -> list[Path]:
            return sorted(p for p in parent.iterdir() if p.is_dir() and not p.name.startswith("."))

        if not self.root.is_dir():
            return
        for model_dir in folders(self.root):
            for task_dir in folders(model_dir):
                for path in folders(task_dir):
                    partial = path.name.endswith(PARTIAL)
                    yield SplitEntry(model_dir.name, task_dir.name,
                                     path.name.removesuffix(PARTIAL), path, partial)

    def inspect(self, path: Path) -> SplitCheck:
        """Whether the split or partial at `path` is complete, partial or corrupt, and why."""
        path = Path(path)
        if path.name.endswith(PARTIAL):
            return _inspect_partial(path)
        try:
            group = _open_group(path)
            X, _ = _verified(path, group)
        except _Corrupt as e:
            return SplitCheck("corrupt", str(e))
        except Exception as e:
            return SplitCheck("corrupt", _describe(e))
        stored = group.attrs.get("dtype") or "float32"    # X is read back as float32
        return SplitCheck("complete", f"{X.shape[0]} rows × {X.shape[1]} {stored}, "
                                      "checksums match")

    def drop(self, path: Path) -> None:
        """Remove a split or partial (the next fill recomputes it)."""
        path = Path(path)
        if path.parent.parent.parent.resolve() != self.root.resolve():
            raise GenebError(f"{path} is not a split of the embedding store {self.root}")
        _remove(path)

    def drop_folder(self, name: str) -> None:
        """Remove a model's folder `name` whole: renamed aside first, so that a kill while it
        is removed leaves a temporary name for the next writer to sweep (`store.sweep`)."""
        path = self.root / name
        if path.parent != self.root or not name or name.startswith("."):
            raise GenebError(f"{path} is not a model folder of the embedding store {self.root}")
        if not os.path.lexists(path):
            return
        aside = temp_path(path)
        os.rename(path, aside)
        fsync_dir(self.root)
        _remove(aside)


def _inspect_partial(path: Path) -> SplitCheck:
    try:
        _open_group(path)
        done = _open_array(path, "done")[:]
        written = int(done.sum()) if (path / "embeddings").is_dir() else 0
        return SplitCheck("partial", f"{written} of {done.size} rows written", resumable=True)
    except _Corrupt as e:
        why = str(e)
    except Exception as e:
        why = _describe(e)
    return SplitCheck("partial", why)
