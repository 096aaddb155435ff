"""How a split's rows become model batches (`engine.encoders.streaming.StreamingEncoder` runs
them): the batch plan, the default token budget per device, the background preparation of the
next window of rows, and the device-to-host copy of pooled rows.

- `plan_batches`: length-sorted positions, longest first, at most `batch_size` rows and at most
  a padded-token budget (rows x the batch's longest sequence), as text-embeddings-inference
  batches to a token budget; one length per batch for encoders that never pad.
- `default_batch_tokens`: the budget an encoder starts from when its caller names none
  (`BATCH_TOKENS`, by device type); an out-of-memory error halves it.
- `Prefetcher`: a background thread that prepares window i+1 (tokenize, plan, collate, pin) while
  the model runs window i; a bounded queue (one window ahead); an exception in the thread is
  re-raised in the caller as raised there (same type, same message); closing it (on the caller's
  error, an interrupt or the end) stops and joins the thread, so none outlives `encode_into`.
- `HostCopy`: on CUDA, pooled rows copied into pinned host memory with `non_blocking=True` and
  synchronised (a CUDA event) only when they are read, one batch later, so the device runs the
  next batch meanwhile; on the CPU the plain tensor.

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
# Rows per window: what the background thread tokenizes and plans at once, one window ahead
# of the model; length-sorted within it (2,048 rows keep padding near zero at real spreads).
WINDOW_ROWS = 2_048
# Collated batches the second thread keeps ready (pinned on CUDA) ahead of the model.
BATCHES_AHEAD = 4
THREAD_NAME = "geneb-prepare"
_POLL_S = 0.1                 # how often a blocked thread looks whether it should stop


def default_batch_tokens(device: torch.device) -> int | None:
    """The padded-token budget of a batch on `device` (see `BATCH_TOKENS`); None elsewhere."""
    return BATCH_TOKENS.get(device.type)


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
