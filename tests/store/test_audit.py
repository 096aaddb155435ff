"""Task health measures (`store.audit`) on generated tasks with planted defects."""

from __future__ import annotations

import numpy as np
import pytest

from store.audit.crosstask import shared
from store.audit.duplicates import Copies
from store.audit.near import NearDuplicates, jaccard, kmer_set, near_duplicates
from store.audit.report import TaskAudit, audit_task
from store.audit.sequences import canonical, keys, reverse_complement, standard
from store.audit.verdict import CLEAN, LEAKY, NOISY, SHORTCUT, health
from store.paths import StorePaths
from store.tables.audit import record_audits, stored_audits, stored_keys

RNG = np.random.default_rng(35)


def random_seqs(n: int, length: int = 400) -> list[str]:
    return ["".join(RNG.choice(list("ACGT"), length)) for _ in range(n)]


def substituted(seq: str, n: int) -> str:
    """`seq` with `n` substitutions spread along it (each at least K apart)."""
    out = list(seq)
    for p in np.linspace(20, len(seq) - 20, n).astype(int):
        out[p] = "A" if out[p] != "A" else "C"
    return "".join(out)


def python_jaccard(a: str, b: str, k: int = 10) -> float:
    """The k-mer Jaccard by plain Python sets (k-mers of A, C, G, T only)."""
    def kmers(s):
        return {s[i:i + k] for i in range(len(s) - k + 1) if set(s[i:i + k]) <= set("ACGT")}
    return len(kmers(a) & kmers(b)) / len(kmers(a) | kmers(b))


def labels(n: int) -> np.ndarray:
    return np.arange(n) % 2          # row i has label i % 2


def planted() -> tuple[list[str], list[str]]:
    """200 train and 100 test rows (label = row % 2) with planted copies (0-based rows)."""
    train, test = random_seqs(200), random_seqs(100)
    train[10] = train[0]                        # within train, same label
    train[11] = train[1].lower()                # within train: case is no difference
    test[50] = test[40]                         # within test
    test[0], test[1] = train[2], train[3]       # across, same labels
    test[2] = train[5]                          # across, labels 0 and 1: conflicting
    test[3] = reverse_complement(train[7])      # reverse complement across, same label
    test[4] = reverse_complement(train[9])      # reverse complement across, labels 0 and 1
    train[12] = reverse_complement(train[4])    # reverse complement within train
    test[6] = substituted(train[20], 1)         # near: Jaccard ~0.95
    test[7] = substituted(train[21], 4)         # Jaccard ~0.81: not a near duplicate
    return train, test


def test_standard_and_canonical_forms():
    assert standard("acgu") == "ACGT"
    assert reverse_complement("AACGN") == "NCGTT"
    assert reverse_complement("RYKM") == "KMRY"
    assert canonical("TTT") == canonical("AAA") == "AAA"
    assert keys(["acgt"])[0] == keys(["ACGT"])[0] != keys(["ACGA"])[0]
    assert keys(["AAAC"], reverse=True)[0] == keys(["GTTT"], reverse=True)[0]


def test_jaccard_is_the_plain_set_one():
    a = random_seqs(1)[0]
    for b in (substituted(a, 1), substituted(a, 4), a[:200] + "N" + a[201:], random_seqs(1)[0]):
        assert jaccard(kmer_set(a), kmer_set(b)) == pytest.approx(python_jaccard(a, b))
    # after the N: ACGTACGTAC and CGTACGTACG; every k-mer before it holds the N
    assert kmer_set("ACGTNACGTACGTACG").size == 2
    assert jaccard(kmer_set("ACG"), kmer_set("ACG")) == 0.0   # no k-mer: no similarity


def test_planted_copies_are_counted():
    train, test = planted()
    audit, train_keys, test_keys = audit_task("t", "h", train, labels(200), test, labels(100),
                                              {})
    assert audit.exact == Copies(within_train=2, within_test=1, across=3, conflicting=2,
                                 across_examples=[[1, 3], [2, 4], [3, 6]],
                                 conflicting_examples=["train 6", "test 3"])
    assert audit.revcomp == Copies(within_train=1, within_test=0, across=2, conflicting=2,
                                   across_examples=[[4, 8], [5, 10]],
                                   conflicting_examples=["train 10", "test 5"])
    j = python_jaccard(test[6], train[20])
    assert 0.9 <= j < 1 and python_jaccard(test[7], train[21]) < 0.9
    assert audit.near == NearDuplicates(1, [[7, 21, round(j, 4)]])
    assert audit.leaked_test_rows == 6
    assert audit.classes == {"train": {"0": 100, "1": 100}, "test": {"0": 50, "1": 50}}
    assert train_keys.size == 200 - 3 and test_keys.size == 100 - 1
    h = health(audit)
    assert (h.verdict, h.flags) == (LEAKY, (LEAKY, NOISY))
    assert h.leak_share == 0.06 and h.conflict_share == 4 / 300


def test_clean_generated_task_has_nothing():
    audit, _, _ = audit_task("t", "h", random_seqs(300), labels(300), random_seqs(100),
                             labels(100), {"length": 0.0, "gc": 0.05, "composition": 0.1})
    assert audit.exact == audit.revcomp == Copies()
    assert audit.near == NearDuplicates()
    assert health(audit).verdict == CLEAN and health(audit).flags == ()


def test_near_duplicates_at_the_threshold_are_all_found():
    """200 test rows at Jaccard ~0.903 (two substitutions) of a train row, 200 at ~0.86 (three)
    and 200 unrelated: the first all found (a false-negative rate of 1.2e-4 each), the others
    never (candidates are verified)."""
    train = random_seqs(600)
    test = ([substituted(s, 2) for s in train[:200]] + [substituted(s, 3) for s in train[200:400]]
            + random_seqs(200))
    assert all(0.9 <= python_jaccard(test[i], train[i]) < 0.91 for i in range(0, 200, 20))
    found = near_duplicates(train, test)
    assert found.test_rows == 200
    assert [e[:2] for e in found.examples] == [[1, 1], [2, 2], [3, 3]]
    skip = np.zeros(600, dtype=bool)
    skip[:100] = True
    assert near_duplicates(train, test, skip=skip).test_rows == 100


def test_short_and_masked_sequences():
    """Sequences shorter than k, or all N, take no part; lower case is the same sequence."""
    train = ["ACGT", "N" * 50, random_seqs(1)[0]]
    test = ["ACGT", "N" * 50, train[2].lower()]
    assert near_duplicates(train, test).test_rows == 1


def _audit(shortcuts: dict[str, float]) -> TaskAudit:
    return TaskAudit("t", "h", 100, 100, {}, Copies(), Copies(), NearDuplicates(), shortcuts)


@pytest.mark.parametrize(("shortcuts", "best", "verdict", "share"), [
    ({"length": 0.5, "gc": 0.1}, None, SHORTCUT, None),          # SHORTCUT_MCC by itself
    ({"length": 0.49}, None, CLEAN, None),
    ({"gc": 0.3}, 0.35, SHORTCUT, 0.3 / 0.35),                   # 86% of the best model's
    ({"gc": 0.3}, 0.5, CLEAN, 0.6),
    ({"gc": 0.15}, 0.16, CLEAN, 0.15 / 0.16),                    # below SHORTCUT_FLOOR
    ({"gc": 0.3}, -0.1, CLEAN, None),
])
def test_shortcut_rule(shortcuts, best, verdict, share):
    h = health(_audit(shortcuts), best)
    assert h.verdict == verdict
    assert h.shortcut_share == (pytest.approx(share) if share is not None else None)


def test_sequences_shared_between_tasks():
    k = np.array
    train = {"a": k([1, 2, 3], np.uint64), "b": k([3, 4], np.uint64), "c": k([9], np.uint64)}
    test = {"a": k([4, 9, 7], np.uint64), "b": k([1, 2, 3], np.uint64), "c": k([5], np.uint64)}
    assert shared(train, test) == [{"task": "a", "other": "b", "shared": 1},
                                   {"task": "a", "other": "c", "shared": 1},
                                   {"task": "b", "other": "a", "shared": 3}]


def test_audits_are_stored_per_data_hash(tmp_path):
    paths = StorePaths(tmp_path)
    train, test = planted()
    first = audit_task("t", "h1", train, labels(200), test, labels(100), {"gc": 0.2})
    second = audit_task("u", "h2", train[:50], labels(50), test[:50], labels(50), {})
    record_audits(paths, [first, second])
    assert stored_audits(paths) == {"h1": first[0], "h2": second[0]}
    got = stored_keys(paths, {"h1"})
    assert list(got) == ["h1"]
    assert (got["h1"][0] == first[1]).all() and (got["h1"][1] == first[2]).all()
    again = audit_task("t", "h1", train, labels(200), test, labels(100), {"gc": 0.4})
    record_audits(paths, [again])                       # the same data hash: replaced
    assert stored_audits(paths)["h1"].shortcuts == {"gc": 0.4}
    assert len(stored_audits(paths)) == 2
