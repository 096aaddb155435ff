"""The newcomer's first command: `geneb-engine demo` imports the official results and fills
geneb-mini with the k-mer baselines (the two commands as they are), says what to run next, and
computes nothing when run again; `geneb-engine` alone shows the commands and where to start."""

from __future__ import annotations

import pytest

from engine.cli import NEW_HERE, main
from store.db import query
from store.paths import StorePaths
from tests.helpers import digest


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("demo") / "store"
    assert main(["demo", "--store", str(store)]) == 0
    return store


def test_demo_holds_the_official_results_and_geneb_mini_filled_with_the_kmer_baselines(
        demo_store):
    paths = StorePaths(demo_store)
    official = query(paths, "SELECT count(*) AS n, count(DISTINCT model) AS models FROM "
                            "results WHERE source <> 'local'")
    assert official.row(0) == (12_300, 41)      # 40 official and 1 self-reported, 300 cells
    local = query(paths, "SELECT model, count(DISTINCT task) AS tasks, count(DISTINCT regime) "
                         "AS regimes, count(*) AS n FROM results WHERE source = 'local' "
                         "GROUP BY model ORDER BY model")
    assert local.rows() == [(m, 13, 3, 13 * 3 * 5) for m in ("kmer-3", "kmer-4", "kmer-6")]


def test_a_second_demo_computes_nothing_and_says_what_to_run_next(demo_store, capsys):
    before = digest(demo_store)
    capsys.readouterr()
    assert main(["demo", "--store", str(demo_store)]) == 0
    out = capsys.readouterr().out
    assert digest(demo_store) == before
    assert "nothing to compute: every requested cell is already in the store" in out
    next_steps = out.split("\nnext:\n", 1)[1].splitlines()
    assert [line.split()[:3] for line in next_steps] == [
        ["geneb-tui", "--store", str(demo_store)],
        ["geneb-engine", "report", "--store"],
        ["geneb-engine", "fill", "--store"]]
    assert "--models PATH" in next_steps[2] and "save_pretrained" in next_steps[2]
    # the report it suggests runs as given (the store has results on two suites: it names one)
    report = next_steps[1].split("   ")[0].split()[1:]
    assert report == ["report", "--store", str(demo_store), "--suite", "geneb-v1"]
    assert main([*report, "--resamples", "0"]) == 0


def test_no_command_shows_the_commands_and_where_to_start(capsys):
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: geneb-engine") and "  demo " in err
    assert err.endswith(f"\n{NEW_HERE}\n")
    assert NEW_HERE == "new here? run `geneb-engine demo`, then `geneb-tui`"
