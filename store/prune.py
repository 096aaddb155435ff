"""Pruning: removing the embeddings of (model, task) pairs whose every cell is done, so the
store's largest part does not grow with every finished run.

A stored split is **prunable** when the results table holds every cell a `fill` of its pair
computes by default, done (every seed) at the split's own identity: its task's data hash, its
model's revision, its variant (compute precision, recipe preset, context policy, storage
precision): geneb-v1 in every regime for a classification task, its kind's protocols in their
regimes for a task of another kind (`store.vocab.protocol.KIND_PROTOCOLS`). Splits of imported
embeddings are never pruned (no `fill` can make them again), nor partial ones (resumable work).
Policies narrow the choice further (`Policy`): some models, some tasks (a suite's), only the
splits of another revision than the model's current one, only those written before a date.

Pruning a split (`prune`): under its pair's lock (`store.locks.pair_lock`: a pair a running
`fill` holds is left alone and said so) and the store's shared lock, its record is written
first (written atomically, one entry per split: what it was, its bytes,
when), then the split is renamed aside and removed (a kill leaves a temporary name, swept by
the next writer: `store.sweep`). Results and predictions are never touched, so every reader
(`report --json`...) gives what it gave before. A later `fill` recomputes a pruned split only
when a cell it computes needs it (the planner plans missing cells, not missing embeddings), and
its record then stays as history (`<store>/pruned.json`, `StorePaths.pruned`); `doctor`
tells pruned splits (recorded, absent) from missing ones (`absent`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import cache, partial

from store.atomic import fsync_dir, temp_path
from store.cells import storage_text
from store.embedding_imports import read_import
from store.embeddings import EmbeddingStore, storage_of
from store.failpoints import reach
from store.locks import StoreSession, pair_lock, try_acquire
from store.paths import StorePaths
from store.prune_record import add, read_record
from store.sizes import tree_bytes
from store.sweep import sweep
from store.vocab.errors import GenebError
from store.vocab.ids import path_part
from store.vocab.kinds import CLASSIFICATION, TaskKind
from store.vocab.protocol import (
    GENEB_V1,
    KIND_PROTOCOLS,
    REGIMES,
    protocol_with_hash,
    seed_counts,
)
from store.vocab.sources import LOCAL
from store.vocab.variant import STORED_FLOAT32, storage_value


@dataclass(frozen=True)
class Policy:
    """Which prunable splits to prune (None: no narrowing by that)."""

    models: Collection[str] | None = None
    tasks: Collection[str] | None = None
    older_revisions: bool = False        # only splits of another revision than the current one
    before: datetime | None = None       # only splits written before this moment


@dataclass(frozen=True)
class Pruned:
    """One split pruned (or to prune): its path under `embeddings.zarr`, whose it was."""

    split: str
    model: str
    task: str
    model_revision: str | None
    data_hash: str | None
    bytes: int
    written_at: str
    pruned_at: str | None = None


def _required(kind: str | None) -> set[tuple[str, str]]:
    """(protocol hash, regime) of every cell a default fill computes for a task of `kind`."""
    kind = TaskKind(kind or CLASSIFICATION)
    protocols = (GENEB_V1,) if kind is CLASSIFICATION else KIND_PROTOCOLS[kind]
    return {(p.hash, r) for p in protocols for r in p.regimes_of(REGIMES)}


def _done_identities(run) -> tuple[dict[tuple, set], dict[str, str]]:
    """(model, task, data hash, revision, precision, preset, context, storage) -> the (protocol
    hash, regime) done there, and task folder -> task id, from the local rows."""
    rows = run(f"""
        SELECT model, task, data_hash, coalesce(model_revision, '') AS rev,
               coalesce(compute_precision, '') AS cp, coalesce(recipe_preset, '') AS rp,
               coalesce(context_policy, '') AS ctx, coalesce(storage_precision, '') AS sp,
               any_value(kind) AS kind, protocol_hash,
               regime, count(DISTINCT seed) AS n
        FROM results_latest WHERE source = '{LOCAL}' GROUP BY ALL""", [])
    done: dict[tuple, set] = {}
    kinds: dict[tuple, str | None] = {}
    folders: dict[str, str] = {}
    for r in rows.iter_rows(named=True):
        folders[path_part(r["task"])] = r["task"]
        key = (r["model"], r["task"], r["data_hash"], r["rev"], r["cp"], r["rp"], r["ctx"],
               r["sp"])
        kinds[key] = r["kind"]
        protocol = protocol_with_hash(r["protocol_hash"])
        if protocol is not None and r["n"] >= seed_counts([protocol])[protocol.hash]:
            done.setdefault(key, set()).add((r["protocol_hash"], r["regime"]))
    return {k: v for k, v in done.items() if _required(kinds[k]) <= v}, folders


def prunable(paths: StorePaths, policy: Policy = Policy()) -> list[Pruned]:
    """The complete splits the policy chooses whose every cell is done (see the module)."""
    from store.db import Snapshot  # lazy: duckdb, polars

    store = EmbeddingStore(paths)
    if not store.root.is_dir():
        return []
    snap = Snapshot(paths)
    try:
        done, task_of = _done_identities(snap.query)
        current = dict(snap.query("SELECT model, model_revision FROM current_revision",
                                  []).iter_rows())
    finally:
        snap.close()
    out = []
    imported = cache(partial(_imported, paths))
    for entry in store.splits():
        if entry.partial:
            continue
        try:
            attrs = json.loads((entry.path / "zarr.json").read_bytes())["attributes"]
        except (OSError, ValueError, KeyError, TypeError):
            continue            # damaged: `doctor`'s
        model, task = attrs.get("model_id"), task_of.get(entry.task_dir)
        if (attrs.get("complete") is not True or task is None or not isinstance(model, str)
                or store.model_folder(model) != entry.model_dir or imported(model)):
            continue
        key = (model, task, attrs.get("data_hash"), attrs.get("model_revision") or "",
               attrs.get("compute_precision") or "", attrs.get("recipe_preset") or "",
               attrs.get("context_policy") or "",
               storage_text(storage_value(storage_of(attrs) or STORED_FLOAT32)))
        written = datetime.fromtimestamp((entry.path / "zarr.json").stat().st_mtime, UTC)
        if key not in done or not _chosen(policy, model, task, attrs, current, written):
            continue
        out.append(Pruned(f"{entry.model_dir}/{entry.task_dir}/{entry.path.name}", model, task,
                          attrs.get("model_revision"), attrs.get("data_hash"),
                          tree_bytes(entry.path), written.isoformat(timespec="seconds")))
    return out


def _imported(paths: StorePaths, model: str) -> bool:
    try:
        return read_import(paths, model) is not None
    except GenebError:
        return True          # a record that cannot be read: leave its splits alone


def _chosen(policy: Policy, model: str, task: str, attrs: dict, current: dict,
            written: datetime) -> bool:
    if policy.models is not None and model not in policy.models:
        return False
    if policy.tasks is not None and task not in policy.tasks:
        return False
    if policy.older_revisions and (attrs.get("model_revision") or "") == (current.get(model)
                                                                          or ""):
        return False
    return policy.before is None or written < policy.before


def prune(paths: StorePaths, chosen: Iterable[Pruned]) -> tuple[list[Pruned], list[Pruned]]:
    """Prune the splits `chosen` (`prunable`'s): (pruned, left because a process held their
    pair)."""
    store = EmbeddingStore(paths)
    done, busy = [], []
    if not store.root.is_dir():         # nothing to prune, nothing of a prune to sweep
        return done, busy
    with StoreSession(paths) as session:
        sweep(paths, session)      # what a killed prune left aside
        for item in chosen:
            lock = pair_lock(paths, item.model, item.task)
            if not try_acquire(lock):
                busy.append(item)
                continue
            try:
                path = store.root / item.split
                if not path.is_dir():
                    continue
                stamped = Pruned(**{**asdict(item),
                                    "pruned_at": datetime.now(UTC).isoformat(timespec="seconds")})
                add(paths, item.split, {k: v for k, v in asdict(stamped).items()
                                        if k != "split"})
                reach("prune-recorded")
                aside = temp_path(path)
                os.rename(path, aside)
                fsync_dir(path.parent)
                reach("prune-renamed")
                store.drop(aside)
                done.append(stamped)
            finally:
                lock.release()
    return done, busy


def absent(paths: StorePaths) -> tuple[list[str], list[tuple[str, str]]]:
    """(the pruned splits recorded and not on disk; the (model, task) pairs with local results
    and no split of either kind on disk and none recorded as pruned: missing)."""
    from store.db import Snapshot  # lazy: duckdb, polars

    store = EmbeddingStore(paths)
    record = read_record(paths)
    pruned = [s for s in record if not (store.root / s).is_dir()]
    snap = Snapshot(paths)
    try:
        pairs = snap.query(f"SELECT DISTINCT model, task FROM results_all "
                           f"WHERE source = '{LOCAL}' ORDER BY model, task", []).rows()
    finally:
        snap.close()
    recorded = {s.rsplit("/", 1)[0] for s in pruned}
    missing = []
    for model, task in pairs:
        folder = f"{store.model_folder(model)}/{path_part(task)}"
        here = store.root / folder
        if folder in recorded or _imported(paths, model):
            continue
        if not (here.is_dir() and any(p.is_dir() for p in here.iterdir())):
            missing.append((model, task))
    return pruned, missing
