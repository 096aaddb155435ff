"""The embedding store: splits appear only when whole, reads verify, damage is rebuilt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

import store.embeddings as embeddings
from store.embeddings import CHUNK_ROWS, EmbeddingStore
from store.paths import StorePaths
from store.vocab.errors import GenebError

PROJECT = Path(__file__).resolve().parents[2]
MODEL, TASK = "org/model", "task"
EXPECT = {"model_id": MODEL, "model_revision": "abc123", "encoder": {"k": 3, "pool": "mean"},
          "data_hash": "h1", "dtype": "float32", "engine_version": "0.1"}
N, D = 2500, 6   # three chunks of rows, the last one partial


def data(n: int = N, d: int = D, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    X[0, :3] = [-0.0, np.finfo(np.float32).max, np.float32(1e-42)]   # sign of zero, extremes
    return X, rng.integers(0, 3, n)


def write_all(store: EmbeddingStore, X: np.ndarray, y: np.ndarray, expect: dict = EXPECT,
              split: str = "train") -> None:
    writer = store.writer(MODEL, TASK, split, y, expect)
    for rows in np.array_split(writer.pending(), 3):
        writer.write(rows, X[rows])
    writer.finish({"n_truncated": 4})


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def leftovers(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*") if ".partial" in p.name or ".tmp-" in p.name]


@pytest.fixture
def store(tmp_path) -> EmbeddingStore:
    return EmbeddingStore(StorePaths(tmp_path / "store"))


def test_round_trip_is_bit_identical(store):
    X, y = data()
    write_all(store, X, y)
    got_X, got_y = store.load(MODEL, TASK, "train", EXPECT)
    assert same_bits(got_X, X) and same_bits(got_y, y.astype(np.int64))
    path = store.split_path(MODEL, TASK, "train")
    attrs = zarr.open_group(str(path), mode="r").attrs.asdict()
    assert attrs["complete"] is True and attrs["n_truncated"] == 4 and attrs["shape"] == [N, D]
    assert {k: attrs[k] for k in EXPECT} == EXPECT
    assert len(attrs["checksums"]["embeddings"]) == len(attrs["checksums"]["labels"]) == 3
    assert store.inspect(path) == embeddings.SplitCheck(
        "complete", f"{N} rows × {D} float32, checksums match")
    assert [(e.split, e.partial, e.path) for e in store.splits()] == [("train", False, path)]
    assert leftovers(store.root) == []


def test_scattered_writes_land_at_their_rows(store):
    X, y = data()
    writer = store.writer(MODEL, TASK, "test", y, EXPECT)
    order = np.random.default_rng(1).permutation(N)
    for rows in np.array_split(order, [7, 700, 1900]):
        writer.write(rows, X[rows])
    assert writer.pending().size == 0
    writer.finish({})
    got_X, got_y = store.load(MODEL, TASK, "test", EXPECT)
    assert same_bits(got_X, X) and np.array_equal(got_y, y)


def test_resume_writes_only_the_pending_rows(store, tmp_path):
    X, y = data()
    first = store.writer(MODEL, TASK, "train", y, EXPECT)
    first.write(np.arange(2 * CHUNK_ROWS), X[:2 * CHUNK_ROWS])
    scattered = np.arange(2 * CHUNK_ROWS, N, 3)[::-1]
    first.write(scattered, X[scattered])                 # then the run dies: no finish
    assert store.load(MODEL, TASK, "train", EXPECT) is None
    partial = first.path
    kept = {c: (partial / "embeddings" / c).stat().st_mtime_ns for c in ("c/0/0", "c/1/0")}

    writer = store.writer(MODEL, TASK, "train", y, EXPECT)
    pending = writer.pending()
    want = np.setdiff1d(np.arange(2 * CHUNK_ROWS, N), scattered)
    assert np.array_equal(pending, want) and pending.size == N - 2 * CHUNK_ROWS - scattered.size
    writer.write(pending, X[pending])
    writer.finish({"n_truncated": 4})

    final = store.split_path(MODEL, TASK, "train")
    assert {c: (final / "embeddings" / c).stat().st_mtime_ns for c in kept} == kept
    whole = EmbeddingStore(StorePaths(tmp_path / "whole"))
    write_all(whole, X, y)
    for a, b in zip(store.load(MODEL, TASK, "train", EXPECT),
                    whole.load(MODEL, TASK, "train", EXPECT), strict=True):
        assert same_bits(a, b)
    attrs = [zarr.open_group(str(s.split_path(MODEL, TASK, "train"))).attrs.asdict()
             for s in (store, whole)]
    assert attrs[0] == attrs[1]
    assert leftovers(store.root) == []


def test_identity_mismatch_rebuilds(store):
    X, y = data()
    write_all(store, X, y)
    other = {**EXPECT, "data_hash": "h2"}
    assert store.load(MODEL, TASK, "train", other) is None
    X2, y2 = data(seed=5)
    writer = store.writer(MODEL, TASK, "train", y2, other)
    assert writer.pending().size == N
    writer.write(np.arange(N), X2)
    writer.finish({})
    assert store.load(MODEL, TASK, "train", EXPECT) is None
    assert same_bits(store.load(MODEL, TASK, "train", other)[0], X2)
    assert leftovers(store.root) == []


def test_partial_of_other_identity_or_labels_is_not_resumed(store):
    X, y = data()
    for expect, labels in (({**EXPECT, "encoder": {"k": 4}}, y), (EXPECT, (y + 1) % 3)):
        store.writer(MODEL, TASK, "train", y, EXPECT).write(np.arange(100), X[:100])
        assert store.writer(MODEL, TASK, "train", y, EXPECT).pending().size == N - 100
        assert store.writer(MODEL, TASK, "train", labels, expect).pending().size == N


def _flip(file: Path, at: int = 40) -> None:
    raw = bytearray(file.read_bytes())
    raw[at:at + 8] = bytes(b ^ 0xFF for b in raw[at:at + 8])
    file.write_bytes(bytes(raw))


def _without_complete(path: Path) -> None:
    meta = json.loads((path / "zarr.json").read_text())
    del meta["attributes"]["complete"]
    (path / "zarr.json").write_text(json.dumps(meta))


CORRUPTIONS = {
    "deleted chunk": (lambda p: (p / "embeddings/c/1/0").unlink(),
                      "chunk c/1/0 of embeddings missing"),
    "deleted labels chunk": (lambda p: (p / "labels/c/2").unlink(),
                             "chunk c/2 of labels missing"),
    "truncated chunk": (lambda p: os.truncate(p / "embeddings/c/2/0", 100),
                        f"chunk c/2/0 of embeddings has 100 bytes, not {CHUNK_ROWS * D * 4}"),
    "garbled chunk": (lambda p: _flip(p / "embeddings/c/1/0"),
                      "checksum of rows 1024-2047 differs"),
    "garbled labels chunk": (lambda p: _flip(p / "labels/c/2"),
                             "checksum of labels of rows 2048-2499 differs"),
    "garbled split zarr.json": (lambda p: (p / "zarr.json").write_text('{"zarr_format": 3, "no'),
                                "zarr.json not valid JSON"),
    "garbled array zarr.json": (lambda p: (p / "embeddings/zarr.json").write_bytes(b"\x00\xff"),
                                "embeddings/zarr.json not valid JSON"),
    "missing complete": (_without_complete, "not marked complete"),
    "row not done": (lambda p: zarr.open_array(str(p / "done"), mode="r+").__setitem__(7, False),
                     "1 row(s) not done"),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_corruption_is_caught_named_and_rebuilt(store, case):
    damage, reason = CORRUPTIONS[case]
    X, y = data()
    write_all(store, X, y)
    path = store.split_path(MODEL, TASK, "train")
    damage(path)
    assert store.load(MODEL, TASK, "train", EXPECT) is None
    assert store.inspect(path) == embeddings.SplitCheck("corrupt", reason)

    writer = store.writer(MODEL, TASK, "train", y, EXPECT)
    assert writer.pending().size == N
    writer.write(np.arange(N), X)
    writer.finish({})
    assert same_bits(store.load(MODEL, TASK, "train", EXPECT)[0], X)
    assert store.inspect(path).state == "complete" and leftovers(store.root) == []


def test_partial_left_behind_is_invisible_then_resumed(store):
    X, y = data()
    writer = store.writer(MODEL, TASK, "train", y, EXPECT)
    writer.write(np.arange(CHUNK_ROWS), X[:CHUNK_ROWS])
    assert store.load(MODEL, TASK, "train", EXPECT) is None
    [entry] = store.splits()
    assert (entry.split, entry.partial, entry.path.name) == ("train", True, "train.partial")
    assert store.inspect(entry.path) == embeddings.SplitCheck(
        "partial", f"{CHUNK_ROWS} of {N} rows written", resumable=True)

    writer = store.writer(MODEL, TASK, "train", y, EXPECT)
    assert writer.pending().size == N - CHUNK_ROWS
    writer.write(writer.pending(), X[CHUNK_ROWS:])
    writer.finish({})
    assert same_bits(store.load(MODEL, TASK, "train", EXPECT)[0], X)
    assert [e.partial for e in store.splits()] == [False] and leftovers(store.root) == []

    # a partial beside a complete split changes nothing for readers
    store.writer(MODEL, TASK, "train", y, {**EXPECT, "data_hash": "h2"})
    assert same_bits(store.load(MODEL, TASK, "train", EXPECT)[0], X)


def test_values_that_are_not_finite_are_never_stored_nor_read(store):
    """A writer refuses to finish a split holding NaN or an infinity (and drops its partial);
    one stored so by an older version does not verify, and inspect says where."""
    X, y = data()
    X[1200, 4] = np.nan
    X[2400, 0] = -np.inf
    writer = store.writer(MODEL, TASK, "train", y, EXPECT)
    writer.write(writer.pending(), X)
    with pytest.raises(embeddings.NotFinite, match=r"train: row 1201, column 5 holds nan, not a "
                                                   r"finite number \(2 rows hold such values\); "
                                                   "nothing of it is stored"):
        writer.finish({})
    assert list(store.splits()) == [] and store.load(MODEL, TASK, "train", EXPECT) is None
    X[1200, 4], X[2400, 0] = 0.5, 0.25
    write_all(store, X, y)
    path = store.split_path(MODEL, TASK, "train")
    group = zarr.open_group(str(path), mode="r+")
    X[7, 1] = np.inf
    group["embeddings"][:] = X
    group.attrs["checksums"] = {**group.attrs["checksums"], "embeddings": embeddings._crcs(X)}
    assert store.load(MODEL, TASK, "train", EXPECT) is None
    assert store.inspect(path) == embeddings.SplitCheck(
        "corrupt", "row 8, column 2 holds inf, not a finite number")


def test_damaged_partial_is_rebuilt(store):
    X, y = data()
    writer = store.writer(MODEL, TASK, "train", y, EXPECT)
    writer.write(np.arange(N), X)
    (writer.path / "zarr.json").write_text("{")
    assert store.inspect(writer.path) == embeddings.SplitCheck(
        "partial", "zarr.json not valid JSON")
    writer = store.writer(MODEL, TASK, "train", y, EXPECT)
    assert writer.pending().size == N
    (writer.path / "done" / "zarr.json").unlink()
    assert store.writer(MODEL, TASK, "train", y, EXPECT).pending().size == N


def test_old_layout_is_recomputed_and_replaced(store):
    X, y = data()
    model = "kmer-3"                       # an id whose folder name did not change
    task_dir = store.root / model / TASK
    zarr.create_group(str(task_dir), attributes={**EXPECT, "model_id": model})
    old = zarr.create_group(str(task_dir / "train"), attributes={"complete": True})
    old.create_array("embeddings", data=X, chunks=(CHUNK_ROWS, D), compressors=None)
    old.create_array("labels", data=y.astype(np.int64), chunks=(N,), compressors=None)
    old.create_array("done", data=np.ones(N, bool), chunks=(CHUNK_ROWS,), compressors=None)
    expect = {**EXPECT, "model_id": model}
    assert store.load(model, TASK, "train", expect) is None
    assert store.inspect(task_dir / "train") == embeddings.SplitCheck(
        "corrupt", "no checksums (written by an older version)")

    writer = store.writer(model, TASK, "train", y, expect)
    assert writer.pending().size == N
    writer.write(np.arange(N), X)
    writer.finish({})
    assert same_bits(store.load(model, TASK, "train", expect)[0], X)
    assert json.loads((task_dir / "zarr.json").read_text())["attributes"] == {}
    assert zarr.open_array(str(task_dir / "train" / "labels")).chunks == (CHUNK_ROWS,)
    assert leftovers(store.root) == []


def test_crash_after_replacing_leaves_the_new_split_and_the_next_writer_sweeps(
        store, monkeypatch):
    X, y = data()
    write_all(store, X, y, {**EXPECT, "data_hash": "old"})

    def crash(name: str) -> None:
        if name == "split-renamed":
            raise KeyboardInterrupt
    monkeypatch.setattr(embeddings, "reach", crash)
    with pytest.raises(KeyboardInterrupt):
        write_all(store, X, y)
    assert same_bits(store.load(MODEL, TASK, "train", EXPECT)[0], X)
    [old] = [p for p in store.split_path(MODEL, TASK, "train").parent.iterdir()
             if p.name.startswith(".train.tmp-")]
    monkeypatch.undo()
    store.writer(MODEL, TASK, "test", y, EXPECT)      # another split: its leftovers only
    assert old.exists()
    store.writer(MODEL, TASK, "train", y, {**EXPECT, "data_hash": "h3"})
    assert not old.exists()


def test_drop_removes_only_splits_of_the_store(store, tmp_path):
    X, y = data(n=10)
    write_all(store, X, y)
    path = store.split_path(MODEL, TASK, "train")
    with pytest.raises(GenebError, match="is not a split of the embedding store"):
        store.drop(tmp_path)
    store.drop(path)
    assert not path.exists() and store.load(MODEL, TASK, "train", EXPECT) is None
    assert list(store.splits()) == []


CRASH_SCRIPT = f"""
import sys
from pathlib import Path
import numpy as np
from store.embeddings import EmbeddingStore
from store.paths import StorePaths

store = EmbeddingStore(StorePaths(Path(sys.argv[1])))
expect = {EXPECT!r}
rng = np.random.default_rng(7)
X = rng.standard_normal((2600, 5)).astype(np.float32)
y = rng.integers(0, 4, 2600)
if store.load({MODEL!r}, {TASK!r}, "train", expect) is None:
    writer = store.writer({MODEL!r}, {TASK!r}, "train", y, expect)
    rows = writer.pending()
    for i, block in enumerate(np.array_split(rows, 4)):
        block = block[::-1] if i == 2 else block        # one scattered write
        writer.write(block, X[block])
    writer.finish({{"n_truncated": 1}})
    print(rows.size)
"""
# the crash point, and how many rows the rerun then writes (four blocks of 650 rows)
CRASHES = {"split-created": "2600", "arrays-created": "2600", "rows-written:2": "1950",
           "done-flags:2": "1300", "checksum": "0", "complete": "0", "split-renamed": ""}


def run_writer(root: Path, failpoint: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENEB_FAILPOINT")}
    if failpoint:
        env["GENEB_FAILPOINT"] = failpoint
    return subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(root)], cwd=PROJECT, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[np.ndarray, np.ndarray]:
    root = tmp_path_factory.mktemp("whole")
    done = run_writer(root)
    assert done.returncode == 0, done.stderr
    return EmbeddingStore(StorePaths(root)).load(MODEL, TASK, "train", EXPECT)


@pytest.mark.parametrize("point", CRASHES)
def test_killed_at_any_point_the_rerun_completes(tmp_path, uninterrupted, point):
    killed = run_writer(tmp_path, point)
    assert killed.returncode == -9, killed.stderr
    rerun = run_writer(tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.strip() == CRASHES[point]
    got = EmbeddingStore(StorePaths(tmp_path)).load(MODEL, TASK, "train", EXPECT)
    assert all(same_bits(a, b) for a, b in zip(got, uninterrupted, strict=True))
    assert leftovers(tmp_path) == []
