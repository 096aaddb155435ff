"""A folder's task files, in either layout (`engine.data`), each read by its kind's reader:
`engine.data` for classification tasks, `engine.task_kinds` for regression and variant ones
(flat files only) and for tasks given by coordinates over a reference genome."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from engine.data import TaskData, flat_task_name, read_flat_csv, read_hub_task, task_id_of
from engine.task_kinds import Coordinates, by_coordinates, by_intervals, read_kind_csv
from store.manifest import MANIFEST
from store.vocab.errors import GenebError
from store.vocab.kinds import CLASSIFICATION, FILE_COLUMNS, TaskKind


def read_task_file(path: Path, task_id: str, kind: TaskKind = CLASSIFICATION,
                   coordinates: Coordinates | None = None) -> TaskData:
    """One task of `kind` from its flat file (`read_flat_csv`, `engine.task_kinds`;
    `coordinates`: what a variant task given by coordinates is read with). A manifest's window
    or held-out chromosomes for a task whose file gives no coordinates is refused (they would
    be silently ignored)."""
    on_genome = by_coordinates(path, kind) or by_intervals(path, kind)
    if coordinates is not None and (coordinates.window or coordinates.test_chroms) \
            and not on_genome:
        raise GenebError(f"{path}: manifest.csv gives task {task_id} a window or test_chroms, "
                         "which only a task read over a reference genome takes (a variant "
                         "task's columns chrom,pos,ref,alt,label[,split], another kind's "
                         "chrom,start,end,label[,split]); clear them or give the rows by "
                         "coordinates")
    if kind is CLASSIFICATION and not on_genome:
        return read_flat_csv(path, task_id)
    return read_kind_csv(path, task_id, kind, coordinates)


def _hub_only_classification(folder: Path, task_id: str, kind: TaskKind) -> TaskData:
    raise GenebError(f"{folder}: task {task_id} is a {kind} task (manifest.csv), and the hub "
                     f"layout holds classification tasks only; give it as {task_id}.csv "
                     f"(columns {','.join(FILE_COLUMNS[kind])})")


def task_sources(root: Path, kinds: Mapping[str, TaskKind] | None = None,
                 coordinates: Callable[[str], Coordinates] | None = None
                 ) -> dict[str, Callable[[], TaskData]]:
    """Every task a folder holds, in either layout: task id → loader (sorted by id); `kinds`:
    the kind of each task that is not a classification task (a suite's manifest's);
    `coordinates`: task id -> what its variants are read with where given by coordinates.

    A file or folder whose name gives no usable task id (`store.vocab.ids`) is one error naming
    it."""
    kinds = kinds or {}
    root = Path(root)
    found: dict[str, Callable[[], TaskData]] = {}
    for base in (root / "tasks", root):
        if not base.is_dir():
            continue
        for sub in sorted(p for p in base.iterdir() if p.is_dir()):
            if (sub / "train.csv").is_file() or (sub / "test.csv").is_file():
                task_id = task_id_of(sub.name, sub)
                kind = kinds.get(task_id, CLASSIFICATION)
                found.setdefault(task_id, (lambda s=sub: read_hub_task(s, s.name))
                                 if kind is CLASSIFICATION else
                                 (lambda s=sub, t=task_id, k=kind:
                                  _hub_only_classification(s, t, k)))
    for path in sorted(root.glob("*.csv")):
        if path.name != MANIFEST:
            task_id = task_id_of(flat_task_name(path), path)
            found.setdefault(task_id, lambda p=path, t=task_id: read_task_file(
                p, t, kinds.get(t, CLASSIFICATION), coordinates(t) if coordinates else None))
    return dict(sorted(found.items()))
