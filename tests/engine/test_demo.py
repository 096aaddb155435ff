"""The newcomer's first command: `geneb-engine demo` imports the official results and fills
geneb-mini with the k-mer baselines (the two commands as they are), says what to run next, and
computes nothing when run again; `geneb-engine` alone shows the commands and where to start."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

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


def test_a_second_demo_computes_nothing_and_says_what_to_run_next(demo_store, capsys,
                                                                  monkeypatch):
    scripts = Path(sysconfig.get_path("scripts"))
    monkeypatch.setenv("PATH", f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}")
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
    # the report it suggests runs as given: no --suite, the store's geneb-v1 (it says so)
    report = next_steps[1].split("   ")[0].split()[1:]
    assert report == ["report", "--store", str(demo_store)]
    assert main([*report, "--resamples", "0"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "suite geneb-v1 (the store also has results on geneb-mini: --suite geneb-mini)")


def test_without_the_commands_on_path_the_next_steps_name_them_by_path(tmp_path, monkeypatch):
    """After `make demo` the virtual environment is not activated: the shell finds no
    geneb-tui. The next steps give the command that works and how to activate it."""
    from engine.commands import demo

    scripts = tmp_path / "venv" / "bin"
    scripts.mkdir(parents=True)
    for name in ("geneb-tui", "geneb-engine", "activate"):
        (scripts / name).write_text("#!/bin/sh\n")
        (scripts / name).chmod(0o755)
    monkeypatch.setattr(demo, "_scripts", lambda: scripts)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin")
    assert demo.command("geneb-tui") == "venv/bin/geneb-tui"
    assert demo.on_path_line() == ("(geneb-tui and geneb-engine are in venv/bin, which is not "
                                   "on your PATH: run `source venv/bin/activate` to run them "
                                   "by name)")
    monkeypatch.setenv("PATH", f"{scripts}{os.pathsep}/usr/bin")
    assert demo.command("geneb-tui") == "geneb-tui" and demo.on_path_line() is None
    (scripts / "geneb-tui").unlink()            # not installed as a script: the module
    assert demo.command("geneb-tui") == f"{sys.executable} -m geneb_tui.cli"


def test_no_command_shows_the_commands_and_where_to_start(capsys):
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: geneb-engine") and "  demo " in err
    assert err.endswith(f"\n{NEW_HERE}\n")
    assert NEW_HERE == "new here? run `geneb-engine demo`, then `geneb-tui`"


def test_after_the_demo_audit_flags_a_fifth_task_by_the_k_mer_results(demo_store):
    """docs/guide/audit.md: on the demo's store the shortcut rule also weighs the k-mer
    baselines' MCC, and mini_promoter_tata's composition probe (0.37) reaches 91 % of the best
    one's (0.41): five tasks flagged, the four of a new store (test_audit) and this one."""
    import io
    import json
    from contextlib import redirect_stdout

    from tests.engine.test_audit import MINI_SHORTCUTS

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["audit", "--store", str(demo_store), "--suite", "geneb-mini",
                     "--json"]) == 0
    tasks = {t["task"]: t for t in json.loads(out.getvalue())["tasks"]}
    assert {t for t, a in tasks.items() if a["verdict"] != "clean"} == \
        MINI_SHORTCUTS | {"mini_promoter_tata"}
    tata = tasks["mini_promoter_tata"]
    assert (round(tata["shortcut_mcc"], 2), round(tata["best_model_mcc"], 2),
            round(tata["shortcut_share"], 2)) == (0.37, 0.41, 0.91)
