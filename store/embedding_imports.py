"""The record of a model's imported embeddings (`geneb-engine import-embeddings`), kept in
`StorePaths.embedding_import(model)`: `import.json`, and a copy of the submission file the
embeddings came with, where one was given.

`import.json` says what was imported and from where: the folder, the suite, every file (task,
split, the task data's hash, format, sha256 of its bytes, rows, width, dtype), the submission
file's name and sha256, the engine version and the time. The embeddings' revision is the sha256
of the (task, split, file sha256) lines of its files (`revision_of`): the model revision of its
stored splits and of every result row computed from them. A model has one import at a time:
importing again replaces it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path

from store.atomic import write_bytes_atomic, write_text_atomic
from store.paths import StorePaths
from store.vocab.errors import GenebError, brief
from store.vocab.ids import path_part, safe_name

RECORD = "import.json"
# `<model folder>@<12 hex digits of the revision>`: the folder of one import's splits in
# `embeddings.zarr` (a model folder never holds '@': `path_part` replaces it)
SPLITS_FOLDER = re.compile(r"^(?P<model>.+)@(?P<revision>[0-9a-f]{12})$")


@dataclass(frozen=True)
class ImportedFile:
    """One split's file, as it was imported."""

    task: str
    split: str
    data_hash: str      # of the task's files its rows were checked against
    file: str           # its absolute path when imported
    format: str         # npy, npz, parquet, safetensors
    sha256: str         # of the file's bytes
    rows: int
    dim: int
    dtype: str          # as the file held it (stored as float32)


@dataclass(frozen=True)
class SubmittedFile:
    """The submission the embeddings came with (its copy is kept beside the record)."""

    file: str           # its absolute path when imported
    sha256: str


@dataclass(frozen=True)
class EmbeddingImport:
    model: str
    folder: str
    suite: str
    files: tuple[ImportedFile, ...]
    submission: SubmittedFile | None
    engine_version: str
    imported_at: str
    legacy: bool = False     # recorded before imports were atomic (see the module)

    @property
    def revision(self) -> str:
        return revision_of(self.files)

    @property
    def embeddings(self) -> str:
        """The folder of `embeddings.zarr` that holds its splits."""
        return path_part(self.model) if self.legacy else splits_folder(self.model,
                                                                       self.revision)

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.task for f in self.files))


def revision_of(files) -> str:
    """The embeddings' revision: sha256 of one `task<TAB>split<TAB>sha256` line per file, in
    (task, split) order."""
    lines = sorted(f"{f.task}\t{f.split}\t{f.sha256}" for f in files)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def splits_folder(model: str, revision: str) -> str:
    """The folder of `embeddings.zarr` that holds the splits of the model's import of
    `revision` (`SPLITS_FOLDER`)."""
    return f"{path_part(model)}@{revision[:12]}"


def submission_copy(paths: StorePaths, model: str) -> Path:
    """Where the submission file a model's embeddings came with is kept (named as the
    official rule names a submission of that model)."""
    return paths.embedding_import(model) / f"{safe_name(model)}.json"


def read_import(paths: StorePaths, model: str) -> EmbeddingImport | None:
    """The model's import record; None when its embeddings were never imported; a GenebError
    naming the file when it cannot be read or does not hold together (`read_record`)."""
    path = paths.embedding_import(model) / RECORD
    return read_record(path, model) if path.exists() else None


def read_record(path: Path, model: str | None = None) -> EmbeddingImport:
    """The import record at `path` (of `model`, where given; else of the model whose folder
    holds it); a GenebError naming the file when it cannot be read (`record_problem`)."""
    record, problem = record_problem(path, model)
    if record is None:
        raise GenebError(f"{path}: {problem}; import the model's embeddings again "
                         f"(`geneb-engine import-embeddings {model or 'MODEL'} DIR`)")
    return record


def record_problem(path: Path, model: str | None = None) -> tuple[EmbeddingImport | None,
                                                                   str | None]:
    """(the import record at `path`, None), or (None, why it cannot be used: it does not
    read, does not hold together (`_parsed`), or is another model's)."""
    try:
        doc = json.loads(path.read_bytes())
        of = doc.get("model") if isinstance(doc, dict) else None
        if isinstance(of, str) and (of != model if model is not None
                                    else path_part(of) != path.parent.name):
            raise _Damaged(f"it is the record of model {of!r}")
        return _parsed(doc), None
    except Exception as exc:
        return None, f"cannot be read ({str(exc) if isinstance(exc, _Damaged) else brief(exc)})"


class _Damaged(ValueError):
    """What is wrong with a record that parses as JSON, in words."""


_TYPES = {"str": str, "int": int}


def _fields(cls, doc, what: str) -> dict:
    """The fields of dataclass `cls` from `doc`, each of its type; else _Damaged."""
    if not isinstance(doc, dict):
        raise _Damaged(f"{what} is not an object")
    out = {}
    for f in fields(cls):
        if f.name not in doc:
            if f.default is MISSING:
                raise _Damaged(f"{what} has no {f.name!r}")
            continue
        kind = _TYPES.get(str(f.type))
        if kind is not None and (not isinstance(doc[f.name], kind)
                                 or isinstance(doc[f.name], bool)):
            raise _Damaged(f"{what}: {f.name!r} is not a {f.type}")
        out[f.name] = doc[f.name]
    return out


def _parsed(doc) -> EmbeddingImport:
    """The record `doc` holds, when it holds together: its fields, its files, its revision
    (the one recorded is the one its files give) and its splits' folder (the revision's)."""
    if not isinstance(doc, dict):
        raise _Damaged("not a JSON object")
    if not isinstance(doc.get("files"), list) or not doc["files"]:
        raise _Damaged("no list of files")
    files = tuple(ImportedFile(**_fields(ImportedFile, f, f"file {i + 1}"))
                  for i, f in enumerate(doc["files"]))
    head = _fields(EmbeddingImport, {**doc, "files": ()}, "the record")
    submitted = head.pop("submission")
    for name in ("files", "legacy"):
        head.pop(name, None)
    record = EmbeddingImport(**head, files=files, legacy="embeddings" not in doc,
                             submission=None if submitted is None else SubmittedFile(
                                 **_fields(SubmittedFile, submitted, "its submission")))
    if doc.get("revision") != record.revision:
        raise _Damaged(f"its revision {str(doc.get('revision'))[:12]} is not the one its "
                       f"files give, {record.revision[:12]}")
    if not record.legacy and doc["embeddings"] != record.embeddings:
        raise _Damaged(f"it names the folder {doc['embeddings']!r}, not its revision's "
                       f"{record.embeddings!r}")
    return record


def write_import(paths: StorePaths, record: EmbeddingImport, submission: bytes | None) -> None:
    """Keep `record` (and the submission file's bytes), each file written atomically, the
    submission first; replacing `import.json` is the switch to the new import (see the
    module). A kill between the two leaves the old record beside the new copy, which
    `submission_problem` tells."""
    folder = paths.embedding_import(record.model)
    folder.mkdir(parents=True, exist_ok=True)
    copy = submission_copy(paths, record.model)
    if submission is not None:
        write_bytes_atomic(copy, submission)
    elif copy.exists():
        copy.unlink()
    doc = {**asdict(record), "revision": record.revision, "embeddings": record.embeddings}
    del doc["legacy"]
    write_text_atomic(folder / RECORD, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def submission_problem(paths: StorePaths, record: EmbeddingImport) -> str | None:
    """What is wrong with the copy of the submission `record` names (missing, or not the file
    it names: another sha256), in words; None when it is the one."""
    if record.submission is None:
        return None
    copy = submission_copy(paths, record.model)
    try:
        digest = hashlib.sha256(copy.read_bytes()).hexdigest()
    except OSError:
        return f"{copy} is missing"
    if digest != record.submission.sha256:
        return (f"{copy} is not the submission its import names (sha256 "
                f"{digest[:12]}, recorded {record.submission.sha256[:12]})")
    return None
