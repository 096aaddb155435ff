"""geneb-mini: 13 synthetic tasks, one per category, byte-identical everywhere, learnable but
not trivially so, materialised idempotently and completed after an interruption."""

from __future__ import annotations

import hashlib
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef

from engine import mini
from engine.data import read_flat_csv
from engine.encoders.kmer import KmerEncoder
from engine.suites import flat_dir_suite, mini_suite
from store.catalog import CATEGORY_ORDER

# sha256 over every file of the suite (sorted by name). A change here means the generated
# content changed: bump mini.REVISION and update this digest.
DIGEST = "6fd06916f706f279d6ca2de174666a86c3d9980c96544f7188e7f5186d12a7ff"


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    return mini.materialize(tmp_path_factory.mktemp("mini") / "geneb-mini")


@pytest.fixture(scope="module")
def loaded(suite):
    return {t.task_id: read_flat_csv(suite / f"{t.task_id}.csv") for t in mini.TASKS}


def test_one_task_per_category_in_official_order():
    assert tuple(t.category for t in mini.TASKS) == CATEGORY_ORDER
    assert all(t.task_id.startswith("mini_") for t in mini.TASKS)
    assert len({t.task_id for t in mini.TASKS}) == 13
    assert {(t.suite, t.source_benchmark) for t in mini.TASKS} == {("geneb-mini", "geneb-mini")}
    assert all(t.label for t in mini.TASKS)


def test_manifest_matches_tasks(suite):
    s = flat_dir_suite(suite, "geneb-mini", mini.REVISION)
    assert s.tasks == mini.TASKS
    assert (suite / mini.STAMP).read_text().strip() == mini.REVISION


def test_the_suite_is_written_by_a_writing_command_once_it_materializes_it(suite, tmp_path):
    """A load writes nothing into the store (a command may still refuse after reading the
    suite); `materialize`, which a writing command calls once its checks passed, writes the
    whole suite there, byte-identical, and a read-only command's does nothing."""
    expected = read_flat_csv(suite / "mini_methyl_cpg.csv").data_hash
    reading, writing = (mini_suite(tmp_path / "geneb-mini", write=w) for w in (False, True))
    for lazy in (reading, writing):
        assert lazy.tasks == mini.TASKS and lazy.revision == mini.REVISION
        assert lazy.load("mini_methyl_cpg").data_hash == expected
        assert not (tmp_path / "geneb-mini").exists()     # generated elsewhere
    reading.materialize()
    assert not (tmp_path / "geneb-mini").exists()
    writing.materialize()
    assert digest(tmp_path / "geneb-mini") == digest(suite)   # the whole suite, byte-identical
    assert writing.load("mini_tf_binding_4way").data_hash == \
        read_flat_csv(suite / "mini_tf_binding_4way.csv").data_hash


def test_sizes_lengths_and_classes(loaded):
    n_classes = []
    for task in loaded.values():
        assert len(task.train) <= 2000 and len(task.test) <= 500
        for split in (task.train, task.test):
            lengths = [len(s) for s in split.sequences]
            assert 100 <= min(lengths) and max(lengths) <= 600
            assert set("".join(split.sequences)) <= set("ACGTN")
        assert 2 <= task.n_classes <= 4
        assert set(np.unique(task.test.labels)) == set(np.unique(task.train.labels))
        assert not task.warnings
        n_classes.append(task.n_classes)
    assert n_classes.count(2) >= 2 and sum(c > 2 for c in n_classes) >= 2


def test_train_rows_come_first(suite):
    for t in mini.TASKS:
        splits = [line.rsplit(",", 1)[1] for line in
                  (suite / f"{t.task_id}.csv").read_text().splitlines()[1:]]
        first_test = splits.index("test")
        assert set(splits[:first_test]) == {"train"} and set(splits[first_test:]) == {"test"}


def test_materialize_is_deterministic(suite, tmp_path):
    again = mini.materialize(tmp_path / "again")
    assert digest(again) == digest(suite)
    combined = hashlib.sha256("".join(digest(suite).values()).encode()).hexdigest()
    assert combined == DIGEST, "generated content changed: bump mini.REVISION and DIGEST"


def test_second_materialize_rewrites_nothing(suite, tmp_path):
    folder = shutil.copytree(suite, tmp_path / "m")
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert mini.materialize(folder) == folder
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


def test_half_written_folder_is_completed(suite, tmp_path):
    folder = shutil.copytree(suite, tmp_path / "half")
    (folder / mini.STAMP).unlink()                   # interrupted before the stamp
    (folder / f"{mini.TASKS[5].task_id}.csv").write_text("text,label,split\nAC")
    (folder / f"{mini.TASKS[-1].task_id}.csv").unlink()
    mini.materialize(folder)
    assert digest(folder) == digest(suite)
    assert not [p for p in folder.iterdir() if ".tmp" in p.name]


def test_stale_revision_is_replaced(suite, tmp_path):
    folder = shutil.copytree(suite, tmp_path / "old")
    (folder / mini.STAMP).write_text("geneb-mini-0\n")
    (folder / f"{mini.TASKS[0].task_id}.csv").write_text("stale")
    mini.materialize(folder)
    assert digest(folder) == digest(suite)


@pytest.fixture(scope="module")
def kmer4_mcc(loaded) -> dict[str, tuple[float, float]]:
    """(full, 1-shot seed 42) test MCC of the k=4 spectrum probe, per task, computed once."""
    enc = KmerEncoder(4)
    out = {}
    for tid, task in loaded.items():
        xtr, xte = enc.encode(task.train.sequences), enc.encode(task.test.sequences)
        ytr, yte = task.train.labels, task.test.labels
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = LogisticRegression(max_iter=1000).fit(xtr, ytr)
            rs = np.random.RandomState(42)
            idx = np.concatenate([rs.choice(np.flatnonzero(ytr == c), 1, replace=False)
                                  for c in np.unique(ytr)])
            one = LogisticRegression(max_iter=1000, random_state=42).fit(xtr[idx], ytr[idx])
        out[tid] = (matthews_corrcoef(yte, full.predict(xte)),
                    matthews_corrcoef(yte, one.predict(xte)))
    return out


def test_signal_is_learnable_but_not_trivial(kmer4_mcc):
    full = {tid: m[0] for tid, m in kmer4_mcc.items()}
    assert all(0.1 < v < 0.95 for v in full.values()), full
    assert max(full.values()) - min(full.values()) > 0.2, "tasks should differ in difficulty"


def test_one_shot_is_harder_than_full(kmer4_mcc):
    gaps = [full - one for full, one in kmer4_mcc.values()]
    assert np.mean(gaps) > 0.1 and sum(g > 0 for g in gaps) >= 10
