"""A task's profile (class balance, sequence lengths): computed from its data, recorded by
`data verify` and `fill` in the task catalog, shown by `geneb-engine tasks` with its domain."""

from __future__ import annotations

import csv
import json

from engine.cli import main
from engine.data import read_flat_csv
from engine.hub_data import write_data_manifest
from store.catalog import TaskProfile

H3 = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"
ROWS = [("ACGT", 0, "train"), ("CCGGA", 1, "train"), ("ACGTAC", 0, "train"),
        ("ACG", 0, "test"), ("CCGGAA", 1, "test")]
# by hand: 3 train and 2 test rows, 2 classes, class 1 is 1 of 3 training rows, lengths
# 4 5 6 3 6 -> min 3, median 5, max 6
EXPECTED = TaskProfile(3, 2, 2, 0.3333, 3, 5.0, 6)


def test_a_task_profile_is_computed_from_its_data(tmp_path):
    path = tmp_path / "t.csv"
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([("text", "label", "split"), *ROWS])
    assert read_flat_csv(path).profile == EXPECTED


def test_data_verify_records_the_profile_and_tasks_shows_it(tmp_path, capsys, monkeypatch):
    root, store = tmp_path / "snapshot", tmp_path / "store"
    (root / "tasks" / H3).mkdir(parents=True)
    store.mkdir()
    for split in ("train", "test"):
        with open(root / "tasks" / H3 / f"{split}.csv", "w", newline="") as f:
            csv.writer(f).writerows([("text", "label"),
                                     *[(s, y) for s, y, sp in ROWS if sp == split]])
    write_data_manifest(root, "local/test", "r1")
    argv = ["tasks", "--store", str(store), "--category", "Histone Mod."]
    assert main([*argv, "--json"]) == 0
    before = {t["task_id"]: t for t in json.loads(capsys.readouterr().out)}
    assert before[H3]["profile"] is None                       # not recorded yet
    assert (before[H3]["organism"], before[H3]["kingdom"]) == ("Saccharomyces cerevisiae",
                                                               "fungi")
    assert main(["data", "verify", "--store", str(store), "--data-dir", str(root)]) == 0
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    shown = {t["task_id"]: t for t in json.loads(capsys.readouterr().out)}
    assert TaskProfile(**shown[H3]["profile"]) == EXPECTED
    assert sum(t["profile"] is not None for t in shown.values()) == 1
    monkeypatch.setenv("COLUMNS", "250")
    assert main(argv) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if H3 in x)
    for cell in ("fungi", "3/2", "33%", "3-5-6"):
        assert cell in line
