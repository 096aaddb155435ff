"""Where a scope (`store.vocab.scopes.Scope`) becomes a task set: the one function `report`,
`status`, `export` (and any later reader) call, over the task catalog's columns
(`store.tables.catalogs.known_tasks`)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from store.catalog import CATEGORY_ORDER, TaskMeta
from store.did_you_mean import LIST_UP_TO, check_names
from store.domains import UNKNOWN
from store.paths import StorePaths
from store.tables.catalogs import known_tasks, tasks_frame
from store.vocab.errors import GenebError
from store.vocab.scopes import Scope, ScopeField

_DOMAIN_COLUMNS = ("organism", "kingdom")   # `store.domains`: "unknown" is no metadata
# The values a field may name beyond those the store's tasks have (did you mean).
_NAMED = {"category": CATEGORY_ORDER}


def scope_tasks(paths: StorePaths, tasks: Sequence[TaskMeta], scope: Scope, *, suite: str,
                known: pl.DataFrame | None = None) -> tuple[TaskMeta, ...]:
    """The tasks of `tasks` (a suite's, named `suite`) in `scope`, in their order; all of them
    for the whole suite. Each field's values are read from the suite's tasks, completed by
    the task catalog (`known`, default `known_tasks(paths)`) for the columns the suite's
    `TaskMeta` lacks. One GenebError, naming the option, when no task of the suite has the
    field's metadata, for a value no task of the store has (did you mean), for a known value
    no task of the suite has, and for a scope whose fields match no task together."""
    if scope.whole:
        return tuple(tasks)
    known = known_tasks(paths) if known is None else known
    frame = with_metadata(tasks, known)
    keep = pl.lit(True)
    for field, values in scope.given():
        have = _values(frame, field.column)
        if not have:
            raise GenebError(f"{field.option}: no task of suite {suite} has {field.what} "
                             f"metadata (task catalog column {field.column}); `geneb-engine "
                             f"tasks --suite {suite}` shows what its tasks have")
        check_names(field.what, values, [*_NAMED.get(field.column, ()), *have,
                                         *_values(known, field.column)],
                    option=field.option, listing=_listing(field, suite))
        if absent := [v for v in values if v not in have]:
            raise GenebError(f"{field.option}: {field.missing_from_suite(absent, suite)}; "
                             f"{_listing(field, suite, have)}")
        keep &= pl.col(field.column).is_in(list(values))
    chosen = set(frame.filter(keep)["task_id"])
    if not chosen:
        raise GenebError(f"no task of suite {suite} is in the scope {scope.describe()} (each "
                         "option matches tasks, but not together); `geneb-engine tasks --suite "
                         f"{suite}` shows each task's metadata")
    return tuple(t for t in tasks if t.task_id in chosen)


def with_metadata(tasks: Sequence[TaskMeta], known: pl.DataFrame) -> pl.DataFrame:
    """The suite's tasks as catalog rows, each column completed by `known` (`known_tasks`)
    where the suite's `TaskMeta` has no value (or no such field; an organism or kingdom
    `unknown` is none): the one rule by which a scope, `recommend --like` and its domain
    counts read a task's metadata."""
    frame = tasks_frame(tuple(tasks)).with_columns(
        pl.when(pl.col(c) != UNKNOWN).then(pl.col(c)).alias(c) for c in _DOMAIN_COLUMNS)
    joined = frame.join(known, on="task_id", how="left", suffix="_known", maintain_order="left")
    shared = [c for c in frame.columns if f"{c}_known" in joined.columns]
    return (joined.with_columns(pl.coalesce(c, f"{c}_known").alias(c) for c in shared)
            .drop(f"{c}_known" for c in shared))


def _values(frame: pl.DataFrame, column: str) -> list[str]:
    """The distinct values of `column` (none when the frame lacks it; `unknown` is none), in
    their order."""
    if column not in frame.columns:
        return []
    return [str(v) for v in frame[column].drop_nulls().unique(maintain_order=True)
            if v != UNKNOWN]


def _listing(field: ScopeField, suite: str, have: list[str] | None = None) -> str:
    """What lists the values of `field`: `have` (the suite's) where given and few, else the
    `tasks` command."""
    if have is not None and field.column != "task_id" and len(have) <= LIST_UP_TO:
        return f"its {field.what} values: {', '.join(have)}"
    listed = "its tasks" if field.column == "task_id" else f"each task's {field.what}"
    return f"`geneb-engine tasks --suite {suite}` lists {listed}"
