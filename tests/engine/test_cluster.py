"""`fill --executor ray` on local Ray instances: the same results as the local executor, nothing
computed twice, faults survived (a killed actor, a probe task that fails once, SIGINT) and
three fills on one store at once. CPU encoders only (the k-mer baselines and a tiny Hugging Face
model saved with `save_pretrained`); logical GPUs where placement is under test.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from engine.cluster import ClusterOptions, require_ray  # noqa: E402
from engine.cluster.placement import SHARED_GPU, gpus_for, place  # noqa: E402
from engine.commands.common import models_of  # noqa: E402
from engine.fill import FillOptions, run_fill  # noqa: E402
from engine.suites import resolve_suite  # noqa: E402
from store.catalog import ModelMeta  # noqa: E402
from store.paths import resolve_store  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from store.vocab.executors import check_address  # noqa: E402
from store.vocab.protocol import REGIMES  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.engine.processes import (  # noqa: E402
    ROOT,
    duplicate_keys,
    env_of,
    processes_marked,
    results_of,
    run,
    temp_files,
    wait_no_orphans,
)
from tests.engine.tiny_models import build  # noqa: E402

KMERS = ("kmer-3", "kmer-4")
# The tasks of geneb-mini the tests run: three of its smallest (1,000 to 1,400 training rows of
# at most 450 bp), in the suite's order.
TASKS = ("mini_lncrna_mrna", "mini_mouse_enhancer", "mini_coding_noncoding")
SCOPE = ("--tasks", *TASKS)
HF_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
pytestmark = [
    pytest.mark.xdist_group("cluster"),     # one worker: the reference is computed once
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="orphan checks read /proc"),
]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return build("bert", tmp_path_factory.mktemp("models") / "tiny-bert", max_len=128)


def fill(store: Path, *extra: str, models=KMERS) -> list[str]:
    return [sys.executable, "-m", "engine.cli", "fill", "--suite", "geneb-mini", "--models",
            *models, "--store", str(store), "--json", *extra]


def events_of(proc) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, tiny_bert):
    """The local executor's results on geneb-mini's TASKS: the k-mer baselines and
    tiny-bert."""
    store = tmp_path_factory.mktemp("reference") / "store"
    done = run(fill(store, *SCOPE, models=(*KMERS, str(tiny_bert))), **HF_ENV)
    assert done.returncode == 0, done.stderr
    return results_of(store)


def part_of(frame, tasks=TASKS):
    """The reference's rows of `tasks`."""
    return frame.filter(frame["task"].is_in(list(tasks)))


def assert_consistent(store: Path) -> None:
    assert duplicate_keys(store) == 0, "duplicate key rows"
    doctor = run([sys.executable, "-m", "engine.cli", "doctor", "--store", str(store)])
    assert doctor.returncode == 0, doctor.stdout


def test_ray_fill_equals_the_local_executor_and_a_rerun_computes_nothing(tmp_path, reference,
                                                                         tiny_bert):
    store, mark = tmp_path / "store", uuid.uuid4().hex
    models = (*KMERS, str(tiny_bert))
    first = run(fill(store, "--executor", "ray", *SCOPE, models=models), mark,
                **HF_ENV)
    assert first.returncode == 0, first.stderr
    assert results_of(store).equals(reference)
    assert wait_no_orphans(mark, timeout=30) == [], "Ray processes outlived the run"
    events = events_of(first)
    executor = next(e for e in events if e["event"] == "executor")
    assert (executor["kind"], executor["address"], executor["nodes"]) == ("ray", "local", 1)
    placements = {e["model"]: e for e in events if e["event"] == "placement"}
    assert set(placements) == {*KMERS, "tiny-bert"}
    assert all(p["gpus"] == 0 for p in placements.values())      # no GPU on this machine
    assert "no GPU" in placements["tiny-bert"]["reason"]
    embedded = [e for e in events if e["event"] == "embedded"]
    assert {e["model"] for e in embedded} == set(placements)
    assert all(e["sequences"] > 0 and e["sequences_per_s"] > 0 for e in embedded)
    bert = [e for e in embedded if e["model"] == "tiny-bert"]
    assert all(e["tokens"] > 0 and e["tokens_per_s"] > 0 for e in bert)
    assert all(e["tokens"] is None for e in embedded if e["model"] != "tiny-bert")
    done = [e for e in events if e["event"] == "done"][0]
    assert done["computed"] == reference.height // 5 == len(TASKS) * 3 * 3  # 5 seeds a cell
    again = run(fill(store, "--executor", "ray", *SCOPE, models=models), **HF_ENV)
    assert again.returncode == 0, again.stderr
    assert [e["computed"] for e in events_of(again) if e["event"] == "done"] == [0]
    assert results_of(store).equals(reference)
    assert_consistent(store)


def test_a_killed_actor_and_a_probe_task_that_fails_once_change_nothing(
        tmp_path, reference, tiny_bert, monkeypatch):
    """On a local instance with two logical GPUs: tiny-bert (a small model) gets an actor of
    half a GPU per pair; the first actor to write rows pauses there, and every embedding actor
    is then killed with `ray.kill` (Ray restarts them and retries their calls); one probe task
    raises once (Ray retries it)."""
    store, mark = tmp_path / "store", uuid.uuid4().hex
    paused, raised = tmp_path / "paused", tmp_path / "raised"
    monkeypatch.setenv("GENEB_TEST_RUN", mark)    # the instance's processes carry the mark
    monkeypatch.setenv("GENEB_FAULT", f"rows-written:pause:{paused},probe-task:raise:{raised}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    paths = resolve_store(store)
    suite = resolve_suite("geneb-mini", paths)
    models = models_of(paths, ["kmer-3", str(tiny_bert)])
    tasks = [t for t in suite.tasks if t.task_id in TASKS]
    events: list[dict] = []
    failure: list[BaseException] = []
    ray.init(address="local", num_cpus=2, num_gpus=2, include_dashboard=False,
             log_to_driver=False, object_store_memory=128 * 1024 * 1024)
    try:
        def fill_in_thread() -> None:
            try:
                run_fill(paths, suite, models, tasks, list(REGIMES),
                         FillOptions(cluster=ClusterOptions()), events.append)
            except BaseException as exc:      # noqa: BLE001 - reported by the test
                failure.append(exc)

        thread = threading.Thread(target=fill_in_thread)
        thread.start()
        deadline = time.monotonic() + 120
        while not paused.exists() and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert paused.exists(), f"no actor paused mid-pair: {failure}"
        victims = [a for a in ray.util.list_named_actors(all_namespaces=True)
                   if a["name"].startswith("embed-")]
        assert victims, "the embedding actors are gone"
        for a in victims:                  # every embedding actor, the paused one among them
            handle = ray.get_actor(a["name"], namespace=a["namespace"])
            ray.kill(handle, no_restart=False)
        thread.join(300)
        assert not thread.is_alive() and not failure, failure
    finally:
        ray.shutdown()
    assert raised.exists(), "no probe task failed"
    placement = {e["model"]: e for e in events if e["event"] == "placement"}
    # half a GPU each: four slots on two GPUs, never more actors than pairs (one per task)
    assert (placement["tiny-bert"]["gpus"], placement["tiny-bert"]["actors"]) == (SHARED_GPU,
                                                                                  len(TASKS))
    assert placement["kmer-3"]["gpus"] == 0
    got = results_of(store)
    want = part_of(reference)
    assert got.equals(want.filter(want["model"].is_in(["kmer-3", "tiny-bert"])))
    assert wait_no_orphans(mark, timeout=30) == [], "Ray processes outlived the run"
    assert_consistent(store)


def test_two_ray_fills_and_a_local_fill_on_one_store_at_once(tmp_path, reference):
    store = tmp_path / "store"
    commands = [fill(store, "--executor", "ray", *SCOPE),
                fill(store, "--executor", "ray", *SCOPE),
                fill(store, *SCOPE)]
    marks = [uuid.uuid4().hex for _ in commands]
    procs = [subprocess.Popen(cmd, cwd=ROOT, env=env_of(mark), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for cmd, mark in zip(commands, marks, strict=True)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err for _, err in outs]
    want = part_of(reference)
    assert results_of(store).equals(want.filter(want["model"].is_in(KMERS)))
    computed = sum(json.loads(line)["computed"] for out, _ in outs for line in out.splitlines()
                   if '"event": "done"' in line)
    assert computed == len(KMERS) * len(TASKS) * 3, "a cell was computed twice, or never"
    assert all(wait_no_orphans(mark, timeout=30) == [] for mark in marks)
    assert temp_files(store) == []
    assert_consistent(store)


def test_sigint_mid_run_leaves_a_consistent_store_and_a_rerun_completes(tmp_path, reference):
    store, mark = tmp_path / "store", uuid.uuid4().hex
    proc = subprocess.Popen(fill(store, "--executor", "ray", *SCOPE), cwd=ROOT,
                            env=env_of(mark), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    for line in proc.stdout:                  # interrupted once the first cells are in
        if '"event": "cell"' in line:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("geneb-engine fill: interrupted"), err
    assert wait_no_orphans(mark, timeout=30) == [], "Ray processes outlived the run"
    # Consistent: whole commits only, no duplicate (an unfinished split may be left to resume,
    # which doctor lists until the rerun finishes it).
    assert duplicate_keys(store) == 0
    want = part_of(reference)
    want = want.filter(want["model"].is_in(KMERS))
    done = results_of(store)
    assert done.height < want.height, "the interrupt came after the last cell"
    assert set(done.rows()) <= set(want.rows())          # each row it kept is right
    # the rerun on the local executor (a Ray instance less to start; an actor resuming a
    # split is the killed-actor test's)
    again = run(fill(store, *SCOPE))
    assert again.returncode == 0, again.stderr
    assert results_of(store).equals(want)
    assert temp_files(store) == []
    assert_consistent(store)


def test_a_fill_joins_a_running_cluster_by_its_address(tmp_path, reference):
    """`ray start --head` (token authentication off, as on a private network), then
    `fill --address HOST:PORT`: the run joins it, leaves it running, and its results are the
    local executor's."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    head_mark, mark = uuid.uuid4().hex, uuid.uuid4().hex
    no_auth = {"RAY_AUTH_MODE": "disabled"}
    head = subprocess.Popen(
        [str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", "--port",
         str(port), "--num-cpus", "2", "--include-dashboard=false"], cwd=tmp_path,
        env=env_of(head_mark, **no_auth), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = tmp_path / "store"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        joined = run(fill(store, "--executor", "ray", "--address", f"127.0.0.1:{port}",
                          "--tasks", TASKS[0], models=("kmer-3",)), mark, **no_auth)
        assert joined.returncode == 0, joined.stderr
        executor = next(e for e in events_of(joined) if e["event"] == "executor")
        assert executor["address"] == f"127.0.0.1:{port}"
        assert head.poll() is None, "the run stopped the cluster it joined"
    finally:
        for pid in [head.pid, *processes_marked(head_mark)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        head.wait(30)
    want = part_of(reference, TASKS[:1])
    assert results_of(store).equals(want.filter(want["model"].eq("kmer-3")))
    assert wait_no_orphans(mark) == []
    assert_consistent(store)


# -- placement and options (no cluster) ---------------------------------------------------

def _model(model_id: str, encoder: str = "hf", params: int | None = None) -> ModelMeta:
    return ModelMeta.one_off(model_id, encoder=encoder, **({"params": params} if params else {}),
                             **({"encoder_k": 3} if encoder == "kmer" else {}))


def test_placement_gives_gpus_by_kind_size_and_request():
    big, small, kmer = _model("big", params=2_500_000_000), _model("small", params=50_000_000), \
        _model("k", "kmer")
    assert gpus_for(kmer, 8, None)[0] == 0
    assert gpus_for(big, 0, None) == (0.0, "the cluster has no GPU: embeds on CPU")
    assert gpus_for(big, 8, None)[0] == 1.0
    assert gpus_for(small, 8, None)[0] == SHARED_GPU
    assert gpus_for(_model("unknown"), 8, None)[0] == 1.0      # no parameter count: a whole GPU
    assert gpus_for(small, 8, 2)[0] == 2                       # as asked
    with pytest.raises(GenebError, match="has 4 GPU"):
        gpus_for(big, 4, 8)
    models = {m.model_id: m for m in (big, small, kmer)}
    # 8 GPUs shared by pairs: big 30 of 40 (6 GPUs, 6 actors), small 10 of 40 (2 GPUs, 4 actors
    # of half a GPU); k on the 15 CPUs the probes leave.
    out = {p.model_id: p for p in place({"big": 30, "small": 10, "k": 20}, models, 16, 8,
                                        None, 1)}
    assert (out["big"].actors, out["small"].actors, out["k"].actors) == (6, 4, 15)
    assert (out["big"].gpus, out["big"].cpus, out["k"].gpus, out["k"].cpus) == (1, 0, 0, 1)
    # Two GPU models of one size share the slots in proportion to their pairs.
    even = {p.model_id: p.actors for p in place({"big": 30, "b2": 10},
                                                {"big": big, "b2": _model("b2", params=10**9)},
                                                4, 4, None, 1)}
    assert even == {"big": 3, "b2": 1}


def test_cluster_options_are_checked_before_anything_runs(tmp_path):
    store = tmp_path / "store"
    cases = {
        ("--address", "auto"): "--address: only with --executor ray",
        ("--probe-cpus", "2"): "--probe-cpus: only with --executor ray",
        ("--executor", "ray", "--jobs", "2"): "--jobs is the local executor's",
        ("--executor", "ray", "--address", "head:99999"): "a Ray address is auto, HOST:PORT",
        ("--executor", "ray", "--gpus-per-model", "1.5"): "'1.5' is not a GPU share",
        ("--executor", "rey"): "did you mean ray",
    }
    for extra, message in cases.items():
        proc = run(fill(store, *extra))
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and message in lines[0], (extra, lines)
    assert not store.exists(), "a refused run wrote to the store"
    with socket.socket() as closed:       # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    nobody = run(fill(store, "--executor", "ray", "--address", f"127.0.0.1:{port}"))
    lines = nobody.stderr.strip().splitlines()
    assert nobody.returncode == 2 and "nothing answers at 127.0.0.1" in lines[-1], lines
    assert not (store / "results").exists() and not (store / "locks").exists()
    for good in ("auto", "head-node:6379", "ray://10.0.0.1:10001"):
        assert check_address(good) == good
    with pytest.raises(ValueError):
        check_address("ray://head")


def test_without_ray_installed_the_executor_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)      # import ray -> ImportError
    with pytest.raises(GenebError, match=r"pip install 'geneb\[cluster\]'"):
        require_ray()


# -- where the checks run (in this process, on a local Ray instance with logical GPUs) ------

@pytest.fixture(scope="class")
def logical_gpus():
    """A Ray instance of this process declaring two GPUs this machine does not have: the
    actors are placed on them as on a GPU node, and run where torch sees no CUDA."""
    ray.init(address="local", num_cpus=2, num_gpus=2, include_dashboard=False,
             log_to_driver=False)
    yield
    ray.shutdown()


def one_task_store(tmp_path: Path, entry: str) -> tuple[Path, object]:
    suite = tmp_path / "suite"
    suite.mkdir()
    write_task(suite / "task_a.csv", 20, 10, 2, 1, length=30)
    store = tmp_path / "store"
    store.mkdir()
    (store / "models.toml").write_text(entry)
    return store, resolve_suite(str(suite), resolve_store(store))


def ray_fill(store: Path, suite, model: str) -> None:
    paths = resolve_store(store)
    run_fill(paths, suite, models_of(paths, [model]), list(suite.tasks), ["full"],
             FillOptions(cluster=ClusterOptions()), lambda event: None)


def pair_locks(store: Path) -> list[Path]:
    """What the store's pair locks left: their files and folders (`store.locks.pair_lock`)."""
    return sorted((store / "locks" / "pairs").glob("**/*"))


@pytest.mark.usefixtures("logical_gpus")
class TestChecksOnTheActors:
    def test_a_device_check_runs_on_the_actor_not_the_driver(self, tmp_path, monkeypatch):
        """Evo-1's attention layers need CUDA: the driver (a CPU login node) leaves that check
        to the actor on a GPU; here torch sees no CUDA there either, so the actor refuses, in
        one line naming it."""
        pytest.importorskip("evo")
        import engine.encoders.evo as evo

        def on_the_driver(*args):
            raise AssertionError("the device check ran on the driver")

        monkeypatch.setattr(evo, "check_attention", on_the_driver)
        folder = tmp_path / "evo-attn"
        folder.mkdir()
        (folder / "config.yml").write_text("attn_layer_idxs: [1]\nhyena_layer_idxs: [0]\n")
        store, suite = one_task_store(tmp_path, f'[[model]]\nmodel_id = "evo-attn"\n'
                                                f'encoder = "evo"\npath = "{folder}"\n')
        with pytest.raises(GenebError) as caught:
            ray_fill(store, suite, "evo-attn")
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith("model evo-attn: its StripedHyena config config.yml has "
                                  "attention layers (1), which need CUDA"), message
        assert f"(on the Ray actor {socket.gethostname()} gpu " in message, message
        assert pair_locks(store) == []

    def test_a_bad_extractor_class_leaves_no_lock_file(self, tmp_path):
        store, suite = one_task_store(tmp_path, '[[model]]\nmodel_id = "ext-bad"\n'
                                                'encoder = "official-extractor"\n'
                                                'extractor = "bad.py:Bad"\n')
        (store / "bad.py").write_text("X = 1\n")
        with pytest.raises(GenebError) as caught:
            ray_fill(store, suite, "ext-bad")
        assert pair_locks(store) == []
        assert "model ext-bad: " in str(caught.value)
        assert "the file has no class Bad" in str(caught.value)
        assert "(on the Ray actor " in str(caught.value)
