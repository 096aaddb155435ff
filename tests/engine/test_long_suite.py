"""geneb-long (`engine.long_mini`): planted pairs at known distances, with the ground truth of a
context sweep shown by a reference encoder whose context is exactly N nucleotides (a
`crop:<side>` context policy over a purpose-built encoder): chance while its context holds at
most one element, signal once it holds both; a bag of windows narrower than the distance stays
at chance, and solves the d = 0 control."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine import long_mini
from engine.encoders.context import ContextEncoder
from engine.mini import probe_mcc
from store.vocab.context import parse_context
from tests.engine.in_process import outputs
from tests.helpers import sweep_size

SIGNAL, CHANCE = 0.9, 0.35
# the distances swept: every task under `make test-full`, all but the 100 kb one under `make test`
SWEPT = long_mini.SPECS[:sweep_size(len(long_mini.SPECS), len(long_mini.SPECS) - 1)]


class PairEncoder:
    """Sees all it is given: the sum over the vocabulary's words of their counts in the
    sequence, and of their squares (a word planted twice: 2 and 4; two different words: 2 and
    1 + 1; one element: 1 and 1), so a linear probe separates a matching pair from two
    different words exactly when both are in its context."""

    revision = None
    precision = "float32"
    settings = {"encoder": "pair-reference"}

    def __init__(self):
        self.words = [w.tobytes().decode() for w in long_mini.words()]

    def encode_into(self, sequences, writer) -> dict:
        rows = writer.pending()
        counts = np.array([[sequences[i].count(w) for w in self.words] for i in rows])
        writer.write(rows, np.stack([counts.sum(axis=1), (counts ** 2).sum(axis=1)],
                                    axis=1).astype(np.float32))
        return {"n_truncated": 0}


def at(policy: str, length: int | None = None) -> ContextEncoder:
    told = parse_context(policy, length)
    return ContextEncoder(PairEncoder(), told, told.value(), "left")


@pytest.fixture(scope="module")
def tasks():
    out = {}
    for spec in SWEPT:
        seqs, labels, splits = long_mini.generate(spec)
        train = np.array([s == "train" for s in splits])
        out[spec.task_id] = (spec, np.array(seqs, dtype=object), np.array(labels), train)
    return out


def mcc(task, encoder) -> float:
    _, seqs, labels, train = task
    x = encoder.encode(list(seqs))
    return probe_mcc(x[train], labels[train], x[~train], labels[~train])


def test_the_pair_sits_in_the_middle_and_the_label_is_whether_it_matches(tasks):
    vocab = {w.tobytes().decode() for w in long_mini.words()}
    for spec, seqs, labels, _ in tasks.values():
        assert len(seqs) == long_mini.N_TRAIN + long_mini.N_TEST and labels.mean() == 0.5
        for seq, label in zip(seqs, labels, strict=True):
            assert len(seq) == 2 * long_mini.FLANK + spec.needs
            a = seq[long_mini.FLANK:long_mini.FLANK + long_mini.WORD]
            b = seq[len(seq) - long_mini.FLANK - long_mini.WORD:len(seq) - long_mini.FLANK]
            assert {a, b} <= vocab and (a == b) == bool(label)
    assert [s.distance for s in long_mini.SPECS] == [0, 1_000, 10_000, 100_000]
    again = long_mini.generate(long_mini.SPECS[1])[0]
    assert again == list(tasks[long_mini.SPECS[1].task_id][1])            # seeded


@pytest.mark.parametrize("task_id", [s.task_id for s in SWEPT])
def test_a_context_of_n_nucleotides_is_at_chance_below_the_pair_and_solves_it_above(tasks,
                                                                                   task_id):
    spec = tasks[task_id][0]
    one = long_mini.FLANK + long_mini.WORD + spec.distance // 2    # the first element only
    both = long_mini.FLANK + spec.needs                             # both, from the left
    assert abs(mcc(tasks[task_id], at("crop:left", one))) < CHANCE
    assert abs(mcc(tasks[task_id], at("crop:centre", max(spec.distance, 16)))) < CHANCE
    assert mcc(tasks[task_id], at("crop:left", both)) > SIGNAL
    assert mcc(tasks[task_id], at("crop:centre", spec.needs)) > SIGNAL


def test_a_bag_of_windows_narrower_than_the_distance_stays_at_chance(tasks):
    """Windows of 2 kb every 1 kb, averaged: at d = 10 kb no window holds both elements, and a
    linear probe on the average cannot tell a pair from two words; at d = 0 one does."""
    assert abs(mcc(tasks["long_match_10kb"], at("windows:2000:1000"))) < CHANCE
    assert mcc(tasks["long_match_0bp"], at("windows:2000:1000")) > SIGNAL


def test_the_suite_fills_by_name(tmp_path, capsys):
    store = tmp_path / "store"
    rc, out, err = outputs(capsys, "fill", "--store", str(store), "--suite", "geneb-long",
                           "--tasks", "long_match_1kb", "--models", "kmer-3", "--regimes",
                           "full", "--json")
    assert rc == 0, err
    cells = [e for e in map(json.loads, out.splitlines()) if e["event"] == "cell"]
    assert [c["task"] for c in cells] == ["long_match_1kb"]
    suite = store / "suites" / "geneb-long"
    assert sorted(p.name for p in suite.glob("*.csv")) == sorted(
        [f"{s.task_id}.csv" for s in long_mini.SPECS] + ["manifest.csv"])
    rc, out, err = outputs(capsys, "tasks", "--store", str(store), "--suite", "geneb-long",
                           "--json")
    assert rc == 0, err
    assert "Planted pair match, d = 100 kb" in out
