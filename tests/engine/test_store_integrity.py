"""The store never loses, mixes, duplicates or wedges: `fill` killed with SIGKILL at every write
point and at random times, two and three `fill`s at once, readers and compaction meanwhile,
stale data, and `doctor --repair` after damage. Every run that is killed, raced or watched is a
real `geneb-engine` process; a run that only finishes the job (a rerun, the reference) runs in
this process (`fill_here`: the same `main`, without a process's start).
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from engine.cli import main
from store.db import query
from store.paths import resolve_store
from tests.engine.conftest import write_task
from tests.engine.in_process import printed
from tests.engine.processes import (
    MODELS,
    ROOT,
    duplicate_keys,
    env_of,
    fill_cmd,
    fill_here,
    results_of,
    run,
    temp_files,
    wait_no_orphans,
)
from tests.helpers import sweep_size, taking_turns

# Every write point of a fill (store/failpoints.py); `:2`: the second time it is reached, so
# the run dies with a pair finished and the next one half-written.
WRITE_POINTS = ("split-created:2", "arrays-created:2", "rows-written:2", "done-flags:2",
                "checksum:2", "complete:2", "split-renamed:2", "data-file-temp:2",
                "data-file-renamed:2", "committed:2", "catalog-written:2")
RANDOM_KILLS = sweep_size(20, 6)   # per --jobs setting (make test-full: 20; make test: 6)
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="orphan checks read /proc")


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("suite") / "tiny"
    folder.mkdir()
    write_task(folder / "task_a.csv", 160, 60, 2, 11)
    write_task(folder / "task_b.csv", 150, 60, 3, 12)
    write_task(folder / "task_c.csv", 140, 60, 2, 13)
    return folder


@pytest.fixture(scope="module")
def reference(suite, tmp_path_factory):
    """One uninterrupted run's results."""
    store = tmp_path_factory.mktemp("reference") / "store"
    assert fill_here(store, suite)[0] == 0
    frame = results_of(store)
    assert frame.height == len(MODELS) * 3 * 3 * 5   # 3 tasks x 3 regimes x 5 seeds
    return frame


def assert_recovers(store: Path, suite: Path, reference_frame, jobs: str, what: str) -> None:
    """Rerun the same fill: it finishes the job exactly as an uninterrupted run."""
    rc, _ = fill_here(store, suite, "--jobs", jobs)
    assert rc == 0, f"{what}: rerun failed"
    assert results_of(store).equals(reference_frame), f"{what}: results differ"
    assert duplicate_keys(store) == 0, f"{what}: duplicate key rows"
    assert temp_files(store) == [], f"{what}: temporary files left"
    rc, out = printed("doctor", "--store", str(store))   # in this process, as the rerun
    assert rc == 0, f"{what}: {out}"


# Every write point at both --jobs settings under `make test-full`, at one (in turns) under
# `make test`.
@pytest.mark.parametrize(("point", "jobs"), taking_turns(WRITE_POINTS, ["1", "2"]))
def test_a_fill_killed_at_a_write_point_resumes_to_the_reference(tmp_path, suite, reference,
                                                                 point, jobs):
    store = tmp_path / "store"
    mark = uuid.uuid4().hex
    killed = run(fill_cmd(store, suite, "--jobs", jobs), mark, GENEB_FAILPOINT=point)
    assert killed.returncode == -signal.SIGKILL, f"{point} not reached: {killed.stderr}"
    assert wait_no_orphans(mark) == [], f"{point}: workers outlived their parent"
    assert_recovers(store, suite, reference, jobs, point)


# At both --jobs settings under `make test-full`; at --jobs 2 under `make test` (the write points
# take turns at both).
@pytest.mark.parametrize("jobs", ["2", "1"][:sweep_size(2, 1)])
def test_a_fill_killed_at_random_times_resumes_to_the_reference(tmp_path, suite, reference,
                                                                jobs):
    """Runs in chains of three: a fresh fill, then up to two reruns of it, each killed at a
    random time within its own window, which follows the machine's load (CI's other tests
    slow the runs down or leave them the cores, so one timing run alone lands too few kills
    midway). A window starts as (0.3 s, an uninterrupted run's wall time); a kill before
    anything was written raises its start, one after the run had finished lowers its end. A
    chain starts again after a run that finished."""
    rng = random.Random(20261201 + int(jobs))
    start = time.perf_counter()     # an uninterrupted run with these jobs: its wall time
    timing = run(fill_cmd(tmp_path / "timing", suite, "--jobs", jobs))
    wall = time.perf_counter() - start
    assert timing.returncode == 0 and results_of(tmp_path / "timing").equals(reference)
    windows = [[0.3, wall] for _ in range(3)]   # by the run's place in its chain
    midway = 0   # trials that killed a run in the middle of its writes
    place = 0
    for trial in range(RANDOM_KILLS):
        store = tmp_path / f"store{trial}"
        earlier = tmp_path / f"store{trial - 1}"
        place = place + 1 if trial % 3 and place is not None and earlier.exists() else 0
        if place:   # it reruns the run killed before
            shutil.copytree(earlier, store)
        window = windows[place]
        mark = uuid.uuid4().hex
        proc = subprocess.Popen(fill_cmd(store, suite, "--jobs", jobs), cwd=ROOT,
                                env=env_of(mark), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        delay = rng.uniform(*window)
        time.sleep(delay)
        finished = proc.poll() is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        assert wait_no_orphans(mark) == [], f"trial {trial} ({delay:.2f} s): orphan workers"
        written = (store / "embeddings.zarr").exists()
        if finished or written and results_of(store).height == reference.height:
            window[1] = max(window[0] + 0.2, delay)   # too late: the window ends sooner
            place = None                              # and the next chain starts afresh
        elif not written:
            window[0] = min(delay, window[1] - 0.2)   # too early: it starts later
        else:   # it had started writing, and not finished
            midway += 1
        if trial % 3 == 2 or trial == RANDOM_KILLS - 1:
            assert_recovers(store, suite, reference, jobs, f"trial {trial} ({delay:.2f} s)")
    assert midway >= RANDOM_KILLS // 4, f"only {midway} kills landed midway: retune the delays"


def test_two_and_three_fills_on_one_store_cooperate(tmp_path, suite, reference):
    for n, jobs in ((2, "1"), (3, "2")):
        store = tmp_path / f"store{n}"
        procs = [subprocess.Popen(fill_cmd(store, suite, "--jobs", jobs), cwd=ROOT,
                                  env=env_of(uuid.uuid4().hex), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(n)]
        outs = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0] * n, [o[1] for o in outs]
        assert results_of(store).equals(reference)
        assert duplicate_keys(store) == 0 and temp_files(store) == []
        events = [json.loads(line) for out, _ in outs for line in out.splitlines()]
        computed = sum(e["computed"] for e in events if e["event"] == "done")
        assert computed == len(MODELS) * 3 * 3, "a cell was computed twice"


def test_overlapping_fills_with_readers_and_compaction_meanwhile(tmp_path, suite, reference):
    """Two fills with overlapping requests while status, export, report and compaction run
    again and again: every command succeeds, the store ends as one run of the union."""
    from store.tables.results import compact

    store = tmp_path / "store"
    paths = resolve_store(store)
    fills = [subprocess.Popen(fill_cmd(store, suite, "--tasks", *tasks, models=models), cwd=ROOT,
                              env=env_of(uuid.uuid4().hex), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
             for tasks, models in ((("task_a", "task_b"), MODELS),
                                   (("task_b", "task_c"), MODELS[:1]),
                                   (("task_c",), MODELS[1:]),
                                   (("task_a", "task_c"), MODELS))]
    failures: list[str] = []
    stop = threading.Event()

    def compact_loop() -> None:
        while not stop.is_set():
            try:
                compact(paths)
            except Exception as exc:   # noqa: BLE001 - reported below
                failures.append(f"compact: {exc!r}")
            time.sleep(0.05)

    compactor = threading.Thread(target=compact_loop)
    compactor.start()
    readers = ([("status", "--suite", str(suite))], [("export", "--csv", str(tmp_path / "x.csv"))],
               [("report", "--suite", str(suite))])
    rounds = 0
    while any(f.poll() is None for f in fills) or rounds < 2:
        for (args,) in readers:
            done = run([sys.executable, "-m", "engine.cli", *args, "--store", str(store)])
            # report exits 1 while the store is still empty (nothing to report)
            if done.returncode not in (0, 1) or "Traceback" in done.stderr:
                failures.append(f"{args[0]}: {done.stderr}")
        rounds += 1
    stop.set()
    compactor.join()
    assert [f.wait() for f in fills] == [0] * 4, [f.stderr.read() for f in fills]
    assert failures == []
    assert results_of(store).equals(reference)
    assert duplicate_keys(store) == 0 and temp_files(store) == []
    assert rounds >= 2


def test_subsampled_runs_and_edited_files_never_replace_current_rows(tmp_path, suite, reference):
    store = tmp_path / "store"
    copy = tmp_path / "suite"
    shutil.copytree(suite, copy)
    assert fill_here(store, copy)[0] == 0
    before = results_of(store)
    # a subsampled run: its own rows, beside the full data's, never shown in their place
    assert fill_here(store, copy, "--subsample", "100")[0] == 0
    assert results_of(store).equals(before)
    paths = resolve_store(store)
    assert query(paths, "SELECT count(*) FROM stale_results").item() == before.height
    # an edited task file: its cells are stale in status, recomputed by fill
    text = (copy / "task_a.csv").read_text().splitlines()
    (copy / "task_a.csv").write_text("\n".join(text[:-5]) + "\n")
    status = run([sys.executable, "-m", "engine.cli", "status", "--suite", str(copy), "--store",
                  str(store), "--json"])
    rows = json.loads(status.stdout)["rows"]
    stale = {r["model"]: r["stale"] for r in rows if r["category"] == "task_a"}
    done = {r["model"]: r["done"] for r in rows if r["category"] == "task_a"}
    assert stale == dict.fromkeys(MODELS, 3) and done == dict.fromkeys(MODELS, 0)
    assert fill_here(store, copy)[0] == 0
    after = results_of(store)
    changed = after.filter(after["task"] == "task_a")
    assert changed["n_test"].unique().to_list() == [55]          # the edited file's rows
    assert after.filter(after["task"] != "task_a").equals(before.filter(before["task"] != "task_a"))
    # the original file again: its rows are current again, nothing to compute
    shutil.copy(suite / "task_a.csv", copy / "task_a.csv")
    rc, out = fill_here(store, copy)
    assert rc == 0 and '"computed": 0' in out and results_of(store).equals(before)


def test_doctor_repairs_every_kind_of_damage_and_the_store_fills_to_the_reference(
        tmp_path, suite, reference):
    store = tmp_path / "store"
    assert fill_here(store, suite)[0] == 0
    paths = resolve_store(store)
    from store.tables.results import read_state

    state = read_state(paths)
    garbled = paths.results / state.files[0].path
    garbled.write_bytes(b"\0" * garbled.stat().st_size)           # a garbled data file
    (paths.results / state.files[1].path).unlink()                   # a deleted one
    chunk = next(paths.embeddings.rglob("embeddings/c/0/0"))
    chunk.write_bytes(chunk.read_bytes()[:100])                      # a truncated chunk
    (paths.catalog / "tasks.parquet").unlink()                       # a deleted catalog
    stale_tmp = paths.results / ".x.parquet.tmp-otherhost-1-0123abcd"
    stale_tmp.write_bytes(b"half")                                   # a temp file left behind
    status = run([sys.executable, "-m", "engine.cli", "status", "--suite", str(suite),
                  "--store", str(store)])
    assert status.returncode == 0 and status.stderr.count("doctor --repair") == 2
    check = run([sys.executable, "-m", "engine.cli", "doctor", "--store", str(store), "--json"])
    assert check.returncode == 1
    parts = sorted(f["part"] for f in json.loads(check.stdout)["problems"])
    assert parts == ["catalog", "embeddings", "results", "results", "temp"]
    fixed = run([sys.executable, "-m", "engine.cli", "doctor", "--repair", "--store", str(store)])
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (paths.catalog / "tasks.parquet").exists() and not stale_tmp.exists()
    kept = list(paths.aside.rglob("*.parquet"))
    assert garbled.name in {p.name for p in kept}                    # never deleted
    assert_recovers(store, suite, reference, "1", "after doctor --repair")


def test_doctor_keeps_an_unreadable_reference_table_aside(official_store, tmp_path, capsys):
    """The tables only an import writes: found, kept aside, restored by importing again."""
    from tests.conftest import SUBMISSIONS

    root = tmp_path / "store"
    shutil.copytree(official_store.root, root)
    paths = resolve_store(root)
    paths.submission_headers.write_bytes(b"PAR1 garbled")
    capsys.readouterr()
    assert main(["doctor", "--store", str(root), "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [(p["part"], p["path"]) for p in problems] == [
        ("reference", str(paths.submission_headers))]
    assert main(["doctor", "--repair", "--store", str(root)]) == 0
    assert not paths.submission_headers.exists()
    assert [p.name for p in paths.aside.rglob("*.parquet")] == [paths.submission_headers.name]
    assert main(["import", "--store", str(root), str(SUBMISSIONS / "GROVER.json")]) == 0
    assert main(["doctor", "--store", str(root)]) == 0 and paths.submission_headers.exists()
