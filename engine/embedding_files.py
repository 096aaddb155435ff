"""Embedding files a user hands us, read as data, never as code: one (rows, width) array of
floating-point numbers per file.

- `.npy`: `numpy.load(allow_pickle=False)`, memory-mapped;
- `.npz`: its one array, or the one named `embeddings` (`allow_pickle=False`);
- `.parquet`: one column of lists of numbers (one list per row, all of one length), or one
  numeric column per dimension;
- `.safetensors`: its one tensor, or the one named `embeddings` (F16, BF16, F32, F64), read
  from the format's JSON header and raw bytes (no package needed).

Float16, bfloat16, float32 and float64 are read; the store keeps float32 (what every encoder
stores). A file of another kind (a pickle, integers, text, nulls, more or fewer than two
dimensions) is one `GenebError` naming the file and what it holds; a pickle is never loaded. A
`.npy` or `.npz` that does not begin as one is told by its first bytes, and only a regular file
is opened (`not_a_file`: a named pipe would block its reader).
"""

from __future__ import annotations

import json
import os
import stat
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from store.vocab.errors import brief

FORMATS: dict[str, str] = {".npy": "npy", ".npz": "npz", ".parquet": "parquet",
                           ".safetensors": "safetensors"}
NAMED = "embeddings"    # the array to take from a file holding several
_FLOATS = (np.float16, np.float32, np.float64)
_SAFETENSORS = {"F16": np.dtype("<f2"), "F32": np.dtype("<f4"), "F64": np.dtype("<f8"),
                "BF16": np.dtype("<u2")}


class BadFile(ValueError):
    """What is wrong with one file, in words (the caller names the file)."""


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def not_a_file(path: Path) -> str | None:
    """Why `path` is not read, when it is not a regular file (told from its status, never by
    opening it); None when it is one."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
    return f"is {kind}, not a file of embeddings; it is not opened"


def read_embeddings(path: Path) -> np.ndarray:
    """The (rows, width) floating-point array of `path`, by its suffix (`FORMATS`); BadFile
    saying what is wrong."""
    if problem := not_a_file(path):
        raise BadFile(problem)
    reader = {"npy": _npy, "npz": _npz, "parquet": _parquet,
              "safetensors": _safetensors}[FORMATS[path.suffix]]
    try:
        array = reader(path)
    except BadFile:
        raise
    except Exception as exc:    # whatever a library raises on a file it cannot parse
        raise BadFile(f"cannot be read as {FORMATS[path.suffix]} ({brief(exc)})") from None
    if array.dtype.kind != "f" or array.dtype.type not in _FLOATS:
        raise BadFile(f"holds {array.dtype} values; embeddings are floating-point numbers "
                      "(float16, float32 or float64)")
    if array.ndim != 2 or not array.shape[1]:
        raise BadFile(f"holds an array of shape {array.shape}; give one row of numbers per "
                      "sequence: (rows, width)")
    return array


_NPY = b"\x93NUMPY"                    # how a .npy file begins
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")   # how a zip archive (an .npz) begins
_BEGINNINGS = ((_NPY, "a .npy file; name it with the suffix .npy"),
               *((z, "a zip archive (an .npz?); name it with the suffix .npz") for z in _ZIP),
               (b"\x80", "a pickle, which is never loaded (it can run code)"))


def _starts(path: Path, kind: str, expected: tuple[bytes, ...]) -> None:
    """BadFile saying what `path` is when it does not begin as a `kind` file does."""
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(expected):
        return
    for start, what in _BEGINNINGS:
        if head.startswith(start):
            raise BadFile(f"is not a {kind} file: it is {what}")
    why = "it does not begin as one" if head else "it is empty"
    raise BadFile(f"is not a {kind} file ({why})")


def _npy(path: Path) -> np.ndarray:
    _starts(path, ".npy", (_NPY,))
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc) or "Python objects" in str(exc):
            raise BadFile(_PICKLE) from None
        raise


_PICKLE = ("holds pickled Python objects, which are never loaded (they can run code); save "
           "a plain float array (numpy.save of a float32 array)")


def _one(names: list[str], kind: str) -> str:
    if len(names) == 1:
        return names[0]
    if NAMED in names:
        return NAMED
    raise BadFile(f"holds {len(names)} {kind}s ({', '.join(names[:5])}); give one, or name the "
                  f"embeddings {NAMED!r}")


def _npz(path: Path) -> np.ndarray:
    _starts(path, ".npz", _ZIP)
    with np.load(path, allow_pickle=False) as archive:
        name = _one(list(archive.files), "array")
        try:
            return archive[name]
        except ValueError as exc:
            if "pickle" in str(exc):
                raise BadFile(f"array {name!r} {_PICKLE}") from None
            raise


def _parquet(path: Path) -> np.ndarray:
    table = pq.read_table(path)
    types = table.schema.types
    if len(types) == 1 and (pa.types.is_list(types[0]) or pa.types.is_large_list(types[0])
                            or pa.types.is_fixed_size_list(types[0])):
        column = table.column(0).combine_chunks()
        values = column.flatten()
        if column.null_count or values.null_count:
            raise BadFile("holds null values")
        widths = np.unique(pc.list_value_length(column).to_numpy(zero_copy_only=False))
        if widths.size > 1:
            raise BadFile(f"its rows have {widths.size} different lengths "
                          f"({', '.join(map(str, widths[:5]))}); every row is one embedding "
                          "of one width")
        width = int(widths[0]) if widths.size else 0
        return values.to_numpy(zero_copy_only=False).reshape(len(column), width)
    if not types or any(not pa.types.is_floating(t) for t in types):
        kinds = sorted({str(t) for t in types if not pa.types.is_floating(t)})
        raise BadFile(f"has {'columns of ' + ', '.join(kinds) if kinds else 'no column'}; give "
                      "one column of lists of numbers, or one floating-point column per "
                      "dimension")
    if any(c.null_count for c in table.columns):
        raise BadFile("holds null values")
    return np.column_stack([c.to_numpy() for c in table.columns])


def _safetensors(path: Path) -> np.ndarray:
    data = path.read_bytes()
    if len(data) < 8:
        raise BadFile("is not a safetensors file (shorter than its header)")
    (size,) = struct.unpack("<Q", data[:8])
    if size > len(data) - 8:
        raise BadFile("is not a safetensors file (its header runs past the end)")
    header = json.loads(data[8:8 + size])
    tensors = [k for k in header if k != "__metadata__"]
    name = _one(tensors, "tensor")
    info = header[name]
    dtype = _SAFETENSORS.get(info.get("dtype"))
    if dtype is None:
        raise BadFile(f"tensor {name!r} holds {info.get('dtype')} values; embeddings are "
                      "floating-point numbers (F16, BF16, F32 or F64)")
    shape = tuple(int(d) for d in info["shape"])
    start, end = (8 + size + int(o) for o in info["data_offsets"])
    if end > len(data) or end - start != int(np.prod(shape)) * dtype.itemsize:
        raise BadFile(f"tensor {name!r}: its data offsets do not fit its shape {shape}")
    values = np.frombuffer(data, dtype=dtype, count=(end - start) // dtype.itemsize,
                           offset=start).reshape(shape)
    if info["dtype"] == "BF16":    # the upper half of a float32
        values = (values.astype(np.uint32) << 16).view(np.float32)
    return values
