"""The results table: one commit per write, snapshots, literal paths, contained damage,
compaction, vacuum, migration of fragment stores and concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import shutil
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import store.damage as damage_log
from store.catalog import TaskMeta
from store.db import Snapshot, query
from store.paths import resolve_store
from store.tables.catalogs import register_tasks
from store.tables.delta_log import newest_version
from store.tables.pair_commit import append_pair
from store.tables.results import append_rows, compact, read_state, vacuum
from store.tables.schema import RESULT_SCHEMA
from store.vocab.errors import GenebError
from store.vocab.protocol import GENEB_V1, SEEDS


def rows_of(model: str, task: str, *, data_hash: str = "h1", mcc: float = 0.5,
            regimes=("full", "1shot"), source: str = "local") -> list[dict]:
    return [{"model": model, "task": task, "regime": regime, "seed": seed, "probe": "logreg",
             "protocol": GENEB_V1.name, "protocol_hash": GENEB_V1.hash, "mcc": mcc + i / 100,
             "acc": 0.7, "f1_macro": 0.6, "source": source, "data_hash": data_hash}
            for regime in regimes for i, seed in enumerate(SEEDS)]


SEEDS_OF = {GENEB_V1.hash: len(SEEDS)}


@pytest.fixture(autouse=True)
def _fresh_damage_registry():
    damage_log._DAMAGE.clear()
    yield
    damage_log._DAMAGE.clear()


def _count(source, sql="SELECT count(*) FROM results_all") -> int:
    return query(source, sql).item()


def test_each_append_is_one_commit_and_a_snapshot_keeps_its_version(tmp_path):
    paths = resolve_store(tmp_path / "s")
    assert read_state(paths) is None and _count(paths) == 0
    append_rows(paths, rows_of("m1", "t1") + rows_of("m2", "t1"))   # two partitions
    v1 = newest_version(paths.results)
    before = Snapshot(paths)
    append_rows(paths, rows_of("m1", "t2"))
    assert newest_version(paths.results) == v1 + 1       # one commit, whatever it holds
    assert _count(before) == 20                          # the old snapshot sees its version
    assert _count(paths) == 30
    assert before.label == f"as of version {v1}"


def test_rows_on_other_data_never_replace_current_ones(tmp_path):
    """The data hash is part of the key: a subsample's rows sit beside the full data's."""
    paths = resolve_store(tmp_path / "s")
    register_tasks(paths, [TaskMeta("t1", "t1", "c", "s", "s")], {"t1": "full"})
    append_rows(paths, rows_of("m", "t1", data_hash="full", mcc=0.5))
    append_rows(paths, rows_of("m", "t1", data_hash="sub200", mcc=0.1))   # newer
    assert _count(paths, "SELECT count(*) FROM results_latest") == 20
    current = query(paths, "SELECT DISTINCT data_hash, min(mcc) AS m FROM results GROUP BY 1")
    assert current.rows() == [("full", 0.5)]
    assert _count(paths, "SELECT count(*) FROM stale_results") == 10
    # a reader may choose the subsample explicitly
    from store.cells import cell_states

    states = cell_states(Snapshot(paths).query, seeds=SEEDS_OF, data_hashes={"t1": "sub200"})
    assert set(states["state"]) == {"done"}
    states = cell_states(Snapshot(paths).query, seeds=SEEDS_OF, data_hashes={"t1": "edited"})
    assert set(states["state"]) == {"stale"}


@pytest.mark.parametrize("names", [("st*star", "stXstar"), ("st[1]", "st1"), ("a?b", "axb")])
def test_store_paths_with_glob_characters_read_only_themselves(tmp_path, names):
    literal, lookalike = (resolve_store(tmp_path / n) for n in names)
    append_rows(lookalike, rows_of("other", "t1"))
    append_rows(literal, rows_of("mine", "t1"))
    assert query(literal, "SELECT DISTINCT model FROM results").rows() == [("mine",)]
    assert query(lookalike, "SELECT DISTINCT model FROM results").rows() == [("other",)]


def _two_pairs(tmp_path):
    paths = resolve_store(tmp_path / "s")
    append_rows(paths, rows_of("m", "t1"))
    append_rows(paths, rows_of("m", "t2"))
    f = paths.results / read_state(paths).files[0].path
    return paths, f


@pytest.mark.parametrize("damage", ["deleted", "truncated", "garbled"])
def test_a_damaged_data_file_is_reported_once_and_its_cells_read_as_missing(tmp_path, damage):
    paths, victim = _two_pairs(tmp_path)
    victim_task = pq.read_table(victim).column("task")[0].as_py()
    blob = victim.read_bytes()
    if damage == "deleted":
        victim.unlink()
    elif damage == "truncated":
        victim.write_bytes(blob[: len(blob) // 2])
    else:   # same size, bytes flipped inside the data pages
        garbled = bytearray(blob)
        for i in range(8, len(blob) // 2):
            garbled[i] ^= 0xA5
        victim.write_bytes(bytes(garbled))
    tasks = query(paths, "SELECT DISTINCT task FROM results").rows()
    assert tasks == [({"t1": "t2", "t2": "t1"}[victim_task],)]
    assert _count(paths) == 10
    messages = damage_log.damage()
    assert len(messages) == 1
    assert str(victim) in messages[0] and f"task {victim_task}" in messages[0]
    assert "model m (source local)" in messages[0] and "doctor --repair" in messages[0]
    query(paths, "SELECT count(*) FROM results")         # again: still one message
    assert len(damage_log.damage()) == 1


@pytest.mark.parametrize("damage", ["garbled", "truncated"])
def test_a_damaged_log_entry_falls_back_to_the_version_before(tmp_path, damage):
    paths = resolve_store(tmp_path / "s")
    append_rows(paths, rows_of("m", "t1"))
    append_rows(paths, rows_of("m", "t2"))
    last = paths.results / "_delta_log" / f"{newest_version(paths.results):020d}.json"
    text = last.read_text()
    last.write_text("{not json" if damage == "garbled" else text[: len(text) // 3])
    state = read_state(paths)
    assert state.version == newest_version(paths.results) - 1
    assert "cannot be read past version" in state.problems[0]
    assert _count(paths) == 10
    before = sorted(p.name for p in paths.results.rglob("*"))
    with pytest.raises(GenebError, match="doctor --repair"):
        append_rows(paths, rows_of("m", "t3"))
    assert sorted(p.name for p in paths.results.rglob("*")) == before   # nothing written


def test_compaction_merges_files_and_old_snapshots_stay_readable_until_vacuum(tmp_path):
    paths = resolve_store(tmp_path / "s")
    for i in range(6):
        append_rows(paths, rows_of("m", f"t{i}"))
    expected = query(paths, "SELECT * EXCLUDE (created_at) FROM results ORDER BY ALL")
    old = Snapshot(paths)
    assert compact(paths) == 6
    state = read_state(paths)
    assert len(state.files) == 1 and state.files[0].num_records == 60
    assert query(paths, "SELECT * EXCLUDE (created_at) FROM results ORDER BY ALL").equals(
        expected)
    assert _count(old) == 60                       # the removed files are still there
    assert compact(paths) == 0                     # nothing left to merge
    assert vacuum(paths) == []                     # within the retention window: kept
    deleted = vacuum(paths, retention_hours=0)
    assert len(deleted) == 6
    assert _count(paths) == 60 and damage_log.damage() == []


def test_append_pair_never_writes_a_done_cell_twice(tmp_path):
    paths = resolve_store(tmp_path / "s")
    rows = rows_of("m", "t1")

    def append(rows, data_hash="h1", revision=None):
        return append_pair(paths, rows, model="m", task="t1", data_hash=data_hash,
                           revision=revision, seeds=SEEDS_OF)

    assert append(rows) == 10
    assert append(rows) == 0
    # the same cells on other data are not done: they are written
    assert append(rows_of("m", "t1", data_hash="h2"), "h2") == 10
    assert _count(paths) == 20
    # nor are they with another revision of the model
    revised = [{**r, "model_revision": "rev-b"} for r in rows]
    assert append(revised, revision="rev-b") == 10
    assert append(revised, revision="rev-b") == 0
    assert _count(paths) == 30


def test_a_fragment_store_is_migrated_once_in_one_commit(tmp_path):
    """Stores written by geneb 0.1: `results/<group>/<stamp>-<id>.parquet` fragments."""
    paths = resolve_store(tmp_path / "s")
    old = paths.results
    now = datetime.now(UTC)
    for group, model, task, offset in (("local/kmer-3", "kmer-3", "t1", 0),
                                       ("local/kmer-3", "kmer-3", "t1", 1),   # a newer rerun
                                       ("imported", "GROVER", "t2", 0)):
        rows = rows_of(model, task, source="official" if group == "imported" else "local",
                       mcc=0.3 + offset / 10)
        for r in rows:
            r["created_at"] = now + timedelta(seconds=offset)
        table = pa.Table.from_pylist(rows, schema=pa.schema(
            [f for f in RESULT_SCHEMA if f.name != "data_revision"]))   # an older schema
        (old / group).mkdir(parents=True, exist_ok=True)
        pq.write_table(table, old / group / f"2026{offset}-{model}.parquet")
    (old / "local" / "kmer-3" / "x.parquet.tmp").write_bytes(b"half")
    assert _count(paths) == 30                     # the first reader migrates
    assert newest_version(paths.results) == 0              # one commit
    aside = list(paths.aside.glob("*-results-fragments"))
    assert len(aside) == 1 and len(list(aside[0].rglob("*.parquet"))) == 3
    latest = query(paths, "SELECT model, min(mcc) AS m FROM results GROUP BY 1 ORDER BY 1")
    assert latest.rows() == [("GROVER", 0.3), ("kmer-3", 0.4)]   # latest wins, as before
    assert _count(paths) == 30 and newest_version(paths.results) == 0    # migrated once


def test_an_interrupted_migration_is_finished_by_the_next_open(tmp_path):
    paths = resolve_store(tmp_path / "s")
    append_rows(paths, rows_of("m", "t1"))
    shutil.move(paths.results, paths.results.with_name("results.migrating"))
    assert _count(paths) == 10 and paths.results.is_dir()


def _append_many(root: str, worker: int, n: int) -> None:
    paths = resolve_store(root)
    for i in range(n):
        append_rows(paths, rows_of(f"m{worker}", f"t{i}", regimes=("full",)))


def test_concurrent_writers_lose_no_commit(tmp_path):
    root = str(tmp_path / "s")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(root, w, 15)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    paths = resolve_store(root)
    assert _count(paths) == 4 * 15 * len(SEEDS)
    assert query(paths, "SELECT count(DISTINCT (model, task)) FROM results").item() == 60
    assert newest_version(paths.results) == 60   # the table's creation plus one commit per append
    assert not [p for p in paths.root.rglob("*") if ".tmp-" in p.name]


def test_readers_never_glob_or_write(tmp_path):
    """Reading an empty store creates nothing."""
    paths = resolve_store(tmp_path / "empty")
    assert _count(paths) == 0
    assert not os.path.exists(paths.root)
