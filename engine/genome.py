"""A reference genome (`--reference genome.fa[.gz]`) and the windows of variants given by their
coordinates (`chrom,pos,ref,alt`), read with pyfaidx (random access through a FASTA index).

- **Positions are 1-based** (the VCF convention, TraitGym's `pos`): `pos` is the genome's first
  base of `ref`. A chromosome a file names without the `chr` prefix is looked up with it too,
  and the other way round (TraitGym writes `1`, UCSC's hg38 `chr1`).
- **The window**: `width` bases from `pos - 1 - width // 2` (0-based), so the variant's first
  base sits at index `width // 2` of the window (BEND's `dna[len(dna) // 2]`). The alternative
  window is the reference window with `ref` replaced by `alt`, cut or extended from the genome
  to the same width (an indel keeps its left flank). Windows are upper case (a soft-masked
  genome's lower case marks repeats; it is not sequence).
- **A window running off a chromosome end is padded with N** (rather than refused: a real set's
  variant near a telomere would otherwise make its whole file unusable); the task's warning
  counts them.
- **The reference allele is checked** against the genome (case-insensitively); a mismatch is a
  row problem naming chrom:pos, the allele expected and the bases found.
- **The index** is written in this user's cache (`store.paths.user_cache_dir`, a name made of
  the genome's real path, size and modification time), never beside the genome: building it
  reads the genome once. A `.fa.gz` must be block-gzip (`bgzip`; pyfaidx reads it through
  Biopython's `Bio.bgzf`); a plain gzip is one message saying to recompress it with bgzip or
  decompress it.
- **Its identity** (`Genome.identity`): the sha256 of its sequence names and lengths. A task
  read over a genome hashes that identity, the window width and every window it read
  (`engine.task_kinds`), so results computed over another genome, or another build of the same
  windows, are not current; the genome's path is no part of it (a moved genome keeps its
  results).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from store.paths import user_cache_dir
from store.vocab.errors import GenebError

PAD = "N"

def is_bgzf(head: bytes) -> bool:
    """Whether a file starting with `head` (at least 16 bytes) is block-gzip (BGZF): a gzip
    member with the FEXTRA flag and a `BC` extra subfield (the SAM/BAM specification)."""
    return (len(head) >= 16 and head[:3] == b"\x1f\x8b\x08" and bool(head[3] & 4)
            and head[12:14] == b"BC")


def _index_base(path: Path) -> Path:
    st = path.stat()
    key = hashlib.sha256(f"{os.path.realpath(path)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return user_cache_dir() / "fasta-index" / key.hexdigest()[:24]


def _build_index(pyfaidx, path: Path, base: Path, gz: bool) -> None:
    """The genome's index (and a bgzip genome's block index) built under a name of this
    process, then renamed into place: a failed or interrupted build leaves no index that a
    later run would take for whole."""
    base.parent.mkdir(parents=True, exist_ok=True)
    tmp = f"{base}.{os.getpid()}.tmp"
    try:
        pyfaidx.Faidx(str(path), indexname=f"{tmp}.fai",
                      gzi_indexname=f"{tmp}.gzi" if gz else None).close()
        if gz:
            os.replace(f"{tmp}.gzi", f"{base}.gzi")
        os.replace(f"{tmp}.fai", f"{base}.fai")
    finally:
        for leftover in (f"{tmp}.fai", f"{tmp}.gzi"):
            if os.path.exists(leftover):
                os.remove(leftover)


@dataclass(frozen=True)
class Window:
    ref: str
    alt: str
    padded: bool        # the window ran off a chromosome end (padded with N)


class Genome:
    """A FASTA genome opened for random access (see the module); `GenebError`s name the file."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path).expanduser()
        self._fasta = self._open()

    def _open(self):
        path = self.path
        option = f"--reference {path}"
        if not path.is_file():
            what = "is a folder" if path.is_dir() else "no such file"
            raise GenebError(f"{option}: {what}; give the FASTA file of the reference genome "
                             "(genome.fa or a bgzip-compressed genome.fa.gz)")
        try:
            with open(path, "rb") as f:
                head = f.read(18)
        except OSError as exc:
            raise GenebError(f"{option}: cannot read ({exc.strerror})") from None
        gz = head[:2] == b"\x1f\x8b"
        if gz and not is_bgzf(head):
            raise GenebError(f"{option}: a plain gzip file; random access needs block gzip: "
                             f"recompress it with bgzip (`gunzip -c {path.name} | bgzip -c > "
                             f"bgzip.{path.name}`) or decompress it (`gunzip -k {path.name}`)")
        import pyfaidx  # lazy: pyfaidx (about 0.1 s; only runs reading a genome need it)

        base = _index_base(path)
        fai, gzi = f"{base}.fai", f"{base}.gzi" if gz else None
        try:
            if not os.path.exists(fai):
                _build_index(pyfaidx, path, base, gz)
            return pyfaidx.Fasta(str(path), indexname=fai, gzi_indexname=gzi, as_raw=True,
                                 sequence_always_upper=True, rebuild=False, build_index=False)
        except ImportError:       # pyfaidx reads bgzip through Biopython
            raise GenebError(f"{option}: reading a bgzip-compressed genome needs Biopython "
                             "(`pip install biopython`); or decompress it (`gunzip -c "
                             f"{path.name} > {path.stem}`) and give the .fa") from None
        except (pyfaidx.FastaIndexingError, pyfaidx.FastaNotFoundError, ValueError,
                UnicodeDecodeError) as exc:
            raise GenebError(f"{option}: not a FASTA file pyfaidx can index ({exc}); give the "
                             "reference genome in FASTA") from None
        except OSError as exc:
            raise GenebError(f"{option}: cannot read or index it ({exc.strerror or exc})") \
                from None

    @cached_property
    def lengths(self) -> dict[str, int]:
        """Sequence name -> length, in the file's order."""
        return {name: len(record) for name, record in self._fasta.items()}

    @cached_property
    def identity(self) -> str:
        """The sha256 of its sequences' names and lengths (see the module)."""
        blob = "".join(f"{name}\t{n}\n" for name, n in self.lengths.items())
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def chrom_named(self, chrom: str) -> str | None:
        """The genome's name of `chrom` (as given, with or without a `chr` prefix), or None."""
        for name in (chrom, f"chr{chrom}", chrom[3:] if chrom.startswith("chr") else None):
            if name and name in self.lengths:
                return name
        return None

    def bases(self, chrom: str, start: int, end: int) -> str:
        """Bases [start, end) (0-based) of `chrom`, padded with N beyond its ends."""
        n = self.lengths[chrom]
        lo, hi = max(start, 0), min(end, n)
        inside = self._fasta[chrom][lo:hi] if hi > lo else ""
        left = min(max(0, -start), end - start)
        return PAD * left + inside + PAD * (end - start - left - len(inside))

    def window(self, chrom: str, pos: int, ref: str, alt: str, width: int) -> Window:
        """The reference and alternative windows of a variant (see the module); `chrom` is the
        genome's name, `pos` 1-based and within the chromosome, `ref` checked by the caller."""
        at = pos - 1
        start = at - width // 2
        ref_window = self.bases(chrom, start, start + width)
        left = ref_window[:width // 2]
        right = self.bases(chrom, at + len(ref), at + len(ref) + width)
        alt_window = (left + alt.upper() + right)[:width]
        padded = start < 0 or start + width > self.lengths[chrom] or \
            at + len(ref) + (width - len(left) - len(alt)) > self.lengths[chrom]
        return Window(ref_window, alt_window, padded)
