"""The missing-evaluations screen with a stubbed engine: what is offered, the command, the end.

`geneb_tui.core.fill.start` is replaced by a fake process that prints the engine's JSON events
(`warning`, `plan`, `cell` with done/total/computed, `done` with computed; `executor`,
`placement` and `embedded` of a Ray run) and an exit code and stderr; nothing runs for real here
(tests/tui/test_fill.py runs real fills).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from capture import screen_text
from conftest import settle
from fake_engine import FakeProc, cell, embedded, plan
from textual.widgets import DataTable, Input, Static

from geneb_tui.components.missing_screen import TICKED, UNTICKED, MissingScreen
from geneb_tui.core import fill
from store import runnable
from store.hf_cache import HubReach
from store.runnable import GIB, assess

SIZE = (120, 36)
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def engine(monkeypatch):
    """`engine.next = FakeProc(...)` sets what the next run prints; `engine.commands` lists the
    commands started. Packages count as installed and the device has 16 GiB, so what is
    offered does not depend on this machine."""

    class Engine:
        next: FakeProc | None = None
        commands: list[list[str]] = []

    def start(cmd, cwd=None):
        Engine.commands.append(cmd)
        proc = Engine.next or FakeProc([plan(0), {"event": "done", "computed": 0}])
        Engine.next = None
        return proc

    Engine.commands = []
    monkeypatch.setattr(fill, "start", start)
    monkeypatch.setattr(runnable, "package_installed", lambda package: True)
    monkeypatch.setattr(runnable, "device_memory", lambda device: 16 * GIB)
    monkeypatch.setattr(runnable, "hub_reach", lambda: HubReach(True, "the hub answered"))
    return Engine


async def open_missing(pilot, search: str | None = None) -> MissingScreen:
    await settle(pilot)
    if search is not None:
        await pilot.press("slash", *search, "enter")
        await settle(pilot)
    await pilot.press("g")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, MissingScreen)
    return screen


def models_column(screen: MissingScreen, key: str) -> dict[str, str]:
    table = screen.query_one("#missing-models", DataTable)
    return {str(rk.value): str(table.get_cell(rk, key)) for rk in table.rows}


async def tick(pilot, screen: MissingScreen, model: str) -> None:
    table = screen.query_one("#missing-models", DataTable)
    table.move_cursor(row=screen.candidates.index(model))
    await pilot.press("space")
    await pilot.pause()


def status(screen) -> str:
    return str(screen.query_one("#fill-status", Static).render())


# -- what is offered ----------------------------------------------------------------------------
def write_user_models(paths, text: str) -> None:
    paths.user_models.write_text(text)


USER_MODELS = f"""
[[model]]
model_id = "remote-pinned"
hub_id = "org/remote-pinned"
params = 50000000
remote_code = "required"
revision = "{COMMIT}"

[[model]]
model_id = "remote-unpinned"
hub_id = "org/remote-unpinned"
params = 50000000
remote_code = "required"
"""


async def test_runnable_models_first_each_with_what_it_needs(small_store, make_app, engine):
    write_user_models(small_store, USER_MODELS)
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        a = screen.assessed
        # stable order: runnable first, then not runnable, each by display name
        runnable_ids = [m for m in screen.candidates if a[m].runnable]
        assert screen.candidates[:len(runnable_ids)] == runnable_ids
        assert not any(a[m].runnable for m in screen.candidates[len(runnable_ids):])
        # every kind of model, with its reason
        assert a["kmer-3"].runnable and a["kmer-3"].needs == "weight-free baseline"
        assert a["GROVER"].runnable and not a["GROVER"].remote_code
        assert a["remote-pinned"].runnable and a["remote-pinned"].remote_code
        assert a["remote-pinned"].spec == f"remote-pinned@{COMMIT}"
        # no commit: fill resolves its branch's at the run, and pins it for the store
        assert a["remote-unpinned"].runnable and a["remote-unpinned"].remote_code
        assert a["remote-unpinned"].spec == "remote-unpinned"
        assert a["MutBERT"].runnable and a["MutBERT"].spec == "MutBERT"         # catalog
        assert not a["evo-1-131k-base"].runnable          # on the CPU: its attention layers
        assert "CUDA and flash-attn" in a["evo-1-131k-base"].why
        assert not a["dna_gpt3b_m"].runnable and "not published" in a["dna_gpt3b_m"].why
        assert a["enformer-official-rough"].runnable                       # package "installed"
        # shown in the list: ticks distinct beyond colour, the reason beside each model
        ticks = models_column(screen, "tick")
        assert ticks["kmer-3"] == UNTICKED and ticks["dna_gpt3b_m"].strip() == "-"
        needs = models_column(screen, "needs")
        assert needs["remote-unpinned"].startswith("trusts code, resolves the commit at run")
        assert needs["remote-pinned"].startswith("trusts code at 0123456789ab ")
        assert needs["dna_gpt3b_m"].startswith("not runnable: weights not published")
        # a not-runnable model cannot be ticked; the status says why
        await tick(pilot, screen, "dna_gpt3b_m")
        assert "dna_gpt3b_m" not in app.fill_choices.ticked
        assert "cannot run from here" in status(screen)
        await tick(pilot, screen, "kmer-3")
        assert models_column(screen, "tick")["kmer-3"] == TICKED


async def test_a_missing_adapter_package_is_named(small_store, make_app, engine, monkeypatch):
    monkeypatch.setattr(runnable, "package_installed", lambda p: p != "enformer-pytorch")
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot, "enformer")
        a = screen.assessed["enformer-official-rough"]
        assert not a.runnable
        assert "needs the package enformer-pytorch" in a.why
        assert "pip install enformer-pytorch" in a.why


async def test_a_model_too_large_for_the_device_is_offered_with_a_warning(small_store, make_app,
                                                                          engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot, "METAGENE")
        a = screen.assessed["METAGENE-1"]                     # 7B params x 4 bytes (fp32)
        assert a.runnable and a.memory == 28_000_000_000
        assert a.warning.startswith("⚠ needs ≈26 GiB (fp32 weights)") and "16 GiB" in a.warning
        assert "⚠ needs ≈26 GiB" in models_column(screen, "needs")["METAGENE-1"]
        # a small model on the same device: the estimate, no warning
        grover = assess(app.snapshot.catalog["GROVER"], "GROVER", memory=16 * GIB)
        assert not grover.warning and grover.needs == "≈332 MiB fp32"
        # an unknown device memory (CUDA, without torch): the estimate only
        assert assess(app.snapshot.catalog["METAGENE-1"], "METAGENE-1", device="cuda",
                      memory=None).needs == "≈26 GiB fp32"
        # the precision key (p): bfloat16 weights take 2 bytes a parameter, and fit
        await pilot.press("p")                                # auto -> bfloat16
        await settle(pilot)
        a = screen.assessed["METAGENE-1"]
        assert screen.choices.dtype == "bfloat16" and a.memory == 14_000_000_000
        assert not a.warning and "≈13 GiB bf16" in a.needs
        assert assess(app.snapshot.catalog["GROVER"], "GROVER", dtype="float16",
                      memory=16 * GIB).needs == "≈166 MiB fp16"


# -- choices kept, regimes, the command ----------------------------------------------------------
async def test_ticks_and_options_are_kept_across_openings(small_store, make_app, engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        await tick(pilot, screen, "kmer-4")
        await tick(pilot, screen, "kmer-3")
        await pilot.press("r", "d")                           # regimes full, device cpu
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, MissingScreen)
        await pilot.press("x")                                # the main view changes meanwhile
        first, screen = screen, await open_missing(pilot)
        assert screen is first                                # kept installed, shown again
        assert screen.ticked == ["kmer-3", "kmer-4"]          # the list's order, not the ticks'
        assert (app.fill_choices.regimes, app.fill_choices.device) == ("full", "cpu")
        ticks = models_column(screen, "tick")
        assert ticks["kmer-3"] == ticks["kmer-4"] == TICKED and ticks["kmer-6"] == UNTICKED
        order = list(screen.candidates)
        await pilot.press("ctrl+r")                           # a reload keeps the order
        await settle(pilot)
        assert screen.candidates == order


async def test_every_regime_or_one(small_store, make_app, engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        await tick(pilot, screen, "kmer-3")
        assert app.fill_choices.regimes == "all"
        assert {r for _, _, r in screen.cells} == {"full", "10shot", "1shot"}
        assert len(screen.cells) == 300
        for regime in ("full", "10shot", "1shot"):
            await pilot.press("r")
            await pilot.pause()
            assert {r for _, _, r in screen.cells} == {regime} and len(screen.cells) == 100
        await pilot.press("r")
        assert len(screen.cells) == 300
        await pilot.press("g")
        await settle(pilot)
        cmd = engine.commands[-1]
        assert cmd[cmd.index("--regimes") + 1:][:3] == ["full", "10shot", "1shot"]
        assert "--tasks" not in cmd                           # the whole suite: not listed


async def test_device_precision_batch_size_and_category_go_into_the_command(small_store, make_app,
                                                                             engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c", "c")                           # category Promoters
        screen = await open_missing(pilot)
        await tick(pilot, screen, "kmer-3")
        await pilot.press("r", "d", "p")                      # full, cpu, bfloat16
        assert "precision bfloat16" in str(screen.query_one("#executor-text").render())
        await pilot.press("b")
        assert app.focused is screen.query_one("#batch-size", Input)
        await pilot.press("1", "6", "enter")
        await pilot.press("g")
        await settle(pilot)
        cmd = engine.commands[-1]
        assert cmd[cmd.index("--device") + 1] == "cpu"
        assert cmd[cmd.index("--dtype") + 1] == "bfloat16"
        assert cmd[cmd.index("--batch-size") + 1] == "16"
        assert cmd[cmd.index("--models") + 1] == "kmer-3"
        tasks = cmd[cmd.index("--tasks") + 1:cmd.index("--regimes")]
        assert tasks == app.snapshot.suite_tasks("geneb-v1", "Promoters")["task_id"].to_list()
        assert "--trust-remote-code" not in cmd


async def test_the_ray_executor_and_its_address_go_into_the_command(small_store, make_app,
                                                                   engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        await tick(pilot, screen, "kmer-3")
        address = screen.query_one("#ray-address", Input)
        assert not address.display                            # local: no address to give
        await pilot.press("A")
        assert app.focused is not address and "press e" in status(screen)
        await pilot.press("g")
        await settle(pilot)
        assert "--executor" not in engine.commands[-1]        # local: the engine's default
        await pilot.press("e")
        assert app.fill_choices.executor == "ray" and address.display
        assert "e executor ray" in screen_text(app)
        await pilot.press("g")
        await settle(pilot)
        cmd = engine.commands[-1]
        assert cmd[cmd.index("--executor"):] == ["--executor", "ray"]  # a local Ray instance
        await pilot.press("A")
        assert app.focused is address
        await pilot.press(*"ray://head:10001", "enter")
        assert app.focused is screen.query_one("#missing-models", DataTable)
        await pilot.press("g")
        await settle(pilot)
        cmd = engine.commands[-1]
        assert cmd[cmd.index("--executor"):] == ["--executor", "ray", "--address",
                                                 "ray://head:10001"]
        assert app.fill_choices.address == "ray://head:10001"
        # a bad address refuses to run, saying why
        address.value = "head:65536"
        await pilot.pause()
        runs = len(engine.commands)
        await pilot.press("g")
        await settle(pilot)
        assert len(engine.commands) == runs
        assert status(screen) == ("Ray address: a Ray address is auto, HOST:PORT or "
                                  "ray://HOST:PORT, not 'head:65536'")
        address.value = "10.0.0.5:6379"
        await pilot.press("e", "g")                           # back to local: no address
        await settle(pilot)
        assert not address.display and "--executor" not in engine.commands[-1]
        await pilot.press("escape")                           # both are kept for next time
        await pilot.pause()
        screen = await open_missing(pilot)
        assert app.fill_choices.address == "10.0.0.5:6379"
        assert screen.query_one("#ray-address", Input).value == "10.0.0.5:6379"
        await pilot.press("e", "g")
        await settle(pilot)
        assert engine.commands[-1][-2:] == ["--address", "10.0.0.5:6379"]


async def test_remote_code_runs_only_with_the_toggle_at_its_commit(small_store, make_app,
                                                                   engine):
    write_user_models(small_store, USER_MODELS)
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot, "remote")
        await tick(pilot, screen, "remote-pinned")
        await tick(pilot, screen, "remote-unpinned")
        await pilot.press("g")
        await pilot.pause()
        assert engine.commands == []                          # refused without the toggle
        assert "press t to pass --trust-remote-code" in status(screen)
        assert "(t: off)" in models_column(screen, "needs")["remote-pinned"]
        await pilot.press("t", "g")
        await settle(pilot)
        cmd = engine.commands[-1]
        assert "--trust-remote-code" in cmd
        at = cmd.index("--models") + 1
        assert cmd[at:at + 2] == [f"remote-pinned@{COMMIT}", "remote-unpinned"]


async def test_a_model_the_store_pins_trusts_code_at_the_pin(small_store, make_app, engine):
    """The store's pins (`store.pins`: what fill --trust-remote-code resolved before) name the
    commit of a model whose entry names none; another branch's pin does not."""
    write_user_models(small_store, USER_MODELS + '\n[[model]]\nmodel_id = "remote-tagged"\n'
                      'hub_id = "org/remote-unpinned"\nparams = 50000000\n'
                      'remote_code = "required"\nrevision = "v2"\n')
    pin = "fedcba9876543210fedcba9876543210fedcba98"
    small_store.pins.write_text(f'# mine\n[[pin]]\nhub_id = "org/remote-unpinned"\n'
                                f'branch = "main"\ncommit = "{pin}"\n')
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot, "remote")
        a = screen.assessed
        assert a["remote-unpinned"].spec == f"remote-unpinned@{pin}"
        assert models_column(screen, "needs")["remote-unpinned"].startswith(
            "trusts code at fedcba987654 ")
        assert a["remote-tagged"].spec == "remote-tagged"        # v2 is not pinned
        assert a["remote-tagged"].needs.startswith("trusts code, resolves the commit at run")


# -- the honest end of a run ---------------------------------------------------------------------
async def start_run(pilot, screen, engine, proc) -> None:
    """Tick kmer-3 and run with `proc` as the engine (not awaited to the end)."""
    pilot.app.fill_choices.ticked.add("kmer-3")
    screen.refresh_all()
    engine.next = proc
    await pilot.press("g")


async def run_with(pilot, screen, engine, proc) -> None:
    await start_run(pilot, screen, engine, proc)
    await settle(pilot)


async def until(pilot, condition) -> None:
    for _ in range(300):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("timed out")


async def test_done_is_the_engines_done_event(small_store, make_app, engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        await run_with(pilot, screen, engine, FakeProc(
            [{"event": "warning", "message": "task t1: 2 rows skipped"}, plan(2), cell(1, 2),
             cell(2, 2, computed=False), {"event": "done", "computed": 1, "seconds": 1.5}]))
        assert screen.outcome.state == "done"
        assert screen.outcome.message.startswith("Done: 1 cell(s) computed in 1.5 s (1 more")
        assert "1 warning(s)" in screen.outcome.message
        assert status(screen).startswith("Done: 1 cell(s)")
        assert not screen.running


async def test_failed_shows_the_engines_one_line_message(small_store, make_app, engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        stderr = ("geneb-engine fill: model kmer-3: the task files are not in the store; run "
                  "geneb-engine data download\n"
                  "geneb-engine fill: warning: damaged file x.parquet\n")
        await run_with(pilot, screen, engine, FakeProc([], rc=2, stderr=stderr))
        assert screen.outcome.state == "failed"
        assert screen.outcome.message.startswith("geneb-engine fill: model kmer-3: the task")
        text = status(screen)
        assert text.startswith("Failed: model kmer-3: the task files are not in the store")
        assert "Cancelled" not in text and "warning" not in text


async def test_exit_zero_without_done_is_a_failure_not_a_success(small_store, make_app,
                                                                 engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        await run_with(pilot, screen, engine, FakeProc([plan(2), cell(1, 2)], rc=0))
        assert screen.outcome.state == "failed"
        assert "without its done event" in screen.outcome.message


async def test_cancelled_only_when_cancelled_before_the_end(small_store, make_app, engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        proc = FakeProc([plan(3), cell(1, 3)], hold=True)
        await start_run(pilot, screen, engine, proc)
        await until(pilot, lambda: any(e.kind == "cell" for e in screen.events))
        assert screen.running
        await pilot.press("escape")                            # cannot leave mid-run
        assert isinstance(app.screen, MissingScreen)
        await pilot.press("k")
        await settle(pilot)
        assert proc.terminated and screen.outcome.state == "cancelled"
        assert screen.outcome.message.startswith("Cancelled after 1 of 3 cells")
        assert status(screen).startswith("Cancelled after 1 of 3 cells")


async def test_a_cancel_after_the_last_cell_is_not_called_cancelled(small_store, make_app,
                                                                    engine):
    """The reported bug: a run that reached 100 % read "Cancelled"."""
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        proc = FakeProc([plan(2), cell(1, 2), cell(2, 2)], hold=True)  # then tidying up
        await start_run(pilot, screen, engine, proc)
        await until(pilot, lambda: sum(e.kind == "cell" for e in screen.events) == 2)
        await pilot.press("k")
        await settle(pilot)
        assert screen.outcome.state == "done"
        assert "all 2 planned cell(s) finished" in screen.outcome.message
        assert "Cancelled" not in status(screen)


async def test_a_ray_run_shows_its_executor_placement_and_throughput(small_store, make_app,
                                                                    engine):
    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        await pilot.press("e")
        proc = FakeProc([
            {"event": "executor", "kind": "ray", "address": "ray://head:10001", "nodes": 2,
             "cpus": 8.0, "gpus": 2.0},
            plan(2),
            {"event": "placement", "model": "kmer-3", "gpus": 0.0, "cpus": 1.0,
             "reason": "a weight-free baseline needs no GPU"},
            embedded("gpu 0", 700.4), embedded("gpu 1", 790.0), embedded("gpu 0", 812.0),
            {"event": "heartbeat", "seconds": 3},             # unknown: ignored
            "Ray is starting",                                # not an event: a log line
            embedded("gpu 1", None),                          # says no rate: ignored
        ], hold=True)
        await start_run(pilot, screen, engine, proc)
        await until(pilot, lambda: len(screen.events) == 9)
        assert engine.commands[-1][-2:] == ["--executor", "ray"]
        assert status(screen) == (
            "Placed kmer-3 on 0 GPU(s), 1 CPU(s) (a weight-free baseline needs no GPU)\n"
            "ray at ray://head:10001: 2 node(s), 8 CPU(s), 2 GPU(s) · gpu 0: 812 seq/s · "
            "gpu 1: 790 seq/s")
        proc.release([cell(1, 2), cell(2, 2), {"event": "done", "computed": 2, "seconds": 3.0}])
        await settle(pilot)
        assert screen.outcome.state == "done" and not screen.running
        assert status(screen).startswith("Done: 2 cell(s) computed in 3.0 s")


def test_ray_address_and_command():
    assert fill.parse_address("") == fill.parse_address("  ") == ""     # a local Ray instance
    for ok in ("auto", "head:6379", "ray://10.0.0.5:10001", "node-1.lab.example.org:1",
               " 127.0.0.1:65535 "):
        assert fill.parse_address(ok) == ok.strip()
    for bad in ("head", "head:0", "head:65536", "ray://head", "http://head:6379", ":6379",
                "head:port", "auto:1 2"):
        with pytest.raises(ValueError, match="a Ray address is auto, HOST:PORT or"):
            fill.parse_address(bad)
    base = ["py", "-m", "engine.cli", "fill", "--store", "/s", "--suite", "geneb-v1", "--json",
            "--models", "kmer-3"]
    def command(**options):
        return fill.fill_command(Path("/s"), "geneb-v1", ["kmer-3"], [], [], python="py",
                                 **options)
    assert command() == command(executor="local", address="auto") == base
    assert command(executor="ray") == [*base, "--executor", "ray"]
    assert command(executor="ray", address="ray://head:10001") == [
        *base, "--executor", "ray", "--address", "ray://head:10001"]


def test_the_status_lines_of_the_executor_events():
    def ev(**data):
        return fill.parse_line(json.dumps(data))

    assert fill.executor_text(ev(event="executor", kind="ray", address="auto", nodes=1,
                                 cpus=2.0, gpus=0.5)) == \
        "ray at auto: 1 node(s), 2 CPU(s), 0.5 GPU(s)"
    assert fill.executor_text(ev(event="executor", kind="local")) == \
        "local: ? node(s), ? CPU(s), ? GPU(s)"                       # missing fields: "?"
    assert fill.placement_text(ev(event="placement", model="GROVER", gpus=1.0, cpus=1.0,
                                  reason="fits one GPU")) == \
        "GROVER on 1 GPU(s), 1 CPU(s) (fits one GPU)"
    assert fill.worker_rate(ev(event="embedded", worker="local", sequences_per_s=82.0)) == \
        ("local", "82 seq/s")
    assert fill.worker_rate(ev(event="embedded", worker="gpu 0", sequences_per_s=2.5)) == \
        ("gpu 0", "2.5 seq/s")
    for bad in ({"worker": "gpu 0"}, {"worker": "gpu 0", "sequences_per_s": "fast"},
                {"sequences_per_s": 3.0}, {"worker": "w", "sequences_per_s": float("inf")}):
        assert fill.worker_rate(ev(event="embedded", **bad)) is None


def test_outcome_rules():
    ev = [fill.parse_line(json.dumps(e)) for e in (plan(2), cell(1, 2), cell(2, 2))]
    done = fill.parse_line('{"event": "done", "computed": 2, "seconds": 0.5}')
    assert fill.outcome([*ev, done], 0, False, "").state == "done"
    assert fill.outcome([*ev, done], 0, True, "").state == "done"        # done wins
    assert fill.outcome(ev[:2], 130, True, "").state == "cancelled"
    assert fill.outcome(ev, 130, True, "").state == "done"               # every cell finished
    assert fill.outcome([], 2, False, "Traceback...\nValueError: bad\n").message == \
        "ValueError: bad"
    assert fill.outcome([], 1, False, "").message == "geneb-engine fill ended with exit 1"
    assert fill.engine_message("geneb-engine fill: x\ngeneb-engine fill: warning: y\n") == \
        "geneb-engine fill: x"


def test_fill_command_options(tmp_path):
    cmd = fill.fill_command(tmp_path, "geneb-v1", [f"m@{COMMIT}"], [], ["full"], python="py",
                            device="cuda", batch_size=8, trust_remote_code=True)
    assert cmd == ["py", "-m", "engine.cli", "fill", "--store", str(tmp_path), "--suite",
                   "geneb-v1", "--json", "--models", f"m@{COMMIT}", "--regimes", "full",
                   "--device", "cuda", "--batch-size", "8", "--trust-remote-code"]
    assert "--device" not in fill.fill_command(tmp_path, "s", ["m"], [], [], device="auto")
    assert "--dtype" not in fill.fill_command(tmp_path, "s", ["m"], [], [], dtype="auto")
    assert fill.fill_command(tmp_path, "s", ["m"], [], [], dtype="bfloat16")[-2:] == [
        "--dtype", "bfloat16"]
    assert fill.parse_batch_size("") is None and fill.parse_batch_size("32") == 32
    with pytest.raises(ValueError):
        fill.parse_batch_size("0")


def test_runnable_here_exactly_when_the_engine_preflight_passes(monkeypatch):
    """The dashboard's rules (catalog data only, no engine import) agree with the engine's
    refusals for every catalog model: never offered and then refused, never hidden when it
    would run. (torch/transformers count as installed and the hub as answering: preflight
    checks neither; tests/store/test_runs_here.py holds the hub's part.)"""
    from dataclasses import asdict, replace

    from engine.encoders import EncoderOptions, preflight
    from store.catalog import load_models
    from store.vocab.encoder_kinds import KINDS
    from store.vocab.errors import GenebError

    def installed(package: str) -> bool:
        return package in KINDS["hf"].packages or runnable.package_installed(package)

    monkeypatch.setattr(runnable, "hub_reach", lambda: HubReach(True, "the hub answered"))
    for mid, meta in load_models(None).items():
        a = assess(asdict(meta), mid, installed=installed)
        if a.remote_code and not a.revision and not meta.path:
            # fill gives it the commit its branch names first (engine.encoders.pins)
            meta = replace(meta, revision="0" * 40)
        try:
            preflight(meta, EncoderOptions(trust_remote_code=a.remote_code))
            engine_ok = True
        except GenebError:
            engine_ok = False
        assert a.runnable == engine_ok, (mid, a)


async def test_the_screen_at_80x24_shows_lists_options_and_status(small_store, make_app, engine):
    app = make_app(small_store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_missing(pilot)
        await tick(pilot, screen, "kmer-3")
        text = screen_text(app)
        assert "[x]  3-mer spectrum" in text and "[ ]  4-mer spectrum" in text
        assert "r regimes all" in text and "t trust code [ ]" in text and "b batch" in text
        models = screen.query_one("#missing-models", DataTable)
        cells = screen.query_one("#missing-cells", DataTable)
        assert models.region.height >= 4 and cells.region.height >= 3


async def test_the_detail_says_what_a_model_holds_in_the_store(small_store, make_app, engine):
    """The highlighted model's "stored here" line: `status`'s figures of its bytes, read in the
    background; none for a model without bytes (kmer-3 here: no local run)."""
    from geneb_tui.core.perf import stored_lines

    app = make_app(small_store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_missing(pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        tasks = screen.snapshot.suite_tasks("geneb-v1")["task_id"].to_list()
        assert (screen.stored, screen.store_line) == stored_lines(
            small_store, list(screen.snapshot.catalog), "geneb-v1", tasks)
        assert screen.store_line.startswith("the store: embeddings 0 B, results ")
        assert "GROVER" in screen.stored and "kmer-3" not in screen.stored
        table = screen.query_one("#missing-models", DataTable)
        for model in ("GROVER", "kmer-3"):
            table.move_cursor(row=screen.candidates.index(model))
            await pilot.pause()
            detail = str(screen.query_one("#model-detail", Static).render())
            assert ("stored here: " + screen.stored.get(model, "") in detail) == (
                model == "GROVER")
            assert screen.store_line in detail
