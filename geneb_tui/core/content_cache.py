"""The views' computed content, cached per snapshot and view key (UI-free, thread-safe, and
light: the app imports it before polars is loaded).

Every view asks `cache_of(snapshot).get(key, compute)`: the first caller of a key computes it
(in a worker), a second one waits for that computation instead of repeating it, later ones get
the stored payload. `peek(key)` answers at once (None when not computed yet): what a screen
paints when it opens. The keys (`*_key` below) hold everything the content depends on (the
filters, the options), so a selection change can never show stale content; a new snapshot
(Ctrl+R, a run) gets a new cache. The computations are `geneb_tui.core.view_cache`'s.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from geneb_tui.core.filters import Filters

MAX_ENTRIES = 256    # payloads kept per snapshot (oldest dropped first)


class ViewCache:
    """The computed payloads of one snapshot, by key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done: OrderedDict[Hashable, Any] = OrderedDict()
        self._running: dict[Hashable, threading.Event] = {}

    def peek(self, key: Hashable) -> Any | None:
        with self._lock:
            return self._done.get(key)

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The payload of `key`, computed by `compute()` once (runs in the caller's thread; a
        second caller waits for the first). An exception propagates and nothing is stored."""
        while True:
            with self._lock:
                if key in self._done:
                    return self._done[key]
                event = self._running.get(key)
                if event is None:
                    event = self._running[key] = threading.Event()
                    break
            event.wait()
        try:
            payload = compute()
            with self._lock:
                self._done[key] = payload
                while len(self._done) > MAX_ENTRIES:
                    self._done.popitem(last=False)
            return payload
        finally:
            with self._lock:
                del self._running[key]
            event.set()


_CACHES: dict[int, tuple[weakref.ref, ViewCache]] = {}
_CACHES_LOCK = threading.Lock()


def cache_of(snapshot: object) -> ViewCache:
    """The cache of `snapshot` (a `core.query.StoreSnapshot`: one per snapshot object, dropped
    with it)."""
    with _CACHES_LOCK:
        for k in [k for k, (ref, _) in _CACHES.items() if ref() is None]:
            del _CACHES[k]
        hit = _CACHES.get(id(snapshot))
        if hit is None or hit[0]() is not snapshot:
            hit = _CACHES[id(snapshot)] = (weakref.ref(snapshot), ViewCache())
        return hit[1]


# -- the views' keys ----------------------------------------------------------------------------
def table_key(request: tuple) -> tuple:
    """A main-table request: (filters, sort key, descending, rank scope)."""
    return ("table", request)


def compare_key(name: str, filters: Filters, options) -> tuple:
    return ("compare", name, filters, options)


def task_key(filters: Filters, task: str) -> tuple:
    return ("task", filters, task)


def significance_key(filters: Filters) -> tuple:
    return ("significance", filters)


def pair_key(filters: Filters, a: str, b: str) -> tuple:
    return ("pair", filters, a, b)


def recommend_key(filters: Filters, form) -> tuple:
    """The Recommend view's answer: its form (`core.recommend.Form`) on the selection's suite
    and metric (all the question depends on besides the snapshot)."""
    return ("recommend", filters.suite, filters.metric, form)


def context_key(filters: Filters) -> tuple:
    """The score-against-context curve of a selection (`core.context.context_view`)."""
    return ("context", filters)


def missing_key(filters: Filters, regimes: tuple[str, ...], device: str,
                dtype: str = "auto") -> tuple:
    return ("missing", filters, regimes, device, dtype)
