"""Variant tasks given by coordinates (`chrom,pos,ref,alt,label,split`) over a reference genome
(`--reference`, `engine.genome`): the windows are the genome's bases around each 1-based
position, the reference allele is checked, every problem of a file is one message, and the
genome's identity is part of the task's data hash (so results over another genome are not
current)."""

from __future__ import annotations

import gzip
import random
import struct
import sys
import zlib
from pathlib import Path

import pytest

from engine.genome import Genome, _index_base, is_bgzf
from engine.suites import flat_dir_suite
from store.paths import user_cache_dir
from store.vocab.errors import GenebError
from tests.engine.in_process import outputs, refused
from tests.engine.test_task_kinds import write

WIDTH = 16


def chromosomes(seed: int = 7) -> dict[str, str]:
    rng = random.Random(seed)
    return {name: "".join(rng.choice("ACGT") for _ in range(n))
            for name, n in (("chr1", 300), ("chr2", 200), ("chr3", 250))}


def write_fasta(path: Path, chroms: dict[str, str], width: int = 60, lower: str = "") -> Path:
    """A FASTA of `chroms`, lines of `width` bases; the chromosome `lower` soft-masked."""
    with open(path, "w") as f:
        for name, seq in chroms.items():
            f.write(f">{name} a description\n")
            seq = seq.lower() if name == lower else seq
            f.writelines(seq[i:i + width] + "\n" for i in range(0, len(seq), width))
    return path


def variants(chroms: dict[str, str], n: int = 12, seed: int = 3, splits=("train", "test")):
    """SNVs at positions away from the chromosome ends, labels alternating, per split."""
    rng = random.Random(seed)
    rows = []
    for split in splits:
        for i in range(n):
            chrom = rng.choice(sorted(chroms))
            pos = rng.randint(WIDTH, len(chroms[chrom]) - WIDTH)
            ref = chroms[chrom][pos - 1]
            rows.append((chrom, pos, ref, rng.choice([b for b in "ACGT" if b != ref]), i % 2,
                         split))
    return rows


def suite(folder: Path, rows, window: int | str = WIDTH, test_chroms: str = "",
          header=("chrom", "pos", "ref", "alt", "label", "split")) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write(folder / "manifest.csv", ("task_id", "category", "kind", "window", "test_chroms"),
          [("vars", "Variant effect", "variant", window, test_chroms)])
    write(folder / "vars.csv", header, rows)
    return folder


def test_windows_are_the_genomes_bases_around_each_1_based_position(tmp_path):
    chroms = chromosomes()
    genome = write_fasta(tmp_path / "g.fa", chroms, lower="chr3")
    c1, c3 = chroms["chr1"], chroms["chr3"]
    alt1 = "A" if c1[99] != "A" else "C"
    rows = [("chr1", 100, c1[99], alt1, 1, "train"),
            ("3", 40, c3[39].lower(), "T" if c3[39] != "T" else "G", 0, "train"),   # no chr
            ("chr1", 3, c1[2], "G" if c1[2] != "G" else "T", 1, "test"),       # runs off the start
            ("chr1", 150, c1[149:151], c1[149], 0, "test")]                    # a deletion
    data = flat_dir_suite(suite(tmp_path / "s", rows), reference=genome).load("vars")
    seqs, at = data.train.sequences, data.targets.rows_train
    # pos 100 (1-based) is index 99; the window starts WIDTH // 2 before it
    assert seqs[at[0, 0]] == c1[99 - 8:99 + 8]
    assert seqs[at[0, 1]] == c1[91:99] + alt1 + c1[100:107]
    assert seqs[at[1, 0]] == c3[31:47].upper()                   # soft-masking is no sequence
    test, tat = data.test.sequences, data.targets.rows_test
    assert test[tat[0, 0]] == "NNNNNN" + c1[:10]                  # padded with N, 16 bases
    assert test[tat[1, 1]] == c1[141:149] + c1[149] + c1[151:158]  # the deletion, same width
    assert {len(s) for s in seqs + test} == {WIDTH}
    assert data.warnings == (f"{tmp_path / 's' / 'vars.csv'}: 1 variant window(s) run off a "
                             f"chromosome end, padded with N to {WIDTH} bases",)


def test_every_problem_of_a_coordinate_file_is_one_line_of_one_message(tmp_path, capsys):
    chroms = chromosomes()
    genome = write_fasta(tmp_path / "g.fa", chroms)
    c2 = chroms["chr2"]
    wrong = "A" if c2[49] != "A" else "C"
    folder = suite(tmp_path / "s", [*variants(chroms),
                                    ("chr2", 50, wrong, "G", 1, "train"),
                                    ("chrX", 10, "A", "G", 0, "train"),
                                    ("chr1", 0, "A", "G", 0, "test"),
                                    ("chr2", 201, "A", "G", 1, "test"),
                                    ("chr1", 20, chroms["chr1"][19], "T", 2, "test")])
    path, store = folder / "vars.csv", tmp_path / "store"
    refused(capsys, store, "fill", "--store", str(store), "--suite", str(folder),
            "--reference", str(genome), "--models", "kmer-3", lines=6, names=(
                "5 problems in the suite's files",
                f"{path}, line 26: ref {wrong!r} does not match the reference genome at "
                f"chr2:50: expected {wrong!r}, found {c2[49]!r}",
                f"{path}, line 27: chromosome 'chrX' is not in the reference genome",
                f"{path}, line 28: pos '0' is not a 1-based position",
                f"{path}, line 29: chr2:201 lies beyond the end of chr2 (200 bases)",
                f"{path}, line 30: label '2' is not 0 or 1"))


@pytest.mark.parametrize("case", ["no reference", "no window", "plain gzip", "named suite",
                                  "missing genome", "not fasta"])
def test_what_a_coordinate_task_lacks_is_one_line(tmp_path, capsys, case):
    chroms = chromosomes()
    genome = write_fasta(tmp_path / "g.fa", chroms)
    folder = suite(tmp_path / "s", variants(chroms), window="" if case == "no window" else WIDTH)
    if case == "plain gzip":
        genome = tmp_path / "g.fa.gz"
        genome.write_bytes(gzip.compress((tmp_path / "g.fa").read_bytes()))
    spec = "geneb-mini" if case == "named suite" else str(folder)
    if case == "not fasta":
        genome = folder / "vars.csv"
    reference = () if case == "no reference" else (
        "--reference", str(tmp_path / "nope.fa" if case == "missing genome" else genome))
    names = {"no reference": ("--reference genome.fa[.gz]", str(folder / "vars.csv")),
             "no window": ("column window", str(folder / "vars.csv")),
             "plain gzip": ("a plain gzip file", "bgzip"),
             "named suite": ("suite geneb-mini has no variant tasks given by chrom,pos",),
             "missing genome": ("nope.fa: no such file",),
             "not fasta": ("not a FASTA file pyfaidx can index",)}[case]
    store = tmp_path / "store"
    refused(capsys, store, "fill", "--store", str(store), "--suite", spec, *reference,
            "--models", "kmer-3", names=names)
    if case == "not fasta":            # a failed index build leaves no index to trust later
        assert not list((user_cache_dir() / "fasta-index").glob(f"{_index_base(genome).name}*"))


def test_the_data_hash_holds_the_genome_not_its_path_or_layout(tmp_path):
    chroms = chromosomes()
    rows = variants(chroms)
    folder = suite(tmp_path / "s", rows)

    def data_hash(genome: Path, at: Path = folder) -> str:
        return flat_dir_suite(at, reference=genome).load("vars").data_hash

    first = data_hash(write_fasta(tmp_path / "a.fa", chroms))
    assert data_hash(write_fasta(tmp_path / "b.fa", chroms, width=17)) == first  # moved, rewrapped
    chrom, pos = rows[0][0], rows[0][1]
    inside = dict(chroms)
    at = pos - 1 + 3                         # a base inside the first variant's window
    inside[chrom] = inside[chrom][:at] + ("A" if inside[chrom][at] != "A" else "C") + \
        inside[chrom][at + 1:]
    assert data_hash(write_fasta(tmp_path / "c.fa", inside)) != first
    longer = {**chroms, "chrUn": "ACGT" * 10}            # another genome, the same windows
    assert data_hash(write_fasta(tmp_path / "d.fa", longer)) != first
    wider = suite(tmp_path / "w", rows, window=WIDTH + 2)
    assert data_hash(tmp_path / "a.fa", wider) != first


def test_held_out_chromosomes_make_the_test_split(tmp_path):
    chroms = chromosomes()
    rows = [r[:5] for r in variants(chroms, n=20, splits=("x",))]
    folder = suite(tmp_path / "s", rows, test_chroms="3",
                   header=("chrom", "pos", "ref", "alt", "label"))
    data = flat_dir_suite(folder, reference=write_fasta(tmp_path / "g.fa", chroms)).load("vars")
    on3 = sum(r[0] == "chr3" for r in rows)
    assert 0 < on3 < len(rows)
    assert (len(data.targets.y_train), len(data.targets.y_test)) == (len(rows) - on3, on3)
    # the test split is exactly chr3's variants, in file order
    assert list(data.targets.y_test) == [r[4] for r in rows if r[0] == "chr3"]


def test_a_bad_manifest_window_is_a_row_problem(tmp_path):
    chroms = chromosomes()
    folder = suite(tmp_path / "s", variants(chroms), window="wide")
    with pytest.raises(GenebError, match="window 'wide' is not a positive whole number"):
        flat_dir_suite(folder, reference=tmp_path / "g.fa")


def test_fill_over_a_genome_and_again_over_another_recomputes(tmp_path, capsys):
    chroms = chromosomes()
    rows = variants(chroms)
    folder = suite(tmp_path / "s", rows)
    store = tmp_path / "store"
    base = ("fill", "--store", str(store), "--suite", str(folder), "--models", "kmer-3",
            "--regimes", "full")
    genome = write_fasta(tmp_path / "a.fa", chroms)
    rc, out, err = outputs(capsys, *base, "--reference", str(genome))
    assert rc == 0, err
    assert "computed" in out
    rc, out, _ = outputs(capsys, *base, "--reference", str(genome))
    assert rc == 0 and "0 to compute" in out
    chrom, pos = rows[0][0], rows[0][1]
    changed = dict(chroms)
    changed[chrom] = changed[chrom][:pos] + ("A" if changed[chrom][pos] != "A" else "C") + \
        changed[chrom][pos + 1:]
    rc, out, _ = outputs(capsys, *base, "--reference", str(write_fasta(tmp_path / "b.fa",
                                                                          changed)))
    assert rc == 0 and "0 in the store" in out and "computed" in out


def bgzf(data: bytes) -> bytes:
    """`data` as one BGZF block and the end-of-file block (the SAM specification's layout)."""
    def block(raw: bytes) -> bytes:
        deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
        body = deflate.compress(raw) + deflate.flush()
        size = 18 + len(body) + 8 - 1                        # BSIZE: the block's size - 1
        return (b"\x1f\x8b\x08\x04" + bytes(4) + b"\x00\xff\x06\x00BC\x02\x00"
                + struct.pack("<H", size) + body
                + struct.pack("<II", zlib.crc32(raw), len(raw)))
    return block(data) + block(b"")


def test_a_bgzip_genome_is_told_apart_from_a_plain_gzip(tmp_path):
    fasta = write_fasta(tmp_path / "g.fa", chromosomes()).read_bytes()
    plain, blocked = tmp_path / "plain.fa.gz", tmp_path / "blocked.fa.gz"
    plain.write_bytes(gzip.compress(fasta))
    blocked.write_bytes(bgzf(fasta))
    assert gzip.decompress(blocked.read_bytes()) == fasta            # a gzip file all the same
    assert is_bgzf(blocked.read_bytes()[:18]) and not is_bgzf(plain.read_bytes()[:18])
    with pytest.raises(GenebError, match="a plain gzip file; random access needs block gzip"):
        Genome(plain)
    assert Genome(blocked).lengths == {"chr1": 300, "chr2": 200, "chr3": 250}


def test_a_bgzip_genome_without_biopython_is_one_line(tmp_path, monkeypatch):
    blocked = tmp_path / "blocked.fa.gz"
    blocked.write_bytes(bgzf(write_fasta(tmp_path / "g.fa", chromosomes()).read_bytes()))
    for name in [m for m in sys.modules if m == "Bio" or m.startswith(("Bio.", "pyfaidx"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "Bio", None)         # import Bio raises ImportError
    with pytest.raises(GenebError, match="needs Biopython"):
        Genome(blocked)


def test_a_window_for_a_file_of_sequences_is_refused_not_ignored(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    write(folder / "manifest.csv", ("task_id", "category", "kind", "window"),
          [("seqs", "Own", "variant", 64)])
    write(folder / "seqs.csv", ("ref", "alt", "label", "split"),
          [("ACGT", "ACGA", 1, "train"), ("ACGT", "ACGC", 0, "train")])
    with pytest.raises(GenebError, match="gives task seqs a window or test_chroms"):
        flat_dir_suite(folder).load("seqs")
