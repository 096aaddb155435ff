"""How a split's rows become model batches (`engine.encoders.streaming.StreamingEncoder` runs
them): the batch plan, the choices made per device type, the background preparation of the
next window of rows, the pooled rows gathered on the device and copied back once per window,
and the background thread that writes them.

- `plan_batches`: length-sorted positions, longest first, at most `batch_size` rows and at most
  a padded-token budget (rows x the batch's longest sequence), as text-embeddings-inference
  batches to a token budget; one length per batch for encoders that never pad.
- `default_batch_tokens`: the budget an encoder starts from when its caller names none
  (`BATCH_TOKENS`, by device type); an out-of-memory error halves it. `mask_form`: how a padded
  batch's mask reaches a model that takes a 4D one (`MASK_FORMS`, by device type). Both are
  the device-type tables of this module: nothing tuned for two CPU cores runs on a GPU.
- `Prefetcher`: a background thread that prepares window i+1 (tokenize, plan, collate, pin) while
  the model runs window i; a bounded queue (one window ahead); an exception in the thread is
  re-raised in the caller as raised there (same type, same message); closing it (on the caller's
  error, an interrupt or the end) stops and joins the thread, so none outlives `encode_into`.
- `WindowRows`: a window's pooled rows, batch after batch, kept on the device and concatenated
  there, then one `HostCopy` per window: on CUDA copied into pinned host memory with
  `non_blocking=True` and synchronised (a CUDA event) only when they are read; on the CPU the
  plain tensor. Nothing in the loop that launches the model reads the device.
- `RowWriter`: a background thread that reads each window's copy (the one wait on the device,
  off the launching thread) and writes its rows (row buffers, Zarr writes, checksums); an
  error there reaches the caller at its next window, or when it leaves; leaving waits for every
  window handed over, so an interrupted run still writes every finished batch.

None of this changes a number: batches hold the same rows padded the same way, and with fp32 on
the CPU a batch's composition changes embeddings at float rounding level only (the tests hold
every path to 1e-5 of the official one-batch-of-8 loop on unit-scale embeddings).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import torch

# Padded tokens per batch an encoder starts from, by device type: on the CPU the tiny-BERT
# bench (bench/embed.py) is fastest between 2k and 8k tokens (cache-sized activations, 2x
# slower at 32k); on CUDA text-embeddings-inference's order (16k) doubled for the large cards
# this engine targets; an out-of-memory error halves it.
BATCH_TOKENS = {"cpu": 4_096, "cuda": 32_768}
# How a padded batch's mask goes to a model that takes a 4D one (`HFEncoder._takes_key_mask`),
# by device type, built on the device from the 2D mask, so transformers never checks the mask
# on the host (its `.all()`, a synchronisation per batch): "keys", which keys each row attends
# to (n x 1 x 1 x L, broadcast by sdpa; on 2 CPU cores a quarter of a small model's forward
# faster than the full mask, bench/embed.py step 4), or "full", the n x 1 x L x L mask
# transformers itself builds from the 2D one (on CUDA the key mask measured slower: 721k vs
# 1,018k tokens/s for the tiny BERT on an H200, issue 33). A batch without padding gets none.
MASK_FORMS = {"cpu": "keys", "cuda": "full"}
# Rows per window: what the background thread tokenizes and plans at once, one window ahead
# of the model; length-sorted within it (2,048 rows keep padding near zero at real spreads).
WINDOW_ROWS = 2_048
# Collated batches the second thread keeps ready (pinned on CUDA) ahead of the model.
BATCHES_AHEAD = 4
THREAD_NAME = "geneb-prepare"
WRITER_NAME = "geneb-write"
_POLL_S = 0.1                 # how often a blocked thread looks whether it should stop


def default_batch_tokens(device: torch.device) -> int | None:
    """The padded-token budget of a batch on `device` (see `BATCH_TOKENS`); None elsewhere."""
    return BATCH_TOKENS.get(device.type)


def mask_form(device: torch.device) -> str:
    """How a padded batch's mask goes to a model that takes a 4D one on `device` (see
    `MASK_FORMS`; elsewhere "full", what transformers would build)."""
    return MASK_FORMS.get(device.type, "full")


def plan_batches(lengths: np.ndarray, batch_size: int, *, exact_length: bool,
                 max_batch_tokens: int | None = None) -> list[np.ndarray]:
    """Positions (into `lengths`) per batch, longest first.

    At most `batch_size` rows and, with a budget, at most `max_batch_tokens` padded tokens
    (rows x the batch's first, longest, length; a sequence longer than the budget alone); with
    `exact_length`, a batch holds one length only (models that are never padded).
    """
    order = np.argsort(-lengths, kind="stable")
    groups = (np.split(order, np.flatnonzero(np.diff(lengths[order])) + 1) if exact_length
              else [order])
    batches = []
    for group in groups:
        i = 0
        while i < group.size:
            n = batch_size
            if max_batch_tokens:
                n = max(1, min(n, max_batch_tokens // max(1, int(lengths[group[i]]))))
            batches.append(group[i:i + n])
            i += n
    return batches


def pinned(batch: Any) -> Any:
    """A collated batch in page-locked memory (a tensor, or a dict of them; anything else as
    it is), so the host-to-device copy can be asynchronous (CUDA only: the caller checks)."""
    if isinstance(batch, torch.Tensor):
        return batch.pin_memory()
    if isinstance(batch, dict):
        return {k: pinned(v) for k, v in batch.items()}
    return batch


class Prefetcher:
    """Iterates `produce()` in a background thread, one item ahead (see the module).

    Use as a context manager: leaving it, normally or by any exception (KeyboardInterrupt
    included), stops the thread and joins it.
    """

    def __init__(self, produce: Callable[[], Iterable], ahead: int = 1):
        self._produce = produce
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, ahead))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)

    def __enter__(self) -> Prefetcher:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        items = iter(self._produce())
        try:
            for item in items:
                if not self._put(("item", item)):
                    return
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            self._put(("error", exc))
            return
        finally:
            if hasattr(items, "close"):     # a generator: its own threads stop now
                items.close()
        self._put(("end", None))

    def __iter__(self) -> Iterator:
        while True:
            kind, value = self._queue.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value

    def close(self) -> None:
        self._stop.set()
        while self._thread.is_alive():
            try:                              # free a blocked put
                self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(_POLL_S)


class HostCopy:
    """Pooled rows on their way to the host (see the module): `array()` waits for the copy."""

    def __init__(self, pooled: torch.Tensor):
        self._event = None
        if pooled.device.type == "cuda":
            self._host = torch.empty(pooled.shape, dtype=pooled.dtype, pin_memory=True)
            self._host.copy_(pooled, non_blocking=True)
            self._event = torch.cuda.Event()
            self._event.record(torch.cuda.current_stream(pooled.device))
        else:
            self._host = pooled

    def array(self) -> np.ndarray:
        if self._event is not None:
            self._event.synchronize()
        return self._host.numpy()


class WindowRows:
    """The pooled rows of the batches run since the last `take`, on the device (see the
    module)."""

    def __init__(self):
        self._rows: list[np.ndarray] = []
        self._pooled: list[torch.Tensor] = []

    def add(self, rows: np.ndarray, pooled: torch.Tensor) -> None:
        self._rows.append(rows)
        self._pooled.append(pooled)

    def take(self) -> tuple[np.ndarray, HostCopy] | None:
        """Their positions and one copy of them on its way to the host; None when empty."""
        if not self._rows:
            return None
        rows, pooled = np.concatenate(self._rows), torch.cat(self._pooled)
        self._rows, self._pooled = [], []
        return rows, HostCopy(pooled)


class RowWriter:
    """Calls `write(rows, array)` for each window `put`, in a background thread (inline
    without `background`); see the module. Use as a context manager."""

    _END = object()

    def __init__(self, write: Callable[[np.ndarray, np.ndarray], None], background: bool = True):
        self._write = write
        self._error: BaseException | None = None
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = (threading.Thread(target=self._run, name=WRITER_NAME, daemon=True)
                        if background else None)

    def __enter__(self) -> RowWriter:
        if self._thread is not None:
            self._thread.start()
        return self

    def put(self, window: tuple[np.ndarray, HostCopy] | None, *, check: bool = True) -> None:
        """Hand over a window (None: nothing); with `check`, first re-raise the writer's error."""
        if check and self._error is not None:
            raise self._error
        if window is None:
            return
        if self._thread is None:
            self._written(window)
        else:
            self._queue.put(window)

    def _written(self, window: tuple[np.ndarray, HostCopy]) -> None:
        rows, host = window
        self._write(rows, host.array())

    def _run(self) -> None:
        while (window := self._queue.get()) is not self._END:
            if self._error is None:          # after an error the rest is dropped
                try:
                    self._written(window)
                except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                    self._error = exc

    def __exit__(self, kind, exc, tb) -> None:
        if self._thread is not None:
            self._queue.put(self._END)
            self._thread.join()
        if exc is None and self._error is not None:
            raise self._error
