"""Would a Zarr codec pay on the embedding store? The bytes and the read speed of one split's
embeddings array, uncompressed (what `store.embeddings` writes) against zstd (level 1 and 3)
and Blosc (zstd with byte shuffle), in chunks of 1,024 rows as the store writes them.

Arrays: 30,000 x 1,024 float32 rows drawn from a normal distribution (the shape of a large
task's embeddings from a 1,024-wide model; the mantissa bits of real embeddings look as random
as these, so this is close to what a codec meets), the same rounded to float16, and, with
`--split PATH`, a split of a store (its `embeddings` array: e.g. a geneb-mini k-mer spectrum,
sparse and small-valued, the friendliest case a codec meets here). Each is written to a scratch
folder and read back whole three times (the fastest read counts; the page cache holds the files,
so this measures decoding, not the disk).

    .venv/bin/python bench/compression.py [--split STORE/embeddings.zarr/kmer-6/TASK/train]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import zarr  # noqa: E402
from zarr.codecs import BloscCodec, ZstdCodec  # noqa: E402

ROWS, WIDTH, CHUNK = 30_000, 1_024, 1_024
CODECS = {
    "none": None,
    "zstd-1": [ZstdCodec(level=1)],
    "zstd-3": [ZstdCodec(level=3)],
    "blosc-zstd-shuffle": [BloscCodec(cname="zstd", clevel=3, shuffle="shuffle")],
}


def measure(X: np.ndarray, folder: Path) -> dict[str, tuple[int, float, float]]:
    """codec -> (bytes on disk, write seconds, fastest read seconds)."""
    from store.sizes import tree_bytes

    out = {}
    for name, compressors in CODECS.items():
        path = folder / name
        start = time.perf_counter()
        array = zarr.create_array(str(path), shape=X.shape, dtype=X.dtype,
                                  chunks=(CHUNK, X.shape[1]), compressors=compressors,
                                  fill_value=0)
        array[:] = X
        wrote = time.perf_counter() - start
        reads = []
        for _ in range(3):
            start = time.perf_counter()
            back = zarr.open_array(str(path), mode="r")[:]
            reads.append(time.perf_counter() - start)
        assert np.array_equal(back, X)
        out[name] = (tree_bytes(path), wrote, min(reads))
        shutil.rmtree(path)
    return out


def show(label: str, X: np.ndarray, found: dict) -> None:
    raw, _, raw_read = found["none"]
    print(f"{label}: {X.shape[0]:,} x {X.shape[1]:,} {X.dtype}, {X.nbytes / 1e6:,.1f} MB")
    for name, (size, wrote, read) in found.items():
        print(f"  {name:<20} {size / 1e6:8.1f} MB  ratio {raw / size:5.3f}  "
              f"write {X.nbytes / 1e6 / wrote:7.0f} MB/s  read {X.nbytes / 1e6 / read:7.0f} MB/s "
              f"({raw_read / read:4.2f}x uncompressed's speed)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", type=Path, help="a stored split to measure too")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    arrays = [("normal", rng.standard_normal((ROWS, WIDTH), dtype=np.float32))]
    arrays.append(("normal as float16", arrays[0][1].astype(np.float16)))
    if args.split is not None:
        arrays.append((str(args.split), zarr.open_array(str(args.split / "embeddings"),
                                                        mode="r")[:]))
    with tempfile.TemporaryDirectory(prefix="geneb-codec-") as tmp:
        for label, X in arrays:
            show(label, X, measure(X, Path(tmp)))


if __name__ == "__main__":
    main()
