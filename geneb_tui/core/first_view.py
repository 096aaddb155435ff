"""The first-view cache: the main table the dashboard last showed at start-up (or, after a
reload, the one it would show at start-up on the store as reloaded), as plain JSON in the
user's cache folder, so the next start paints it before the store stack (polars, duckdb,
deltalake, pyarrow) is imported; the live snapshot then replaces it.

One file per store under `cache_dir()`, holding the view and the key it was computed under:
everything the start-up view depends on, read with the standard library only (the resolved
store path, the results table's Delta version, size and mtime of the store's catalog files, of
its suite manifests, of the user's and the built-in model registries, the start-up selection,
the package version and `FORMAT`). A file whose key differs, or that cannot be read or parsed,
is a miss (never an error); a cache folder that cannot be written is skipped; nothing is ever
written inside the store.

Who writes it: the dashboard, after its first table and after a reload; and `refresh`, which
`geneb-engine` calls after a command that changed a store (`store.changed`: the `geneb.
store_changed` entry point), so that a fill or an import from the command line leaves the next
start as instant as the last one.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import asdict, fields
from pathlib import Path
from typing import TYPE_CHECKING

import store
from geneb_tui.core.filters import Filters
from geneb_tui.core.start import Start
from geneb_tui.core.table_view import DOMAIN_MARKS, RANK_SCOPES, Column, Row, TableView
from store.atomic import write_text_atomic
from store.catalog import CATALOG_DIR
from store.paths import StorePaths, user_cache_dir
from store.tables.delta_log import newest_version
from store.vocab.protocol import GENEB_V1

if TYPE_CHECKING:
    from geneb_tui.core.query import StoreSnapshot

FORMAT = 3   # bump when the file's layout or what a view holds changes
_FILTER_FIELDS = frozenset(f.name for f in fields(Filters))


def cache_dir() -> Path:
    """Where the first-view files live: `$GENEB_CACHE_DIR`, else `$XDG_CACHE_HOME/geneb/tui`
    (default `~/.cache/geneb/tui`)."""
    if os.environ.get("GENEB_CACHE_DIR"):
        return Path(os.environ["GENEB_CACHE_DIR"]).expanduser()
    return user_cache_dir() / "tui"


def cache_file(paths: StorePaths) -> Path:
    root = os.path.realpath(paths.root)
    return cache_dir() / f"{hashlib.sha256(root.encode()).hexdigest()[:24]}.json"


def _stats(files) -> dict[str, list[int]]:
    """[mtime_ns, size] of each file that exists."""
    out = {}
    for p in sorted(files):
        try:
            st = p.stat()
        except OSError:
            continue
        out[str(p)] = [st.st_mtime_ns, st.st_size]
    return out


def view_key(paths: StorePaths, filters: Filters, sort_key: str | None, descending: bool,
             rank_scope: str) -> dict:
    """Everything the start-up view of `paths` depends on (plain JSON data)."""
    files = _stats([*paths.catalog.glob("*"), *paths.suites.glob("*/*"), paths.user_models,
                    *CATALOG_DIR.glob("*")])
    return {"format": FORMAT, "package": store.__version__,
            "store": os.path.realpath(paths.root), "results": newest_version(paths.results),
            "files": files, "protocol_hash": GENEB_V1.hash,
            "start": {"filters": asdict(filters), "sort_key": sort_key,
                      "descending": descending, "rank_scope": rank_scope}}


def _to_json(view: TableView) -> dict:
    meta_keys = [c.key for c in view.columns if c.kind == "meta" and c.key != "source"]
    return {
        "filters": asdict(view.filters),
        "columns": [[c.key, c.label, c.kind] for c in view.columns],
        "rows": [{"model": r.model, "source": r.source,
                  "meta": {k: r.meta.get(k) for k in meta_keys},
                  "values": r.values, "ranks": r.ranks, "overall": r.overall,
                  "domains": r.domains}
                 for r in view.rows],
        "sort_key": view.sort_key, "descending": view.descending,
        "n_rows_unfiltered": view.n_rows_unfiltered, "rank_scope": view.rank_scope,
        "protocol": view.protocol, "protocol_hash": view.protocol_hash,
    }


def _check(ok: bool) -> None:
    if not ok:
        raise ValueError("not a first view")


def _numbers(d, keys: set[str], kind) -> dict:
    _check(isinstance(d, dict) and set(d) == keys)
    for v in d.values():
        _check(v is None or (isinstance(v, kind) and not isinstance(v, bool)))
    return d


def _from_json(d: dict) -> TableView:
    """The view back; ValueError (or a TypeError/KeyError) for anything that is not one."""
    _check(isinstance(d["filters"], dict) and set(d["filters"]) <= _FILTER_FIELDS)
    columns = tuple(Column(*c) for c in d["columns"])
    _check(all(isinstance(x, str) for c in columns for x in (c.key, c.label, c.kind))
           and all(c.kind in ("meta", "score") for c in columns))
    scores = {c.key for c in columns if c.kind == "score"}
    rows = []
    for r in d["rows"]:
        _check(isinstance(r["model"], str) and isinstance(r["source"], str)
               and isinstance(r["meta"], dict))
        values = _numbers(r["values"], scores, (int, float))
        _check(all(v is None or math.isfinite(v) for v in values.values()))
        _check(isinstance(r["domains"], dict) and set(r["domains"]) <= scores
               and set(r["domains"].values()) <= set(DOMAIN_MARKS))
        rows.append(Row(r["model"], r["source"], r["meta"], values,
                        _numbers(r["ranks"], scores, int), _numbers(r["overall"], scores, int),
                        r["domains"]))
    _check(d["sort_key"] in {c.key for c in columns} and isinstance(d["descending"], bool)
           and isinstance(d["n_rows_unfiltered"], int) and d["rank_scope"] in RANK_SCOPES
           and isinstance(d["protocol"], str) and isinstance(d["protocol_hash"], str))
    view = TableView(Filters(**d["filters"]), columns, rows, d["sort_key"], d["descending"],
                     n_rows_unfiltered=d["n_rows_unfiltered"], rank_scope=d["rank_scope"],
                     protocol=d["protocol"], protocol_hash=d["protocol_hash"])
    for row in view.rows:   # every cell formats (what the table will paint)
        for col in view.columns:
            _check(isinstance(view.cell_text(row, col), str))
    view.filters.describe()
    return view


def read_first_view(paths: StorePaths, key: dict) -> tuple[TableView, int | None] | None:
    """The cached view of `paths` and its results version when the file's key is `key`; None
    on a miss, and for a file that is missing, unreadable, corrupt or of another version."""
    try:
        data = json.loads(cache_file(paths).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        version = data["version"]
        _check(version is None or (isinstance(version, int) and not isinstance(version, bool)))
        return _from_json(data["view"]), version
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError,
            RecursionError):
        return None


def write_first_view(paths: StorePaths, key: dict, view: TableView,
                     version: int | None) -> bool:
    """Store `view` under `key`; False when it was not: the cache folder cannot be written or
    lies inside the store (never written to), or the view holds a value JSON cannot."""
    target = cache_file(paths)
    root = Path(os.path.realpath(paths.root))
    if Path(os.path.realpath(target)).is_relative_to(root):
        return False
    try:   # a value JSON cannot hold (nan) is not cached
        text = json.dumps({"key": key, "version": version, "view": _to_json(view)},
                          ensure_ascii=False, allow_nan=False)
        write_text_atomic(target, text)
    except (OSError, ValueError, TypeError):
        return False
    return True


def cache_start_view(paths: StorePaths, snap: StoreSnapshot, key: dict, start: Start) -> bool:
    """The view geneb-tui opens on (`start` on `snap`) written under `key`, computed before
    `snap` was read (a commit in between makes it miss rather than lie); False when it was not
    (see `write_first_view`)."""
    from geneb_tui.core.query import build_view  # lazy: polars, duckdb, pyarrow

    view = build_view(snap, snap.filters_for(start.filters, opening=True), start.sort_key,
                      start.descending, start.rank_scope)
    return write_first_view(paths, key, view, snap.version)


def refresh(paths: StorePaths) -> bool:
    """After a command changed the store at `paths`: the start-up view rebuilt and cached
    when the dashboard has cached one for this store and its key no longer holds. True when
    a view was written. A store the dashboard never showed is left alone (no file appears in
    the cache folder of someone who only runs the engine), and so is a cache that still holds
    (a fill that found nothing missing costs the stat calls of the key)."""
    if not cache_file(paths).is_file():
        return False
    start = Start()
    key = view_key(paths, *start)
    if read_first_view(paths, key) is not None:
        return False
    from geneb_tui.core.query import StoreSnapshot  # lazy: polars, duckdb, pyarrow

    snap = StoreSnapshot.load(paths)
    return not snap.is_empty and cache_start_view(paths, snap, key, start)
