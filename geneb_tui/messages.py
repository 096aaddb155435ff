"""Messages that workers and modals post; the app's `@on` handlers own the state."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # the store stack (polars, duckdb) loads in a worker, after the first frame
    from geneb_tui.core.fill import FillEvent
    from geneb_tui.core.intervals import Intervals
    from geneb_tui.core.query import StoreSnapshot, TableView


@dataclass
class SnapshotLoaded(Message):
    """The store was read (worker) — `token` tells a late result from the current one."""

    snapshot: StoreSnapshot
    token: int


@dataclass
class StoreLoadFailed(Message):
    error: str
    token: int


@dataclass
class ViewBuilt(Message):
    view: TableView
    token: int


@dataclass
class ViewFailed(Message):
    """Building the table failed (a bug): shown, never a traceback over the UI."""

    error: str
    filters: object
    token: int


@dataclass
class IntervalsReady(Message):
    """The main table's rank intervals for the entries `key` names (worker); `error` when the
    computation failed (a bug: shown, never a traceback over the UI)."""

    intervals: Intervals | None
    key: tuple
    error: str | None = None


@dataclass
class ComparisonReady(Message):
    """One view's content computed (a comparison tab, the Significance view, a task, the
    missing evaluations): `payload` is what its widgets show."""

    name: str
    payload: object
    token: int


@dataclass
class ExportFinished(Message):
    path: Path
    rows: int
    error: str | None = None


@dataclass
class FillProgress(Message):
    event: FillEvent


@dataclass
class FillFinished(Message):
    returncode: int
    cancelled: bool
    stderr: str


@dataclass
class SortRequested(Message):
    column_key: str
