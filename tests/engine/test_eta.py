"""fill's ETA (`engine.eta`): the runs table's throughput when it has one, else the pairs this
run finished, applied to the nucleotides and training examples left; never the elapsed time
per cell (a first pair that loads a model made the old ETA 7x too long)."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

import engine.eta  # noqa: E402
import engine.fill  # noqa: E402
from engine.cli import main  # noqa: E402
from engine.commands.common import models_of  # noqa: E402
from engine.eta import EtaWatch  # noqa: E402
from engine.fill import FillOptions, validate_tasks  # noqa: E402
from engine.planner import plan  # noqa: E402
from engine.suites import resolve_suite  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.tables.results import open_for_writing  # noqa: E402
from store.tables.telemetry import RUNS, record_runs, run_row  # noqa: E402
from store.vocab.protocol import GENEB_V1  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def two_tasks(tmp_path: Path) -> Path:
    """Two tasks of 30 training and 10 test sequences of 50 bp: 40 sequences, 2,000 nt each."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for i, name in enumerate(("a_task", "b_task")):
        write_task(suite / f"{name}.csv", 30, 10, 2, i, length=50)
    return suite


def watched(tmp_path: Path, sequences_per_s: float | None) -> tuple[EtaWatch, Clock]:
    """The ETA of `fill --models kmer-3 --regimes full` over `two_tasks` in a store whose runs
    table says kmer-3 embedded `sequences_per_s` on the CPU (None: an empty store)."""
    paths = StorePaths(tmp_path / "store")
    if sequences_per_s is not None:
        open_for_writing(paths, RUNS)
        stats = {"device": "cpu", "dtype": "float32", "n_encoded": 400,
                 "seconds": 400 / sequences_per_s}
        record_runs(paths, [run_row("kmer-3", "elsewhere", "train", stats, data_hash="h",
                                    worker="local", engine_version="0")],
                    model="kmer-3", task="elsewhere")
    suite = resolve_suite(str(two_tasks(tmp_path)), paths)
    clock = Clock()
    watch = EtaWatch(clock)
    checks = validate_tasks(suite, list(suite.tasks), lambda e: None, watch.see)
    options = FillOptions()
    the_plan = plan(paths, models_of(paths, ["kmer-3"]), list(suite.tasks), ["full"], [GENEB_V1],
                    checks.hashes, options.encoder)
    watch.planned(paths, the_plan, checks.hashes, options)
    return watch, clock


def first_pair(watch: EtaWatch, clock: Clock) -> list[float | None]:
    """The ETA after each event of a_task: embedded in 0.2 s, probed by t = 1.0 s."""
    eta, seen = watch.eta, []
    clock.t = 0.2
    eta.observe({"event": "embedded", "model": "kmer-3", "task": "a_task", "sequences": 40,
                 "seconds": 0.2})
    seen.append(eta.seconds())
    clock.t = 1.0
    eta.observe({"event": "cell", "model": "kmer-3", "task": "a_task", "regime": "full"})
    seen.append(eta.seconds())
    return seen


@pytest.mark.parametrize("sequences_per_s, before, after", [
    # runs table: 100 sequences/s, b_task's 40 in 0.4 s from the start; its probes, 30
    # examples at a_task's 0.8 s / 30 (1.0 s less 0.2 s embedding): 0.4 + 0.8
    (100.0, None, 1.2),
    # no runs table: b_task's 2,000 nt at a_task's 0.2 s / 2,000 nt, then its probes: 0.2 + 0.8
    (None, None, 1.0),
])
def test_the_eta_of_recorded_runs_and_the_pairs_done(tmp_path, sequences_per_s, before, after):
    watch, clock = watched(tmp_path, sequences_per_s)
    assert first_pair(watch, clock) == [before, pytest.approx(after)]


def test_the_runs_table_gives_the_embedding_before_any_pair(tmp_path):
    watch, clock = watched(tmp_path, 100.0)
    pairs = watch.eta.pairs
    assert [p.embed_prior_s for p in pairs.values()] == [pytest.approx(0.4)] * 2
    assert [p.examples for p in pairs.values()] == [30, 30]     # geneb-v1 full: one fit
    assert watch.eta.seconds() is None                          # no fit measured yet


def test_successive_etas_of_a_fill_are_within_30_percent(tmp_path, monkeypatch, capsys):
    """A real `fill --json` (two k-mer models, four tasks of different sizes) on a fake clock
    that embedding advances per nucleotide and probing per training example: every ETA after
    the first pair is within 30 % of the time that was really left."""
    suite = tmp_path / "suite"
    suite.mkdir()
    n_train = {"a_task": 40, "b_task": 120, "c_task": 80, "d_task": 200}
    for i, (name, n) in enumerate(n_train.items()):
        write_task(suite / f"{name}.csv", n, n // 3, 2, i, length=40 + 20 * i)
    clock = Clock()
    monkeypatch.setattr(engine.eta, "CLOCK", clock)
    per_nt = {"kmer-3": 1e-3, "kmer-4": 1.2e-3}
    embed, probe = engine.fill.embed_pair, engine.fill.probe_pair

    def slow_embed(paths, embeddings, model, encoder, data, *rest, **named):
        expect, done = embed(paths, embeddings, model, encoder, data, *rest, **named)
        seconds = per_nt[model.model_id] * sum(
            len(s) for split in (data.train, data.test) for s in split.sequences)
        clock.t += seconds
        done["seconds"] = seconds
        return expect, done

    def slow_probe(paths, model_id, task_id, *rest, **named):
        clock.t += 5e-3 * n_train[task_id]
        return probe(paths, model_id, task_id, *rest, **named)

    monkeypatch.setattr(engine.fill, "embed_pair", slow_embed)
    monkeypatch.setattr(engine.fill, "probe_pair", slow_probe)
    capsys.readouterr()
    assert main(["fill", "--store", str(tmp_path / "store"), "--suite", str(suite),
                 "--models", "kmer-3", "kmer-4", "--regimes", "full", "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    cells = [e for e in events if e["event"] == "cell"]
    assert len(cells) == 8
    end = clock.t
    # each cell event was emitted at the fake time its pair finished; rebuild those times
    times, t = [], 0.0
    for e in cells:
        t += per_nt[e["model"]] * total_nt(suite, e["task"]) + 5e-3 * n_train[e["task"]]
        times.append(t)
    assert times[-1] == pytest.approx(end)
    for e, when in zip(cells[:-1], times[:-1], strict=True):
        left = end - when
        assert e["eta_s"] is not None
        assert abs(e["eta_s"] - left) <= 0.3 * left, (e, left)
    assert cells[-1]["eta_s"] == 0


def total_nt(suite: Path, task: str) -> int:
    rows = (suite / f"{task}.csv").read_text().splitlines()[1:]
    return sum(len(r.split(",")[0]) for r in rows)
