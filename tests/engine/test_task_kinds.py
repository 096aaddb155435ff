"""Regression and variant task files (`engine.task_kinds`), declared by a manifest's `kind`
column: what they read as (each distinct sequence once), and every problem of a bad file in one
message, exit 2, the store as it was."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from engine.suites import flat_dir_suite
from store.vocab.errors import GenebError
from store.vocab.kinds import TaskKind
from tests.engine.in_process import refused

REF_A, REF_B = "ACGTACGTAAGG", "TTGCATGCAACC"


def write(path: Path, header, rows) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def suite_of(folder: Path, kinds: dict[str, str]) -> Path:
    write(folder / "manifest.csv", ("task_id", "category", "kind"),
          [(t, "Own", kind) for t, kind in kinds.items()])
    return folder


def variant_rows():
    """Two reference windows, each shared by two variants, in each split."""
    out = []
    for split in ("train", "test"):
        for ref in (REF_A, REF_B):
            out += [(ref, "G" + ref[1:], 1, split), (ref, ref[:-1] + "A", 0, split)]
    return out


def test_a_variant_task_embeds_each_distinct_sequence_once(tmp_path):
    folder = suite_of(tmp_path, {"v": "variant", "r": "regression"})
    write(folder / "v.csv", ("ref", "alt", "label", "split"), variant_rows())
    write(folder / "r.csv", ("text", "label", "split"),
          [("ACGTAC", 0.5, "train"), ("ACGTAC", 1.5, "train"), ("CCGGTA", -2e-1, "train"),
           ("ACGTTT", 3, "test"), ("ACGTGG", 4.25, "test")])
    suite = flat_dir_suite(folder)
    v = suite.load("v")
    assert v.kind is TaskKind.VARIANT and len(v.targets.y_train) == 4
    assert v.train.sequences[:2] == (REF_A, "G" + REF_A[1:])
    assert len(v.train.sequences) == 6           # 2 references + 4 alternatives, not 8
    np.testing.assert_array_equal(v.targets.rows_train, [[0, 1], [0, 2], [3, 4], [3, 5]])
    assert v.profile.n_train == 4 and v.profile.n_classes == 2
    r = suite.load("r")
    assert r.train.sequences == ("ACGTAC", "CCGGTA")
    np.testing.assert_array_equal(r.targets.rows_train, [0, 0, 1])
    np.testing.assert_array_equal(r.targets.y_train, [0.5, 1.5, -0.2])
    assert len({v.data_hash, r.data_hash}) == 2


def test_every_problem_of_a_regression_file_is_one_line_of_one_message(tmp_path, capsys):
    (tmp_path / "suite").mkdir()
    folder = suite_of(tmp_path / "suite", {"r": "regression"})
    path = write(folder / "r.csv", ("text", "label", "split"),
                 [("ACGTAC", 0.5, "train"), ("ACGTAC", "high", "train"), ("AC-GT", 1, "train"),
                  ("ACGT", "inf", "test"), ("", "", "test"), ("ACGTTT", 2, "test")])
    store = tmp_path / "store"
    err = refused(capsys, store, "fill", "--store", str(store), "--suite", str(folder),
                  "--models", "kmer-3", lines=6, names=(
                      "5 problems in the suite's files",
                      f"{path}, line 3: label 'high' is not a number",
                      f"{path}, line 4: character(s) '-' in column 'text'",
                      f"{path}, line 5: label 'inf' is not a finite number",
                      f"{path}, line 6: empty sequence in column 'text'",
                      f"{path}, line 6: label '' is not a number"))
    assert "regression task's label is a real number" in err


def test_every_problem_of_a_variant_file_is_one_line_of_one_message(tmp_path, capsys):
    (tmp_path / "suite").mkdir()
    folder = suite_of(tmp_path / "suite", {"v": "variant"})
    path = write(folder / "v.csv", ("ref", "alt", "label", "split"),
                 [*variant_rows(), (REF_A, REF_A, 1, "train"), (REF_A, "ACGU", 2, "test"),
                  ("", "ACGT", 0, "test"), (REF_B, "A C", "1", "train")])
    store = tmp_path / "store"
    refused(capsys, store, "fill", "--store", str(store), "--suite", str(folder),
            "--models", "kmer-3", lines=5, names=(
                "4 problems in the suite's files",
                f"{path}, line 10: ref and alt are the same sequence",
                f"{path}, line 11: label '2' is not 0 or 1",
                f"{path}, line 12: empty sequence in column 'ref'",
                f"{path}, line 13: character(s) ' ' in column 'alt'"))


def test_a_task_level_rule_of_each_kind_is_told(tmp_path):
    folder = suite_of(tmp_path, {"r": "regression", "v": "variant"})
    write(folder / "r.csv", ("text", "label", "split"),
          [("ACGTAC", 0.5, "train"), ("CCGTAC", 1.5, "train"), ("ACGTTT", 3, "test"),
           ("GCGTTT", 3.0, "test")])
    write(folder / "v.csv", ("ref", "alt", "label", "split"),
          [r for r in variant_rows() if not (r[3] == "test" and r[2] == 0)])
    suite = flat_dir_suite(folder)
    with pytest.raises(GenebError, match="every test label is 3; a regression task's targets "
                                         "must vary"):
        suite.load("r")
    with pytest.raises(GenebError, match="the test split holds label 1 only"):
        suite.load("v")


def test_a_manifest_kind_that_is_none_and_a_hub_layout_task_of_another_kind_are_refused(
        tmp_path, capsys):
    folder = tmp_path / "suite"
    (folder / "tasks" / "h").mkdir(parents=True)
    for split in ("train", "test"):
        write(folder / "tasks" / "h" / f"{split}.csv", ("text", "label"),
              [("ACGT", 0.5), ("CCGT", 1.5)])
    write(folder / "manifest.csv", ("task_id", "category", "kind"),
          [("h", "Own", "regression")])
    with pytest.raises(GenebError, match="task h is a regression task .*the hub layout holds "
                                         "classification tasks only; give it as h.csv"):
        flat_dir_suite(folder).load("h")
    write(folder / "manifest.csv", ("task_id", "category", "kind"),
          [("h", "Own", "regresion")])
    store = tmp_path / "store"
    refused(capsys, store, "fill", "--store", str(store), "--suite", str(folder), "--models",
            "kmer-3", names=(f"{folder / 'manifest.csv'}, line 2: kind 'regresion' is not one "
                             "of classification, regression, variant",))
