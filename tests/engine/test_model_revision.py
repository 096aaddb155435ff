"""A model's revision is part of "current": re-saving a checkpoint folder's weights makes its
cells stale in `status` and the dashboard, `report` leaves them out, and `fill` recomputes them,
and only them, embedding again instead of reusing the other revision's embeddings."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import hashlib  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import zarr  # noqa: E402

from engine.cli import main  # noqa: E402
from engine.encoders.hub import folder_sha256  # noqa: E402
from store.db import query  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.engine.tiny_models import build  # noqa: E402

MODEL = "tiny-bert"
TASKS = ("task_a", "task_b")


@pytest.fixture
def setup(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    for i, task in enumerate(TASKS):
        write_task(suite / f"{task}.csv", 24, 12, 2, seed=i, length=30)
    folder = build("bert", tmp_path / "checkpoints" / MODEL, max_len=64)
    return {"suite": suite, "store": tmp_path / "store", "folder": folder}


def events(capsys, *argv: str) -> list[dict]:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def fill(capsys, setup, *models: str, tasks: tuple[str, ...] = TASKS) -> list[tuple[str, str]]:
    """(model, task) of every cell the fill computed."""
    found = events(capsys, "fill", "--store", str(setup["store"]), "--suite",
                   str(setup["suite"]), "--models", *models, "--tasks", *tasks, "--regimes",
                   "full", "--json")
    return sorted((e["model"], e["task"]) for e in found
                  if e["event"] == "cell" and e["computed"])


def status(capsys, setup) -> dict[str, tuple[int, int]]:
    """model -> (cells done, cells stale) by `status --json`."""
    doc = events(capsys, "status", "--store", str(setup["store"]), "--suite",
                 str(setup["suite"]), "--regimes", "full", "--json")[0]
    out: dict[str, tuple[int, int]] = {}
    for r in doc["rows"]:
        done, stale = out.get(r["model"], (0, 0))
        out[r["model"]] = (done + r["done"], stale + r["stale"])
    return out


def revisions(setup) -> dict[tuple[str, str], str | None]:
    rows = query(StorePaths(setup["store"]), "SELECT DISTINCT model, task, model_revision "
                                             "FROM results")
    return {(m, t): r for m, t, r in rows.iter_rows()}


def split_revision(setup, task: str, split: str) -> str:
    group = zarr.open_group(str(setup["store"] / "embeddings.zarr" / MODEL / task / split))
    return group.attrs["model_revision"]


def test_the_revision_of_a_folder_is_the_hash_of_its_files(tmp_path):
    folder = tmp_path / "ckpt"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_bytes(b"{}")
    (folder / "sub" / "w.bin").write_bytes(b"\x00\x01")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "lock").write_bytes(b"anything")      # hidden: left out

    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    want = sha(f"config.json\0{sha(b'{}')}\nsub/w.bin\0{sha(bytes([0, 1]))}\n".encode())
    assert folder_sha256(folder) == f"folder-sha256-{want}"
    (folder / "sub" / "w.bin").write_bytes(b"\x00\x02")
    assert folder_sha256(folder) != f"folder-sha256-{want}"


def test_a_file_is_read_again_only_when_it_changed_whatever_the_process(tmp_path,
                                                                        monkeypatch):
    """The files' digests are remembered in the user cache: a later call (a later `status`,
    the run's load after its plan) reads none of the unchanged weights, and reads a changed
    file again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_bytes(b"{}")
    (folder / "w.bin").write_bytes(b"\x00\x01")
    first = folder_sha256(folder)
    reads: list[str] = []
    plain = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest",
                        lambda f, name: reads.append(Path(f.name).name) or plain(f, name))
    assert folder_sha256(folder) == first and reads == []
    (folder / "w.bin").write_bytes(b"\x00\x02\x03")
    second = folder_sha256(folder)
    assert reads == ["w.bin"] and second != first
    want = hashlib.sha256(f"config.json\0{hashlib.sha256(b'{}').hexdigest()}\nw.bin\0"
                          f"{hashlib.sha256(bytes([0, 2, 3])).hexdigest()}\n".encode())
    assert second == f"folder-sha256-{want.hexdigest()}"
    (tmp_path / "cache" / "geneb" / "file-sha256.json").write_text("not json")
    assert folder_sha256(folder) == second          # a broken cache is only recomputed


def test_resaved_weights_make_the_cells_stale_and_fill_recomputes_only_them(setup, capsys):
    folder, store = setup["folder"], setup["store"]
    assert fill(capsys, setup, str(folder), "kmer-3") == sorted(
        (m, t) for m in (MODEL, "kmer-3") for t in TASKS)
    first = folder_sha256(folder)
    assert revisions(setup) == {**{(MODEL, t): first for t in TASKS},
                                **{("kmer-3", t): None for t in TASKS}}
    kmer_sql = "SELECT * FROM results WHERE model = 'kmer-3' ORDER BY task, seed"
    kmer_rows = query(StorePaths(store), kmer_sql)

    build("bert", folder, max_len=64, seed=1)        # other weights, the same folder
    second = folder_sha256(folder)
    assert second != first
    # `status` tells the revision from the folder as it is now: both cells are stale.
    assert status(capsys, setup) == {MODEL: (0, 2), "kmer-3": (2, 0)}

    # One task again: computed with the new revision, embedded again (not reused).
    assert fill(capsys, setup, MODEL, tasks=("task_a",)) == [(MODEL, "task_a")]
    assert split_revision(setup, "task_a", "train") == second
    assert split_revision(setup, "task_b", "train") == first
    # The new revision is the model's current one: its other cell is stale for every reader.
    assert revisions(setup) == {(MODEL, "task_a"): second, ("kmer-3", "task_a"): None,
                                ("kmer-3", "task_b"): None}
    assert status(capsys, setup) == {MODEL: (1, 1), "kmer-3": (2, 0)}
    report = events(capsys, "report", "--store", str(store), "--suite", str(setup["suite"]),
                    "--resamples", "0", "--json")[0]
    missing = {r["model"]: r["n_missing"] for r in report["aggregates"]}
    assert missing == {MODEL: 1, "kmer-3": 0}

    from geneb_tui.core.query import StoreSnapshot

    snap = StoreSnapshot.load(StorePaths(store))
    assert sorted(snap.done.filter(model=MODEL).rows()) == [(MODEL, "task_a", "full")]
    assert sorted(snap.scores.filter(model=MODEL)["task"]) == ["task_a"]

    # The next fill recomputes that cell, and only it.
    assert fill(capsys, setup, MODEL, "kmer-3") == [(MODEL, "task_b")]
    assert revisions(setup) == {**{(MODEL, t): second for t in TASKS},
                                **{("kmer-3", t): None for t in TASKS}}
    assert split_revision(setup, "task_b", "test") == second
    assert query(StorePaths(store), kmer_sql).equals(kmer_rows)        # untouched
    assert status(capsys, setup) == {MODEL: (2, 0), "kmer-3": (2, 0)}


def test_status_reads_a_store_whose_checkpoint_folder_is_gone(setup, capsys):
    """A folder that is no longer there tells no revision: the store's current one counts."""
    assert fill(capsys, setup, str(setup["folder"])) == [(MODEL, t) for t in TASKS]
    for file in Path(setup["folder"]).iterdir():
        file.unlink()
    setup["folder"].rmdir()
    assert status(capsys, setup) == {MODEL: (2, 0)}
