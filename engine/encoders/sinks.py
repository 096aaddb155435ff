"""Where encoded rows go: `RowBuffer` collects finished rows and writes them to a split writer
in blocks; `ArraySink` is an in-memory split writer (tests, small inputs, the windows of one
group of the windows context policy). Plain numpy: the k-mer baseline's windows need no torch.
"""

from __future__ import annotations

import time

import numpy as np

DEFAULT_FLUSH_ROWS = 1024      # rows per block a RowBuffer writes, by default


class RowBuffer:
    """Collects finished batches and writes them in blocks of about `rows` rows."""

    def __init__(self, writer, rows: int, seconds: float):
        self.writer, self.rows, self.seconds = writer, rows, seconds
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []
        self.n = 0
        self.since = time.monotonic()

    def add(self, rows: np.ndarray, block: np.ndarray) -> None:
        self.parts.append((rows, block))
        self.n += rows.size
        if self.n >= self.rows or time.monotonic() - self.since >= self.seconds:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            rows = np.concatenate([r for r, _ in self.parts])
            block = np.concatenate([b for _, b in self.parts])
            order = np.argsort(rows, kind="stable")
            self.writer.write(rows[order], block[order])
        self.parts, self.n, self.since = [], 0, time.monotonic()


class ArraySink:
    """An in-memory stand-in for a SplitWriter (pending/write)."""

    def __init__(self, n: int):
        self.n = n
        self.array: np.ndarray | None = None
        self.done = np.zeros(n, dtype=bool)

    def pending(self) -> np.ndarray:
        return np.flatnonzero(~self.done)

    def write(self, rows: np.ndarray, block: np.ndarray) -> None:
        if self.array is None:
            self.array = np.zeros((self.n, block.shape[1]), dtype=np.float32)
        self.array[rows] = block
        self.done[rows] = True
