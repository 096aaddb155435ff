"""`geneb-engine import-embeddings`: embeddings made elsewhere, probed by `fill` as the geneb-v1
probe probes them, and the Verified tier of `export --submission`.

Imported arrays come back from the store as they were written (as float32), in every format;
`fill` then probes them to the same rows `engine.probes.exact` gives on the same arrays, and
embeds nothing. Every bad folder (a row count, a width, a split, a pickle) is one line, exit 2,
and the store stays byte for byte as it was. A submission recomputed from its embeddings exports
as verified; one that the recomputation does not reproduce is refused, with the reason.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from threadpoolctl import threadpool_limits

from engine.cli import main
from engine.data import read_flat_csv
from engine.embedding_files import not_a_file
from engine.probes.exact import probe_cell
from store.catalog import geneb_v1_tasks, parse_model_entries
from store.db import query
from store.embedding_imports import read_import
from store.embeddings import EmbeddingStore
from store.official.data import document_bytes
from store.official.formats import METRIC_COLUMNS, submission_document
from store.paths import resolve_store
from store.runnable import assess
from store.tables.catalogs import read_catalog
from store.vocab.errors import GenebError
from store.vocab.protocol import REGIMES
from tests.engine.conftest import write_task
from tests.engine.in_process import outputs as run
from tests.engine.in_process import refused
from tests.engine.test_cli_compare import reproduced_rows
from tests.helpers import digest
from tests.store.local_rows import local_store

WIDTH = 6
SPLITS = ("train", "test")


def ok(capsys, *argv: str) -> str:
    rc, out, err = run(capsys, *argv)
    assert rc == 0, err
    return out


def embeddings_of(suite: Path, seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """Float32 embeddings of every task file in `suite`, one row per sequence of each split in
    file order, the label shifting the first dimensions (so the probes learn something)."""
    rng = np.random.default_rng(seed)
    out = {}
    for file in sorted(suite.glob("*.csv")):
        data = read_flat_csv(file, file.stem)
        out[file.stem] = {}
        for name in SPLITS:
            y = getattr(data, name).labels
            X = rng.normal(size=(len(y), WIDTH)).astype(np.float32)
            X[:, 0] += 1.5 * y
            X[:, 1] -= 0.7 * y
            out[file.stem][name] = X
    return out


def save(path: Path, X: np.ndarray, fmt: str) -> None:
    """`X` saved as `path.<suffix>` in the format `fmt`."""
    if fmt == "npy":
        np.save(path.with_suffix(".npy"), X)
    elif fmt == "npz":
        np.savez(path.with_suffix(".npz"), X)
    elif fmt == "npz-named":
        np.savez(path.with_suffix(".npz"), ids=np.arange(len(X)), embeddings=X)
    elif fmt == "parquet":
        pq.write_table(pa.table({"embedding": list(X)}), path.with_suffix(".parquet"))
    elif fmt == "parquet-columns":
        pq.write_table(pa.table({f"d{i}": X[:, i].astype(np.float64) for i in range(X.shape[1])}),
                       path.with_suffix(".parquet"))
    elif fmt in ("safetensors", "safetensors-bf16"):
        if fmt == "safetensors":
            dtype, data = "F32", X.astype("<f4").tobytes()
        else:
            dtype, data = "BF16", (X.view(np.uint32) >> 16).astype("<u2").tobytes()
        header = json.dumps({"__metadata__": {"by": "test"},
                             "embeddings": {"dtype": dtype, "shape": list(X.shape),
                                            "data_offsets": [0, len(data)]}}).encode()
        header += b" " * (-len(header) % 8)
        path.with_suffix(".safetensors").write_bytes(
            len(header).to_bytes(8, "little") + header + data)
    else:
        raise AssertionError(fmt)


def write_folder(root: Path, arrays: dict, fmt: str = "npy") -> Path:
    for task, splits in arrays.items():
        (root / task).mkdir(parents=True, exist_ok=True)
        for name, X in splits.items():
            save(root / task / name, X, fmt)
    return root


@pytest.fixture
def suite(tmp_path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    write_task(folder / "bin_task.csv", 60, 30, 2, 1, length=40)
    write_task(folder / "tri_task.csv", 66, 33, 3, 2, length=40)
    return folder


def stored(paths, model: str, task: str, name: str) -> np.ndarray:
    """The split as the store holds it, verified (the identity it was written with)."""
    store = EmbeddingStore(paths)
    attrs = json.loads((store.split_path(model, task, name) / "zarr.json").read_text())
    found = store.load(model, task, name, attrs["attributes"])
    assert found is not None
    return found[0]


def test_imported_embeddings_are_probed_as_the_geneb_v1_probe_probes_them(tmp_path, suite,
                                                                         capsys):
    arrays = embeddings_of(suite)
    folder = write_folder(tmp_path / "emb", arrays)
    paths = resolve_store(tmp_path / "store")
    ok(capsys, "import-embeddings", "my-emb", str(folder), "--suite", str(suite),
       "--store", str(paths.root))
    out = ok(capsys, "fill", "--models", "my-emb", "--suite", str(suite), "--store",
             str(paths.root), "--json")
    events = [json.loads(line) for line in out.splitlines()]
    assert not [e for e in events if e["event"] == "embedded"]      # nothing was embedded
    assert events[-1]["computed"] == 2 * len(REGIMES)
    record = read_import(paths, "my-emb")
    rows = query(paths, "SELECT * FROM results WHERE model = 'my-emb' ORDER BY task, regime, "
                        "seed")
    assert set(rows["model_revision"]) == {record.revision}
    for task, splits in arrays.items():
        data = read_flat_csv(suite / f"{task}.csv", task)
        direct = probe_cell(splits["train"], data.train.labels, splits["test"],
                            data.test.labels, REGIMES)
        mine = rows.filter(task=task)
        assert mine.height == len(direct)
        for want in direct:
            got = mine.filter(regime=want["regime"], seed=want["seed"]).row(0, named=True)
            for metric in ("mcc", "acc", "f1_macro"):
                assert got[metric] == want[metric], (task, want["regime"], metric)
        for name in SPLITS:                       # what was imported, and from where
            np.testing.assert_array_equal(stored(paths, "my-emb", task, name), splits[name])
            split = EmbeddingStore(paths).split_path("my-emb", task, name)
            source = json.loads((split / "zarr.json").read_text())["attributes"]["source"]
            assert source["file"] == str(folder / task / f"{name}.npy")
            assert source["sha256"] == next(f.sha256 for f in record.files
                                            if (f.task, f.split) == (task, name))
    assert read_import(paths, "my-emb").tasks == ("bin_task", "tri_task")
    before = digest(paths.root)                     # the same import again writes nothing
    out = ok(capsys, "import-embeddings", "my-emb", str(folder), "--suite", str(suite),
             "--store", str(paths.root))
    assert out.startswith("unchanged")
    assert digest(paths.root) == before


def test_other_embeddings_imported_make_the_cells_stale_and_fill_probes_the_new_ones(
        tmp_path, suite, capsys):
    """The import's revision is the model's: a second import of other arrays leaves the first
    one's cells stale (status, the results view), and `fill` recomputes them from the new
    arrays, to the rows the exact probe gives on those."""
    paths = resolve_store(tmp_path / "store")
    where = ("--suite", str(suite), "--store", str(paths.root))
    status = ("status", *where, "--models", "my-emb", "--regimes", "full", "--json")
    for seed in (0, 1):
        arrays = embeddings_of(suite, seed=seed)
        folder = write_folder(tmp_path / f"emb{seed}", arrays)
        ok(capsys, "import-embeddings", "my-emb", str(folder), *where)
        if seed == 1:        # the first import's cells: stale now, left out of the results
            rows = json.loads(ok(capsys, *status))["rows"]
            assert [(r["done"], r["stale"]) for r in rows] == [(0, 1), (0, 1)]
            assert query(paths, "SELECT * FROM results WHERE model = 'my-emb'").height == 0
        out = ok(capsys, "fill", "--models", "my-emb", *where, "--regimes", "full", "--json")
        cells = [json.loads(line) for line in out.splitlines()]
        assert sum(e.get("computed", False) for e in cells if e["event"] == "cell") == 2
    rows = query(paths, "SELECT * FROM results WHERE model = 'my-emb'")
    assert set(rows["model_revision"]) == {read_import(paths, "my-emb").revision}
    for task, splits in arrays.items():
        data = read_flat_csv(suite / f"{task}.csv", task)
        want = probe_cell(splits["train"], data.train.labels, splits["test"],
                          data.test.labels, ("full",))
        got = rows.filter(task=task).sort("seed")
        assert got["mcc"].to_list() == [w["mcc"] for w in want]


@pytest.mark.parametrize("fmt", ["npy", "npz", "npz-named", "parquet", "parquet-columns",
                                 "safetensors", "safetensors-bf16"])
def test_every_format_stores_the_arrays_it_holds(tmp_path, suite, capsys, fmt):
    arrays = embeddings_of(suite, seed=3)
    if fmt == "safetensors-bf16":                   # values bfloat16 holds exactly
        arrays = {t: {n: (X.view(np.uint32) & 0xFFFF0000).view(np.float32)
                      for n, X in s.items()} for t, s in arrays.items()}
    folder = write_folder(tmp_path / "emb", arrays, fmt)
    paths = resolve_store(tmp_path / "store")
    ok(capsys, "import-embeddings", "m", str(folder), "--suite", str(suite), "--store",
       str(paths.root))
    for task, splits in arrays.items():
        for name, X in splits.items():
            np.testing.assert_array_equal(stored(paths, "m", task, name), X)


def _wrong_rows(folder: Path, arrays: dict) -> str:
    np.save(folder / "tri_task" / "test.npy", arrays["tri_task"]["test"][:-1])
    return "32 rows, and the test split of task tri_task has 33 sequences"


def _wrong_width(folder: Path, arrays: dict) -> str:
    np.save(folder / "bin_task" / "train.npy", arrays["bin_task"]["train"][:, :-1])
    return f"rows of {WIDTH - 1} values, and the other files' rows have {WIDTH}"


def _missing_split(folder: Path, arrays: dict) -> str:
    (folder / "bin_task" / "test.npy").unlink()
    return "bin_task: no test file"


def _pickled(folder: Path, arrays: dict) -> str:
    rows = np.empty(30, dtype=object)
    rows[:] = [list(r) for r in arrays["bin_task"]["test"]]
    np.save(folder / "bin_task" / "test.npy", rows, allow_pickle=True)
    return "holds pickled Python objects, which are never loaded"


def _nan(folder: Path, arrays: dict) -> str:
    X = arrays["tri_task"]["train"].copy()
    X[7, 2] = np.nan                # the eighth row: every row number printed counts from 1
    np.save(folder / "tri_task" / "train.npy", X)
    return "train.npy: row 8, column 3 holds nan, not a finite number"    # counted from 1


def _beyond_float32(folder: Path, arrays: dict) -> str:
    """Finite in the file's float64, an infinity once stored as float32."""
    X = arrays["bin_task"]["train"].astype(np.float64)
    X[4, 2] = 1e39
    X[9, 0] = -4e38
    np.save(folder / "bin_task" / "train.npy", X)
    return ("train.npy: row 5, column 3 holds 1e+39, beyond the range of float32, which the "
            "store keeps (at most 3.4028235e+38 in magnitude) (2 rows hold such values)")


def _link_outside(folder: Path, arrays: dict) -> str:
    (folder / "bin_task" / "test.npy").unlink()
    (folder / "bin_task" / "test.npy").symlink_to("/etc/passwd")
    return "test.npy: a symbolic link to /etc/passwd, outside DIR"


def _task_link_outside(folder: Path, arrays: dict) -> str:
    elsewhere = folder.parent / "elsewhere"
    (folder / "tri_task").rename(elsewhere)
    (folder / "tri_task").symlink_to(elsewhere)
    return f"emb/tri_task: a symbolic link to {elsewhere}, outside DIR"


def _link_to_text(folder: Path, arrays: dict) -> str:
    """A link within DIR is followed; what it leads to is told by its first bytes."""
    (folder / "notes.txt").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (folder / "bin_task" / "test.npy").unlink()
    (folder / "bin_task" / "test.npy").symlink_to(folder / "notes.txt")
    return "test.npy: is not a .npy file (it does not begin as one)"


def _pickle_file(folder: Path, arrays: dict) -> str:
    (folder / "bin_task" / "test.npy").write_bytes(pickle.dumps(arrays["bin_task"]["test"]))
    return "test.npy: is not a .npy file: it is a pickle, which is never loaded"


def _npz_named_npy(folder: Path, arrays: dict) -> str:
    (folder / "bin_task" / "test.npy").unlink()
    save(folder / "bin_task" / "test", arrays["bin_task"]["test"], "npz")
    (folder / "bin_task" / "test.npz").rename(folder / "bin_task" / "test.npy")
    return "test.npy: is not a .npy file: it is a zip archive (an .npz?)"


def _fifo(folder: Path, arrays: dict) -> str:
    (folder / "tri_task" / "test.npy").unlink()
    os.mkfifo(folder / "tri_task" / "test.npy")
    return "test.npy: is a named pipe (FIFO), not a file of embeddings; it is not opened"


def _unknown_task(folder: Path, arrays: dict) -> str:
    (folder / "bin_task").rename(folder / "bin_tsk")
    return "has no task bin_tsk (did you mean bin_task?)"


@contextmanager
def no_reader_of_fifos(folder: Path) -> Iterator[list[Path]]:
    """Watch every named pipe under `folder`: one that a reader opens (and would block on) is
    opened for writing and closed at once, so the reader goes on (a regression fails, never
    hangs); yields the pipes that were opened."""
    opened: list[Path] = []
    stop = threading.Event()

    def watch() -> None:
        fifos = [p for p in folder.rglob("*") if p.is_fifo()]
        while not stop.wait(0.02):
            for fifo in fifos:
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:     # ENXIO: no reader has it open
                    continue
                opened.append(fifo)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield opened
    finally:
        stop.set()
        watcher.join()


@pytest.mark.parametrize("spoil", [_wrong_rows, _wrong_width, _missing_split, _pickled, _nan,
                                   _unknown_task, _beyond_float32, _link_outside,
                                   _task_link_outside, _link_to_text, _pickle_file,
                                   _npz_named_npy, _fifo])
def test_a_bad_folder_is_one_line_and_the_store_is_unchanged(tmp_path, suite, capsys, spoil):
    arrays = embeddings_of(suite)
    paths = resolve_store(tmp_path / "store")
    ok(capsys, "import-embeddings", "m", str(write_folder(tmp_path / "good", arrays)),
       "--suite", str(suite), "--store", str(paths.root))
    folder = write_folder(tmp_path / "emb", arrays)
    message = spoil(folder, arrays)
    with no_reader_of_fifos(folder) as opened:
        for model in ("m", "other"):        # replacing an import, or a new one
            err = refused(capsys, paths.root, "import-embeddings", model, str(folder),
                          "--suite", str(suite), "--store", str(paths.root), names=(message,))
            assert err.startswith("geneb-engine import-embeddings: ")
    assert opened == []


def test_only_a_regular_file_is_opened(tmp_path):
    """A socket, a device, a folder named like a split: told from their status, unopened."""
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "train.npy"))
        assert not_a_file(tmp_path / "train.npy") == ("is a socket, not a file of embeddings; "
                                                      "it is not opened")
    assert not_a_file(Path("/dev/null")) == ("is a character device, not a file of embeddings; "
                                             "it is not opened")
    (tmp_path / "test.npy").mkdir()
    assert not_a_file(tmp_path / "test.npy") == ("is a folder, not a file of embeddings; it is "
                                                 "not opened")
    np.save(tmp_path / "ok.npy", np.zeros((2, 2)))
    assert not_a_file(tmp_path / "ok.npy") is None


def test_every_problem_of_a_folder_is_told_at_once(tmp_path, suite, capsys):
    arrays = embeddings_of(suite)
    folder = write_folder(tmp_path / "emb", arrays)
    messages = [spoil(folder, arrays) for spoil in (_beyond_float32, _fifo, _link_outside)]
    store = tmp_path / "store"
    with no_reader_of_fifos(folder) as opened:
        refused(capsys, store, "import-embeddings", "m", str(folder), "--suite", str(suite),
                "--store", str(store), lines=4,
                names=(f"3 problems in {folder} (nothing imported), each to fix:", *messages))
    assert opened == []
    assert not store.exists()


def test_a_folder_the_import_does_not_take_is_named(tmp_path, suite, capsys):
    """Hidden folders are not read, and each is named in a warning; the rest is imported."""
    arrays = embeddings_of(suite)
    folder = write_folder(tmp_path / "emb", arrays)
    for hidden in ("..x", ".bin_task"):
        write_folder(folder / hidden, arrays)
    rc, out, err = run(capsys, "import-embeddings", "m", str(folder), "--suite", str(suite),
                       "--store", str(tmp_path / "store"))
    assert rc == 0, err
    assert err.splitlines() == [f"warning: {folder / name}: not read: a hidden folder (its "
                                "name starts with '.'); a task's folder is named by its task id"
                                for name in ("..x", ".bin_task")]     # one line each, whole
    assert "imported 4 splits of 2 tasks" in out


def test_a_link_within_the_folder_is_followed(tmp_path, suite, capsys):
    arrays = embeddings_of(suite)
    folder = write_folder(tmp_path / "emb", arrays)
    (folder / "bin_task" / "train.npy").rename(folder / "bin_task" / "train.npy.bak")
    (folder / "bin_task" / "train.npy").symlink_to("train.npy.bak")     # relative, within DIR
    (folder / ".versions").mkdir()
    (folder / "tri_task").rename(folder / ".versions" / "tri_task")
    (folder / "tri_task").symlink_to(folder / ".versions" / "tri_task")
    os.mkfifo(folder / "a-pipe-beside")                  # not a task folder: never opened
    paths = resolve_store(tmp_path / "store")
    with no_reader_of_fifos(folder) as opened:
        rc, out, err = run(capsys, "import-embeddings", "m", str(folder), "--suite",
                           str(suite), "--store", str(paths.root))
    assert rc == 0 and opened == [], err
    assert err == (f"warning: {folder / '.versions'}: not read: a hidden "
                   "folder (its name starts with '.'); a task's folder is named by its task id\n")
    for task, splits in arrays.items():
        for name, X in splits.items():
            np.testing.assert_array_equal(stored(paths, "m", task, name), X)


def test_fill_refuses_tasks_the_import_lacks(tmp_path, suite, capsys):
    arrays = embeddings_of(suite)
    del arrays["tri_task"]
    paths = resolve_store(tmp_path / "store")
    ok(capsys, "import-embeddings", "m", str(write_folder(tmp_path / "emb", arrays)),
       "--suite", str(suite), "--store", str(paths.root))
    refused(capsys, paths.root, "fill", "--models", "m", "--suite", str(suite), "--store",
            str(paths.root), names=("model m: its imported embeddings hold no tri_task",))
    ok(capsys, "fill", "--models", "m", "--suite", str(suite), "--tasks", "bin_task",
       "--store", str(paths.root))


def test_an_imported_model_is_listed_estimated_and_offered(tmp_path, suite, capsys):
    paths = resolve_store(tmp_path / "store")
    ok(capsys, "import-embeddings", "m", str(write_folder(tmp_path / "emb", embeddings_of(suite))),
       "--suite", str(suite), "--store", str(paths.root))
    listed = json.loads(ok(capsys, "models", "--store", str(paths.root), "--json"))
    assert [r["encoder"] for r in listed if r["model_id"] == "m"] == ["imported"]
    before = digest(paths.root)
    plan = json.loads(ok(capsys, "fill", "--models", "m", "--suite", str(suite), "--dry-run",
                         "--store", str(paths.root), "--json"))
    model = plan["models"][0]      # nothing to embed; the probes calibrated on its stored rows
    assert (model["splits_to_embed"], model["splits_stored"], model["sequences"]) == (0, 4, 0)
    assert {p["source"] for p in model["probes"]} == {"calibration"}
    assert digest(paths.root) == before
    meta = read_catalog(paths, "models").filter(model_id="m").row(0, named=True)
    found = assess(meta, "m")
    assert (found.runnable, found.needs) == (True, "imported embeddings")


def test_an_entry_cannot_claim_imported_embeddings():
    """Only `import-embeddings` records an imported model (with the import's revision)."""
    with pytest.raises(GenebError, match=r"models.toml: model entry 1 \(x\): encoder = "
                                         r"\"imported\" is not an entry's"):
        parse_model_entries([{"model_id": "x", "encoder": "imported"}], "models.toml")


def test_a_model_that_runs_itself_keeps_its_id(tmp_path, suite, capsys):
    folder = write_folder(tmp_path / "emb", embeddings_of(suite))
    store = tmp_path / "store"
    refused(capsys, store, "import-embeddings", "kmer-3", str(folder), "--suite", str(suite),
            "--store", str(store), names=("MODEL kmer-3: names a model this store runs itself",
                                          "kmer-3-embeddings"))


# --- the Verified tier, on 100 tiny geneb-v1 tasks -------------------------------------------

MODEL = "byo-model"


def submission_of(arrays: dict, data_dir: Path) -> bytes:
    """The submission the geneb-v1 probe gives on `arrays`, computed here (seed means in seed
    order)."""
    results: dict = {regime: {} for regime in REGIMES}
    with threadpool_limits(1):
        for task in geneb_v1_tasks():
            data = read_flat_csv(data_dir / f"{task.task_id}.csv", task.task_id)
            X = arrays[task.task_id]
            rows = probe_cell(X["train"], data.train.labels, X["test"], data.test.labels,
                              REGIMES)
            for regime in REGIMES:
                mine = [r for r in rows if r["regime"] == regime]
                results[regime][task.task_id] = {m: sum(r[col] for r in mine) / len(mine)
                                                 for m, col in METRIC_COLUMNS.items()}
    meta = {"display": "BYO model", "params": 1234, "url": "", "zero_shot": False,
            "training_data": "elsewhere", "provenance": "self-reported", "submitted_by": "me"}
    return document_bytes(submission_document(MODEL, "their-harness 1.0", meta, results))


@pytest.fixture(scope="module")
def verified(tmp_path_factory):
    """A store that imported `MODEL`'s embeddings of the 100 geneb-v1 tasks with the submission
    they reproduce, and probed them (`fill`); the data folder; the embeddings folder; the
    arrays."""
    root = tmp_path_factory.mktemp("verified")
    data_dir = root / "data"
    data_dir.mkdir()
    for i, task in enumerate(geneb_v1_tasks()):
        write_task(data_dir / f"{task.task_id}.csv", 24, 12, 2, i, length=20)
    arrays = embeddings_of(data_dir)
    folder = write_folder(root / "emb", arrays)
    (root / "sub").mkdir()
    submission = root / "sub" / f"{MODEL}.json"
    submission.write_bytes(submission_of(arrays, data_dir))
    store = root / "store"
    for argv in (["import-embeddings", MODEL, str(folder), "--submission", str(submission)],
                 ["fill", "--models", MODEL]):
        rc = main([*argv, "--suite", "geneb-v1", "--data-dir", str(data_dir), "--store",
                   str(store)])
        assert rc == 0
    return store, data_dir, folder, arrays


def copy_store(verified, tmp_path) -> Path:
    return Path(shutil.copytree(verified[0], tmp_path / "store"))


def test_a_reproduced_submission_exports_as_verified(verified, tmp_path, capsys):
    store = copy_store(verified, tmp_path)
    submission = store / "imports" / MODEL / f"{MODEL}.json"
    out = ok(capsys, "compare", "local", str(submission), "--store", str(store))
    assert f"reproduced by A: {MODEL}" in out
    ok(capsys, "export", "--submission", MODEL, "--provenance", "verified", "-o",
       str(tmp_path), "--store", str(store))
    doc = json.loads((tmp_path / f"{MODEL}.json").read_text())
    sub = json.loads(submission.read_text())
    assert doc["meta"]["provenance"] == "verified"
    assert (doc["meta"]["display"], doc["meta"]["params"]) == ("BYO model", 1234)
    for regime in REGIMES:
        for task, values in sub["results"][regime].items():
            for metric, value in values.items():
                assert abs(doc["results"][regime][task][metric] - value) <= 1e-12


def test_a_submission_not_reproduced_is_refused_with_the_reason(verified, tmp_path, capsys):
    store = copy_store(verified, tmp_path)
    _, data_dir, folder, _ = verified
    doc = json.loads((store / "imports" / MODEL / f"{MODEL}.json").read_bytes())
    doc["results"]["1shot"][geneb_v1_tasks()[0].task_id]["Acc"] += 1e-6
    changed = tmp_path / "sub" / f"{MODEL}.json"
    changed.parent.mkdir()
    changed.write_bytes(document_bytes(doc))
    ok(capsys, "import-embeddings", MODEL, str(folder), "--submission", str(changed),
       "--suite", "geneb-v1", "--data-dir", str(data_dir), "--store", str(store))
    rc, out, _ = run(capsys, "compare", "local", str(changed), "--store", str(store))
    assert rc == 1 and f"not reproduced by A: {MODEL} (1 of its cells beyond 1e-12)" in out
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    refused(capsys, store, "export", "--submission", MODEL, "--provenance", "verified", "-o",
            str(out_dir), "--store", str(store),
            names=(f"--provenance verified: the local results of {MODEL} do not reproduce the "
                   f"submission {changed} it came with: 1 of its cells beyond 1e-12",))
    assert not list(out_dir.iterdir())
    ok(capsys, "export", "--submission", MODEL, "-o", str(out_dir), "--store", str(store))


def test_verified_needs_the_submission_the_embeddings_came_with(verified, tmp_path, capsys):
    store = copy_store(verified, tmp_path)
    _, data_dir, folder, _ = verified
    ok(capsys, "import-embeddings", MODEL, str(folder), "--suite", "geneb-v1", "--data-dir",
       str(data_dir), "--store", str(store))
    refused(capsys, store, "export", "--submission", MODEL, "--provenance", "verified", "-o",
            str(tmp_path), "--store", str(store),
            names=(f"the embeddings of {MODEL} were imported without the submission",))


def test_results_not_recomputed_from_imported_embeddings_are_not_verified(official_store,
                                                                          tmp_path, capsys):
    """Official results, and local results of a model run here, are refused as verified."""
    store = tmp_path / "store"
    shutil.copytree(official_store.root, store)
    local_store(store, "GROVER", reproduced_rows("GROVER"))
    for source, why in (("official", "its official results are imported, not recomputed here "
                                     "from submitted embeddings"),
                        ("local", "GROVER has no imported embeddings; verified results are "
                                  "recomputed from submitted embeddings")):
        refused(capsys, store, "export", "--submission", "GROVER", "--source", source,
                "--provenance", "verified", "-o", str(tmp_path), "--store", str(store),
                names=(f"geneb-engine export: --provenance verified: {why}",))
    ok(capsys, "export", "--submission", "GROVER", "-o", str(tmp_path), "--store", str(store))
