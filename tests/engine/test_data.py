"""Task loading from the official flat CSV layout, read as the official harness reads it, with
one clear message per problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.data import read_flat_csv
from store.catalog import LetterCounts
from store.vocab.errors import GenebError

GOOD = "text,label,split\nACGT,0,train\nacgn,1,train\nGGCC,0,test\nTTAA,1,test\n"


def write(tmp_path: Path, body: str, name: str = "task.csv") -> Path:
    p = tmp_path / name
    p.write_text(body)
    return p


def test_reads_sequences_as_given_and_hashes(tmp_path):
    t = read_flat_csv(write(tmp_path, GOOD))
    assert t.task_id == "task"
    assert t.train.sequences == ("ACGT", "acgn")            # case kept, as the harness keeps it
    assert t.train.labels.tolist() == [0, 1] and t.test.labels.tolist() == [0, 1]
    assert len(t.data_hash) == 16
    # the hash is of the content as given: same file, same hash; a case or a base changed,
    # another hash
    assert read_flat_csv(write(tmp_path, GOOD, "a.csv")).data_hash == t.data_hash
    assert read_flat_csv(write(tmp_path, GOOD.replace("acgn", "ACGN"), "b.csv")).data_hash \
        != t.data_hash
    assert read_flat_csv(write(tmp_path, GOOD.replace("GGCC", "GGCA"), "c.csv")).data_hash \
        != t.data_hash


def test_other_splits_are_skipped_with_a_warning(tmp_path):
    t = read_flat_csv(write(tmp_path, GOOD + "AAAA,0,validation\nCCCC,1,dev\nGGGG,0,dev\n"))
    assert len(t.train) == 2 and len(t.test) == 2
    assert any("2 with split 'dev'" in w for w in t.warnings)
    assert any("'validation'" in w for w in t.warnings)
    assert "correct" not in t.warnings[0]                   # no near miss among them


def test_a_split_counts_only_when_exactly_train_or_test(tmp_path):
    """The harness compares `== "train"`: `" train"` and `Train` are skipped, and named."""
    path = write(tmp_path, GOOD + "AAAA,0, train\nCCCC,1,Train\nGGGG,0,TEST\nTTTT,1,dev\n"
                                  "ACGT,0, train\n")
    t = read_flat_csv(path)
    assert len(t.train) == 2 and len(t.test) == 2
    assert t.warnings == (
        f"{path}: skipped 5 row(s): 2 with split ' train', 1 with split 'TEST', 1 with split "
        "'Train', 1 with split 'dev' (only rows with every field and split 'train' or 'test' "
        "are used; the official harness compares the split exactly: correct ' train', 'TEST', "
        "'Train' to use those rows)",)


def test_any_letters_are_a_sequence_and_counted(tmp_path):
    body = ("text,label,split\nACGTN,0,train\nACRYT,1,train\nACGU,0,train\nacgt,1,train\n"
            "ACXT,0,test\nuRyX,1,test\nGGCC,0,test\n")
    t = read_flat_csv(write(tmp_path, body))
    assert t.train.sequences == ("ACGTN", "ACRYT", "ACGU", "acgt")
    assert t.test.sequences == ("ACXT", "uRyX", "GGCC")
    assert t.letters == LetterCounts(iupac=2, u=2, lower=2, other=2)
    assert read_flat_csv(write(tmp_path, GOOD.replace("acgn", "ACGN"), "b.csv")).letters \
        == LetterCounts()


@pytest.mark.parametrize("text, shown", [
    ("AC1T", "'1'"), ("AC-T", "'-'"), ("AC GT", "' '"), ("ACG*", "'*'"), ("AC\u00e9T", "'\u00e9'"),
    ("12", "'1', '2'"),
])
def test_what_cannot_be_a_sequence_is_refused_with_file_and_line(tmp_path, text, shown):
    path = write(tmp_path, GOOD + f"{text},1,train\n")
    with pytest.raises(GenebError) as err:
        read_flat_csv(path)
    assert str(err.value) == (
        f"{path}, line 6: character(s) {shown} in column 'text' cannot be part of a sequence; "
        "a sequence is letters only (A-Z in either case: nucleotides, IUPAC codes, U)")


@pytest.mark.parametrize("body, message", [
    ("text,label\nACGT,0\n", "missing column(s) split"),
    ("sequence,label,split\nACGT,0,train\n", "missing column(s) text"),
    (GOOD + ",1,train\n", "line 6: empty sequence in column 'text'"),
    (GOOD + "AC.T,1,train\n", "line 6: character(s) '.' in column 'text' cannot be part"),
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


def test_data_hashes_of_upper_case_acgtn_data_never_change(tmp_path):
    """Official data is upper-case ACGTN: its data hashes are pinned, so every stored result of
    it stays current whatever the loader learns to accept."""
    from engine import mini

    assert read_flat_csv(write(tmp_path, GOOD.replace("acgn", "ACGN"))).data_hash \
        == "d530564d13ada199"
    suite = mini.materialize(tmp_path / "mini")
    assert read_flat_csv(suite / "mini_chromatin_open.csv").data_hash == "5b56b7cd1eb4757b"
