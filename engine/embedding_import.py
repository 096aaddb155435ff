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
others', a value that is not a finite number once stored as float32 (NaN, an infinity, a
float64 beyond float32's range), a symbolic link that leaves DIR (one within DIR is followed),
a split that is not a regular file (a named pipe, a socket, a device: refused unopened). A
hidden folder of DIR (its name starts with '.') is not read, and a warning names it.

Then, under the store lock (shared) and the model's import locks (`store.locks`: no other
import of it and no `fill` of it runs meanwhile; the one that comes second refuses), every
split is stored as float32 with the identity `fill` expects (`engine.pairs.embeddings_identity`:
model revision the import's, `store.embedding_imports.revision_of`) and its source (the file,
its format, sha256 and dtype) in a folder of the new revision's own
(`store.embedding_imports.splits_folder`), reusing the splits an interrupted import of the same
files finished there. Replacing the import's record (`import.json`) is the switch, one atomic
rename: until then readers see the old import whole, after it the new one. The model's catalog
row (encoder `imported`, `store.tables.catalogs.imported_models`) follows, and the folders of
other imports of the model (the old one, one a kill interrupted) are removed.

`check_imported` is `fill`'s side: a run that needs a split the import did not store, or whose
import record cannot be read, is refused before the store changes.
"""

from __future__ import annotations

import glob
import hashlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from engine import __version__
from engine.data import SPLITS
from engine.embedding_files import FORMATS, BadFile, not_a_file, read_embeddings
from engine.encoders.imported import KIND, build
from engine.pairs import embeddings_identity
from engine.planner import PairWork
from engine.suites import Suite
from store.catalog import RECIPE_DEFAULTS, ModelMeta
from store.csv_in import RowProblems
from store.did_you_mean import suggestions
from store.embedding_imports import (
    SPLITS_FOLDER,
    EmbeddingImport,
    ImportedFile,
    SubmittedFile,
    read_import,
    submission_problem,
    write_import,
)
from store.embeddings import CHUNK_ROWS, EmbeddingStore, non_finite
from store.failpoints import reach
from store.folders import named_folder
from store.locks import StoreSession, embeddings_use, import_lock, try_acquire
from store.official.formats import Submission, read_official_file
from store.official.submission import catalog_entry
from store.paths import StorePaths
from store.sweep import sweep
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
    """The split's array when it is one the store can take (rows, finite values as stored);
    else None, what is wrong appended to `problems`."""
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
    if problem := _values_problem(array):
        problems.append(f"{split.path}: {problem}")
        return None
    return array


def _as_stored(block: np.ndarray) -> np.ndarray:
    """`block` as the store keeps it (float32: a float64 beyond its range becomes an
    infinity)."""
    with np.errstate(over="ignore"):
        return np.asarray(block, dtype=np.float32)


def _values_problem(array: np.ndarray) -> str | None:
    """Where `array` holds a value that is not a finite number once stored as float32, in
    words (row and column counted from 1, as the row of the split's sequence); None when
    every value is one."""
    first, rows = None, 0
    for start in range(0, len(array), _BLOCK):
        block = np.asarray(array[start:start + _BLOCK])
        found = non_finite(_as_stored(block))
        if found is None:
            continue
        row, column, count = found
        first = first or (start + row, column, float(block[row, column]))
        rows += count
    if first is None:
        return None
    row, column, value = first
    what = ("not a finite number" if not np.isfinite(value) else
            f"beyond the range of float32, which the store keeps (at most "
            f"{float(np.finfo(np.float32).max):.8g} in magnitude)")
    more = f" ({rows} rows hold such values)" if rows > 1 else ""
    return f"row {row + 1}, column {column + 1} holds {value}, {what}{more}"


def _outside(path: Path, root: Path) -> str | None:
    """Why `path` (in DIR, `root` resolved) is not read when it is a symbolic link that
    leaves DIR, or leads nowhere; None otherwise (a link within DIR is followed)."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return (f"a symbolic link to {os.readlink(path)}, which does not exist"
                if path.is_symlink() else None)
    if target.is_relative_to(root):
        return None
    return (f"a symbolic link to {target}, outside DIR; the import reads only what DIR "
            "holds (copy the file into DIR, or link to one inside it)")


def _files(folder: Path, suite: Suite, problems: list[str],
           on_warning: Callable[[str], None]) -> dict[str, dict[str, Path]]:
    """Task id -> split -> its file, as the folder lays them out (`LAYOUT`). A hidden folder
    (its name starts with '.') is not read, and said; a link that leaves DIR, a file that is
    not a regular file (a named pipe, a socket, a device) are refused unopened."""
    known = [t.task_id for t in suite.tasks]
    found: dict[str, dict[str, Path]] = {}
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            if path.is_dir():
                on_warning(f"{path}: not read: a hidden folder (its name starts with '.'); a "
                           "task's folder is named by its task id")
            continue
        if problem := _outside(path, folder):
            problems.append(f"{path}: {problem}")
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
        unread: set[str] = set()      # splits whose file is refused before it is read
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
            elif problem := _outside(file, folder) or not_a_file(file):
                unread.add(file.stem)
                problems.append(f"{file}: {problem}")
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
    found = _files(root, suite, problems, on_warning)
    try:
        suite.classification_only([t for t in suite.tasks if found.get(t.task_id)],
                                  "import-embeddings")
    except GenebError as exc:
        problems.append(str(exc))
        found = {t: files for t, files in found.items() if t not in suite.kinds}
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
    model_id = model.model_id
    encoder = build(model)
    with StoreSession(paths) as session, _importing(paths, model_id):
        sweep(paths, session)       # what a killed writer left, an import's included
        try:
            old = read_import(paths, model_id)
        except GenebError:      # a record that cannot be read: this import replaces it
            old = None
        embeddings = EmbeddingStore(paths, {model_id: record.embeddings})
        written = False
        for split in prepared.splits:
            expect = {**embeddings_identity(model, encoder, split.data_hash),
                      "source": {"file": str(split.path), "format": FORMATS[split.path.suffix],
                                 "sha256": split.sha256, "dtype": split.dtype}}
            if not embeddings.stored(model_id, split.task, split.name, split.data_hash,
                                     encoder.revision, expect):
                _store_split(embeddings, split, expect)
                written = True
        row = read_catalog(paths, "models").filter(model_id=model_id)
        same = (not written and old is not None
                and (old.embeddings, old.submission, old.folder)
                == (record.embeddings, record.submission, record.folder)
                and submission_problem(paths, old) is None
                and row.select(models_frame([model]).columns).equals(models_frame([model])))
        if not same:
            write_import(paths, record, prepared.submission)   # the switch
            reach("import-switched")
            register_models(paths, [model], {model_id: record.revision})
        dropped = _drop_other_imports(embeddings, model_id, record.embeddings)
    return not same or bool(dropped)


def _drop_other_imports(embeddings: EmbeddingStore, model_id: str, kept: str) -> list[str]:
    """Remove the folders of `model_id`'s splits other than `kept` (the import its record
    names): earlier imports', an interrupted one's, the model's own folder of a record written
    before imports were atomic; the names removed."""
    base = path_part(model_id)

    def of_model(name: str) -> bool:
        match = SPLITS_FOLDER.match(name)
        return name == base or (match is not None and match["model"] == base)

    gone = [p.name for p in sorted(embeddings.root.glob(f"{glob.escape(base)}*"))
            if p.name != kept and of_model(p.name)]
    for name in gone:
        embeddings.drop_folder(name)
        reach("import-dropped")
    return gone


@contextmanager
def _importing(paths: StorePaths, model_id: str) -> Iterator[None]:
    """An import's hold on the model (`store.locks`: its import lock, and its use lock
    exclusively); a GenebError naming the other run when another import of it or a fill of
    it runs."""
    lock = import_lock(paths, model_id)
    if not try_acquire(lock):
        raise GenebError(f"MODEL {model_id}: another `geneb-engine import-embeddings` of it is "
                         "running; run this one when it has finished")
    try:
        with embeddings_use(paths, model_id, exclusive=True) as held:
            if not held:
                raise GenebError(f"MODEL {model_id}: a `geneb-engine fill` of it is probing its "
                                 "imported embeddings; import them when it has finished")
            yield
    finally:
        lock.release()


@contextmanager
def imports_unchanged(paths: StorePaths, models: Iterable[ModelMeta]) -> Iterator[None]:
    """A `fill`'s hold on the imported embeddings among `models` (`store.locks`: each one's
    use lock, shared), so that no import replaces them while it runs; a GenebError naming
    the import when one of them is being imported."""
    with ExitStack() as held:
        for m in models:
            if KINDS[m.encoder].imported and not held.enter_context(
                    embeddings_use(paths, m.model_id, exclusive=False)):
                raise GenebError(f"model {m.model_id}: `geneb-engine import-embeddings` is "
                                 "importing its embeddings now; run fill when it has finished")
        yield


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
    the data the run reads (`hashes`: task -> data hash), and the import is the one the run
    planned with; else one GenebError per model (naming a record that cannot be read, or the
    tasks that lack a split), before the store changes."""
    embeddings = EmbeddingStore(paths)
    lacking: dict[str, list[str]] = {}
    records: dict[str, EmbeddingImport | None] = {}
    for w in work:
        if not KINDS[w.model.encoder].imported:
            continue
        model = w.model.model_id
        if model not in records:    # read_import: a GenebError naming a damaged record
            records[model] = record = read_import(paths, model)
            if record is not None and record.revision != w.model.revision:
                raise GenebError(f"model {model}: its embeddings were imported again after "
                                 "this run read the store; run it again")
        record = records[model]
        data_hash = hashes[w.task.task_id]
        expect = embeddings_identity(w.model, build(w.model), data_hash)
        if record is None or not all(
                embeddings.stored(model, w.task.task_id, name, data_hash,
                                  expect["model_revision"], expect) for name in SPLITS):
            lacking.setdefault(model, []).append(w.task.task_id)
    for model, tasks in lacking.items():
        shown = ", ".join(tasks[:5]) + (f" and {len(tasks) - 5} more" if len(tasks) > 5 else "")
        raise GenebError(f"model {model}: its imported embeddings hold no {shown} on the data "
                         f"this run reads; import them (`geneb-engine import-embeddings {model} "
                         "DIR`, with the --suite of this run), or leave those tasks out "
                         "(--tasks)")

