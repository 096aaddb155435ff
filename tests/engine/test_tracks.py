"""The kinds with several targets a row: tracks (real values) and multilabel (0/1 labels).
ridge-tracks-v1's fit with one output per target equals scikit-learn's `Ridge` with several
outputs and its metrics are the means of the per-target ones (scipy, scikit-learn); a tracks
file's targets and every problem of one; the Long-Range Benchmark's bulk RNA expression folder
and chromatin features file, written here in its formats, through `data long-range` and `fill`
(kmer-3) into the results, the scores equal to those libraries' on the stored embeddings."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.linear_model import Ridge
from sklearn.metrics import average_precision_score, r2_score, roc_auc_score

from engine.probes.kinds import ridge_fit, ridge_predict
from engine.probes.scores import multilabel_scores, tracks_scores
from engine.suites import flat_dir_suite
from engine.task_kinds import read_kind_csv
from geneb_tui.core.kind_plots import drill_plot
from store.audit.sequences import reverse_complement
from store.db import Snapshot
from store.embeddings import EmbeddingStore
from store.paths import resolve_store
from store.tables.predictions import read_values
from store.vocab.errors import GenebError
from store.vocab.kinds import TaskKind
from store.vocab.protocol import RIDGE_MULTILABEL_V1, RIDGE_TRACKS_V1, RIDGE_V1
from tests.engine.in_process import outputs, refused
from tests.engine.test_genome_variants import write_fasta
from tests.engine.test_task_kinds import write

TISSUES = ("Adipose - Subcutaneous", "Liver", "Lung")


def test_a_hand_computed_fit_with_two_outputs():
    # x centred [-1, 0, 1], Sxx = 2; coef = Sxy / (Sxx + alpha), alpha = 1
    # y1 = 1, 2, 3: Sxy 2, coef 2/3, intercept 2 - 2/3; y2 = 2, 2, 5: Sxy 3, coef 1, intercept 2
    coef, intercept = ridge_fit(np.array([[0.0], [1.0], [2.0]]),
                                np.array([[1.0, 2.0], [2.0, 2.0], [3.0, 5.0]]), 1.0)
    assert coef == pytest.approx(np.array([[2 / 3, 1.0]]), abs=1e-12)
    assert intercept == pytest.approx(np.array([4 / 3, 2.0]), abs=1e-12)


@pytest.mark.parametrize("n, d", [(40, 6), (12, 30)])    # primal and dual forms
def test_the_fit_equals_scikit_learns_ridge_with_several_outputs(n, d):
    rng = np.random.RandomState(n)
    X = rng.randn(n, d).astype(np.float32)
    Y = X[:, :3] @ rng.randn(3, 4) + rng.randn(n, 4)
    coef, intercept = ridge_fit(X, Y, RIDGE_TRACKS_V1.alpha)
    sk = Ridge(alpha=1.0).fit(X.astype(np.float64), Y)
    assert coef.T == pytest.approx(sk.coef_, abs=1e-9)
    assert intercept == pytest.approx(sk.intercept_, abs=1e-9)
    # each column as ridge-v1 fits it alone
    for j in range(4):
        assert ridge_predict(X, Y[:, j], X, 1.0) == pytest.approx(
            ridge_predict(X, Y, X, 1.0)[:, j], abs=1e-9)


def test_the_scores_are_the_means_of_the_per_target_ones():
    rng = np.random.RandomState(3)
    Y, P = rng.randn(25, 4), rng.randn(25, 4)
    P[:, 1] = Y[:, 1] + 0.1 * P[:, 1]
    got = tracks_scores(Y, P)
    assert got["pearson"] == pytest.approx(
        np.mean([pearsonr(Y[:, j], P[:, j]).statistic for j in range(4)]), abs=1e-12)
    assert got["spearman"] == pytest.approx(
        np.mean([spearmanr(Y[:, j], P[:, j]).statistic for j in range(4)]), abs=1e-12)
    assert got["r2"] == pytest.approx(r2_score(Y, P, multioutput="uniform_average"), abs=1e-12)
    # a target constant in the test split has no Pearson r: the mean is over the others
    Y[:, 2] = 1.5
    assert tracks_scores(Y, P)["pearson"] == pytest.approx(
        np.mean([pearsonr(Y[:, j], P[:, j]).statistic for j in (0, 1, 3)]), abs=1e-12)


def test_the_multilabel_scores_are_the_means_of_the_per_label_ones():
    rng = np.random.RandomState(4)
    Y = (rng.rand(30, 5) < 0.4).astype(np.int64)
    S = rng.randn(30, 5) + Y * np.arange(5)
    got = multilabel_scores(Y, S)
    assert got["auroc"] == pytest.approx(roc_auc_score(Y, S, average="macro"), abs=1e-12)
    assert got["auprc"] == pytest.approx(average_precision_score(Y, S, average="macro"),
                                         abs=1e-12)
    Y[:, 0] = 0                                        # one class in the test split: left out
    assert multilabel_scores(Y, S)["auroc"] == pytest.approx(
        roc_auc_score(Y[:, 1:], S[:, 1:], average="macro"), abs=1e-12)


def test_a_tracks_file_gives_a_matrix_of_targets_and_every_problem_in_one_message(tmp_path):
    good = write(tmp_path / "t.csv", ("text", "label", "split"),
                 [("ACGT", "1;2.5;-3", "train"), ("ACGA", "0;1;1e-3", "train"),
                  ("ACGT", "2;2;2", "test"), ("TTGA", "1;0;4", "test")])
    data = read_kind_csv(good, "t", TaskKind.TRACKS)
    assert data.targets.y_train.tolist() == [[1.0, 2.5, -3.0], [0.0, 1.0, 1e-3]]
    assert data.targets.rows_test.tolist() == [0, 1] and data.n_classes == 0
    bad = write(tmp_path / "b.csv", ("text", "label", "split"),
                [("ACGT", "1;2;3", "train"), ("ACGA", "1;2", "train"),
                 ("ACGT", "1;x;3", "test"), ("TTGA", "1;2;inf", "test")])
    with pytest.raises(GenebError) as err:
        read_kind_csv(bad, "b", TaskKind.TRACKS)
    lines = str(err.value).splitlines()
    assert len(lines) == 4 and all(str(bad) in line for line in lines[1:]), lines
    assert "line 3: column label holds 2 values, the file's first row 3" in lines[1]
    assert "line 4: column label, target 2 of 3: 'x' is not a finite number" in lines[2]
    assert "line 5: column label, target 3 of 3: 'inf'" in lines[3]
    same = write(tmp_path / "s.csv", ("text", "label", "split"),
                 [("ACGT", "1;2", "train"), ("ACGA", "1;2", "train"),
                  ("ACGT", "1;2", "test"), ("TTGA", "0;2", "test")])
    with pytest.raises(GenebError, match="every train row has the same targets"):
        read_kind_csv(same, "s", TaskKind.TRACKS)


def test_a_multilabel_file_gives_a_matrix_of_0_1_labels_and_its_problems(tmp_path):
    good = write(tmp_path / "m.csv", ("text", "label", "split"),
                 [("ACGT", "0;1", "train"), ("ACGA", "1;1", "train"),
                  ("ACGT", "0;0", "test"), ("TTGA", "1;0", "test")])
    data = read_kind_csv(good, "m", TaskKind.MULTILABEL)
    assert data.targets.y_test.tolist() == [[0, 0], [1, 0]]
    assert data.targets.y_test.dtype == np.int64
    bad = write(tmp_path / "b.csv", ("text", "label", "split"),
                [("ACGT", "0;1", "train"), ("ACGA", "1;0.5", "train")])
    with pytest.raises(GenebError, match=r"line 3: column label, label 2 of 2: '0.5' is not 0 "
                                         "or 1"):
        read_kind_csv(bad, "b", TaskKind.MULTILABEL)
    flat = write(tmp_path / "f.csv", ("text", "label", "split"),
                 [("ACGT", "0;1", "train"), ("ACGA", "1;0", "train"),
                  ("ACGT", "1;1", "test"), ("TTGA", "1;1", "test")])
    with pytest.raises(GenebError, match="no label of the test split takes both values"):
        read_kind_csv(flat, "f", TaskKind.MULTILABEL)


def expression_folder(folder: Path, chroms: dict[str, str], n: int = 48,
                      seed: int = 5) -> Path:
    """A bulk RNA expression folder in the Long-Range Benchmark's format: gene_coordinates.csv
    (1-based CAGE TSS, strand, split) and rna_expression_values.csv (tissues, a row a gene);
    the values follow the GC content around the TSS (so a k-mer model has signal)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    genes, values = [], []
    for i in range(n):
        chrom = rng.choice(sorted(chroms))
        tss = rng.randint(40, len(chroms[chrom]) - 40)
        around = chroms[chrom][tss - 33:tss + 31]
        gc = sum(b in "GC" for b in around) / len(around)
        genes.append((f"ENSG{i:05d}", chrom, tss, "-" if i % 3 == 0 else "+",
                      "test" if i % 4 == 0 else "train"))
        values.append([f"{gc * 10 * (j + 1) + rng.random():.4f}" for j in range(len(TISSUES))])
    write(folder / "gene_coordinates.csv",
          ("id", "chrom", "CAGE_representative_TSS", "strand", "split"), genes)
    write(folder / "rna_expression_values.csv", TISSUES, values)
    return folder


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> dict:
    """The folder written as a suite (`data long-range --kind tracks`, window 64) and filled
    with kmer-3."""
    from engine.cli import main

    root = tmp_path_factory.mktemp("tracks")
    rng = random.Random(11)
    chroms = {f"chr{i}": "".join(rng.choice("ACGT") for _ in range(3000)) for i in (1, 2)}
    genome = write_fasta(root / "genome.fa", chroms)
    folder = expression_folder(root / "bulk_rna_expression", chroms)
    suite, store = root / "suite", root / "store"
    assert main(["data", "long-range", "--format", "lrb", "--kind", "tracks",
                 f"expr={folder}", "--window", "64", "-o", str(suite)]) == 0
    assert main(["fill", "--suite", str(suite), "--reference", str(genome), "--models",
                 "kmer-3", "--store", str(store)]) == 0
    marks = chromatin_file(root / "histones_and_dnase.csv", chroms)
    assert main(["data", "long-range", "--format", "lrb", "--kind", "multilabel", "--labels",
                 "histones", f"marks={marks}", "--window", "200", "-o", str(root / "ml")]) == 0
    assert main(["fill", "--suite", str(root / "ml"), "--reference", str(genome), "--models",
                 "kmer-3", "--store", str(store)]) == 0
    return {"root": root, "chroms": chroms, "genome": genome, "folder": folder,
            "suite": suite, "store": store, "marks": marks}


def chromatin_file(path: Path, chroms: dict[str, str], n: int = 60, seed: int = 9) -> Path:
    """The Long-Range Benchmark's chromatin features file: CHROM, POS (1-based), split, and
    HISTONES / DNASE as Python-list strings; a mark is 1 where the bin around POS is GC-rich
    (each mark its own threshold), so a k-mer model has signal."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        chrom = rng.choice(sorted(chroms))
        pos = rng.randint(110, len(chroms[chrom]) - 110)
        around = chroms[chrom][pos - 101:pos + 99]         # the 200-base window
        gc = sum(b in "GC" for b in around) / len(around)
        marks = [int(gc > t) for t in (0.45, 0.5, 0.55)]
        rows.append((chrom, pos, "test" if i % 3 == 0 else "train", str(marks),
                     str([1 - m for m in marks])))
    return write(path, ("CHROM", "POS", "split", "HISTONES", "DNASE"), rows)


def test_the_folder_becomes_tss_windows_with_the_minus_strand_reverse_complemented(filled):
    data = flat_dir_suite(filled["suite"], reference=filled["genome"]).load("expr")
    assert data.kind is TaskKind.TRACKS and data.targets.y_train.shape[1] == len(TISSUES)
    with open(filled["folder"] / "gene_coordinates.csv") as f:
        genes = list(csv.DictReader(f))
    with open(filled["folder"] / "rna_expression_values.csv") as f:
        values = list(csv.reader(f))[1:]
    first = next(i for i, g in enumerate(genes) if g["split"] == "train" and g["strand"] == "-")
    g = genes[first]
    tss0 = int(g["CAGE_representative_TSS"]) - 1        # the loader's 0-based start
    window = filled["chroms"][g["chrom"]][tss0 - 32:tss0 + 32]
    train = [i for i, g in enumerate(genes) if g["split"] == "train"]
    row = train.index(first)
    assert data.train.sequences[data.targets.rows_train[row]] == reverse_complement(window)
    assert data.targets.y_train[row].tolist() == [float(v) for v in values[first]]
    plus = next(i for i in train if genes[i]["strand"] == "+")
    tss0 = int(genes[plus]["CAGE_representative_TSS"]) - 1
    assert data.train.sequences[data.targets.rows_train[train.index(plus)]] == \
        filled["chroms"][genes[plus]["chrom"]][tss0 - 32:tss0 + 32]


def test_the_stored_scores_are_scikit_learns_and_scipys_on_the_stored_embeddings(filled):
    paths = resolve_store(filled["store"])
    data = flat_dir_suite(filled["suite"], reference=filled["genome"]).load("expr")
    emb = EmbeddingStore(paths)

    def stored(split: str) -> np.ndarray:
        attrs = json.loads((emb.split_path("kmer-3", "expr", split) / "zarr.json").read_text())
        return emb.load("kmer-3", "expr", split, attrs["attributes"])[0]

    t = data.targets
    X_train, X_test = stored("train")[t.rows_train], stored("test")[t.rows_test]
    pred = Ridge(alpha=1.0).fit(X_train.astype(np.float64), t.y_train).predict(
        X_test.astype(np.float64))
    rows = Snapshot(paths, TaskKind.TRACKS).query(
        "SELECT * FROM results WHERE regime = 'full'").to_dicts()
    assert {(r["kind"], r["protocol"], r["protocol_hash"]) for r in rows} == {
        ("tracks", "ridge-tracks-v1", RIDGE_TRACKS_V1.hash)}
    assert len(rows) == len(RIDGE_TRACKS_V1.seeds) and rows[0]["mcc"] is None
    pearson = np.mean([pearsonr(t.y_test[:, j], pred[:, j]).statistic
                       for j in range(len(TISSUES))])
    assert rows[0]["pearson"] == pytest.approx(pearson, abs=1e-8)
    assert rows[0]["pearson"] > 0.5                      # the GC signal is found
    assert rows[0]["r2"] == pytest.approx(r2_score(t.y_test, pred), abs=1e-8)
    assert RIDGE_TRACKS_V1.hash != RIDGE_V1.hash
    # no per-row predictions: the predictions table holds one value a row; the dashboard's
    # drill-down says so
    assert read_values(paths, model="kmer-3", task="expr").is_empty()
    plot = drill_plot(paths, "tracks", RIDGE_TRACKS_V1.hash, "kmer-3", "expr", "full")
    assert "a tracks task's test values (one per target) are not stored" in plot.note


def test_report_reads_the_tracks_kind_under_its_protocol(filled, capsys):
    rc, out, err = outputs(capsys, "report", "--store", str(filled["store"]), "--suite",
                           str(filled["suite"]), "--kind", "tracks", "--json",
                           "--resamples", "0")
    assert rc == 0, err
    doc = json.loads(out)
    assert (doc["protocol"], doc["kind"], doc["metric"]) == (
        "ridge-tracks-v1", "tracks", "pearson")
    rc, _, err = outputs(capsys, "report", "--store", str(filled["store"]), "--suite",
                         str(filled["suite"]), "--kind", "classification", "--metric",
                         "pearson")
    assert rc == 2 and "is a metric of regression or tracks tasks" in err


def test_a_malformed_expression_folder_is_one_message_naming_file_line_and_column(
        tmp_path, capsys):
    chroms = {"chr1": "ACGT" * 100}
    folder = expression_folder(tmp_path / "bulk_rna_expression", chroms, n=6)
    values = folder / "rna_expression_values.csv"
    rows = list(csv.reader(values.open()))
    rows[2][1] = "n/a"                                  # line 3, column Liver
    write(values, rows[0], rows[1:])
    genes = folder / "gene_coordinates.csv"
    rows = list(csv.reader(genes.open()))
    rows[4][3] = "."                                    # line 5: strand
    write(genes, rows[0], rows[1:])
    out = tmp_path / "out"
    err = refused(capsys, tmp_path / "nothing", "data", "long-range", "--format", "lrb",
                  "--kind", "tracks", f"expr={folder}", "--window", "64", "-o", str(out),
                  names=(f"{values}, line 3: column 'Liver': 'n/a' not a finite number",
                         f"{genes}, line 5: column strand: '.' is not + or -"), lines=3)
    assert "2 problems" in err and not out.exists()
    write(values, TISSUES, [["1", "2", "3"]])           # one row for six genes
    refused(capsys, tmp_path / "nothing", "data", "long-range", "--format", "lrb", "--kind",
            "tracks", f"expr={folder}", "--window", "64", "-o", str(out),
            names=(f"{values}: 1 rows of values for the 6 genes",))
    refused(capsys, tmp_path / "nothing", "data", "long-range", "--format", "lrb", "--kind",
            "tracks", f"expr={folder}", "-o", str(out), names=("give its width with --window",))
    refused(capsys, tmp_path / "nothing", "data", "long-range", "--format", "lrb", "--kind",
            "tracks", f"expr={genes}", "--window", "64", "-o", str(out),
            names=(f"{genes}: not a folder",))
    assert not out.exists()


def test_offline_the_hub_folder_is_one_line_giving_the_folders_download(tmp_path, capsys,
                                                                         monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "out"
    refused(capsys, tmp_path / "nothing", "data", "long-range", "--format", "lrb", "--kind",
            "tracks", "expr=hub:bulk_rna_expression", "--window", "64", "-o", str(out),
            names=("--include 'bulk_rna_expression/*'", "TASK=<folder>/bulk_rna_expression"))
    assert not out.exists()


def test_the_chromatin_features_are_scored_by_the_mean_auroc_over_marks(filled):
    paths = resolve_store(filled["store"])
    data = flat_dir_suite(filled["root"] / "ml", reference=filled["genome"]).load("marks")
    assert data.kind is TaskKind.MULTILABEL and data.targets.y_train.shape[1] == 3
    with open(filled["marks"]) as f:
        first = next(csv.DictReader(f))
    pos0 = int(first["POS"]) - 1                       # centred as the loader centres it
    assert data.test.sequences[data.targets.rows_test[0]] == \
        filled["chroms"][first["CHROM"]][pos0 - 100:pos0 + 100]
    assert data.targets.y_test[0].tolist() == json.loads(first["HISTONES"])
    emb = EmbeddingStore(paths)

    def stored(split: str) -> np.ndarray:
        attrs = json.loads((emb.split_path("kmer-3", "marks", split) / "zarr.json").read_text())
        return emb.load("kmer-3", "marks", split, attrs["attributes"])[0]

    t = data.targets
    score = Ridge(alpha=1.0).fit(stored("train")[t.rows_train].astype(np.float64),
                                 t.y_train).predict(stored("test")[t.rows_test].astype(np.float64))
    row = Snapshot(paths, TaskKind.MULTILABEL).query(
        "SELECT * FROM results WHERE regime = 'full' AND seed = 13").to_dicts()[0]
    assert (row["kind"], row["protocol_hash"]) == ("multilabel", RIDGE_MULTILABEL_V1.hash)
    defined = [j for j in range(3) if len(set(t.y_test[:, j])) == 2]
    assert row["auroc"] == pytest.approx(
        np.mean([roc_auc_score(t.y_test[:, j], score[:, j]) for j in defined]), abs=1e-8)
    assert row["auroc"] > 0.7 and row["pearson"] is None
    assert read_values(paths, model="kmer-3", task="marks").is_empty()


def test_a_malformed_chromatin_file_is_one_message_naming_file_line_and_column(tmp_path,
                                                                               capsys):
    path = write(tmp_path / "c.csv", ("CHROM", "POS", "split", "HISTONES", "DNASE"),
                 [("chr1", "50", "train", "[0, 1]", "[1, 0]"),
                  ("chr1", "x", "train", "[0, 1]", "[1, 0]"),
                  ("chr1", "70", "test", "[0, 2]", "[1, 0]")])
    out = tmp_path / "out"
    argv = ("data", "long-range", "--format", "lrb", "--kind", "multilabel", f"m={path}",
            "--window", "64", "-o", str(out))
    refused(capsys, tmp_path / "nothing", *argv[:-3], "200", "-o", str(out), "--labels",
            "HISTONES",
            names=(f"{path}, line 3: column POS: 'x' is not a 1-based position",
                   f"{path}, line 4: column HISTONES: '[0, 2]' is not a list of 0s and 1s"),
            lines=3)
    refused(capsys, tmp_path / "nothing", *argv[:-3], "200", "-o", str(out),
            names=("--labels histones or --labels dnase",))
    refused(capsys, tmp_path / "nothing", *argv, "--labels", "dnase",
            names=("--window 64: the chromatin features' labels describe the 200 bases",))
    assert not out.exists()


def test_held_out_chromosomes_leave_the_split_column_out_of_every_format(tmp_path, capsys):
    chroms = {"chr1": "ACGT" * 100, "chr2": "GGCA" * 100}
    folder = expression_folder(tmp_path / "bulk_rna_expression", chroms, n=8)
    promoter = write(tmp_path / "promoter.csv", ("chromosome", "start", "end", "label"),
                     [("chr1", 10, 50, 1), ("chr2", 10, 50, 0)])
    for kind, given, header in (
            ("tracks", folder, "chrom,start,end,strand,label"),
            ("classification", promoter, "chrom,start,end,label")):
        out = tmp_path / kind
        rc, _, err = outputs(capsys, "data", "long-range", "--format", "lrb", "--kind", kind,
                             f"t={given}", "--window", "64", "--test-chroms", "chr2", "-o",
                             str(out))
        assert rc == 0, err
        lines = (out / "t.csv").read_text().splitlines()
        assert lines[0] == header
        assert all(len(line.split(",")) == len(header.split(",")) for line in lines)
    refused(capsys, tmp_path / "nothing", "data", "long-range", "--format", "lrb", "--labels",
            "dnase", f"t={promoter}", "-o", str(tmp_path / "x"),
            names=("--labels dnase names the chromatin features' label column",))
