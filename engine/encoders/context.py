"""The context policy applied to any encoder (`store.vocab.context`: `fill --context`,
`--context-length`): `engine.encoders.build_encoder` wraps the encoder a catalog entry builds in
`ContextEncoder` when the run asks for another policy than the default (crop at the model's own
limit, on its own side: the encoder as it is, untouched).

- crop to N nucleotides: each sequence is cut (`cropped`, on the side told) before the encoder
  sees it; the encoder's own limit applies after, as always.
- windows of W every S nucleotides: the one tiling (`window_starts`, which SpliceBERT's adapter
  uses with a stride of half its window) and the one pooling (the mean of a sequence's windows'
  embeddings, each weighing the same). The windows stream: they are made a group of
  `group` windows at a time (the encoder's batch size), embedded by the encoder as sequences of
  their own, and summed per sequence, so what a sequence holds in memory beyond its text is one
  group of windows and one running sum, whatever its length; a finished sequence's row is
  written (in blocks, `RowBuffer`) as soon as its last window is embedded.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from engine.encoders.sinks import DEFAULT_FLUSH_ROWS, ArraySink, RowBuffer
from store.vocab.context import WINDOWS, ContextPolicy

if TYPE_CHECKING:
    from store.embeddings import SplitWriter

DEFAULT_GROUP = 64           # windows per group for an encoder without a batch size
_SUMMED = ("n_truncated", "n_batches", "n_oom_retries", "n_tokens", "n_padded_tokens",
           "seconds")


def window_starts(length: int, window: int, stride: int) -> list[int]:
    """Where each window of a `length`-letter sequence starts: one window when it fits, else
    every `stride` letters and a last one ending at the sequence's end."""
    if length <= window:
        return [0]
    starts = list(range(0, length - window + 1, stride))
    return starts if starts[-1] == length - window else [*starts, length - window]


def pieces(lengths: np.ndarray, policy: ContextPolicy) -> np.ndarray:
    """The letters of each piece a model is given, under `policy`, of sequences of `lengths`:
    one per sequence under crop (cut to the policy's length, if any), one per window under
    windows (`window_starts`'s windows); the model's own limit applies after (`fill --dry-run`:
    `engine.dry_run.Reach`)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if policy.mode != WINDOWS:
        return lengths if policy.length is None else np.minimum(lengths, policy.length)
    found, where = np.unique(lengths, return_inverse=True)
    counts = np.array([len(window_starts(int(n), policy.window, policy.stride))
                       for n in found], dtype=np.int64)
    each = np.minimum(found, policy.window)
    return np.repeat(each[where], counts[where])


def cropped(sequence: str, length: int, side: str) -> str:
    """`sequence` cut to at most `length` letters keeping its `side` (left: the start; right:
    the end; centre: the middle, the odd letter cut on the right, as Enformer centres)."""
    extra = len(sequence) - length
    if extra <= 0:
        return sequence
    if side == "left":
        return sequence[:length]
    if side == "right":
        return sequence[extra:]
    return sequence[extra // 2:extra // 2 + length]


class _Cropped(Sequence):
    """A read-only view of `sequences`, each cut to `length` letters on `side`."""

    def __init__(self, sequences: Sequence[str], length: int, side: str):
        self.sequences, self.length, self.side = sequences, length, side

    def __len__(self) -> int:
        return len(self.sequences)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [cropped(s, self.length, self.side) for s in self.sequences[i]]
        return cropped(self.sequences[i], self.length, self.side)


class ContextEncoder:
    """An encoder under a context policy other than the default; its settings are the inner
    encoder's with `context` (the policy's variant value) added."""

    def __init__(self, inner, policy: ContextPolicy, value: str, side: str):
        self.inner, self.policy, self.context, self.side = inner, policy, value, side
        self.group = max(1, int(getattr(inner, "batch_size", None) or DEFAULT_GROUP))

    def __getattr__(self, name):          # revision, precision, preset, model_id, ...
        return getattr(self.inner, name)

    @property
    def settings(self) -> dict:
        return {**self.inner.settings, "context": self.context}

    def encode(self, sequences: Sequence[str]) -> np.ndarray:
        sink = ArraySink(len(sequences))
        self.encode_into(sequences, sink)
        return sink.array

    def encode_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict:
        if self.policy.mode != WINDOWS:
            view = _Cropped(sequences, self.policy.length, self.policy.side or self.side)
            stats = self.inner.encode_into(view, writer)
            return {**stats, "n_cropped": sum(len(s) > self.policy.length for s in sequences)}
        return self._windows_into(sequences, writer)

    def _windows_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict:
        stats: dict = {"n_windows": 0, "n_sequences": len(sequences)}
        rows = np.asarray(writer.pending(), dtype=np.int64)
        buffer = RowBuffer(writer, DEFAULT_FLUSH_ROWS, 30.0)
        sums: dict[int, np.ndarray] = {}
        try:
            for group, owners, last in self._groups(sequences, rows):
                block = self._embed(group, stats)
                for row in np.unique(owners):
                    part = block[owners == row].astype(np.float64).sum(axis=0)
                    sums[row] = sums[row] + part if row in sums else part
                for row, n in last:
                    buffer.add(np.array([row]), (sums.pop(row) / n)[None].astype(np.float32))
        finally:
            buffer.flush()
        stats["n_encoded"] = int(rows.size)
        return stats

    def _groups(self, sequences: Sequence[str], rows: np.ndarray
                ) -> Iterator[tuple[list[str], np.ndarray, list[tuple[int, int]]]]:
        """Groups of at most `group` windows: their texts, the row each belongs to, and the
        (row, window count) of every sequence whose last window the group holds."""
        window, stride = self.policy.window, self.policy.stride
        texts: list[str] = []
        owners: list[int] = []
        last: list[tuple[int, int]] = []
        for row in rows.tolist():
            sequence = sequences[row]
            starts = window_starts(len(sequence), window, stride)
            for i, start in enumerate(starts):
                texts.append(sequence[start:start + window])
                owners.append(row)
                if i == len(starts) - 1:
                    last.append((row, len(starts)))
                if len(texts) == self.group:
                    yield texts, np.asarray(owners), last
                    texts, owners, last = [], [], []
        if texts:
            yield texts, np.asarray(owners), last

    def _embed(self, texts: list[str], stats: dict) -> np.ndarray:
        """The inner encoder's rows of one group of windows, its statistics summed."""
        sink = ArraySink(len(texts))
        told = self.inner.encode_into(texts, sink) or {}
        stats["n_windows"] += len(texts)
        for key, value in told.items():
            if key in _SUMMED and isinstance(value, int | float):
                stats[key] = stats.get(key, 0) + value
            elif key not in stats:
                stats[key] = value
        return sink.array
