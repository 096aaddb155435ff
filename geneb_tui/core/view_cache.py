"""The views' computations, cached per snapshot and view key (`core.content_cache`; UI-free).

Every view (the comparison tabs, the Significance view and its two-model pair, the missing
evaluations, the task drill-down, the Recommend view's answer, the score-against-context
curve, the main table) computes its content here, once per key: a screen and `precompute` call
the same functions with the same arguments (`precompute` leaves the Recommend view's answer
and the context curve to their opening).

The main table is cached by request (`table_key`: filters, sort key, descending, rank scope),
and inside it the ranks among every entry, which a search or a filter shares with the
unfiltered table (`core.query.build_view`).

`precompute_tables(snapshot, requests, current)` builds main tables ahead (the app's requests
one key away from the table shown), from a worker of their own. `precompute(snapshot, filters,
choices, current)` fills the cache for a selection, in the order the views are likely opened
(the first comparison tab, the Significance view and its default pair, the missing
evaluations, the other comparison tabs, each task of the Tasks tab), from a background worker
the app starts once the main table and its rank intervals are shown; it stops as soon as
`current()` is false (the selection or the snapshot moved on).

This module imports polars (through the queries): the app imports it after its first frame.
It calls the queries and computations through their modules (`query.build_view`, ...), so a
test can stand in for one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from geneb_tui.core import compare, context, query, recommend, significance
from geneb_tui.core.compare import VIEWS, CompareOptions, Failed, Table
from geneb_tui.core.content_cache import (
    cache_of,
    compare_key,
    context_key,
    missing_key,
    pair_key,
    recommend_key,
    significance_key,
    table_key,
    task_key,
)
from geneb_tui.core.fill import FillChoices
from geneb_tui.core.filters import Filters
from geneb_tui.core.kinds import not_shown
from geneb_tui.core.query import StoreSnapshot
from geneb_tui.core.table_view import TableView
from store import runnable
from store.runnable import Runnability
from store.vocab.errors import GenebError
from store.vocab.protocol import REGIMES


def main_table(snap: StoreSnapshot, request: tuple) -> TableView:
    """The main table of `request` (`core.query.build_view`; an exception propagates)."""
    return cache_of(snap).get(table_key(request), lambda: query.build_view(snap, *request))


def compare_view(snap: StoreSnapshot, name: str, filters: Filters, options):
    """One comparison tab's payload (`core.compare.compute`; a bug: `Failed`)."""

    def run():
        try:
            return compare.compute(name, snap, filters, options)
        except Exception as exc:  # a bug: shown by the screen, never a traceback over the UI
            return Failed(f"{type(exc).__name__}: {exc}")

    return cache_of(snap).get(compare_key(name, filters, options), run)


def task_view(snap: StoreSnapshot, filters: Filters, task: str):
    """The task drill-down's table (`core.compare.task_values`; a bug: `Failed`)."""

    def run():
        try:
            return compare.task_values(snap, filters, task)
        except Exception as exc:  # a bug: shown by the screen
            return Failed(f"{type(exc).__name__}: {exc}")

    return cache_of(snap).get(task_key(filters, task), run)


def recommend_view(snap: StoreSnapshot, filters: Filters, form: recommend.Form):
    """The Recommend view's `Answer` to `form` (`core.recommend`: `recommend` itself); a
    question the store refuses: `core.recommend.Refused`; a bug: `Failed`."""

    def run():
        try:
            return recommend.answer(snap, recommend.question(snap, filters, form))
        except GenebError as exc:   # told in the view, as the command line tells it
            return recommend.Refused(str(exc))
        except Exception as exc:  # a bug: shown by the screen, never a traceback over the UI
            return Failed(f"{type(exc).__name__}: {exc}")

    return cache_of(snap).get(recommend_key(filters, form), run)


def significance_view(snap: StoreSnapshot, filters: Filters):
    """The Significance view's `Significance` (a bug: `Failed`)."""

    def run():
        try:
            return significance.significance(snap, filters,
                                             seed_rows=significance.store_seed_rows(snap))
        except Exception as exc:  # a bug: shown by the screen
            return Failed(f"{type(exc).__name__}: {exc}")

    return cache_of(snap).get(significance_key(filters), run)


def context_view(snap: StoreSnapshot, filters: Filters):
    """The score-against-context view's `ContextCurves` (`core.context.context_view`; a bug:
    `Failed`)."""

    def run():
        try:
            return context.context_view(snap, filters)
        except Exception as exc:  # a bug: shown by the screen
            return Failed(f"{type(exc).__name__}: {exc}")

    return cache_of(snap).get(context_key(filters), run)


def pair_view(snap: StoreSnapshot, filters: Filters, sig, a: str, b: str):
    """Two entries of the Significance view (`core.significance.two_models` on `sig`, the
    view of `filters`; a bug: `Failed`)."""

    def run():
        try:
            return significance.two_models(sig, a, b)
        except Exception as exc:  # a bug: shown by the screen
            return Failed(f"{type(exc).__name__}: {exc}")

    return cache_of(snap).get(pair_key(filters, a, b), run)


def default_pair(sig) -> tuple[str, str] | None:
    """The pair the Significance view shows first: its two best entries by the score the main
    table ranks by (the scope's: the category's, else macro; `Significance.point`), best first,
    a tie in entry id order; None when the view has no pair (fewer than two entries, `Failed`)."""
    if not getattr(sig, "ok", False):
        return None
    best = sorted(range(len(sig.entries)), key=lambda i: (-sig.point[i], sig.entries[i]))
    return sig.entries[best[0]], sig.entries[best[1]]


@dataclass(frozen=True)
class MissingData:
    """The missing-evaluations screen's content for a selection, regimes and device: the
    candidate models (runnable first, each group by name), their runnability, the device's
    memory, and every missing (model, task, regime) cell of the candidates."""

    candidates: tuple[str, ...]
    assessed: dict[str, Runnability]
    memory: int | None
    cells: tuple[tuple[str, str, str], ...]


def regimes_of(choice: str) -> tuple[str, ...]:
    """The regimes a fill runs for the screen's regimes choice ("all", or one regime)."""
    return REGIMES if choice == "all" else (choice,)


def missing_view(snap: StoreSnapshot, filters: Filters, regimes: tuple[str, ...],
                 device: str, dtype: str = "auto") -> MissingData:
    """The missing-evaluations screen's `MissingData` for a selection, regimes, device and
    precision (`--dtype`: the weights' memory estimate, and the precision the cells are
    counted at: `query.run_precisions`)."""

    def run() -> MissingData:
        memory = runnable.device_memory(device)
        found = query.candidate_models(snap, filters)
        installed = cache(runnable.package_installed)
        assessed = {m: runnable.assess(snap.catalog.get(m), m, device=device, memory=memory,
                                       dtype=dtype, installed=installed) for m in found}
        candidates = ([m for m in found if assessed[m].runnable]
                      + [m for m in found if not assessed[m].runnable])
        cells = query.missing_cells(snap, filters, candidates, regimes,
                                    query.run_precisions(snap, candidates, device, dtype))
        return MissingData(tuple(candidates), assessed, memory, tuple(cells))

    return cache_of(snap).get(missing_key(filters, regimes, device, dtype), run)


def precompute_tables(snap: StoreSnapshot, requests: Sequence[tuple],
                      current: Callable[[], bool] = lambda: True) -> None:
    """The main tables of `requests`, in turn, while `current()` holds (a background worker).
    A table whose build fails is left out: the app's own build of it says what failed."""
    for request in requests:
        if not current():
            return
        try:
            main_table(snap, request)
        except Exception:  # noqa: BLE001 - a guess ahead never stops the app
            continue


def precompute(snap: StoreSnapshot, filters: Filters, choices: FillChoices | None = None,
               current: Callable[[], bool] = lambda: True,
               views_done: Callable[[], None] = lambda: None) -> None:
    """Fill the cache for `filters` (a background worker; see the module docstring). `choices`:
    the missing-evaluations screen's regimes and device (its defaults when None);
    `views_done()` is called once every screen's own content is cached (before the task
    drill-downs)."""
    if snap.is_empty:
        return
    choices = choices or FillChoices()
    options = CompareOptions.for_filters(filters)
    first, *others = (name for name, _ in VIEWS)
    steps: list[Callable[[], object]] = [lambda: compare_view(snap, first, filters, options)]

    def significance_and_pair() -> None:
        sig = significance_view(snap, filters)
        if (pair := default_pair(sig)) is not None:
            pair_view(snap, filters, sig, *pair)

    if not_shown("significance", snap.kind) is None:
        steps.append(significance_and_pair)
    regimes, device, dtype = regimes_of(choices.regimes), choices.device, choices.dtype
    if not_shown("missing", snap.kind) is None:
        steps.append(lambda: missing_view(snap, filters, regimes, device, dtype))
    steps += [lambda name=name: compare_view(snap, name, filters, options) for name in others]
    for step in steps:
        if not current():
            return
        step()
    views_done()
    tasks = compare_view(snap, "tasks", filters, options)
    for task in (tasks.row_keys or []) if isinstance(tasks, Table) else []:
        if not current():
            return
        task_view(snap, filters, task)
