"""Telling the rest of the product that a command changed a store.

`geneb-engine` calls `store_changed(paths)` after a command that writes results or catalogs
(fill, import, doctor) returned. The listeners are the `geneb.store_changed` entry points of
the geneb distribution (pyproject.toml): callables taking the store's `StorePaths`. The one
declared today is the dashboard's `geneb_tui.core.first_view.refresh`, which keeps its
start-up table current; the indirection keeps the dependency direction (`engine -> store`,
`geneb_tui -> store`, never `engine -> geneb_tui`). Only geneb's own metadata is read
(`importlib.metadata.entry_points()` would scan every installed distribution: ~120 ms).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution

from store.paths import StorePaths
from store.vocab.errors import brief

GROUP = "geneb.store_changed"
DISTRIBUTION = "geneb"


def listeners():
    """The entry points of `GROUP`; none when geneb is not installed (run from a source tree)."""
    try:
        return distribution(DISTRIBUTION).entry_points.select(group=GROUP)
    except PackageNotFoundError:
        return ()


def store_changed(paths: StorePaths) -> list[str]:
    """Call every listener with `paths`; one line per listener that failed, which is never
    raised: the command's work is done and stored whatever a listener meets."""
    problems = []
    for ep in listeners():
        try:
            ep.load()(paths)
        except Exception as exc:   # any failure of a listener, reported and not raised
            problems.append(f"{ep.name} ({ep.value}) failed after the store changed: "
                            f"{type(exc).__name__}: {brief(exc)}")
    return problems
