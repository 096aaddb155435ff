"""geneb-v1 task data: the pinned dataset, where its snapshot is looked for, its checksum
manifest, and subsampling.

`geneb-engine data download` puts the pinned snapshot of `DeepPavlov/geneb-tasks` (either task
layout: `engine.data`) in `StorePaths.data_dir(revision)` with a `geneb-data.json` manifest
(per-file sha256); `--data-dir` (or `GENEB_DATA_DIR`) points at any folder holding either layout
instead.

Subsampling (off unless asked): a task with more than `max_sequences` sequences keeps, in each
split and each class, the first ceil(n_class × max_sequences / n_task) rows of a
`numpy.random.RandomState(seed)` permutation of that class's rows, in file order. A regression or
variant task (`engine.data.KindTargets`; its sequences: the distinct ones of its rows) keeps
rows by the same rule, a variant task's per label, a regression task's of all rows at once (a
seeded uniform sample), at the largest share that keeps at most `max_sequences` distinct
sequences (variants that share a reference window keep fewer sequences than rows; at least one
row of each label and split); a kept variant keeps both its sequences, and the split holds the
distinct sequences of the rows kept. The same files and options always give the same
rows; the result's data hash is the subsample's, and the suite's data revision says it was
subsampled (`subsampled`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from engine.data import KindTargets, Split, TaskData, assemble_task, letter_counts
from engine.task_files import task_sources
from store.atomic import write_text_atomic
from store.folders import named_folder
from store.paths import StorePaths
from store.vocab.errors import GenebError
from store.vocab.kinds import DRAWN_FROM_ALL

DATASET_REPO = "DeepPavlov/geneb-tasks"
MIRROR_REPO = "darlednik/geneb-tasks"
PINNED_REVISION = "4edd705be573e48c585c2cf79dc320f9f43c7b04"
DATA_MANIFEST = "geneb-data.json"
SUBSAMPLE_LIMIT = 100_000
SUBSAMPLE_SEED = 0


DATA_FOLDER = ("a geneb-v1 data folder holds tasks/<task_id>/{train,test}.csv (what `geneb-engine "
               "data download` writes) or the harness's flat <task_id>.csv files")


def data_dir_for(paths: StorePaths, data_dir: str | os.PathLike | None = None,
                 revision: str = PINNED_REVISION, *, check: str | None = None) -> Path:
    """`--data-dir`, else `GENEB_DATA_DIR`, else the downloaded snapshot in the store. A folder
    the user named is checked when asked (`store.folders`): `check="folder"`, it must be one;
    `check="creatable"` (`data download`, which makes it), it must not be a file."""
    for option, chosen in (("--data-dir", data_dir),
                           ("$GENEB_DATA_DIR", os.environ.get("GENEB_DATA_DIR"))):
        if chosen:
            if check is not None:
                named_folder(option, str(chosen), DATA_FOLDER,
                             may_be_missing=check == "creatable")
            return Path(chosen).expanduser()
    return paths.data_dir(revision)


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
    if task.targets is not None:
        return _subsample_kind(task, fraction, seed, max_sequences)
    parts = []
    for split in (task.train, task.test):
        rows = _kept(split.labels, fraction, seed)
        parts.append(Split(tuple(split.sequences[i] for i in rows), split.labels[rows]))
    note = (f"{task.task_id}: subsampled {total} sequences to {len(parts[0]) + len(parts[1])} "
            f"(stratified per split and class, seed {seed}, limit {max_sequences})")
    sub = assemble_task(task.task_id, parts[0], parts[1], task.task_id, task.warnings + (note,))
    return sub


def _kept(groups: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """The rows kept of one split, in file order: of each group (a class, a variant label; one
    group: every row), the first ceil(n_group × fraction) (at least one) of a
    RandomState(seed) permutation of its rows."""
    rng = np.random.RandomState(seed)
    keep = []
    for group in np.unique(groups):
        idx = np.flatnonzero(groups == group)
        k = min(idx.size, max(1, math.ceil(idx.size * fraction)))
        keep.append(idx[rng.permutation(idx.size)[:k]])
    return np.sort(np.concatenate(keep))


def _subsample_kind(task: TaskData, fraction: float, seed: int, limit: int) -> TaskData:
    """A regression or variant task's subsample (see the module): the rows kept and the
    distinct sequences they use; its data hash: the task's with the rows kept."""
    t = task.targets
    regression = t.kind in DRAWN_FROM_ALL      # a uniform share of the rows
    given = ((task.train, t.rows_train, t.y_train), (task.test, t.rows_test, t.y_test))

    def kept_at(share: float) -> list[np.ndarray]:
        return [_kept(np.zeros(len(y)) if regression else y, share, seed) for _, _, y in given]

    def sequences(kept: list[np.ndarray]) -> int:
        return sum(np.unique(rows[k]).size for (_, rows, _), k in zip(given, kept, strict=True))

    # the kept rows grow with the share (prefixes of the same permutations): the largest share
    # whose distinct sequences fit the limit, by bisection
    low, high, best = 0.0, fraction, kept_at(fraction)
    if sequences(best) > limit:
        best = kept_at(0.0)
        for _ in range(40):
            mid = (low + high) / 2
            if sequences(kept := kept_at(mid)) <= limit:
                low, best = mid, kept
            else:
                high = mid
    h = hashlib.sha256(f"{task.data_hash}+subsample{limit},seed{seed}".encode())
    splits, out = [], {}
    for name, (split, rows, y), kept in zip(("train", "test"), given, best, strict=True):
        used = np.unique(rows[kept])
        splits.append(Split(tuple(split.sequences[i] for i in used),
                            np.zeros(len(used), dtype=np.int64)))
        out[name] = (np.searchsorted(used, rows[kept]), y[kept])
        h.update(f"#{name}\n{','.join(map(str, kept))}\n".encode())
    rows_kept = len(out["train"][1]) + len(out["test"][1])
    what = "variants, stratified per split and label" if not regression else \
        "rows, uniform per split"
    note = (f"{task.task_id}: subsampled {len(t.y_train) + len(t.y_test)} {what.split(',')[0]} "
            f"({len(task.train) + len(task.test)} sequences) to {rows_kept} "
            f"({len(splits[0]) + len(splits[1])} sequences; {what}, seed {seed}, limit {limit})")
    return replace(task, train=splits[0], test=splits[1], data_hash=h.hexdigest()[:16],
                   letters=letter_counts(splits[0].sequences + splits[1].sequences),
                   warnings=task.warnings + (note,),
                   targets=KindTargets(t.kind, *out["train"], *out["test"]))


def subsampled(revision: str | None, load: Callable[[str], TaskData],
               max_sequences: int) -> tuple[str, Callable[[str], TaskData]]:
    """What `--subsample N` makes of a suite's data revision and task loader: the revision with
    `+subsample<N>` (`local` when it has none), and a loader of the subsampled tasks."""
    return (f"{'local' if revision is None else revision}+subsample{max_sequences}",
            lambda task_id: subsample_task(load(task_id), max_sequences))
