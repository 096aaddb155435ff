"""Classification and regression tasks given by genome intervals (`chrom,start,end,label,split`,
0-based, end exclusive) over `--reference`, and `geneb-engine data long-range`: the Long-Range
Benchmark's and DNALongBench's files, written by the tests in those formats, become a folder
suite of such tasks (`engine.interval_sets`)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from engine.suites import flat_dir_suite
from store.vocab.errors import GenebError
from store.vocab.kinds import TaskKind
from tests.engine.in_process import outputs, refused
from tests.engine.test_genome_variants import chromosomes, write_fasta
from tests.engine.test_task_kinds import write

HEADER = ("chrom", "start", "end", "label", "split")
ROWS = [("chr1", 0, 40, 1, "train"), ("chr1", 100, 130, 0, "train"),
        ("2", 10, 60, 1, "train"), ("chr3", 200, 250, 0, "train"),    # 2: no chr prefix
        ("chr2", 150, 200, 1, "test"), ("chr3", 5, 25, 0, "test")]


def interval_suite(folder: Path, rows, kind: str = "classification", window="",
                   test_chroms: str = "", header=HEADER) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write(folder / "manifest.csv", ("task_id", "category", "kind", "window", "test_chroms"),
          [("lr", "Long range", kind, window, test_chroms)])
    write(folder / "lr.csv", header, rows)
    return folder


@pytest.fixture
def chroms():
    return chromosomes()


@pytest.fixture
def genome(tmp_path, chroms):
    return write_fasta(tmp_path / "g.fa", chroms, lower="chr3")


def test_an_interval_is_the_genomes_bases_start_to_end_0_based(tmp_path, chroms, genome):
    data = flat_dir_suite(interval_suite(tmp_path / "s", ROWS), reference=genome).load("lr")
    c1, c2, c3 = chroms["chr1"], chroms["chr2"], chroms["chr3"]
    assert data.kind is TaskKind.CLASSIFICATION and data.targets is None
    assert data.train.sequences == (c1[0:40], c1[100:130], c2[10:60], c3[200:250].upper())
    assert data.test.sequences == (c2[150:200], c3[5:25].upper())
    assert data.train.labels.tolist() == [1, 0, 1, 0] and data.test.labels.tolist() == [1, 0]


def test_a_window_is_centred_on_the_interval_and_padded_off_an_end(tmp_path, chroms, genome):
    data = flat_dir_suite(interval_suite(tmp_path / "s", ROWS, window=32),
                          reference=genome).load("lr")
    c1, c2 = chroms["chr1"], chroms["chr2"]
    # chr1:0-40, centre 20: bases -- 4..36; chr1:100-130, centre 115: 99..131
    assert data.train.sequences[0] == c1[4:36]
    assert data.train.sequences[1] == c1[99:131]
    # chr3:5-25, centre 15: -1..31, one N before the chromosome's start
    assert data.test.sequences[1] == "N" + chroms["chr3"][0:31].upper()
    assert data.test.sequences[0] == c2[159:191]
    assert data.warnings == (f"{tmp_path / 's' / 'lr.csv'}: 1 window(s) of 32 bases run off a "
                             "chromosome end, padded with N",)


def test_a_regression_task_given_by_intervals(tmp_path, chroms, genome):
    rows = [(c, s, e, f"{0.5 * i - 1:g}", split) for i, (c, s, e, _, split) in enumerate(ROWS)]
    data = flat_dir_suite(interval_suite(tmp_path / "s", rows, kind="regression"),
                          reference=genome).load("lr")
    assert data.kind is TaskKind.REGRESSION
    assert data.targets.y_train.tolist() == [-1.0, -0.5, 0.0, 0.5]
    assert data.targets.y_test.tolist() == [1.0, 1.5]
    seqs = data.train.sequences
    assert [seqs[i] for i in data.targets.rows_train][2] == chroms["chr2"][10:60]


def test_held_out_chromosomes_make_the_split(tmp_path, genome):
    rows = [r[:4] for r in ROWS]
    data = flat_dir_suite(interval_suite(tmp_path / "s", rows, test_chroms="chr1",
                                         header=HEADER[:4]), reference=genome).load("lr")
    assert (len(data.train), len(data.test)) == (4, 2)
    assert data.test.labels.tolist() == [1, 0]


def test_every_problem_of_an_interval_file_is_one_line_of_one_message(tmp_path, capsys,
                                                                     genome):
    folder = interval_suite(tmp_path / "s", [*ROWS, ("chrX", 1, 10, 0, "train"),
                                             ("chr1", 20, 20, 1, "train"),
                                             ("chr2", 150, 201, 1, "test"),
                                             ("chr2", "-5", 10, 0, "test"),
                                             ("chr1", 1, 9, "maybe", "test")])
    path, store = folder / "lr.csv", tmp_path / "store"
    refused(capsys, store, "fill", "--store", str(store), "--suite", str(folder),
            "--reference", str(genome), "--models", "kmer-3", lines=6, names=(
                "5 problems in the suite's files",
                f"{path}, line 8: chromosome 'chrX' is not in the reference genome",
                f"{path}, line 9: interval chr1:20-20 is empty (start >= end)",
                f"{path}, line 10: interval chr2:150-201 runs beyond the end of chr2 (200 "
                "bases)",
                f"{path}, line 11: start '-5' is not a whole number from 0",
                f"{path}, line 12: label 'maybe' is not an integer"))


def test_an_interval_file_without_reference_is_one_line(tmp_path, capsys):
    folder = interval_suite(tmp_path / "s", ROWS)
    store = tmp_path / "store"
    refused(capsys, store, "fill", "--store", str(store), "--suite", str(folder),
            "--models", "kmer-3", names=("given by chrom,start,end", "--reference"))


def test_the_data_hash_holds_the_genome_and_the_intervals(tmp_path, chroms):
    folder = interval_suite(tmp_path / "s", ROWS)

    def data_hash(genome: Path, at: Path = folder) -> str:
        return flat_dir_suite(at, reference=genome).load("lr").data_hash

    first = data_hash(write_fasta(tmp_path / "a.fa", chroms))
    assert data_hash(write_fasta(tmp_path / "b.fa", chroms, width=17)) == first  # rewrapped
    longer = {**chroms, "chrUn": "ACGT" * 10}            # another genome, the same bases read
    assert data_hash(write_fasta(tmp_path / "d.fa", longer)) != first
    same = {**chroms, "chr4": chroms["chr1"]}            # chr4 holds chr1's bases: the same
    moved = interval_suite(tmp_path / "m", [("chr4", *r[1:]) if r[0] == "chr1" else r
                                            for r in ROWS])
    genome = write_fasta(tmp_path / "e.fa", same)
    assert flat_dir_suite(moved, reference=genome).load("lr").train.sequences == \
        flat_dir_suite(folder, reference=genome).load("lr").train.sequences
    assert data_hash(genome, moved) != data_hash(genome)  # sequences, other coordinates
    assert data_hash(tmp_path / "a.fa", interval_suite(tmp_path / "w", ROWS, window=8)) != first


def as_lrb(path: Path, rows) -> Path:
    """The Long-Range Benchmark's element CSV: its fields by name (Chromosome, Stop), a
    boolean label, a column we do not read."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("Chromosome", "Start", "Stop", "label", "split", "cell_type"))
        w.writerows((c, s, e, "true" if label else "false", split, "K562")
                    for c, s, e, label, split in rows)
    return path


def test_data_long_range_lrb_gives_the_same_task_as_the_plain_file(tmp_path, capsys, genome):
    out = tmp_path / "suite"
    rc, stdout, err = outputs(capsys, "data", "long-range", "--format", "lrb",
                              f"lr={as_lrb(tmp_path / 'prom.csv', ROWS)}", "--window", "24",
                              "-o", str(out), "--store", str(tmp_path / "store"))
    assert rc == 0, err
    assert "1 classification task(s), 6 intervals" in stdout
    made = flat_dir_suite(out, reference=genome).load("lr")
    want = flat_dir_suite(interval_suite(tmp_path / "plain", ROWS, window=24),
                          reference=genome).load("lr")
    assert made.train.sequences == want.train.sequences
    assert made.data_hash == want.data_hash
    assert "Long range,lrb: prom.csv,classification,24," in (out / "manifest.csv").read_text()


def as_etgp(path: Path, rows) -> Path:
    """DNALongBench's enhancer-target gene TSV: gene and candidate region, target, subset."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(("gene_chrom", "gene_start", "gene_end", "region_chrom", "region_start",
                    "region_end", "gene_id", "gene_strand", "region_id", "target", "subset"))
        w.writerows(rows)
    return path


def test_dnalongbench_rows_span_the_tss_and_the_region_with_their_flanks(tmp_path, capsys):
    from engine.interval_sets import read_long_range

    rows = [("chr1", 10_000, 20_000, "chr1", 30_000, 30_400, "g1", "+", "r1", "positive",
             "train"),
            ("chr1", 50_000, 60_000, "chr1", 40_000, 40_200, "g2", "-", "r2", "negative",
             "test"),
            ("chr1", 1, 2, "chr2", 5, 6, "g3", "+", "r3", "positive", "train"),
            ("chr1", 1_000_000, 1_000_100, "chr1", 10, 20, "g4", "+", "r4", "negative",
             "valid"),
            ("chr1", 5, 9, "chr1", 15, 25, "g5", ".", "r5", "negative", "valid")]
    read = read_long_range(as_etgp(tmp_path / "etgp.tsv", rows), "dnalongbench",
                           TaskKind.CLASSIFICATION, by_chrom=False)
    # + strand: TSS 10,000, [7,000, 13,001) and the region [29,500, 30,900): 7,000..30,900
    # - strand: TSS 59,999, [56,999, 63,000) and the region [39,500, 40,700): 39,500..63,000
    assert read.rows == [("chr1", "7000", "30900", "1", "train"),
                         ("chr1", "39500", "63000", "0", "test")]
    assert read.left_out == {"gene and region on different chromosomes": 1,
                             "gene and region more than 450,000 bases apart": 1,
                             "gene strand '.', not + or -": 1}


@pytest.mark.parametrize("case", ["bad rows", "no column", "hub dnalongbench", "bad task"])
def test_data_long_range_refusals_are_one_message(tmp_path, capsys, case):
    store, out = tmp_path / "store", tmp_path / "suite"
    path = tmp_path / "prom.csv"
    if case == "bad rows":
        as_lrb(path, [("chr1", "a", 10, 1, "train")])
        path.write_text(path.read_text() + "chr1,1,5,maybe,test,K562\n")
    else:
        path.write_text("chrom,start,label,split\nchr1,1,1,train\n")
    spec = {"hub dnalongbench": "lr=hub:etgp.tsv", "bad task": f"a/b={path}"}.get(
        case, f"lr={path}")
    fmt = "dnalongbench" if case == "hub dnalongbench" else "lrb"
    names = {"bad rows": (f"{path}, line 2: start 'a' is not a whole number",
                          f"{path}, line 3: label 'maybe' is not a class"),
             "no column": ("no column end or stop",),
             "hub dnalongbench": ("dnalongbench files are not on the Hugging Face hub",),
             "bad task": ("task id 'a/b' cannot be used",)}[case]
    refused(capsys, store, "data", "long-range", "--format", fmt, spec, "-o", str(out),
            "--store", str(store), names=names, lines=3 if case == "bad rows" else 1)
    assert not out.exists()


def test_a_window_on_a_file_of_sequences_is_still_refused(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    write(folder / "manifest.csv", ("task_id", "category", "window"), [("t", "x", 8)])
    write(folder / "t.csv", ("text", "label", "split"),
          [("ACGT", 0, "train"), ("ACGA", 1, "train"), ("ACGT", 0, "test"),
           ("ACGA", 1, "test")])
    with pytest.raises(GenebError, match="only a task read over a reference genome takes"):
        flat_dir_suite(folder, reference=None).load("t")


def test_fill_over_intervals_and_again_over_another_genome_recomputes(tmp_path, capsys, chroms):
    folder = interval_suite(tmp_path / "s", ROWS)
    store = tmp_path / "store"
    base = ("fill", "--store", str(store), "--suite", str(folder), "--models", "kmer-3",
            "--regimes", "full")
    genome = write_fasta(tmp_path / "a.fa", chroms)
    rc, out, err = outputs(capsys, *base, "--reference", str(genome))
    assert rc == 0 and "1 to compute" in out, err
    rc, out, _ = outputs(capsys, *base, "--reference", str(genome))
    assert rc == 0 and "0 to compute" in out
    changed = {**chroms, "chr1": chroms["chr1"][:110] + "A" * 10 + chroms["chr1"][120:]}
    rc, out, _ = outputs(capsys, *base, "--reference", str(write_fasta(tmp_path / "b.fa",
                                                                          changed)))
    assert rc == 0 and "1 to compute" in out
