"""`fill --jobs`: probe workers from the cores and the memory the largest pair needs (`auto`),
and a larger number than the machine can run capped at what it can, saying so."""

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
    assert len(chosen) == 1 and chosen[0]["jobs"] >= 1 and "cores" in chosen[0]["message"]
    assert results_of(tmp_path / "auto").equals(results_of(tmp_path / "one"))
    refused(capsys, tmp_path / "auto", *argv, "--store", str(tmp_path / "auto"), "--jobs",
            "autoo", names=("--jobs", "'autoo' is not an integer", "or auto"))


@pytest.mark.parametrize("cores, memory, requested, jobs, line", [
    (2, 64 * GIB, 1_000_000_000, 2, "--jobs 1000000000: capped at 2, the cores this process "
                                    "may use"),
    (2, 64 * GIB, 2, 2, None),                   # what the machine can run: as asked
    (2, 64 * GIB, 1, 1, None),
    (16, 16 * GIB, 8, 3, "--jobs 8: capped at 3, what the available memory holds (16.0 GiB "
                         "available, up to 4.58 GiB per worker for the largest pair, "
                         "100,000 rows)"),
    (16, 2 * GIB, 4, 1, "--jobs 4: capped at 1, what the available memory holds"),
    (16, 2 * GIB, 1, 1, None),                   # one worker whatever the memory
    (4, None, 9, 4, "--jobs 9: capped at 4, the cores this process may use"),
])
def test_a_jobs_count_is_capped_at_what_the_machine_can_run(monkeypatch, cores, memory,
                                                            requested, jobs, line):
    """The cores are the process's affinity (2 here of the 13 workers the finding saw start);
    the memory bound is `auto`'s estimate per worker for the largest pair (100,000 rows x
    4,096 float32 dimensions x 3 copies = 4.58 GiB)."""
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(workers, "available_memory", lambda: memory)
    got, said = workers.probe_jobs(requested, 100_000)
    assert got == jobs
    assert said == line if line is None or line.endswith(")") else said.startswith(line)


def test_the_dry_run_uses_the_capped_count_and_says_so(tmp_path, capsys, monkeypatch):
    """No worker starts: the dry run plans with the capped count and prints why."""
    from engine.cli import main

    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1})
    assert main(["fill", "--store", str(tmp_path / "s"), "--suite", "geneb-mini", "--models",
                 "kmer-3", "--tasks", "mini_methyl_cpg", "--regimes", "full", "--dry-run",
                 "--jobs", "1000000000"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "with 2 probe worker(s) (--jobs 1000000000: capped at 2, the cores this process " \
           "may use)" in out
    assert not (tmp_path / "s").exists()
