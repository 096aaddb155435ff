"""`fill --jobs auto`: probe workers from the cores and the memory the largest pair needs."""

from __future__ import annotations

import json

import pytest

from engine import workers
from tests.engine.in_process import refused, run

GIB = 2**30


@pytest.mark.parametrize("cores, memory, rows, jobs", [
    (8, 64 * GIB, 100_000, 7),        # 4.58 GiB per worker: memory holds 13, cores allow 7
    (8, 16 * GIB, 100_000, 3),        # memory holds 3
    (8, 2 * GIB, 100_000, 1),         # not even one: still one
    (2, 64 * GIB, 1_000, 1),          # two cores: one embeds, one probes
    (16, None, 1_000, 15),            # memory unknown: the cores decide
])
def test_auto_jobs_takes_the_smaller_of_cores_and_memory(monkeypatch, cores, memory, rows,
                                                         jobs):
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(workers, "available_memory", lambda: memory)
    got, why = workers.auto_jobs(rows)
    assert got == jobs and f"{cores} cores" in why
    if memory:
        assert f"{rows * 4096 * 4 * 3 / GIB:.2f} GiB per worker" in why


def test_fill_jobs_auto_reports_its_choice_and_gives_the_same_results(tmp_path, capsys):
    from tests.engine.processes import results_of

    argv = ["fill", "--suite", "geneb-mini", "--models", "kmer-3", "--limit", "2",
            "--regimes", "full", "--json"]
    rc, _ = run(capsys, *argv, "--store", str(tmp_path / "one"))
    assert rc == 0
    capsys.readouterr()
    from engine.cli import main

    assert main([*argv, "--store", str(tmp_path / "auto"), "--jobs", "auto"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    chosen = [e for e in events if e["event"] == "jobs"]
    assert len(chosen) == 1 and chosen[0]["jobs"] >= 1 and "cores" in chosen[0]["reason"]
    assert results_of(tmp_path / "auto").equals(results_of(tmp_path / "one"))
    refused(capsys, tmp_path / "auto", *argv, "--store", str(tmp_path / "auto"), "--jobs",
            "autoo", names=("--jobs", "'autoo' is not an integer", "or auto"))
