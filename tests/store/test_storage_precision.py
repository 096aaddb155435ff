"""Embeddings stored at half precision (float16, bfloat16 as its bit pattern): their own folder
beside float32's, half the bytes, read back as float32, and every integrity check (checksums,
whole chunks, finite values) as for float32."""

from __future__ import annotations

import os

import numpy as np
import pytest

import store.embeddings as embeddings
from store.embeddings import CHUNK_ROWS, EmbeddingStore, NotFinite, as_float32, stored_values
from store.paths import StorePaths
from store.sizes import split_bytes, tree_bytes
from tests.store.test_embeddings import EXPECT, MODEL, TASK, _flip, write_all

N, D = 2500, 6


def rows(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((N, D)) * 3).astype(np.float32), rng.integers(0, 3, N)


@pytest.fixture
def store(tmp_path) -> EmbeddingStore:
    return EmbeddingStore(StorePaths(tmp_path / "store"))


def test_bfloat16_rounds_to_nearest_with_ties_to_even():
    """Hand-computed: bfloat16 keeps 8 significant bits, so between 1 and 2 its step is 2^-7.
    1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7: 1. 1 + 3 * 2^-8 is halfway between
    1 + 2^-7 (odd) and 1 + 2^-6: 1 + 2^-6. 1 + 2^-8 + 2^-20 is past halfway: 1 + 2^-7."""
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -2.5, 0.0], dtype=np.float32)
    got = as_float32(stored_values(x, "bfloat16"), "bfloat16")
    assert got.tolist() == [1.0, 1 + 2**-6, 1 + 2**-7, -2.5, 0.0]
    assert stored_values(x, "bfloat16").dtype == np.uint16


@pytest.mark.parametrize("storage", ["float16", "bfloat16"])
def test_half_precision_is_its_own_split_half_the_bytes_read_as_float32(store, storage):
    X, y = rows()
    write_all(store, X, y)
    half = {**EXPECT, "dtype": storage}
    write_all(store, X, y, half)
    path = store.split_path(MODEL, TASK, "train", storage=storage)
    assert path.name == f"train@stored-{storage}"
    assert store.split_path(MODEL, TASK, "train").name == "train"      # float32: as before
    got, labels = store.load(MODEL, TASK, "train", half)
    assert got.dtype == np.float32 and np.array_equal(labels, y)
    assert np.array_equal(got, as_float32(stored_values(X, storage), storage))
    bits = 11 if storage == "float16" else 8       # significant bits kept
    assert np.abs(got - X).max() <= np.abs(X).max() * 2.0 ** -bits
    full = tree_bytes(store.split_path(MODEL, TASK, "train") / "embeddings")
    assert tree_bytes(path / "embeddings") == pytest.approx(full / 2, rel=0.01)
    assert abs(tree_bytes(path) - split_bytes(N, D, 2)) <= 0.1 * tree_bytes(path)
    assert store.inspect(path) == embeddings.SplitCheck(
        "complete", f"{N} rows × {D} {storage}, checksums match")
    # the float32 split is untouched and still float32's
    assert np.array_equal(store.load(MODEL, TASK, "train", EXPECT)[0], X)
    assert store.load(MODEL, TASK, "train", {**EXPECT, "dtype": "float16" if storage ==
                                             "bfloat16" else "bfloat16"}) is None


@pytest.mark.parametrize("storage", ["float16", "bfloat16"])
@pytest.mark.parametrize("damage, reason", [
    (lambda p: _flip(p / "embeddings/c/1/0"), "checksum of rows 1024-2047 differs"),
    (lambda p: os.truncate(p / "embeddings/c/2/0", 100),
     f"chunk c/2/0 of embeddings has 100 bytes, not {CHUNK_ROWS * D * 2}"),
    (lambda p: (p / "embeddings/c/0/0").unlink(), "chunk c/0/0 of embeddings missing")])
def test_the_integrity_checks_hold_at_half_precision(store, storage, damage, reason):
    X, y = rows()
    half = {**EXPECT, "dtype": storage}
    write_all(store, X, y, half)
    path = store.split_path(MODEL, TASK, "train", storage=storage)
    damage(path)
    assert store.load(MODEL, TASK, "train", half) is None
    assert store.inspect(path) == embeddings.SplitCheck("corrupt", reason)


def test_a_value_float16_cannot_hold_is_refused(store):
    """float16 holds values up to 65,504: a larger one would be stored as an infinity."""
    X, y = rows()
    X[5, 2] = 1e5
    with pytest.raises(NotFinite, match="row 6, column 3 holds inf"):
        write_all(store, X, y, {**EXPECT, "dtype": "float16"})
    write_all(store, X, y, {**EXPECT, "dtype": "bfloat16"})        # float32's range
    got = store.load(MODEL, TASK, "train", {**EXPECT, "dtype": "bfloat16"})[0]
    assert got[5, 2] == pytest.approx(1e5, rel=2**-8)
