"""`import-embeddings` is atomic per model: killed with SIGKILL at each of its write points and
at random moments of a re-import, the store holds the old import or the new one whole (every
split of one revision, the catalog's revision the same), `fill` probes whichever it holds, and
the rerun ends with the new one and `doctor` clean. An import and a `fill` of the same model
never run together: the second refuses in one line naming the first, and no `.partial` is left.
Every killed run is a real `geneb-engine` process.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
import zarr

from engine.cli import main
from engine.encoders.imported import build
from engine.fill import FillOptions, run_fill
from engine.pairs import embeddings_identity
from engine.suites import resolve_suite
from store.doctor import examine
from store.embedding_imports import read_import
from store.embeddings import EmbeddingStore, _crcs
from store.paths import resolve_store
from store.tables.catalogs import imported_models
from store.vocab.errors import GenebError
from tests.engine.conftest import write_task
from tests.engine.in_process import refused
from tests.engine.in_process import run as run_here
from tests.engine.processes import ROOT, env_of, temp_files
from tests.engine.test_import_embeddings import embeddings_of, write_folder
from tests.helpers import digest, sweep_size

MODEL = "byo"
# Where a re-import of four splits can die: each split's writes (the 1st and 4th time a
# point is reached), the switch, the catalog after it, the old import's removal.
POINTS = ("split-created:1", "arrays-created:4", "rows-written:2", "done-flags:4",
          "checksum:1", "complete:3", "split-renamed:1", "split-renamed:4", "import-switched",
          "catalog-written", "import-dropped")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="flock, mkfifo")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """(suite, {revision: arrays}, the old folder, the new folder, a store holding the old
    import)."""
    root = tmp_path_factory.mktemp("imports")
    suite = root / "suite"
    suite.mkdir()
    write_task(suite / "bin_task.csv", 40, 20, 2, 1, length=30)
    write_task(suite / "tri_task.csv", 45, 21, 3, 2, length=30)
    folders, arrays = [], {}
    for seed in (0, 1):
        data = embeddings_of(suite, seed=seed)
        folders.append(write_folder(root / f"emb{seed}", data))
        store = root / f"store{seed}"
        assert main(["import-embeddings", MODEL, str(folders[-1]), "--suite", str(suite),
                     "--store", str(store)]) == 0
        arrays[read_import(resolve_store(store), MODEL).revision] = data
    return suite, arrays, folders[0], folders[1], root / "store0"


def import_cmd(store: Path, folder: Path, suite: Path) -> list[str]:
    return [sys.executable, "-m", "engine.cli", "import-embeddings", MODEL, str(folder),
            "--suite", str(suite), "--store", str(store)]


def one_import(store: Path, arrays: dict) -> str:
    """The store holds one whole import of `arrays`' revisions: its record's, every split of
    it verified with that revision and equal to its arrays, the catalog's revision the same.
    Returns the revision."""
    paths = resolve_store(store)
    record = read_import(paths, MODEL)
    assert record.revision in arrays, record.revision
    model = imported_models(paths)[MODEL]
    assert model.revision == record.revision
    embeddings = EmbeddingStore(paths)
    folder = model_folder(paths)
    assert sorted(p.relative_to(folder).as_posix() for p in folder.glob("*/*")
                  if p.is_dir()) == sorted(
        f"{f.task}/{f.split}" for f in record.files)
    for f in record.files:
        expect = embeddings_identity(model, build(model), f.data_hash)
        found = embeddings.load(MODEL, f.task, f.split, expect)
        assert found is not None, (f.task, f.split)
        np.testing.assert_array_equal(found[0], arrays[record.revision][f.task][f.split])
    return record.revision


def model_folder(paths) -> Path:
    """The folder of the model's splits, as readers find it."""
    return EmbeddingStore(paths).split_path(MODEL, "bin_task", "train").parent.parent


def fills(store: Path, suite: Path) -> None:
    assert main(["fill", "--models", MODEL, "--suite", str(suite), "--regimes", "full",
                 "--store", str(store)]) == 0


def recovers(store: Path, setup, what: str) -> None:
    """After a kill: one import whole, `fill` probes it; the rerun imports the new one, and
    leaves `doctor` clean and no temporary file; `fill` probes the new one."""
    suite, arrays, _, new, _ = setup
    one_import(store, arrays)
    fills(store, suite)
    assert main(import_cmd(store, new, suite)[3:]) == 0, what
    assert one_import(store, arrays) == list(arrays)[1], what
    assert examine(resolve_store(store)) == [], what
    assert temp_files(store) == [], what
    fills(store, suite)


def killed(store: Path, setup, **env: str) -> subprocess.Popen:
    suite, _, _, new, old_store = setup
    subprocess.run(["cp", "-a", str(old_store), str(store)], check=True)
    return subprocess.Popen(import_cmd(store, new, suite), cwd=ROOT,
                            env=env_of(uuid.uuid4().hex, **env), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def test_a_reimport_killed_at_a_write_point_leaves_one_import(tmp_path, setup):
    rng = random.Random(20261206)
    for point in rng.sample(POINTS, sweep_size(full=len(POINTS), sampled=4)):
        store = tmp_path / point.replace(":", "-")
        proc = killed(store, setup, GENEB_FAILPOINT=point)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == -signal.SIGKILL, f"{point} not reached: {err}"
        recovers(store, setup, point)


def test_a_reimport_killed_at_random_moments_leaves_one_import(tmp_path, setup):
    """Each kill lands at a random moment of the re-import's writes: after its first split
    is begun, within the time an uninterrupted run writes for."""

    def started(store: Path, proc: subprocess.Popen) -> float | None:
        """When the run began its first split (None: it ended first)."""
        while proc.poll() is None:
            if next((store / "embeddings.zarr").glob("*/*/*.partial"), None):
                return time.perf_counter()
            time.sleep(0.002)
        return None

    timing = killed(tmp_path / "timing", setup)
    begun = started(tmp_path / "timing", timing)
    assert timing.wait(120) == 0 and begun is not None
    window = time.perf_counter() - begun
    rng = random.Random(20261207)
    midway = 0
    rounds = sweep_size(full=20, sampled=3)
    for trial in range(rounds):
        store = tmp_path / f"store{trial}"
        proc = killed(store, setup)
        begun = started(store, proc)
        delay = rng.uniform(0, 0.8 * window)
        if begun is not None:
            time.sleep(max(0.0, begun + delay - time.perf_counter()))
        midway += proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        recovers(store, setup, f"trial {trial} ({delay:.3f} s)")
    assert midway >= (rounds + 1) // 2, f"only {midway} of {rounds} kills landed midway"


def paused(store: Path, cmd: list[str], point: str, marker: Path) -> subprocess.Popen:
    """`cmd` run until it reaches `point`, where it waits (`store.failpoints`, GENEB_FAULT)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env_of(uuid.uuid4().hex,
                                                      GENEB_FAULT=f"{point}:pause:{marker}"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (marker.exists() and marker.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.02)
    return proc


def stop(proc: subprocess.Popen, marker: Path) -> None:
    os.kill(int(marker.read_text()), signal.SIGKILL)
    proc.wait(60)


def test_an_import_and_a_fill_of_one_model_never_run_together(tmp_path, setup, capsys):
    suite, arrays, old, new, old_store = setup
    store = tmp_path / "store"
    subprocess.run(["cp", "-a", str(old_store), str(store)], check=True)
    where = ("--suite", str(suite), "--store", str(store))
    # a fill of the model, stopped in its first commit: an import is refused, names it
    fill = paused(store, [sys.executable, "-m", "engine.cli", "fill", "--models", MODEL,
                          *where], "data-file-temp", tmp_path / "fill")
    refused(capsys, store, "import-embeddings", MODEL, str(new), *where,
            names=(f"MODEL {MODEL}: a `geneb-engine fill` of it is probing its imported "
                   "embeddings; import them when it has finished",))
    stop(fill, tmp_path / "fill")
    # an import of the model, stopped after its first split: a fill is refused, and so is
    # another import, each naming it
    imp = paused(store, import_cmd(store, new, suite), "split-renamed", tmp_path / "import")
    refused(capsys, store, "fill", "--models", MODEL, *where,
            names=(f"model {MODEL}: `geneb-engine import-embeddings` is importing its "
                   "embeddings now; run fill when it has finished",))
    refused(capsys, store, "import-embeddings", MODEL, str(old), *where,
            names=(f"MODEL {MODEL}: another `geneb-engine import-embeddings` of it is "
                   "running; run this one when it has finished",))
    assert one_import(store, arrays) == list(arrays)[0]     # the old one, whole, meanwhile
    stop(imp, tmp_path / "import")
    assert [p for p in store.rglob("*.partial")] == []
    recovers(store, setup, "after an import and a fill met")


# --- doctor: what an import can leave wrong, found and repaired ------------------------------


def copy_of(setup, tmp_path) -> tuple[Path, object]:
    store = tmp_path / "store"
    subprocess.run(["cp", "-a", str(setup[4]), str(store)], check=True)
    return store, resolve_store(store)


def found(paths) -> list[tuple[str, str, str, str, bool]]:
    """doctor's findings, paths relative to the store."""
    return [(f.part, Path(f.path).relative_to(paths.root).as_posix(), f.problem, f.repair,
             f.repaired) for f in examine(paths)]


def repaired(capsys, store: Path) -> tuple[int, list[dict], list[dict]]:
    capsys.readouterr()
    rc = main(["doctor", "--repair", "--store", str(store), "--json"])
    doc = json.loads(capsys.readouterr().out)
    return rc, doc["repaired"], doc["problems"]


def again(setup, store: Path, folder: Path | None = None) -> None:
    suite, _, old, _, _ = setup
    assert main(import_cmd(store, folder or old, suite)[3:]) == 0


@pytest.mark.parametrize("damage, why", [
    (lambda doc: "{", "cannot be read (Expecting property name enclosed in double quotes"),
    (lambda doc: json.dumps({k: v for k, v in doc.items() if k != "suite"}),
     "cannot be read (the record has no 'suite')"),
    (lambda doc: json.dumps({**doc, "files": [{**doc["files"][0], "rows": "40"}]}),
     "cannot be read (file 1: 'rows' is not a int)"),
    (lambda doc: json.dumps({**doc, "revision": "0" * 64}),
     "cannot be read (its revision 000000000000 is not the one its files give"),
    (lambda doc: json.dumps({**doc, "model": "other"}),
     "cannot be read (it is the record of model 'other')"),
])
def test_doctor_keeps_an_unreadable_import_record_aside_and_the_model_imports_again(
        tmp_path, setup, capsys, damage, why):
    suite, arrays, _, _, _ = setup
    store, paths = copy_of(setup, tmp_path)
    record = paths.embedding_import(MODEL) / "import.json"
    splits = model_folder(paths)
    record.write_text(damage(json.loads(record.read_text())))
    [(part, path, problem, repair, _)] = found(paths)
    assert (part, path) == ("imports", f"imports/{MODEL}/import.json") and why in problem
    assert repair == ("kept aside in aside/, with the model's imported splits; import the "
                      f"embeddings again (`geneb-engine import-embeddings {MODEL} DIR`)")
    # the model is not wedged: fill names the record, an import replaces it
    refused(capsys, store, "fill", "--models", MODEL, "--suite", str(suite), "--store",
            str(store), "--regimes", "10shot", names=(f"{record}: {why}",))
    rc, done, left = repaired(capsys, store)
    assert (rc, [d["path"] for d in done], left) == (0, [str(record)], [])
    [aside] = paths.aside.iterdir()
    assert (aside / "imports" / MODEL / "import.json").is_file()
    assert (aside / "embeddings.zarr" / splits.name).is_dir() and not splits.exists()
    again(setup, store)
    assert one_import(store, arrays) == list(arrays)[0] and found(paths) == []
    fills(store, suite)


def test_doctor_names_the_import_to_run_again_for_a_missing_split(tmp_path, setup, capsys):
    store, paths = copy_of(setup, tmp_path)
    record = read_import(paths, MODEL)
    folder = model_folder(paths)
    shutil.rmtree(folder / "tri_task" / "test")
    fix = (f"not repaired here; import the embeddings again: `geneb-engine import-embeddings "
           f"{MODEL} {record.folder}` with the --suite of that import (suite)")
    want = [("imports", f"embeddings.zarr/{folder.name}/tri_task/test", "missing: the test "
             f"split of task tri_task, which {MODEL}'s import record names", fix, False)]
    assert found(paths) == want
    rc, done, left = repaired(capsys, store)
    assert (rc, done, [f["problem"] for f in left]) == (1, [], [want[0][2]])
    again(setup, store)
    assert found(paths) == []


def test_doctor_finds_imported_values_that_are_not_finite(tmp_path, setup, capsys):
    """An import before the check after the cast stored a float64 1e39 as an infinity:
    doctor finds it, fill refuses it in one line, the repair drops it."""
    suite, arrays, _, _, _ = setup
    store, paths = copy_of(setup, tmp_path)
    split = model_folder(paths) / "bin_task" / "train"
    group = zarr.open_group(str(split), mode="r+")
    X = group["embeddings"][:]
    X[4, 2] = np.inf
    group["embeddings"][:] = X
    checksums = group.attrs["checksums"]
    group.attrs["checksums"] = {**checksums, "embeddings": _crcs(X)}    # as it was written
    why = "row 5, column 3 holds inf, not a finite number"
    assert found(paths) == [("embeddings", split.relative_to(paths.root).as_posix(),
                             f"corrupt split of imported embeddings: {why}", "dropped; import "
                             f"them again: `geneb-engine import-embeddings {MODEL} {setup[2]}` "
                             "with the --suite of that import (suite)", True)]
    rc, err = run_here(capsys, "fill", "--models", MODEL, "--suite", str(suite), "--store",
                       str(store), "--regimes", "10shot")    # met while it runs: one line
    assert (rc, err) == (2, f"geneb-engine fill: model {MODEL}: its embeddings are imported "
                            f"and bin_task/train does not verify in the store ({why}); import "
                            f"them again (`geneb-engine import-embeddings {MODEL} DIR`)\n")
    assert list(store.rglob("*.partial")) == []
    rc, done, left = repaired(capsys, store)
    assert rc == 1 and [f["path"] for f in done] == [str(split)]
    assert [f["problem"] for f in left] == [f"missing: the train split of task bin_task, which "
                                            f"{MODEL}'s import record names"]
    again(setup, store)
    assert one_import(store, arrays) == list(arrays)[0] and found(paths) == []


def test_doctor_tells_an_imports_partial_split_from_a_fills(tmp_path, setup, capsys):
    """A partial split in an imported model's folder (left by an import, or by a fill that met
    a re-import, before imports were atomic) is resumed by no fill: doctor says so and
    --repair removes it; a fill's is resumed by the next fill, as doctor says."""
    suite, arrays, _, _, _ = setup
    store, paths = copy_of(setup, tmp_path)
    partial = model_folder(paths) / "tri_task" / "train.partial"
    shutil.copytree(partial.with_name("train"), partial)
    zarr.open_group(str(partial), mode="r+").attrs["complete"] = False
    assert main(["fill", "--models", "kmer-3", "--suite", str(suite), "--tasks", "bin_task",
                 "--store", str(store)]) == 0
    kmer = paths.embeddings / "kmer-3" / "bin_task"
    (kmer / "test").rename(kmer / "test.partial")
    assert found(paths) == [
        ("embeddings", partial.relative_to(paths.root).as_posix(),
         "partial split of imported embeddings (45 of 45 rows written), left by an import "
         "that was stopped; no fill resumes it", "removed", True),
        ("embeddings", "embeddings.zarr/kmer-3/bin_task/test.partial",
         "partial split: 20 of 20 rows written; the next fill resumes it",
         "dropped; the next fill recomputes it", True)]
    rc, _, left = repaired(capsys, store)
    assert (rc, left) == (0, [])
    assert not partial.exists() and one_import(store, arrays) == list(arrays)[0]


def test_doctor_removes_what_an_interrupted_import_left_and_catches_up_the_catalog(
        tmp_path, setup, capsys):
    suite, arrays, _, new, _ = setup
    store, paths = copy_of(setup, tmp_path)
    old = read_import(paths, MODEL)
    old_folder = model_folder(paths).name
    proc = killed(tmp_path / "killed", setup, GENEB_FAILPOINT="import-switched")
    proc.communicate(timeout=120)
    killed_paths = resolve_store(tmp_path / "killed")
    assert one_import(tmp_path / "killed", arrays) == list(arrays)[1]   # switched, then killed
    assert found(killed_paths) == [
        ("imports", "catalog/models.parquet", f"model {MODEL}: the catalog records revision "
         f"{old.revision[:12]}, its import {list(arrays)[1][:12]} (an import stopped before "
         "the catalog)", "the catalog row takes the import's revision", True),
        ("imports", f"embeddings.zarr/{old_folder}", "splits of an import that is not "
         "the model's (one that was stopped, or one replaced since)", "removed", True)]
    rc, done, left = repaired(capsys, tmp_path / "killed")
    assert (rc, len(done), left) == (0, 2, [])
    assert not (killed_paths.embeddings / old_folder).exists()
    assert examine(killed_paths) == []
    fills(tmp_path / "killed", suite)


def test_doctor_removes_an_unreadable_audit_table(tmp_path, setup, capsys):
    store, paths = copy_of(setup, tmp_path)
    audit = paths.catalog_table("audit")
    audit.write_bytes(b"PAR1 not a table")
    [finding] = examine(paths)
    assert (finding.path, finding.repair) == (str(audit), "removed: `geneb-engine audit` "
                                                          "measures its tasks again")
    assert finding.problem.startswith("cannot be read (")
    rc, done, left = repaired(capsys, store)
    assert (rc, len(done), left) == (0, 1, []) and not audit.exists()
    assert main(["audit", "--suite", str(setup[0]), "--store", str(store)]) == 0
    assert examine(paths) == []


def test_a_fill_planned_before_a_reimport_is_refused(tmp_path, setup):
    """A fill that read the model before an import replaced it (and took its hold only after)
    refuses, before the store changes, rather than mixing the two."""
    suite, _, _, new, _ = setup
    store, paths = copy_of(setup, tmp_path)
    stale = imported_models(paths)[MODEL]
    again(setup, store, new)
    before = digest(store)
    tasks = resolve_suite(str(suite), paths)
    with pytest.raises(GenebError, match=f"^model {MODEL}: its embeddings were imported again "
                                         "after this run read the store; run it again$"):
        run_fill(paths, tasks, [stale], list(tasks.tasks), ["full"], FillOptions(),
                 lambda event: None)
    assert digest(store) == before
