"""The official GENEB reference data, shipped inside the package (`store/official/reference_data/`).

At the pinned commit of github.com/darlednik/GENEB (Apache-2.0; see `reference_data/NOTICE`) the
benchmark publishes 41 submission files (40 official, 1 self-reported), the leaderboard, the
benchmark spec and the model metadata. They ship here compactly:

    submissions.parquet   every score: file, model_id, regime, task, MCC, Acc, F1 (float64, the
                          JSON doubles exactly), rows in the files' order
    submissions.json      each file's header: name, folder, SHA-256 of the published file,
                          schema_version, model_id, harness_version, meta
    leaderboard.json, benchmark_spec.json, model_meta.json   as published
    NOTICE, LICENSE       the source, the pinned commit, the licence, what was transformed

`submission_documents()` gives the documents exactly as the published files parse (same keys,
nesting, task order and float values) and `write_official_files(dest)` writes the files back
byte for byte. Developers rebuild the shipped data from a GENEB checkout (or a copy laid out as
`../shared/data`) with `python -m store.official.data build SOURCE_DIR`; that command is the
only code reading such a folder. polars/pyarrow are imported inside the functions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from store.atomic import temp_path, write_atomic, write_bytes_atomic, write_text_atomic
from store.vocab.errors import GenebError
from store.vocab.sources import DEFAULT_PROVENANCE

REFERENCE_DATA = Path(__file__).resolve().parent / "reference_data"
OFFICIAL_REPO = "darlednik/GENEB"
OFFICIAL_COMMIT = "e14bb8208e57f01f7d809a08dc0b3e31174d6f25"   # the shipped data's commit
SCORES_FILE = "submissions.parquet"
HEADERS_FILE = "submissions.json"
LEADERBOARD_FILE = "leaderboard.json"
SPEC_FILE = "benchmark_spec.json"
MODEL_META_FILE = "model_meta.json"
NOTICE_FILE = "NOTICE"
METRICS = ("MCC", "Acc", "F1")
HEADER_KEYS = ("schema_version", "model_id", "harness_version", "meta")
# Where each published file lies in a GENEB checkout, then in a copy laid out as ../shared/data,
# then in a flat folder (the layout `official_tree` writes).
_SOURCE_CANDIDATES = {
    SPEC_FILE: ("benchmark", "geneb-benchmark", "."),
    MODEL_META_FILE: ("benchmark", "geneb-benchmark", "."),
    LEADERBOARD_FILE: ("leaderboard", "geneb-leaderboard", "."),
}
_SUBMISSION_FOLDERS = ("submissions", "geneb-submissions")  # and the folders named <these>-*


def document_bytes(doc: dict) -> bytes:
    """A submission as the official tools write it (`tools/pack_submission.py`): compact JSON,
    UTF-8, no trailing newline."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Reading the shipped data


@lru_cache(maxsize=4)
def _headers(folder: Path = REFERENCE_DATA) -> dict:
    return json.loads((folder / HEADERS_FILE).read_text(encoding="utf-8"))


@lru_cache(maxsize=4)
def score_columns(folder: Path = REFERENCE_DATA) -> dict[str, tuple]:
    """Every shipped score by column (file, model_id, regime, task, MCC, Acc, F1), in the
    files' order."""
    import pyarrow.parquet as pq  # lazy: pyarrow

    table = pq.read_table(folder / SCORES_FILE)
    return {name: tuple(table.column(name).to_pylist()) for name in table.column_names}


def source() -> dict:
    """{"repository": "darlednik/GENEB", "commit": <the pinned commit>} of the shipped data."""
    return dict(_headers()["source"])


def submission_headers(folder: Path = REFERENCE_DATA) -> list[dict]:
    """Each shipped submission's header (file, folder, sha256, schema_version, model_id,
    harness_version, meta), in the shipped order."""
    return json.loads(json.dumps(_headers(folder)["submissions"]))


def submission_documents(provenance: str | None = None,
                         folder: Path = REFERENCE_DATA) -> dict[str, dict]:
    """{file name: document} of the shipped submissions (of one `meta.provenance` when given),
    each document equal to what `json.loads` gives for the published file."""
    cols = score_columns(folder)
    results: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for file, regime, task, *values in zip(cols["file"], cols["regime"], cols["task"],
                                           *(cols[m] for m in METRICS), strict=True):
        results.setdefault(file, {}).setdefault(regime, {})[task] = dict(zip(METRICS, values,
                                                                              strict=True))
    docs = {}
    for head in submission_headers(folder):
        if provenance is not None and head["meta"].get("provenance") != provenance:
            continue
        docs[head["file"]] = {**{k: head[k] for k in HEADER_KEYS},
                              "results": results.get(head["file"], {})}
    return docs


def leaderboard_bytes() -> bytes:
    return (REFERENCE_DATA / LEADERBOARD_FILE).read_bytes()


def benchmark_spec() -> dict:
    """The official `benchmark_spec.json` (regimes, metrics, protocol, categories, tasks)."""
    return json.loads((REFERENCE_DATA / SPEC_FILE).read_text(encoding="utf-8"))


def model_meta() -> dict:
    """The official `model_meta.json`: {model_id: {display, params, provenance, ...}}."""
    return json.loads((REFERENCE_DATA / MODEL_META_FILE).read_text(encoding="utf-8"))


def write_official_files(dest: str | os.PathLike, provenance: str | None = None) -> list[Path]:
    """Write the shipped submissions (of one provenance when given) into `dest` as the
    published `<model_id>.json` files, byte for byte (each written atomically); their paths."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    return [write_bytes_atomic(dest / name, document_bytes(doc))
            for name, doc in submission_documents(provenance).items()]


def content_hash(folder: Path = REFERENCE_DATA) -> str:
    """SHA-256 over the shipped files (names and bytes): names a cache of what they hold."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# A read-only copy of the published files, for tests and benchmarks

TREE_SUBMISSIONS = "submissions"          # the 40 official submissions
TREE_OTHER = "submissions-{provenance}"   # e.g. submissions-self-reported/splicebert-1024nt.json


def _tree_files() -> dict[str, tuple[str, bytes | None]]:
    """{relative path: (sha256, bytes or None for a submission)} of the tree."""
    files: dict[str, tuple[str, bytes | None]] = {}
    for head in submission_headers():
        prov = head["meta"].get("provenance", DEFAULT_PROVENANCE)
        folder = TREE_SUBMISSIONS if prov == "official" else TREE_OTHER.format(provenance=prov)
        files[f"{folder}/{head['file']}"] = (head["sha256"], None)
    for name in (LEADERBOARD_FILE, SPEC_FILE, MODEL_META_FILE):
        blob = (REFERENCE_DATA / name).read_bytes()
        files[name] = (hashlib.sha256(blob).hexdigest(), blob)
    return files


def _tree_is_whole(root: Path, files: dict[str, tuple[str, bytes | None]]) -> bool:
    if not root.is_dir():
        return False
    for rel, (sha, _) in files.items():
        try:
            if hashlib.sha256((root / rel).read_bytes()).hexdigest() != sha:
                return False
        except OSError:
            return False
    folders = {rel.rsplit("/", 1)[0] for rel in files if "/" in rel}
    found = {f"{f}/{p.name}" for f in folders for p in (root / f).glob("*.json")}
    return found == {rel for rel in files if "/" in rel}


def official_tree(cache_root: str | os.PathLike | None = None) -> Path:
    """The published files, written once from the shipped data into
    `<cache_root or the temp dir>/geneb-official-<content hash>/` and reused while whole:
    `submissions/` (the 40 official files), `submissions-self-reported/`, `leaderboard.json`,
    `benchmark_spec.json`, `model_meta.json`. Safe for processes doing it at once (built under a
    temporary name and renamed into place); a damaged copy is replaced."""
    base = Path(cache_root) if cache_root is not None else Path(tempfile.gettempdir())
    final = base / f"geneb-official-{content_hash()[:16]}"
    files = _tree_files()
    if _tree_is_whole(final, files):
        return final
    base.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(final)
    docs = submission_documents()
    for rel, (sha, blob) in files.items():
        data = blob if blob is not None else document_bytes(docs[rel.rsplit("/", 1)[1]])
        if hashlib.sha256(data).hexdigest() != sha:
            shutil.rmtree(tmp, ignore_errors=True)
            raise GenebError(f"{REFERENCE_DATA}: the shipped data does not reproduce {rel} "
                             "(rebuild it: python -m store.official.data build SOURCE_DIR)")
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_bytes(data)
    for _ in range(5):
        try:
            os.rename(tmp, final)
            return final
        except OSError:
            if _tree_is_whole(final, files):     # another process was first
                shutil.rmtree(tmp, ignore_errors=True)
                return final
            aside = tmp.with_name(tmp.name.replace(".tmp-", ".damaged-"))
            try:                                 # a damaged copy: move it away, then retry
                os.rename(final, aside)
            except OSError:
                pass
            shutil.rmtree(aside, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    raise GenebError(f"{final}: cannot write the official reference files there")


# ---------------------------------------------------------------------------------------------
# Building the shipped data (developers only)


def _find_source_file(source_dir: Path, name: str) -> Path:
    for folder in _SOURCE_CANDIDATES[name]:
        path = source_dir / folder / name
        if path.is_file():
            return path
    tried = ", ".join(f"{f}/{name}" for f in _SOURCE_CANDIDATES[name])
    raise GenebError(f"{source_dir}: no {name} (looked for {tried})")


def _source_submissions(source_dir: Path) -> list[Path]:
    folders = sorted(p for p in source_dir.iterdir() if p.is_dir() and any(
        p.name == f or p.name.startswith(f"{f}-") for f in _SUBMISSION_FOLDERS))
    files = [f for folder in folders for f in sorted(folder.glob("*.json"))]
    if not files:
        raise GenebError(f"{source_dir}: no submission files (*.json in submissions/, "
                         "geneb-submissions/ or geneb-submissions-*/)")
    return files


def _git_head(source_dir: Path) -> str | None:
    if not (source_dir / ".git").exists():
        return None
    done = subprocess.run(["git", "-C", str(source_dir), "rev-parse", "HEAD"],
                          capture_output=True, text=True)
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def _notice(repository: str, commit: str, headers: list[dict], copied: dict[str, str]) -> str:
    count: dict[str, int] = {}
    for head in headers:
        prov = head["meta"].get("provenance", DEFAULT_PROVENANCE)
        count[prov] = count.get(prov, 0) + 1
    kinds = ", ".join(f"{n} {p}" for p, n in count.items())
    others = ", ".join(h["model_id"] for h in headers
                       if h["meta"].get("provenance") != "official")
    folders = ", ".join(f"{f}/" for f in sorted({h["folder"] for h in headers}))

    def para(text: str, bullet: bool = False) -> str:
        return textwrap.fill(text, 96, break_on_hyphens=False,
                             initial_indent="- " if bullet else "",
                             subsequent_indent="  " if bullet else "")

    return "\n\n".join([
        "GENEB reference data",
        para('The files in this folder are data of the GENEB benchmark ("Why Genomic Models '
             'Are Hard to Compare", ICML 2026), taken from the public repository'),
        f"    https://github.com/{repository}\n    at commit {commit}",
        para("and distributed under the Apache License, Version 2.0 (the LICENSE file beside "
             "this one; https://www.apache.org/licenses/LICENSE-2.0). Copyright the GENEB "
             "authors."),
        "What was transformed:",
        "\n".join([
            para(f"submissions.parquet and submissions.json: the {len(headers)} submission "
                 f"files ({kinds}{': ' + others if others else ''}), submissions/<model_id>.json "
                 f"in the repository, read from {folders} of the source tree. "
                 "submissions.parquet holds every score, one row per (file, regime, task): file, "
                 "model_id, regime, task, MCC, Acc, F1 as float64 (the JSON doubles exactly), in "
                 "the files' order; submissions.json holds each file's header (schema_version, "
                 "model_id, harness_version, meta), its name and folder and the SHA-256 of the "
                 "published file. store.official.data writes the published files back byte for "
                 "byte (checked when building and by the tests).", bullet=True),
            *(para(f"{name}: {how}.", bullet=True) for name, how in copied.items())]),
        para("Rebuilt with `python -m store.official.data build SOURCE_DIR` (a GENEB checkout "
             "at that commit, or a copy of its files)."),
    ]) + "\n"


def _headers_json(repository: str, commit: str, headers: list[dict]) -> str:
    """Small and diffable: one submission header per line."""
    def dump(value) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    lines = ",\n".join(dump(h) for h in headers)
    return (f'{{"source":{dump({"repository": repository, "commit": commit})},\n'
            f'"submissions":[\n{lines}\n]}}\n')


def build(source_dir: str | os.PathLike, out_dir: str | os.PathLike = REFERENCE_DATA, *,
          repository: str | None = None, commit: str | None = None) -> list[Path]:
    """Rebuild the shipped data in `out_dir` from a GENEB checkout (or a copy laid out as
    ../shared/data); refuses anything it could not give back exactly. The written paths."""
    source_dir, out_dir = Path(source_dir), Path(out_dir)
    repository, commit = repository or OFFICIAL_REPO, commit or OFFICIAL_COMMIT
    _check_source(source_dir, commit)
    found = _read_submissions(source_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [_write_scores(out_dir, found.columns),
               write_text_atomic(out_dir / HEADERS_FILE,
                                 _headers_json(repository, commit, found.headers))]
    copied = {}
    for name in (LEADERBOARD_FILE, SPEC_FILE, MODEL_META_FILE):
        path, copied[name] = _copy_published(source_dir, out_dir, name)
        written.append(path)
    written.append(write_text_atomic(out_dir / NOTICE_FILE,
                                     _notice(repository, commit, found.headers, copied)))
    _check_written_back(source_dir, out_dir, found.published)
    return written


def _check_source(source_dir: Path, commit: str) -> None:
    """A folder, and at `commit` where it is a git checkout."""
    if not source_dir.is_dir():
        raise GenebError(f"{source_dir}: no such folder (give a GENEB checkout)")
    head = _git_head(source_dir)
    if head is not None and head != commit:
        raise GenebError(f"{source_dir} is at commit {head}, not {commit}: check out {commit} "
                         f"or pass --commit {head}")


@dataclass(frozen=True)
class _Submissions:
    """What the published submission files hold: every score as columns (file, model_id,
    regime, task, then METRICS), each file's header, and each file's bytes by name."""

    columns: dict[str, list]
    headers: list[dict]
    published: dict[str, bytes]


def _read_submissions(source_dir: Path) -> _Submissions:
    """Every submission file of the source tree, refused where a file's keys, name or values
    could not be written back exactly."""
    columns: dict[str, list] = {c: [] for c in ("file", "model_id", "regime", "task", *METRICS)}
    headers: list[dict] = []
    published: dict[str, bytes] = {}
    for path in _source_submissions(source_dir):
        blob = path.read_bytes()
        doc = json.loads(blob)
        if not isinstance(doc, dict) or list(doc) != [*HEADER_KEYS, "results"]:
            raise GenebError(f"{path}: expected the keys {', '.join(HEADER_KEYS)}, results")
        if path.name in published:
            raise GenebError(f"{path}: a second file named {path.name}")
        published[path.name] = blob
        headers.append({"file": path.name, "folder": path.parent.name,
                        "sha256": hashlib.sha256(blob).hexdigest(),
                        **{k: doc[k] for k in HEADER_KEYS}})
        for regime, per_task in doc["results"].items():
            for task, values in per_task.items():
                if list(values) != list(METRICS) or not all(
                        type(v) is float for v in values.values()):
                    raise GenebError(f"{path}: results.{regime}.{task}: expected MCC, Acc, F1 "
                                     f"as JSON numbers with a fraction, got {values!r}")
                for key, value in (("file", path.name), ("model_id", doc["model_id"]),
                                   ("regime", regime), ("task", task), *values.items()):
                    columns[key].append(value)
    return _Submissions(columns, headers, published)


def _write_scores(out_dir: Path, columns: dict[str, list]) -> Path:
    """submissions.parquet: the scores as float64, small (zstd, dictionaries, byte-stream
    split) and the same bytes for the same scores (no statistics)."""
    import pyarrow as pa  # lazy: pyarrow
    import pyarrow.parquet as pq  # lazy: pyarrow

    table = pa.table({k: pa.array(v, pa.float64() if k in METRICS else pa.string())
                      for k, v in columns.items()})

    def write_scores(tmp: Path) -> None:
        pq.write_table(table, tmp, compression="zstd", compression_level=19,
                       use_dictionary=["file", "model_id", "regime", "task"],
                       use_byte_stream_split=list(METRICS), write_statistics=False)

    return write_atomic(out_dir / SCORES_FILE, write_scores)


def _copy_published(source_dir: Path, out_dir: Path, name: str) -> tuple[Path, str]:
    """One published file copied as it is (the leaderboard made compact where it is not); the
    written path and where it came from and how, for the NOTICE."""
    path = _find_source_file(source_dir, name)
    blob = path.read_bytes()
    if name == LEADERBOARD_FILE:
        compact = json.dumps(json.loads(blob), ensure_ascii=False,
                             separators=(",", ":")).encode("utf-8")
        how = "unchanged (published compact)" if compact == blob else "made compact"
        blob = compact
    else:
        how = "unchanged"
    return (write_bytes_atomic(out_dir / name, blob),
            f"{path.parent.name}/{name} of the source tree, {how}")


def _check_written_back(source_dir: Path, out_dir: Path, published: dict[str, bytes]) -> None:
    """Each published submission file given back byte for byte by the shipped data just
    written (read afresh: the caches cleared)."""
    _headers.cache_clear()
    score_columns.cache_clear()
    for name, doc in submission_documents(folder=out_dir).items():
        if document_bytes(doc) != published[name]:
            raise GenebError(f"{source_dir}: {name} is not written back byte for byte from the "
                             "shipped data (is it compact JSON as the official tools write?)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m store.official.data",
                                 description="Rebuild the GENEB reference data shipped in "
                                             "store/official/reference_data/.")
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="from a GENEB checkout or a copy laid out as ../shared/data")
    b.add_argument("source", type=Path, metavar="SOURCE_DIR")
    b.add_argument("--out", type=Path, default=REFERENCE_DATA,
                   help="where to write (default: the package's store/official/reference_data/)")
    b.add_argument("--repository", help="the source repository (default: darlednik/GENEB)")
    b.add_argument("--commit", help="the commit SOURCE_DIR is at (default: the pinned one)")
    args = ap.parse_args(argv)
    try:
        written = build(args.source, args.out, repository=args.repository, commit=args.commit)
    except GenebError as exc:
        print(f"python -m store.official.data build: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"{path.stat().st_size:>9,} bytes  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
