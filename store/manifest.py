"""Suite manifests: the `manifest.csv` beside a suite's task files, columns
`task_id,category[,label]`, gives each task its category and label; without one, each task is
its own category.

`read_manifest` is the one reader of the file: the engine reads a directory suite's manifest
with it, the dashboard and the store's checks those of the suites materialised in the store
(`materialised_suite_tasks`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from store.catalog import TaskMeta
from store.csv_in import read_rows
from store.paths import StorePaths
from store.vocab.errors import GenebError
from store.vocab.ids import check_id

MANIFEST = "manifest.csv"


def read_manifest(path: Path) -> dict[str, dict[str, str]]:
    """Task id → its row, in file order; every problem one GenebError naming the file and line."""
    path = Path(path)
    rows: dict[str, dict[str, str]] = {}
    for line, row in read_rows(path, ("task_id", "category"),
                               hint="a manifest needs the columns task_id,category[,label]"):
        rows[check_id("task", row["task_id"], f"{path}, line {line}")] = row
    return rows


def suite_tasks(suite: str, manifest: dict[str, dict[str, str]],
                task_ids: Iterable[str] = ()) -> tuple[TaskMeta, ...]:
    """A suite's tasks: those `manifest` lists, in its order, with their label and category (the
    task id where the row gives none); with an empty manifest, `task_ids`, each its own
    category."""
    return tuple(TaskMeta(tid, manifest.get(tid, {}).get("label") or tid,
                          manifest.get(tid, {}).get("category") or tid, suite, suite)
                 for tid in (list(manifest) if manifest else list(task_ids)))


def materialised_suite_tasks(paths: StorePaths) -> list[TaskMeta]:
    """Tasks of the suites materialised under `<store>/suites/<name>/manifest.csv` (known
    before any of their results exist); a manifest that cannot be read is skipped."""
    out: list[TaskMeta] = []
    if not paths.suites.is_dir():
        return out
    for path in sorted(paths.suites.glob(f"*/{MANIFEST}")):
        try:
            out.extend(suite_tasks(path.parent.name, read_manifest(path)))
        except GenebError:
            continue
    return out
