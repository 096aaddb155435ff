"""`geneb-engine data variants`: TraitGym's, BEND's and the Long-Range Benchmark's variant files
(`engine.variant_sets`), written by the test in those formats, become a folder suite of variant
tasks given by coordinates, which `fill --reference` reads over the genome: the same windows
whichever format the variants came in."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.suites import flat_dir_suite
from tests.engine.in_process import outputs, refused
from tests.engine.test_genome_variants import chromosomes, variants, write_fasta


def as_traitgym(path: Path, rows) -> Path:
    """TraitGym's test.parquet: chrom without 'chr', pos 1-based, label a boolean, and
    columns we do not read."""
    pq.write_table(pa.table({
        "chrom": [r[0].removeprefix("chr") for r in rows], "pos": [r[1] for r in rows],
        "ref": [r[2] for r in rows], "alt": [r[3] for r in rows],
        "pip": [0.5] * len(rows), "trait": ["BMI"] * len(rows),
        "label": [bool(r[4]) for r in rows],
        "match_group": [f"g{i // 2}" for i in range(len(rows))]}), path)
    return path


def as_bend(path: Path, rows) -> Path:
    """BEND's variant_effects_*.bed: tab-separated, start 0-based, end = start + 1."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(("chromosome", "start", "end", "strand", "ref", "alt", "label", "split"))
        w.writerows((c, p - 1, p, "+", ref, alt, label, split)
                    for c, p, ref, alt, label, split in rows)
    return path


def as_lrb(path: Path, rows) -> Path:
    """The Long-Range Benchmark's variant CSV: its fields by name, upper case here."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("CHROM", "POS", "REF", "ALT", "label", "tissue", "split"))
        w.writerows((c, p, ref, alt, label, "Whole_Blood", split)
                    for c, p, ref, alt, label, split in rows)
    return path


@pytest.fixture
def genome_and_rows(tmp_path):
    chroms = chromosomes()
    return write_fasta(tmp_path / "g.fa", chroms), variants(chroms, n=10)


@pytest.mark.parametrize("fmt,write,chroms", [("traitgym", as_traitgym, ("chr3",)),
                                              ("bend", as_bend, ()), ("lrb", as_lrb, ())])
def test_each_format_gives_the_windows_of_the_same_variants(tmp_path, capsys, genome_and_rows,
                                                            fmt, write, chroms):
    genome, rows = genome_and_rows
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "manifest.csv").write_text(
        "task_id,category,kind,window,test_chroms\n"
        f"vars,Variant effect,variant,16,{' '.join(chroms)}\n")
    with open(plain / "vars.csv", "w", newline="") as f:
        csv.writer(f).writerows([("chrom", "pos", "ref", "alt", "label", "split"), *rows])
    suffix = {"traitgym": "parquet", "bend": "bed", "lrb": "csv"}[fmt]
    source = write(tmp_path / f"in.{suffix}", rows)
    out = tmp_path / "suite"
    rc, stdout, err = outputs(capsys, "data", "variants", "--format", fmt, f"vars={source}",
                              "--window", "16", *(("--test-chroms", *chroms) if chroms else ()),
                              "-o", str(out), "--store", str(tmp_path / "store"))
    assert rc == 0, err
    assert "1 variant task(s), 20 variants" in stdout
    made = flat_dir_suite(out, reference=genome).load("vars")
    want = flat_dir_suite(plain, reference=genome).load("vars")
    assert made.train.sequences == want.train.sequences
    assert made.test.sequences == want.test.sequences
    assert (made.targets.y_train.tolist(), made.targets.y_test.tolist()) == (
        want.targets.y_train.tolist(), want.targets.y_test.tolist())
    assert not (tmp_path / "store").exists()            # the store is not written


def test_every_problem_of_the_files_is_one_message(tmp_path, capsys, genome_and_rows):
    _, rows = genome_and_rows
    bed = as_bend(tmp_path / "a.bed", [*rows[:3], ("chr1", 10, "A", "G", "maybe", "train")])
    with open(bed, "a") as f:
        f.write("chr1\tten\t11\t+\tA\tG\t1\ttest\n")
    lrb = tmp_path / "b.csv"
    lrb.write_text("chromosome,position,ref,label\nchr1,5,A,1\n")
    store = tmp_path / "store"
    refused(capsys, store, "data", "variants", "--format", "bend", f"a={bed}", f"b={lrb}",
            "--window", "16", "-o", str(tmp_path / "out"), "--store", str(store), lines=4,
            names=("3 problems in the suite's files",
                   f"{bed}, line 5: label 'maybe' is not 0/1 or true/false",
                   f"{bed}, line 6: start 'ten' is not a whole number",
                   f"{lrb}: no column start, alt, split (found chromosome, position, ref, "
                   "label); a bend file has them"))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["missing.parquet", "missing.bed", "folder.parquet"])
def test_a_file_that_is_not_there_is_said_so(tmp_path, capsys, name):
    """A missing file or a folder: said as such (a missing Parquet file was "not a Parquet file
    that can be read", and pyarrow read a folder as a dataset)."""
    (tmp_path / "folder.parquet").mkdir()
    store = tmp_path / "store"
    refused(capsys, store, "data", "variants", "--format", "bend", f"t={tmp_path / name}",
            "--window", "16", "-o", str(tmp_path / "out"), "--store", str(store),
            names=(f"{tmp_path / name}: "
                   f"{'a folder, not a file' if name.startswith('folder') else 'no such file'}",))
    assert not (tmp_path / "out").exists()


def test_traitgym_without_held_out_chromosomes_is_refused(tmp_path, capsys, genome_and_rows):
    _, rows = genome_and_rows
    source = as_traitgym(tmp_path / "test.parquet", rows)
    store = tmp_path / "store"
    refused(capsys, store, "data", "variants", "--format", "traitgym", f"m={source}",
            "--window", "16", "-o", str(tmp_path / "out"), "--store", str(store),
            names=("has no train/test split", "--test-chroms"))


@pytest.mark.parametrize("fmt,says", [
    ("traitgym", ("cannot download it from dataset songlab/TraitGym at revision "
                  "349e9985be8f9be04d13dab52dbc9676bfd0683f (HF_HUB_OFFLINE is set)",
                  "hf download songlab/TraitGym mendelian_traits_matched_9/test.parquet")),
    ("bend", ("bend files are not on the Hugging Face hub", "sid.erda.dk"))])
def test_a_hub_file_offline_says_what_to_download_where(tmp_path, capsys, monkeypatch, fmt,
                                                        says):
    from huggingface_hub import constants

    from engine.encoders import hub

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))   # empty
    hub.hub_problem.cache_clear()            # decided again, offline, and again after the test
    store = tmp_path / "store"
    try:
        refused(capsys, store, "data", "variants", "--format", fmt,
                "m=hub:mendelian_traits_matched_9/test.parquet", "--window", "16",
                "--test-chroms", "chr9", "-o", str(tmp_path / "out"), "--store", str(store),
                names=says)
    finally:
        hub.hub_problem.cache_clear()
    assert not (tmp_path / "out").exists()
