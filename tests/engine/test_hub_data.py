"""geneb-v1 data: both official layouts, malformed files, the suite, subsampling, download."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from engine.cli import main
from engine.commands import data as data_cmd
from engine.data import read_flat_csv, read_hub_task
from engine.hub_data import (
    DATA_MANIFEST,
    PINNED_REVISION,
    sha256_file,
    subsample_task,
    verify_data,
)
from engine.suites import flat_dir_suite, resolve_suite
from engine.task_files import task_sources
from store.catalog import geneb_v1_tasks
from store.manifest import materialised_suite_tasks
from store.paths import StorePaths
from store.vocab.errors import GenebError
from tests.engine.in_process import refused

V1 = [t.task_id for t in geneb_v1_tasks()]


def rows_for(seed: int, n_train: int = 30, n_test: int = 12):
    rng = np.random.default_rng(seed)
    out = []
    for split, n in (("train", n_train), ("test", n_test)):
        for i in range(n):
            seq = "".join(rng.choice(list("ACGT"), size=int(rng.integers(20, 60))))
            out.append((seq, i % 2, split))
    return out


def write_flat(folder: Path, task_id: str, rows) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{task_id}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label", "split"])
        w.writerows(rows)
    return folder / f"{task_id}.csv"


def snapshot_of(store: Path) -> Path:
    """Where `data download` puts the pinned snapshot in a store."""
    return StorePaths(store).data_dir(PINNED_REVISION)


def write_hub(root: Path, task_id: str, rows) -> Path:
    folder = root / "tasks" / task_id
    folder.mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        with open(folder / f"{split}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["text", "label"])
            w.writerows((t, lab) for t, lab, s in rows if s == split)
    return folder


def test_flat_and_hub_layouts_read_the_same_task_and_hash_equal(tmp_path):
    rows = rows_for(1)
    flat = read_flat_csv(write_flat(tmp_path / "flat", "t1", rows))
    hub = read_hub_task(write_hub(tmp_path / "hub", "t1", rows))
    assert hub.task_id == flat.task_id == "t1"
    assert hub.train.sequences == flat.train.sequences
    np.testing.assert_array_equal(hub.test.labels, flat.test.labels)
    assert hub.data_hash == flat.data_hash
    other = read_hub_task(write_hub(tmp_path / "hub2", "t1", rows_for(2)))
    assert other.data_hash != flat.data_hash


def test_task_sources_finds_either_layout(tmp_path):
    write_flat(tmp_path, "flat_task", rows_for(1))
    write_hub(tmp_path, "hub_task", rows_for(2))
    bare = tmp_path / "bare_task"
    write_hub(tmp_path / "x", "bare_task", rows_for(3)).rename(bare)   # <root>/<id>/train.csv
    sources = task_sources(tmp_path)
    assert list(sources) == ["bare_task", "flat_task", "hub_task"]
    assert sources["hub_task"]().task_id == "hub_task"


def test_hub_missing_split_names_the_file(tmp_path):
    folder = write_hub(tmp_path, "t", rows_for(1))
    (folder / "test.csv").unlink()
    with pytest.raises(GenebError, match=r"tasks/t/test\.csv: missing"):
        read_hub_task(folder)


@pytest.mark.parametrize("content, message", [
    ("text,label\nACGT,0\nAC5T,1\n", r"train\.csv, line 3: character\(s\) '5' in column 'text'"),
    ("text,label\nACGT,0\nACGT,one\n", r"train\.csv, line 3: label 'one' is not an integer"),
    ("text,label\nACGT,0\n,1\n", r"train\.csv, line 3: empty sequence"),
    ("sequence,label\nACGT,0\n", r"train\.csv: missing column\(s\) text"),
    ("text,label\nACGT,0\nACGT,0\n", r"tasks/t: the train split holds a single class"),
])
def test_malformed_hub_files_name_the_file_and_line(tmp_path, content, message):
    folder = write_hub(tmp_path, "t", rows_for(1))
    (folder / "train.csv").write_text(content)
    with pytest.raises(GenebError, match=message):
        read_hub_task(folder)


def test_directory_suites_accept_the_hub_layout(tmp_path):
    write_hub(tmp_path / "s", "a", rows_for(1))
    write_hub(tmp_path / "s", "b", rows_for(2))
    suite = flat_dir_suite(tmp_path / "s")
    assert [t.task_id for t in suite.tasks] == ["a", "b"]
    assert len(suite.load("b").train) == 30


def test_a_suite_manifest_reads_alike_for_the_engine_and_the_dashboard(tmp_path):
    paths = StorePaths(tmp_path)
    folder = paths.suite_dir("mine")
    write_flat(folder, "a", rows_for(1))
    write_flat(folder, "b", rows_for(2))
    (folder / "manifest.csv").write_text("task_id,category,label\nb,Enhancers,\na,Promoters,A\n")
    suite = flat_dir_suite(folder)
    assert [(t.task_id, t.label, t.category) for t in suite.tasks] == [
        ("b", "b", "Enhancers"), ("a", "A", "Promoters")]
    assert tuple(materialised_suite_tasks(paths)) == suite.tasks
    (folder / "manifest.csv").write_bytes(b"task_id,category\n\xff,Enhancers\n")
    assert materialised_suite_tasks(paths) == []       # the dashboard skips what cannot be read
    with pytest.raises(GenebError, match="manifest.csv: not UTF-8"):
        flat_dir_suite(folder)


def test_geneb_v1_reads_the_downloaded_snapshot(tmp_path):
    paths = StorePaths(tmp_path / "store")
    snap = paths.data_dir(PINNED_REVISION)
    assert snap == paths.root / "data" / "geneb-v1" / PINNED_REVISION    # existing stores' layout
    write_hub(snap, V1[0], rows_for(1))
    write_flat(snap, V1[1], rows_for(2))      # a flat file beside it works too
    suite = resolve_suite("geneb-v1", paths)
    assert suite.name == "geneb-v1" and len(suite.tasks) == 100
    assert suite.revision == PINNED_REVISION
    assert suite.load(V1[0]).task_id == V1[0] and len(suite.load(V1[1]).test) == 12
    with pytest.raises(GenebError, match=rf"task {V1[2]}: no data in .*data download"):
        suite.load(V1[2])


def test_geneb_v1_without_data_lists_tasks_and_says_how_to_get_them(tmp_path, monkeypatch):
    monkeypatch.delenv("GENEB_DATA_DIR", raising=False)
    suite = resolve_suite("geneb-v1", StorePaths(tmp_path))
    assert len(suite.tasks) == 100                   # listing and planning need no data
    with pytest.raises(GenebError) as err:
        suite.load(V1[0])
    msg = str(err.value)
    assert "geneb-engine data download" in msg and "tasks/<task_id>/train.csv" in msg
    assert str(snapshot_of(tmp_path.resolve())) in msg or str(tmp_path) in msg


def test_geneb_v1_from_a_data_dir_and_env(tmp_path, monkeypatch):
    write_flat(tmp_path / "mine", V1[5], rows_for(5))
    suite = resolve_suite("geneb-v1", StorePaths(tmp_path), data_dir=tmp_path / "mine")
    assert suite.revision == "unverified" and suite.load(V1[5]).task_id == V1[5]
    monkeypatch.setenv("GENEB_DATA_DIR", str(tmp_path / "mine"))
    assert resolve_suite("geneb-v1", StorePaths(tmp_path)).load(V1[5]).task_id == V1[5]


def test_subsampling_is_deterministic_stratified_and_off_by_default(tmp_path):
    rows = [(s, (i % 10 == 0) * 1, sp) for i, (s, _, sp) in enumerate(rows_for(4, 400, 100))]
    task = read_flat_csv(write_flat(tmp_path, "big", rows))
    assert subsample_task(task, 1000) is task
    a, b = subsample_task(task, 100), subsample_task(task, 100)
    assert a.train.sequences == b.train.sequences and a.data_hash == b.data_hash
    assert a.data_hash != task.data_hash and any("subsampled 500" in w for w in a.warnings)
    assert 95 <= len(a.train) + len(a.test) <= 110
    frac = np.mean(task.train.labels)
    assert abs(np.mean(a.train.labels) - frac) < 0.03          # class balance kept
    positions = [task.train.sequences.index(s) for s in a.train.sequences]
    assert positions == sorted(positions)                        # file order kept
    snap = tmp_path / "snap"
    write_flat(snap, V1[0], rows)
    plain = resolve_suite("geneb-v1", StorePaths(tmp_path), data_dir=snap)
    assert len(plain.load(V1[0]).train) == 400
    sub = resolve_suite("geneb-v1", StorePaths(tmp_path), data_dir=snap, subsample=100)
    assert sub.revision == "unverified+subsample100" and len(sub.load(V1[0]).train) < 100
    assert sub.subsample == 100 and plain.subsample is None
    local = resolve_suite(str(snap), StorePaths(tmp_path), subsample=100)
    assert local.revision == "local+subsample100"
    assert local.load(V1[0]).data_hash == sub.load(V1[0]).data_hash


def test_download_offline_says_what_to_download_and_where(tmp_path, monkeypatch, capsys,
                                                          undecided_hub):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert main(["data", "download", "--store", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "DeepPavlov/geneb-tasks" in err and PINNED_REVISION in err
    assert str(snapshot_of(tmp_path.resolve())) in err and "--data-dir" in err


def test_download_without_the_hub_asks_it_once_then_explains(tmp_path, capsys, undecided_hub,
                                                             listener):
    """A hub that answers nothing: one short request decides, the download never starts (its
    own retries took about a minute), the same message, nothing written."""
    store = tmp_path / "store"
    refused(capsys, store, "data", "download", "--store", str(store),
            names=("cannot download dataset DeepPavlov/geneb-tasks", listener.url,
                   "--data-dir"))
    assert listener.connections == 1


def test_download_network_failure_tries_the_mirror_then_explains(tmp_path, monkeypatch,
                                                                undecided_hub, answering_hub):
    tried = []

    def no_network(repo, revision, target):
        tried.append(repo)
        raise OSError("[Errno -2] Name or service not known")

    monkeypatch.setattr(data_cmd, "_snapshot", no_network)
    with pytest.raises(GenebError, match="cannot download dataset DeepPavlov/geneb-tasks"):
        data_cmd.fetch(tmp_path / "d")
    assert tried == ["DeepPavlov/geneb-tasks", "darlednik/geneb-tasks"]


def test_download_records_checksums_and_verify_catches_changes(tmp_path, monkeypatch, capsys,
                                                               undecided_hub, answering_hub):
    def fake_snapshot(repo, revision, target):
        assert revision == PINNED_REVISION
        write_hub(Path(target), V1[0], rows_for(1))
        write_hub(Path(target), V1[1], rows_for(2))

    monkeypatch.setattr(data_cmd, "_snapshot", fake_snapshot)
    assert main(["data", "download", "--store", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_tasks"] == 2 and summary["n_files"] == 4
    snap = snapshot_of(tmp_path.resolve())
    manifest = json.loads((snap / DATA_MANIFEST).read_text())
    rel = f"tasks/{V1[0]}/train.csv"
    assert manifest["files"][rel]["sha256"] == sha256_file(snap / rel)
    assert manifest["revision"] == PINNED_REVISION
    assert verify_data(snap) == []
    suite = resolve_suite("geneb-v1", StorePaths(tmp_path.resolve()))
    assert suite.revision == PINNED_REVISION and suite.load(V1[1]).task_id == V1[1]
    with open(snap / rel, "a") as f:
        f.write("ACGT,1\n")
    assert main(["data", "verify", "--store", str(tmp_path)]) == 1
    assert verify_data(snap) == [f"{rel}: checksum differs"]
