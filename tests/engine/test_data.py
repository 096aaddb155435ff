"""Task loading from the official flat CSV layout, with one clear message per problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.data import read_flat_csv
from store.errors import GenebError

GOOD = "text,label,split\nACGT,0,train\nacgn,1,train\nGGCC,0,test\nTTAA,1,test\n"


def write(tmp_path: Path, body: str, name: str = "task.csv") -> Path:
    p = tmp_path / name
    p.write_text(body)
    return p


def test_reads_upper_cases_and_hashes(tmp_path):
    t = read_flat_csv(write(tmp_path, GOOD))
    assert t.task_id == "task"
    assert t.train.sequences == ("ACGT", "ACGN")
    assert t.train.labels.tolist() == [0, 1] and t.test.labels.tolist() == [0, 1]
    assert len(t.data_hash) == 16
    # the hash is of the content: same data, same hash; one base changed, another hash
    assert read_flat_csv(write(tmp_path, GOOD.replace("acgn", "ACGN"), "b.csv")).data_hash \
        == t.data_hash
    assert read_flat_csv(write(tmp_path, GOOD.replace("GGCC", "GGCA"), "c.csv")).data_hash \
        != t.data_hash


def test_other_splits_are_skipped_with_a_warning(tmp_path):
    t = read_flat_csv(write(tmp_path, GOOD + "AAAA,0,validation\nCCCC,1,dev\nGGGG,0,dev\n"))
    assert len(t.train) == 2 and len(t.test) == 2
    assert any("2 with split 'dev'" in w for w in t.warnings)
    assert any("'validation'" in w for w in t.warnings)


@pytest.mark.parametrize("body, message", [
    ("text,label\nACGT,0\n", "missing column(s) split"),
    ("sequence,label,split\nACGT,0,train\n", "missing column(s) text"),
    (GOOD + ",1,train\n", "line 6: empty sequence in column 'text'"),
    (GOOD + "ACXT,1,train\n", "line 6: character(s) 'X' outside ACGTN"),
    (GOOD + "ACGT,one,train\n", "line 6: label 'one' is not an integer"),
    (GOOD + "ACGT,1.5,test\n", "line 6: label '1.5' is not an integer"),
    ("text,label,split\nACGT,0,train\nACGT,1,train\n", "the test split has no rows"),
    ("text,label,split\nACGT,0,test\nACGT,1,test\n", "the train split has no rows"),
    ("text,label,split\nACGT,0,train\nACGT,1,train\nACGT,1,test\nAC,1,test\n",
     "the test split holds a single class (label 1)"),
])
def test_malformed_files_give_one_clear_message(tmp_path, body, message):
    path = write(tmp_path, body)
    with pytest.raises(GenebError) as err:
        read_flat_csv(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_unreadable_file(tmp_path):
    with pytest.raises(GenebError, match="cannot read"):
        read_flat_csv(tmp_path / "absent.csv")
