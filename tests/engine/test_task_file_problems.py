"""A suite's files with several problems: every problem in one run, one line each naming the
file, the line and what is wrong (the first 20 of a file, then how many more), exit 2, the store
as it was; a manifest category close to a geneb-v1 one warns with the closest."""

from __future__ import annotations

import csv
from pathlib import Path

from tests.engine.in_process import refused, run

GOOD = [("ACGTACGTAA", 0), ("CCGGCCGGTT", 1), ("ACGAACGAAT", 0), ("GGCCGGCCAT", 1)]


def write_flat(path: Path, rows) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label", "split"])
        w.writerows(rows)
    return path


def good_rows():
    return [(s, lab, split) for split in ("train", "test") for s, lab in GOOD]


def test_every_bad_row_of_every_file_is_one_line_of_one_message(tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    # a.csv: header on line 1, good rows on lines 2-9, then three bad rows (lines 10-12)
    a = write_flat(suite / "a.csv", [*good_rows(), ("ACGT-ACGT", 0, "train"),
                                     ("ACGTTT", "yes", "train"), ("", 1, "test")])
    # b.csv: 25 rows with a label that is no integer (lines 10-34)
    b = write_flat(suite / "b.csv", [*good_rows(),
                                     *[("ACGTAC", f"x{i}", "train") for i in range(25)]])
    store = tmp_path / "store"
    err = refused(capsys, store, "fill", "--store", str(store), "--suite", str(suite),
                  "--models", "kmer-3", names=(), lines=1 + 3 + 20 + 1)
    lines = err.splitlines()
    assert lines[0] == "geneb-engine fill: 28 problems in the suite's files, each to fix:"
    assert lines[1].startswith(f"  {a}, line 10: character(s) '-' in column 'text'")
    assert lines[2].startswith(f"  {a}, line 11: label 'yes' is not an integer")
    assert lines[3].startswith(f"  {a}, line 12: empty sequence")
    assert [line.split(": label")[0] for line in lines[4:24]] == [
        f"  {b}, line {n}" for n in range(10, 30)]
    assert lines[24] == f"  and 5 more problems in {b}"


def test_both_files_of_a_hub_layout_task_are_checked(tmp_path, capsys):
    task = tmp_path / "suite" / "tasks" / "t1"
    task.mkdir(parents=True)
    for split, bad in (("train", "ACGTN!"), ("test", "AC GT")):
        with open(task / f"{split}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["text", "label"])
            w.writerows([*GOOD, (bad, 1)])
    store = tmp_path / "store"
    err = refused(capsys, store, "fill", "--store", str(store), "--suite",
                  str(tmp_path / "suite"), "--models", "kmer-3", lines=3,
                  names=("2 problems", f"{task / 'train.csv'}, line 6: character(s) '!'",
                         f"{task / 'test.csv'}, line 6: character(s) ' '"))
    assert err.count("\n  ") == 2


def test_every_bad_task_id_of_a_manifest_is_listed(tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    write_flat(suite / "a.csv", good_rows())
    (suite / "manifest.csv").write_text("task_id,category\n..,Promoters\na,Promoters\n"
                                        "also/bad,Enhancers\n")
    store = tmp_path / "store"
    refused(capsys, store, "fill", "--store", str(store), "--suite", str(suite), "--models",
            "kmer-3", lines=3, names=("2 problems", "manifest.csv, line 2", "'..'",
                                      "manifest.csv, line 4", "'also/bad'"))


def test_a_manifest_category_close_to_a_geneb_v1_one_warns_with_it(tmp_path, capsys):
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("a", "b", "c"):
        write_flat(suite / f"{name}.csv", good_rows())
    (suite / "manifest.csv").write_text("task_id,category\na,Promoterz\nb,Promoters\n"
                                        "c,My own category\n")
    (tmp_path / "store").mkdir()
    rc, err = run(capsys, "tasks", "--store", str(tmp_path / "store"), "--suite", str(suite))
    assert rc == 0
    assert err == (f"geneb-engine tasks: warning: {suite / 'manifest.csv'}, line 2: category "
                   "'Promoterz' is not a geneb-v1 category (did you mean 'Promoters'?); its "
                   "tasks stand in a category of their own\n")
