"""Bring your own embeddings: `geneb-engine import-embeddings MODEL DIR` checks a folder of
embeddings against the suite's task files and stores them as the model's verified splits, so
that `fill --models MODEL` probes them like any model's (and embeds nothing).

The folder holds one folder per task, named by its task id, with one file per split:
`DIR/<task_id>/train.<ext>` and `DIR/<task_id>/test.<ext>`, `<ext>` one of
`engine.embedding_files.FORMATS`. Each file holds one row per sequence of its split, in the
order the task file lists them (the rows `fill` reads: those it skips do not count), all of one
width. Every problem is found before anything is written and reported together, one line
each (`store.csv_in.RowProblems`): a task the suite lacks, a missing split, a file of another
format or that cannot be read, a row count that is not the split's, a width that is not the
others', a NaN or an infinity. Then, under the store lock (shared) and each pair's lock, every
split is stored as float32 with the identity `fill` expects (`engine.pairs.embeddings_identity`:
model revision the import's, `store.embedding_imports.revision_of`) and its source (the file,
its format, sha256 and dtype); the model's splits of an earlier import that this one lacks are
removed; the import's record (`store.embedding_imports`) and the model's catalog row (encoder
`imported`, `store.tables.catalogs.imported_models`) are written last.

`check_imported` is `fill`'s side: a run that needs a split the import did not store is refused
before the store changes.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from engine import __version__
from engine.data import SPLITS
from engine.embedding_files import FORMATS, BadFile, read_embeddings
from engine.encoders.imported import KIND, build
from engine.pairs import embeddings_identity
from engine.planner import PairWork
from engine.suites import Suite
from store.catalog import RECIPE_DEFAULTS, ModelMeta
from store.csv_in import RowProblems
from store.did_you_mean import suggestions
from store.embedding_imports import (
    EmbeddingImport,
    ImportedFile,
    SubmittedFile,
    read_import,
    write_import,
)
from store.embeddings import CHUNK_ROWS, EmbeddingStore
from store.folders import named_folder
from store.locks import StoreSession, pair_lock
from store.official.formats import Submission, read_official_file
from store.official.submission import catalog_entry
from store.paths import StorePaths
from store.tables.catalogs import (
    catalog_models,
    models_frame,
    read_catalog,
    register_models,
    store_models,
)
from store.vocab.encoder_kinds import KINDS
from store.vocab.errors import GenebError
from store.vocab.ids import check_id, path_part

LAYOUT = ("DIR holds one folder per task, named by its task id, with train.<ext> and "
          f"test.<ext> in it (<ext>: {', '.join(f.lstrip('.') for f in FORMATS)})")
_BLOCK = 16 * CHUNK_ROWS     # rows stored at a time


@dataclass(frozen=True)
class _Split:
    """One split's file, checked: what its task's data says and what the file holds."""

    task: str
    name: str
    path: Path
    labels: np.ndarray
    data_hash: str
    sha256: str = ""
    dim: int = 0
    dtype: str = ""


@dataclass(frozen=True)
class Prepared:
    """An import that passed every check, ready to store."""

    model: ModelMeta
    record: EmbeddingImport
    splits: tuple[_Split, ...]
    submission: bytes | None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _read(split: _Split, problems: list[str]) -> np.ndarray | None:
    """The split's array when it is one the store can take (rows, finite values); else None,
    what is wrong appended to `problems`."""
    try:
        array = read_embeddings(split.path)
    except BadFile as exc:
        problems.append(f"{split.path}: {exc}")
        return None
    n = len(split.labels)
    if array.shape[0] != n:
        problems.append(f"{split.path}: {array.shape[0]} rows, and the {split.name} split of "
                        f"task {split.task} has {n} sequences (one row per sequence, in the "
                        "order of the task file)")
        return None
    finite = np.isfinite(array).all(axis=1)
    if not finite.all():
        bad = int((~finite).sum())
        problems.append(f"{split.path}: row {int(np.flatnonzero(~finite)[0]) + 1} (counting "
                        f"from 1) holds NaN or an infinity ({bad} such row{'s' * (bad > 1)})")
        return None
    return array


def _files(folder: Path, suite: Suite, problems: list[str]) -> dict[str, dict[str, Path]]:
    """Task id -> split -> its file, as the folder lays them out (`LAYOUT`)."""
    known = [t.task_id for t in suite.tasks]
    found: dict[str, dict[str, Path]] = {}
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if not path.is_dir():
            if path.suffix in FORMATS:
                problems.append(f"{path}: embeddings go in a folder per task; {LAYOUT}")
            continue
        if path.name not in known:
            close = suggestions(path.name, known)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            problems.append(f"{path}: suite {suite.name} has no task {path.name}{hint}; "
                            f"`geneb-engine tasks --suite {suite.name}` lists them")
            continue
        splits = found.setdefault(path.name, {})
        unread: set[str] = set()      # splits whose file is of a format not read here
        for file in sorted(p for p in path.iterdir() if not p.name.startswith(".")):
            if file.stem not in SPLITS:
                if file.suffix in FORMATS:
                    problems.append(f"{file}: not a split; name the files train{file.suffix} "
                                    f"and test{file.suffix}")
                continue
            if file.suffix not in FORMATS:
                unread.add(file.stem)
                problems.append(f"{file}: {file.suffix or 'no suffix'} is not a format read "
                                f"here; save it as one of {', '.join(FORMATS)} (a pickle is "
                                "never loaded)")
            elif file.stem in splits:
                problems.append(f"{path}: two {file.stem} files ({splits[file.stem].name}, "
                                f"{file.name}); keep one")
            else:
                splits[file.stem] = file
        problems += [f"{path}: no {name} file ({', '.join(name + f for f in FORMATS)})"
                     for name in SPLITS if name not in splits and name not in unread]
    if not found and not problems:
        problems.append(f"{folder}: no task folders; {LAYOUT}")
    return found


def _submission(given: str, model_id: str) -> tuple[Submission, SubmittedFile, bytes]:
    """The submission file `--submission` names, checked by the official rules, of the model."""
    path = Path(given).expanduser()
    if not path.is_file():
        raise GenebError(f"--submission {given}: no such file; give the model's official "
                         "submission file (schema 1.0)")
    doc, problems = read_official_file(path)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise GenebError(f"--submission {given}: {problems[0]}{more}")
    if not isinstance(doc, Submission):
        raise GenebError(f"--submission {given}: a leaderboard file, not a submission")
    if doc.model_id != model_id:
        raise GenebError(f"--submission {given}: its model_id is {doc.model_id!r}, not "
                         f"{model_id!r}; the embeddings and the submission name one model")
    data = path.read_bytes()
    return doc, SubmittedFile(str(path.resolve()), hashlib.sha256(data).hexdigest()), data


def _entry(paths: StorePaths, model_id: str, submission: Submission | None) -> ModelMeta:
    """The model's catalog entry: the submission's metadata, else the store's row of the model
    (an earlier import's, or a model known from an imported submission), else a one-off; a
    model that runs otherwise (a catalog entry, a checkpoint folder or hub id run) is
    refused."""
    known = catalog_models(paths, lambda row: row["model_id"] == model_id).get(model_id)
    runs = store_models(paths).get(model_id)
    if runs is None and known is not None and (known.hub_id or known.path
                                               or known.encoder not in ("hf", KIND)):
        runs = known
    if runs is not None and runs.encoder != KIND:
        raise GenebError(f"MODEL {model_id}: names a model this store runs itself "
                         f"({KINDS[runs.encoder].label or runs.encoder}); imported embeddings "
                         f"take a model id of their own, e.g. {model_id}-embeddings")
    if submission is not None:
        return catalog_entry(submission)
    return known or ModelMeta.one_off(model_id)


def prepare(paths: StorePaths, model_id: str, folder: str, suite: Suite,
            submission: str | None, on_warning: Callable[[str], None]) -> Prepared:
    """Check everything an import needs (see the module); one GenebError listing every
    problem, nothing written."""
    check_id("model", model_id, "MODEL")
    root = named_folder("DIR", folder, LAYOUT).resolve()
    doc, submitted, data = _submission(submission, model_id) if submission else (None,) * 3
    entry = _entry(paths, model_id, doc)
    problems: list[str] = []
    found = _files(root, suite, problems)
    splits: list[_Split] = []
    read_errors: list[GenebError] = []
    for task_id, files in found.items():
        if not files:
            continue
        try:
            task = suite.load(task_id)
        except GenebError as exc:
            read_errors.append(exc)
            continue
        for message in task.warnings:
            on_warning(message)
        for name in (n for n in SPLITS if n in files):
            split = _Split(task_id, name, files[name], getattr(task, name).labels,
                           task.data_hash)
            array = _read(split, problems)
            if array is not None:
                splits.append(replace(split, sha256=_sha256(split.path), dim=array.shape[1],
                                      dtype=str(array.dtype)))
    widths = Counter(s.dim for s in splits)
    if len(widths) > 1:
        width = widths.most_common(1)[0][0]
        problems += [f"{s.path}: rows of {s.dim} values, and the other files' rows have "
                     f"{width}; a model's embeddings have one width" for s in splits
                     if s.dim != width]
    if problems or read_errors:
        raise RowProblems.merged([*read_errors, *(GenebError(p) for p in problems)],
                                 f"{root} (nothing imported)")
    files = tuple(ImportedFile(s.task, s.name, s.data_hash, str(s.path),
                               FORMATS[s.path.suffix], s.sha256, len(s.labels),
                               s.dim, s.dtype) for s in splits)
    record = EmbeddingImport(model_id, str(root), suite.name, files, submitted, __version__,
                             datetime.now(UTC).isoformat(timespec="seconds"))
    # nothing runs: no weights, and none of the entry's recipe (what made the files is theirs)
    model = replace(entry, **{**RECIPE_DEFAULTS, "encoder": KIND}, revision=record.revision,
                    hub_id=None, path=None)
    return Prepared(model, record, tuple(splits), data)


def store_import(paths: StorePaths, prepared: Prepared) -> bool:
    """Store a prepared import (see the module); False when the store held it already (the
    same files from the same folder, the same submission), then nothing is written."""
    model, record = prepared.model, prepared.record
    embeddings = EmbeddingStore(paths)
    encoder = build(model)
    old = read_import(paths, model.model_id)
    row = read_catalog(paths, "models").filter(model_id=model.model_id)
    same = (old is not None and (old.revision, old.submission, old.folder)
            == (record.revision, record.submission, record.folder)
            and row.select(models_frame([model]).columns).equals(models_frame([model])))
    with StoreSession(paths):
        for split in prepared.splits:
            expect = {**embeddings_identity(model, encoder, split.data_hash),
                      "source": {"file": str(split.path), "format": FORMATS[split.path.suffix],
                                 "sha256": split.sha256, "dtype": split.dtype}}
            if embeddings.stored(model.model_id, split.task, split.name, split.data_hash,
                                 encoder.revision, expect):
                continue
            same = False
            with pair_lock(paths, model.model_id, split.task):
                _store_split(embeddings, split, expect)
        kept = {(path_part(s.task), s.name) for s in prepared.splits}
        for entry in embeddings.splits():       # an earlier import's that this one lacks
            if entry.model_dir == path_part(model.model_id) and \
                    (entry.task_dir, entry.split) not in kept:
                with pair_lock(paths, model.model_id, entry.task_dir):  # path_part: the same
                    embeddings.drop(entry.path)
                same = False
        if same:
            return False
        write_import(paths, record, prepared.submission)
        register_models(paths, [model], {model.model_id: record.revision})
    return True


def _store_split(embeddings: EmbeddingStore, split: _Split, expect: dict) -> None:
    problems: list[str] = []
    array = _read(split, problems)
    if array is None or _sha256(split.path) != split.sha256:
        raise GenebError(f"{split.path}: changed while it was being imported; run the same "
                         "command again")
    writer = embeddings.writer(expect["model_id"], split.task, split.name, split.labels, expect)
    for start in range(0, len(array), _BLOCK):
        rows = np.arange(start, min(start + _BLOCK, len(array)))
        writer.write(rows, np.asarray(array[rows[0]:rows[-1] + 1], dtype=np.float32))
    writer.finish({"n_truncated": 0})


def check_imported(paths: StorePaths, work: Iterable[PairWork],
                   hashes: Mapping[str, str]) -> None:
    """Every split the planned pairs of imported models need is stored by their import, on
    the data the run reads (`hashes`: task -> data hash); else one GenebError per model
    naming the tasks that lack one, before the store changes."""
    embeddings = EmbeddingStore(paths)
    lacking: dict[str, list[str]] = {}
    for w in work:
        if not KINDS[w.model.encoder].imported:
            continue
        data_hash = hashes[w.task.task_id]
        expect = embeddings_identity(w.model, build(w.model), data_hash)
        if not all(embeddings.stored(w.model.model_id, w.task.task_id, name, data_hash,
                                     expect["model_revision"], expect) for name in SPLITS):
            lacking.setdefault(w.model.model_id, []).append(w.task.task_id)
    for model, tasks in lacking.items():
        shown = ", ".join(tasks[:5]) + (f" and {len(tasks) - 5} more" if len(tasks) > 5 else "")
        raise GenebError(f"model {model}: its imported embeddings hold no {shown} on the data "
                         f"this run reads; import them (`geneb-engine import-embeddings {model} "
                         "DIR`, with the --suite of this run), or leave those tasks out "
                         "(--tasks)")
