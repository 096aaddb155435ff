"""Suite manifests: the `manifest.csv` beside a suite's task files, columns
`task_id,category[,label][,organism][,kingdom][,kind][,window][,test_chroms]`, gives each task
its category, label, domain (a species or "multiple"; a kingdom of
`store.domains.TASK_KINGDOMS`; "unknown" where not given) and kind (`store.vocab.kinds`:
classification where not given, regression, variant: `task_kinds`); without one, each task is
its own category and a classification task. A variant task given by coordinates
(`chrom,pos,ref,alt,label[,split]` over `--reference`, `engine.genome`) takes its window width
in bases from `window` and, optionally, its held-out chromosomes from `test_chroms`
(space-separated names: its variants on them are the test split, all others train, and the
file needs no split column): `variant_settings`.

`read_manifest` is the one reader of the file: the engine reads a directory suite's manifest
with it, the dashboard and the store's checks those of the suites materialised in the store
(`materialised_suite_tasks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from store.catalog import CATEGORY_ORDER, TaskMeta
from store.csv_in import RowProblems, read_rows
from store.did_you_mean import suggestions
from store.domains import TASK_KINGDOMS, UNKNOWN
from store.paths import StorePaths
from store.vocab.errors import GenebError
from store.vocab.ids import check_id
from store.vocab.kinds import TaskKind, kind_named

MANIFEST = "manifest.csv"


def _lines(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    return read_rows(path, ("task_id", "category"),
                     hint="a manifest needs the columns task_id,category[,label]")


def read_manifest(path: Path) -> dict[str, dict[str, str]]:
    """Task id → its row, in file order; the problems of every row raised together
    (`store.csv_in.RowProblems`), each naming the file and line."""
    path = Path(path)
    rows: dict[str, dict[str, str]] = {}
    problems: list[str] = []
    for line, row in _lines(path):
        try:
            rows[check_id("task", row["task_id"], f"{path}, line {line}")] = row
        except GenebError as exc:
            problems.append(str(exc))
        try:
            kind_named(row.get("kind"), f"{path}, line {line}")
        except GenebError as exc:
            problems.append(str(exc))
        problems += _setting_problems(row, f"{path}, line {line}")
        kingdom = (row.get("kingdom") or "").strip()
        if kingdom and kingdom not in TASK_KINGDOMS:
            problems.append(f"{path}, line {line}: kingdom {kingdom!r} is not one of "
                            f"{', '.join(TASK_KINGDOMS)}")
    if problems:
        raise RowProblems.of_file(path, problems)
    return rows


def _window(text: str | None, where: str) -> int | None:
    value = (text or "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise GenebError(f"{where}: window {value!r} is not a positive whole number; give the "
                         "window width in bases of a variant task given by chrom,pos (e.g. 512)")
    return int(value)


def _setting_problems(row: dict[str, str], where: str) -> list[str]:
    try:
        _window(row.get("window"), where)
        return []
    except GenebError as exc:
        return [str(exc)]


def variant_settings(manifest: dict[str, dict[str, str]]
                     ) -> dict[str, tuple[int | None, frozenset[str] | None]]:
    """Task id -> (its window width, its held-out chromosomes) where the manifest gives either
    (see the module), for a manifest `read_manifest` read."""
    out = {}
    for tid, row in manifest.items():
        window = _window(row.get("window"), tid)
        chroms = frozenset((row.get("test_chroms") or "").split()) or None
        if window is not None or chroms is not None:
            out[tid] = (window, chroms)
    return out


def task_kinds(manifest: dict[str, dict[str, str]]) -> dict[str, TaskKind]:
    """Task id -> its kind, for the tasks of a manifest `read_manifest` read (a task it does
    not list is a classification task)."""
    return {tid: kind_named(row.get("kind"), tid) for tid, row in manifest.items()}


def category_warnings(path: Path) -> list[str]:
    """One line for each row of a manifest whose category is not a geneb-v1 category but close
    to one (`store.did_you_mean`: 'Promoterz', 'promoters'), most likely a typo: its results
    would stand in a category of their own. A category far from every geneb-v1 one is the
    suite's own, and says nothing. The engine prints these when it reads a directory suite."""
    out = []
    for line, row in _lines(Path(path)):
        category = (row.get("category") or "").strip()
        if category and category not in CATEGORY_ORDER:
            close = suggestions(category, CATEGORY_ORDER, n=1)
            if close:
                out.append(f"{path}, line {line}: category {category!r} is not a geneb-v1 "
                           f"category (did you mean {close[0]!r}?); its tasks stand in a "
                           "category of their own")
    return out


def suite_tasks(suite: str, manifest: dict[str, dict[str, str]],
                task_ids: Iterable[str] = ()) -> tuple[TaskMeta, ...]:
    """A suite's tasks: those `manifest` lists, in its order, with their label and category (the
    task id where the row gives none); with an empty manifest, `task_ids`, each its own
    category."""
    def given(tid: str, column: str) -> str:
        return manifest.get(tid, {}).get(column) or ""

    return tuple(TaskMeta(tid, given(tid, "label") or tid, given(tid, "category") or tid, suite,
                          suite, given(tid, "organism").strip() or UNKNOWN,
                          given(tid, "kingdom").strip() or UNKNOWN)
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
