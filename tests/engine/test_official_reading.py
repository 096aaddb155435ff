"""Task data read as the official harness reads it, and each encoder fed as its official
extractor was: a task holding IUPAC codes, U, lower case and other letters gives, through
`fill` with `kmer-4`, the per-seed metrics of the official loop run straight (re-written here:
`harness/run_GENEB.py` and `harness/extractors/example_kmer.py` of chenkenbio/GENEB)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from engine.cli import main
from engine.data import as_read_by, read_flat_csv
from engine.encoders.kmer import KmerEncoder
from engine.hub_data import write_data_manifest
from engine.suites import resolve_suite
from store.catalog import LetterCounts
from store.db import query
from store.paths import resolve_store
from store.tables.catalogs import register_tasks
from store.vocab.encoder_kinds import KINDS, SEQUENCE_RULES

SEEDS = (13, 17, 42, 123, 997)


# ---- the official recipe and loop, written out -------------------------------------------------

def official_kmer(sequences: list[str], k: int = 4) -> np.ndarray:
    """The official example extractor: upper case, windows with a letter outside ACGT skipped,
    float32 counts normalised to sum 1."""
    out = np.zeros((len(sequences), 4 ** k), dtype=np.float32)
    for i, seq in enumerate(sequences):
        s = seq.upper()
        for j in range(len(s) - k + 1):
            window = s[j:j + k]
            if all(c in "ACGT" for c in window):
                index = 0
                for c in window:
                    index = index * 4 + "ACGT".index(c)
                out[i, index] += 1.0
        n = out[i].sum()
        if n > 0:
            out[i] /= n
    return out


def official_read(path: Path):
    rows = list(csv.DictReader(open(path)))
    train = [r for r in rows if r["split"] == "train"]
    test = [r for r in rows if r["split"] == "test"]
    return ([r["text"] for r in train], np.array([int(r["label"]) for r in train]),
            [r["text"] for r in test], np.array([int(r["label"]) for r in test]))


def official_loop(path: Path) -> dict[tuple[str, int], tuple[float, float, float]]:
    """(regime, seed) -> (MCC, accuracy, macro-F1), each seed's fit as the harness makes it."""
    tr_seq, y_tr, te_seq, y_te = official_read(path)
    X_tr, X_te = official_kmer(tr_seq), official_kmer(te_seq)
    out = {}
    for regime, k in (("full", None), ("10shot", 10), ("1shot", 1)):
        for seed in SEEDS:
            if k is None:
                xs, ys = X_tr, y_tr
            else:
                rng = np.random.RandomState(seed)
                pick = np.concatenate([rng.choice(np.where(y_tr == c)[0],
                                                  size=min(k, int((y_tr == c).sum())),
                                                  replace=False) for c in np.unique(y_tr)])
                xs, ys = X_tr[pick], y_tr[pick]
            pred = LogisticRegression(max_iter=1000, random_state=seed).fit(xs, ys).predict(X_te)
            out[regime, seed] = (matthews_corrcoef(y_te, pred), accuracy_score(y_te, pred),
                                 f1_score(y_te, pred, average="macro"))
    return out


# ---- a task with every kind of letter --------------------------------------------------------

def letters_task(path: Path, seed: int = 5) -> Path:
    """Two classes that differ in composition; some sequences carry IUPAC codes, U, N, lower
    case or other letters; rows with near-miss splits (skipped by the harness as by us)."""
    rng = np.random.default_rng(seed)
    marks = ["", "", "", "R", "y", "U", "u", "N", "X", "kM", "acgt"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label", "split"])
        for split, n in (("train", 120), ("test", 60), (" train", 3), ("Train", 2)):
            for i in range(n):
                p = np.full(4, 0.25)
                p[i % 2] += 0.08
                seq = list(rng.choice(list("ACGT"), size=90, p=p / p.sum()))
                mark = marks[int(rng.integers(len(marks)))]
                if mark == "acgt":
                    seq[10:40] = [c.lower() for c in seq[10:40]]
                else:
                    for c in mark:
                        seq[int(rng.integers(90))] = c
                w.writerow(["".join(seq), i % 2, split])
    return path


@pytest.fixture
def suite(tmp_path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    letters_task(folder / "letters.csv")
    return folder


def test_the_kmer_baseline_is_the_official_recipe_on_every_letter(suite):
    task = read_flat_csv(suite / "letters.csv")
    tr_seq, _, te_seq, _ = official_read(suite / "letters.csv")
    assert task.train.sequences == tuple(tr_seq) and task.test.sequences == tuple(te_seq)
    for k in (3, 4, 6):
        ours = KmerEncoder(k).encode(list(tr_seq + te_seq))
        assert np.array_equal(ours, official_kmer(tr_seq + te_seq, k))
    # N, IUPAC codes, U and other letters: every window holding one is skipped, in any case
    seqs = ["ACGTNACGTA", "acgtnacgta", "ACGUACGT", "ACRTACGT", "ACXTACGT", "NNNN", "AC"]
    assert np.array_equal(KmerEncoder(4).encode(seqs), official_kmer(seqs))
    assert KmerEncoder(4).encode(["ACGTNACGTA"]).sum() == pytest.approx(1.0)


def test_fill_with_kmer_4_gives_the_official_loops_per_seed_metrics(suite, tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-4"]) == 0
    assert "skipped 5 row(s)" in capsys.readouterr().err
    rows = query(resolve_store(store), "SELECT regime, seed, mcc, acc, f1_macro FROM results")
    ours = {(r["regime"], r["seed"]): (r["mcc"], r["acc"], r["f1_macro"])
            for r in rows.iter_rows(named=True)}
    reference = official_loop(suite / "letters.csv")
    assert ours.keys() == reference.keys() and len(ours) == 15
    assert ours == reference
    assert len({v[0] for v in ours.values()}) > 2          # the regimes and seeds differ


def test_tasks_shows_the_letter_counts_the_catalog_records(suite, tmp_path, capsys, monkeypatch):
    store = tmp_path / "store"
    paths = resolve_store(store)
    task = read_flat_csv(suite / "letters.csv")
    assert task.letters.iupac and task.letters.u and task.letters.lower and task.letters.other
    argv = ["tasks", "--store", str(store), "--suite", str(suite)]
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["letters"] is None      # not recorded yet
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
                 "--regimes", "full"]) == 0                      # fill records them
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)[0]
    assert shown["task_id"] == "letters" and LetterCounts(**shown["letters"]) == task.letters
    monkeypatch.setenv("COLUMNS", "120")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "sequences with" in out and f"{task.letters.iupac} with IUPAC" in out
    # registered again without counts (a subsampled run): the recorded ones are kept
    register_tasks(paths, resolve_suite(str(suite), paths).tasks)
    assert main([*argv, "--json"]) == 0
    assert LetterCounts(**json.loads(capsys.readouterr().out)[0]["letters"]) == task.letters


def test_data_verify_reads_every_task_and_shows_its_letters(suite, tmp_path, capsys):
    root = tmp_path / "snapshot"
    (root / "tasks" / "letters").mkdir(parents=True)
    (root / "tasks" / "plain").mkdir(parents=True)
    for name, rows in (("letters", list(csv.reader(open(suite / "letters.csv")))),
                       ("plain", [["text", "label", "split"], ["ACGT", "0", "train"],
                                  ["CCGG", "1", "train"], ["ACGA", "0", "test"],
                                  ["CCGA", "1", "test"]])):
        for split in ("train", "test"):
            with open(root / "tasks" / name / f"{split}.csv", "w", newline="") as f:
                csv.writer(f).writerows([["text", "label"]]
                                        + [r[:2] for r in rows[1:] if r[2] == split])
    write_data_manifest(root, "local/test", "r1")
    argv = ["data", "verify", "--store", str(tmp_path / "store"), "--data-dir", str(root)]
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    expected = read_flat_csv(suite / "letters.csv").letters
    assert report["problems"] == []
    assert report["letters"] == {"letters": vars(expected), "plain": vars(LetterCounts())}
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "1 of 2 task(s) hold sequences with letters other than upper-case ACGTN" in out
    assert f"letters: {expected.summary()}" in out
    # a task that cannot be read is a problem, named with its file and line
    bad = root / "tasks" / "plain" / "test.csv"
    bad.write_text("text,label\nACGA,0\nCC-A,1\n")
    write_data_manifest(root, "local/test", "r1")
    assert main([*argv, "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert problems == [f"task plain: {bad}, line 3: character(s) '-' in column 'text' cannot be "
                        "part of a sequence; a sequence is letters only (A-Z in either case: "
                        "nucleotides, IUPAC codes, U)"]


def test_each_encoder_kind_gets_the_sequences_as_its_official_extractor_did():
    assert {k.sequences for k in KINDS.values()} <= set(SEQUENCE_RULES)
    seqs = ["acgU", "ACRYN", "ACGT"]
    assert as_read_by("hf", seqs) is seqs                  # the tokenizer gets the file's text
    assert as_read_by("kmer", seqs) == ["ACGU", "ACRYN", "ACGT"]
    assert as_read_by("enformer", seqs) == ["ACGT", "ACRYN", "ACGT"]


def test_a_streaming_encoder_tokenizes_what_its_kind_reads():
    torch = pytest.importorskip("torch")
    from engine.encoders.streaming import StreamingEncoder

    class Recording(StreamingEncoder):
        default_batch_size = 4

        def recipe(self) -> dict:
            return {}

        def tokenize(self, sequences):
            self.seen = list(sequences)
            return self.seen, np.zeros(len(sequences), dtype=bool)

        def collate(self, items):
            return items

        def forward(self, batch):
            return torch.zeros((len(batch), 2))

    for kind, seen in (("hf", ["acgU", "ACRYN"]), ("enformer", ["ACGT", "ACRYN"])):
        encoder = type("E", (Recording,), {"kind": kind})("x", device="cpu")
        encoder.encode(["acgU", "ACRYN"])
        assert encoder.seen == seen, kind
