"""geneb-v1 task data: the hub layout, where the snapshot lives, and subsampling.

Two layouts hold the same data and hash the same (`engine.data.content_hash`):

- flat (the official harness): `<root>/<task_id>.csv`, columns `text,label,split`;
- hub (dataset `DeepPavlov/geneb-tasks`): `<root>/tasks/<task_id>/{train,test}.csv`, columns
  `text,label` (also accepted without the `tasks/` level: `<root>/<task_id>/train.csv`).

`geneb-engine data download` puts the pinned snapshot in `<store>/data/geneb-v1/<revision>/`
with a `geneb-data.json` manifest (per-file sha256); `--data-dir` (or `GENEB_DATA_DIR`) points
at any folder holding either layout instead.

Subsampling (off for geneb-v1 unless asked): a task with more than `max_sequences` sequences
keeps, in each split and each class, the first ceil(n_class × max_sequences / n_task) rows of a
`numpy.random.RandomState(seed)` permutation of that class's rows, in file order. The same files
and options always give the same rows; the result's data hash is the subsample's.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from engine.data import (
    SPLITS,
    Split,
    TaskData,
    assemble_task,
    build_split,
    flat_task_name,
    read_flat_csv,
    read_rows,
    skip_reason,
    skipped_warning,
    task_id_of,
)
from store.atomic import write_text_atomic
from store.errors import GenebError

DATASET_REPO = "DeepPavlov/geneb-tasks"
MIRROR_REPO = "darlednik/geneb-tasks"
PINNED_REVISION = "4edd705be573e48c585c2cf79dc320f9f43c7b04"
DATA_MANIFEST = "geneb-data.json"
SUBSAMPLE_LIMIT = 100_000
SUBSAMPLE_SEED = 0
_SKIP = {"manifest.csv"}


def read_hub_task(folder: Path, task_id: str | None = None) -> TaskData:
    """One task from `<folder>/{train,test}.csv` (columns text,label)."""
    folder = Path(folder)
    task_id = task_id_of(folder.name if task_id is None else task_id, folder)
    columns = ("text", "label")
    splits: dict[str, Split] = {}
    warnings: tuple[str, ...] = ()
    for name in SPLITS:
        path = folder / f"{name}.csv"
        if not path.is_file():
            raise GenebError(f"{path}: missing; a task in the hub layout needs both "
                             f"{folder}/train.csv and {folder}/test.csv (columns text,label)")
        rows, skipped = [], {}
        for line, row in read_rows(path, columns):
            reason = skip_reason(row, columns)
            if reason is None:
                rows.append((f"{path}, line {line}", row["text"], row["label"]))
            else:
                skipped[reason] = skipped.get(reason, 0) + 1
        splits[name] = build_split(rows)
        warnings += skipped_warning(path, skipped)
    return assemble_task(task_id, splits["train"], splits["test"], str(folder), warnings)


def task_sources(root: Path) -> dict[str, Callable[[], TaskData]]:
    """Every task a folder holds, in either layout: task id → loader (sorted by id).

    A file or folder whose name gives no usable task id (`store.ids`) is one error naming it."""
    root = Path(root)
    found: dict[str, Callable[[], TaskData]] = {}
    for base in (root / "tasks", root):
        if not base.is_dir():
            continue
        for sub in sorted(p for p in base.iterdir() if p.is_dir()):
            if (sub / "train.csv").is_file() or (sub / "test.csv").is_file():
                found.setdefault(task_id_of(sub.name, sub),
                                 lambda s=sub: read_hub_task(s, s.name))
    for path in sorted(root.glob("*.csv")):
        if path.name not in _SKIP:
            task_id = task_id_of(flat_task_name(path), path)
            found.setdefault(task_id, lambda p=path, t=task_id: read_flat_csv(p, t))
    return dict(sorted(found.items()))


def default_data_dir(store_root: Path, revision: str = PINNED_REVISION) -> Path:
    return Path(store_root) / "data" / "geneb-v1" / revision


def data_dir_for(store_root: Path, data_dir: str | os.PathLike | None = None,
                 revision: str = PINNED_REVISION) -> Path:
    """`--data-dir`, else `GENEB_DATA_DIR`, else the downloaded snapshot in the store."""
    chosen = data_dir or os.environ.get("GENEB_DATA_DIR")
    return Path(chosen).expanduser() if chosen else default_data_dir(store_root, revision)


def missing_data_message(root: Path, revision: str = PINNED_REVISION) -> str:
    return (f"geneb-v1 task data not found in {root}. Run `geneb-engine data download` (needs "
            f"access to the Hugging Face hub; fetches {DATASET_REPO} at revision {revision}), "
            f"or put the official files there yourself: either the hub layout "
            f"tasks/<task_id>/train.csv and test.csv (columns text,label), or the harness's flat "
            f"<task_id>.csv files (columns text,label,split); --data-dir (or GENEB_DATA_DIR) "
            f"points at another folder")


def read_data_manifest(root: Path) -> dict | None:
    path = Path(root) / DATA_MANIFEST
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise GenebError(f"{path}: not valid JSON ({exc}); delete it and run "
                         "`geneb-engine data download` again") from None


def write_data_manifest(root: Path, repo: str, revision: str) -> dict:
    """Record every data file's sha256 and size (what `data verify` checks later)."""
    root = Path(root)
    files = {}
    for path in sorted(p for p in root.rglob("*.csv") if p.is_file()):
        files[path.relative_to(root).as_posix()] = {"sha256": sha256_file(path),
                                                    "bytes": path.stat().st_size}
    manifest = {"dataset": repo, "revision": revision, "files": files,
                "n_tasks": len(task_sources(root)),
                "downloaded_at": datetime.now(UTC).isoformat(timespec="seconds")}
    write_text_atomic(root / DATA_MANIFEST, json.dumps(manifest, indent=1))
    return manifest


def verify_data(root: Path) -> list[str]:
    """Files whose content differs from the manifest (empty when all match)."""
    manifest = read_data_manifest(root)
    if manifest is None:
        raise GenebError(f"{root}: no {DATA_MANIFEST}; run `geneb-engine data download`")
    bad = []
    for rel, info in manifest["files"].items():
        path = Path(root) / rel
        if not path.is_file():
            bad.append(f"{rel}: missing")
        elif sha256_file(path) != info["sha256"]:
            bad.append(f"{rel}: checksum differs")
    return bad


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def subsample_task(task: TaskData, max_sequences: int = SUBSAMPLE_LIMIT,
                   seed: int = SUBSAMPLE_SEED) -> TaskData:
    """The task itself when small enough, else a deterministic stratified subsample."""
    total = len(task.train) + len(task.test)
    if total <= max_sequences:
        return task
    fraction = max_sequences / total
    parts = []
    for split in (task.train, task.test):
        rng = np.random.RandomState(seed)
        keep = []
        for cls in np.unique(split.labels):
            idx = np.flatnonzero(split.labels == cls)
            k = min(idx.size, max(1, math.ceil(idx.size * fraction)))
            keep.append(idx[rng.permutation(idx.size)[:k]])
        rows = np.sort(np.concatenate(keep))
        parts.append(Split(tuple(split.sequences[i] for i in rows), split.labels[rows]))
    note = (f"{task.task_id}: subsampled {total} sequences to {len(parts[0]) + len(parts[1])} "
            f"(stratified per split and class, seed {seed}, limit {max_sequences})")
    sub = assemble_task(task.task_id, parts[0], parts[1], task.task_id, task.warnings + (note,))
    return sub


def geneb_v1_suite(store_root: Path, data_dir: str | os.PathLike | None = None,
                   subsample: int | None = None, revision: str = PINNED_REVISION):
    """The 100 geneb-v1 tasks (official ids, labels, categories) over the local data files."""
    from engine.suites import Suite
    from store.catalog import geneb_v1_tasks

    root = data_dir_for(store_root, data_dir, revision)
    manifest = read_data_manifest(root) if root.is_dir() else None
    data_revision = manifest["revision"] if manifest else (
        revision if root == default_data_dir(store_root, revision) else "unverified")
    if subsample:
        data_revision += f"+subsample{subsample}"
    sources: dict[str, Callable[[], TaskData]] = {}

    def load(task_id: str) -> TaskData:
        # The task list needs no data (listing, planning); the first load looks for the files.
        if not sources:
            sources.update(task_sources(root) if root.is_dir() else {})
            if not sources:
                raise GenebError(missing_data_message(root, revision))
        if task_id not in sources:
            raise GenebError(f"task {task_id}: no data in {root} (neither tasks/{task_id}/"
                             f"train.csv nor {task_id}.csv); run `geneb-engine data download` "
                             "again or add the file")
        task = sources[task_id]()
        return subsample_task(task, subsample) if subsample else task

    return Suite("geneb-v1", data_revision, geneb_v1_tasks(), load, subsample or None)
