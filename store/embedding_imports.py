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
from dataclasses import asdict, dataclass
from pathlib import Path

from store.atomic import write_bytes_atomic, write_text_atomic
from store.paths import StorePaths
from store.vocab.errors import GenebError, brief
from store.vocab.ids import safe_name

RECORD = "import.json"


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

    @property
    def revision(self) -> str:
        return revision_of(self.files)

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.task for f in self.files))


def revision_of(files) -> str:
    """The embeddings' revision: sha256 of one `task<TAB>split<TAB>sha256` line per file, in
    (task, split) order."""
    lines = sorted(f"{f.task}\t{f.split}\t{f.sha256}" for f in files)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def submission_copy(paths: StorePaths, model: str) -> Path:
    """Where the submission file a model's embeddings came with is kept (named as the
    official rule names a submission of that model)."""
    return paths.embedding_import(model) / f"{safe_name(model)}.json"


def read_import(paths: StorePaths, model: str) -> EmbeddingImport | None:
    """The model's import record; None when its embeddings were never imported; a GenebError
    naming the file when it cannot be read."""
    path = paths.embedding_import(model) / RECORD
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_bytes())
        doc.pop("revision", None)
        files = tuple(ImportedFile(**f) for f in doc.pop("files"))
        submitted = doc.pop("submission")
        return EmbeddingImport(**doc, files=files,
                               submission=SubmittedFile(**submitted) if submitted else None)
    except Exception as exc:
        raise GenebError(f"{path}: cannot be read ({brief(exc)}); import the model's "
                         "embeddings again (`geneb-engine import-embeddings`)") from None


def write_import(paths: StorePaths, record: EmbeddingImport, submission: bytes | None) -> None:
    """Keep `record` (and the submission file's bytes), each file written atomically: the
    submission first, so a record never names a copy that is not there."""
    folder = paths.embedding_import(record.model)
    folder.mkdir(parents=True, exist_ok=True)
    copy = submission_copy(paths, record.model)
    if submission is not None:
        write_bytes_atomic(copy, submission)
    elif copy.exists():
        copy.unlink()
    doc = {**asdict(record), "revision": record.revision}
    write_text_atomic(folder / RECORD, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
