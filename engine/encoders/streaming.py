"""What every encoder with weights shares: `StreamingEncoder`, the base of hf.py, enformer.py,
lucaone.py and evo.py.

It holds the embeddings' identity (`settings`: kind, source, revision, pooling, then the
subclass's `recipe()`), picks the device and the precision (`fill --dtype`, `DTYPES`: `auto`
is bf16 autocast over float32 weights on CUDA, fp16 where bf16 is unsupported, float32 on the
CPU; `bfloat16` / `float16` cast the weights, no autocast; `float32` never autocasts) and runs
`encode_into`:

- every sequence is prepared once: as the kind's official extractor received it
  (`engine.data.as_read_by`: as given for the generic encoder, upper case with U read as T for
  Enformer), then `tokenize`d (token ids, or a cut sequence; cuts counted), a window of
  `WINDOW_ROWS` rows at a time, in a background thread one window ahead of the model
  (`engine.encoders.batching.Prefetcher`; `prefetch = False` runs it inline);
- batches are built from the window's length-sorted sequences (longest first, so an
  out-of-memory error shows up at once), at most `batch_size` rows and at most
  `max_batch_tokens` padded tokens (`engine.encoders.batching.plan_batches`); rows are written
  back at their original positions, so the input order never matters; an encoder that never
  pads (`exact_length`) batches by exact length only;
- nothing in the loop that launches the model reads the device (no `.item()`, no tensor as a
  bool, no host copy): every decision is made on the host from the lengths; on CUDA the
  collated inputs are pinned and copied without blocking; the pooled rows stay on the device
  until their window ends, then come back in one copy through a pinned buffer
  (`engine.encoders.batching.WindowRows`), read and written by a background thread
  (`engine.encoders.batching.RowWriter`) while the device runs the next window;
- an out-of-memory error halves (`halve`) either the padded tokens a batch may hold ("tokens":
  the failed batch and every later one over the new budget are planned again, so the shorter
  sequences that follow still share larger batches) or the rows a batch may hold ("rows"),
  down to one sequence;
- finished windows are streamed into the split writer (buffered a little to keep Zarr writes
  large; on an error or interrupt every batch finished before it is written and flushed), so
  an interrupted task resumes where it stopped.

The recipe preset `reference` (`fill --preset reference`, `store.vocab.variant`; `preset` is
its value, `reference@<batch size>`, recorded in the settings) replaces the batch plan with the
official extractors' loop: consecutive batches of exactly `batch_size` sequences in file order
(windows are a whole number of batches, so no batch is cut; each split is its own call, so the
train split's last batch is flushed before the test split starts), no token budget, and an
out-of-memory error ends the run (a smaller batch would be another preset value); a resumed
split runs again every batch that holds a row not yet written. How a batch is padded and what
the model gets are the subclass's (`reference`, `store.official.recipes.Reference`).

A subclass loads its model in `__init__` and supplies `tokenize`, `collate` (a batch's input),
`forward` (pooled float32 rows) and `recipe`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np
import torch

from engine.data import as_read_by
from engine.encoders import pooling_of, told_preset
from engine.encoders.batching import (
    BATCHES_AHEAD,
    WINDOW_ROWS,
    Prefetcher,
    RowWriter,
    WindowRows,
    pinned,
    plan_batches,
)
from engine.encoders.device import device_name, pick_device, precision_name, precision_of
from engine.encoders.hub import checkpoint_revision
from engine.encoders.sinks import DEFAULT_FLUSH_ROWS, ArraySink, RowBuffer
from store.devices import peak_tflops
from store.official.recipes import Reference, reference_of
from store.vocab.encoder_kinds import KINDS
from store.vocab.errors import GenebError
from store.vocab.variant import preset_batch

if TYPE_CHECKING:
    from engine.encoders import EncoderOptions
    from store.catalog import ModelMeta
    from store.embeddings import SplitWriter

def forward_tflops(params: int | None, tokens_per_s: float | None) -> float | None:
    """Achieved TFLOP/s of the forward pass: 2 x parameters x tokens per second."""
    if not params or not tokens_per_s:
        return None
    return 2.0 * params * tokens_per_s / 1e12


def utilisation(device: str, precision: str, tflops: float | None) -> float | None:
    """Model FLOPs utilisation: `tflops` over the device's dense 16-bit peak (the device table,
    `store.devices.peak_tflops`); None for a float32 run or a device the table does not
    list."""
    if tflops is None or precision == "float32":
        return None
    peak = peak_tflops(device)
    return tflops / peak if peak else None


class StreamingEncoder:
    """Embeds sequences with a checkpoint (a hub id or a local directory); see the module.

    `model_id` names the model in messages; `source` is the hub id or path; `revision` the
    model revision its results record: the hub revision it loads (a commit hash pins it), or
    for a local folder the sha256 of its files (`for_model`), which loading does not use;
    `pooling` defaults to the kind's first. The settings dict is the embeddings' identity.
    """

    kind: ClassVar[str]                       # settings["encoder"], an encoder_kinds name
    default_batch_size: ClassVar[int]
    exact_length: bool = True                 # never padded: a batch holds one length only
    halve: ClassVar[str] = "tokens"           # what an out-of-memory error halves: tokens | rows
    unit: ClassVar[str] = "tokens"            # what a sequence's length counts
    limit: ClassVar[str] = "max_tokens"       # the registry field that caps it
    prefetch: bool = True                     # prepare batches in background threads

    def __init__(self, source: str, *, model_id: str | None = None,
                 revision: str | None = None, pooling: str | None = None,
                 batch_size: int | None = None, device: str | None = None, dtype: str = "auto",
                 flush_rows: int = DEFAULT_FLUSH_ROWS, flush_seconds: float = 30.0,
                 oom_errors: tuple[type[BaseException], ...] | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 preset: str | None = None, reference: Reference | None = None):
        self.model_id = model_id or source
        self.source = source
        self.revision = revision
        self.pooling = pooling or KINDS[self.kind].poolings[0]
        # the recipe preset's value (None: normalized) and the official batching it follows
        self.preset = preset
        self.reference = (reference or Reference(preset_batch(preset))) if preset else None
        self.batch_size = int(preset_batch(preset) or batch_size or self.default_batch_size)
        self.max_batch_tokens: int | None = None
        self.flush_rows = max(1, int(flush_rows))
        self.flush_seconds = flush_seconds
        self.oom_errors = oom_errors or (torch.OutOfMemoryError,)
        self.progress = progress
        self.device = pick_device(device)
        self.weights_dtype, self.autocast_dtype = precision_of(self.device, dtype,
                                                               self.model_id)

    @classmethod
    def for_model(cls, model: ModelMeta, options: EncoderOptions, **recipe) -> Self:
        """The encoder of a catalog entry that passed `engine.encoders.preflight`; its revision
        is `checkpoint_revision`'s (a local folder's: the sha256 of its files)."""
        source = model.path or model.hub_id
        preset = told_preset(model, options)
        return cls(source, model_id=model.model_id,
                   revision=checkpoint_revision(source, model.revision),
                   pooling=pooling_of(model), batch_size=options.batch_size or model.batch_size,
                   device=options.device, dtype=options.dtype, preset=preset,
                   reference=reference_of(model.model_id) if preset else None, **recipe)

    # ---- identity ------------------------------------------------------------------------

    @property
    def settings(self) -> dict:
        """The embeddings' identity; the recipe preset only where it is not normalized (so the
        normalized preset's settings are what they always were)."""
        return {"encoder": self.kind, "source": self.source, "revision": self.revision,
                "pooling": self.pooling, **self.recipe(),
                **({"preset": self.preset} if self.preset else {})}

    def recipe(self) -> dict:
        """The subclass's part of the settings (`precision` among them)."""
        raise NotImplementedError

    @property
    def precision(self) -> str:
        """How a forward pass computes, as recorded in the embeddings' settings."""
        return precision_name(self.weights_dtype, self.autocast_dtype)

    def placed(self, model: torch.nn.Module) -> torch.nn.Module:
        """`model` on the encoder's device in its weights' dtype, in eval mode."""
        return model.to(self.device, self.weights_dtype).eval()

    # ---- encoding ------------------------------------------------------------------------

    def tokenize(self, sequences: Sequence[str]) -> tuple[list, np.ndarray]:
        """What each sequence becomes (its len() is its length) and a truncated flag each."""
        raise NotImplementedError

    def collate(self, items: list) -> Any:
        """The input of one batch."""
        raise NotImplementedError

    def forward(self, batch: Any) -> torch.Tensor:
        """Pooled float32 embeddings (n × d) of one collated batch."""
        raise NotImplementedError

    def autocast(self) -> AbstractContextManager:
        if self.autocast_dtype is None:
            return nullcontext()
        return torch.autocast(device_type="cuda", dtype=self.autocast_dtype)

    def plan_batches(self, lengths: np.ndarray) -> list[np.ndarray]:
        """Positions (into `lengths`) per batch; see `plan_batches`."""
        return plan_batches(lengths, self.batch_size, exact_length=self.exact_length,
                            max_batch_tokens=self.max_batch_tokens)

    def encode(self, sequences: Sequence[str]) -> np.ndarray:
        """All rows at once (tests, small inputs): the same path as `encode_into`."""
        sink = ArraySink(len(sequences))
        self.encode_into(sequences, sink)
        return sink.array

    @property
    def n_params(self) -> int | None:
        """The loaded model's parameter count (None before it is loaded)."""
        model = getattr(self, "model", None)
        return sum(p.numel() for p in model.parameters()) if model is not None else None

    def encode_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict:
        start = time.perf_counter()
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        pending = np.zeros(len(sequences), dtype=bool)
        pending[np.asarray(writer.pending(), dtype=np.int64)] = True
        total = int(pending.sum())
        stats = {"n_truncated": 0, "n_sequences": len(sequences), "n_encoded": total,
                 "n_batches": 0, "n_oom_retries": 0, "n_tokens": 0, "n_padded_tokens": 0}
        buffer = RowBuffer(writer, self.flush_rows, self.flush_seconds)
        done = 0

        def written(rows: np.ndarray, block: np.ndarray) -> None:   # in the writer's thread
            nonlocal done
            buffer.add(rows, block)
            done += rows.size
            if self.progress is not None:
                self.progress(done, total)

        try:
            with (RowWriter(written, background=self.prefetch) as out,
                  torch.inference_mode()):
                window = WindowRows()        # this window's pooled rows, on the device
                try:
                    with self._prepared(as_read_by(self.kind, sequences), pending) as parts:
                        for part in parts:
                            if part.rows.size:
                                self._run(part, stats, window)
                            else:     # a window starts (see `_parts`): the last one's rows
                                out.put(window.take())           # come back in one copy
                                stats["n_truncated"] += part.n_truncated
                finally:    # every finished batch (after an error: those before it)
                    out.put(window.take(), check=False)
        finally:
            buffer.flush()
        stats["max_batch_tokens"] = self.max_batch_tokens
        stats["seconds"] = round(time.perf_counter() - start, 3)
        return self._telemetry(stats)

    def _run(self, part: Part, stats: dict, window: WindowRows) -> None:
        """Runs one planned batch into `window` (planned again while it is over the limits; an
        out-of-memory error lowers them and runs it again), counting it in `stats`."""
        queue = deque([part])
        while queue:
            part = queue.popleft()
            if not self._fits(part):
                queue.extendleft(reversed(self._split(part)))
                continue
            try:
                pooled = self.forward(part.inputs if part.inputs is not None
                                      else self._collated(part.items))
            except self.oom_errors:
                self._out_of_memory(part)
                stats["n_oom_retries"] += 1
                queue.appendleft(part)
                continue
            stats["n_tokens"] += int(part.lengths.sum())
            stats["n_padded_tokens"] += part.rows.size * int(part.lengths.max())
            stats["n_batches"] += 1
            window.add(part.rows, pooled)

    @contextmanager
    def _prepared(self, sequences: Sequence[str], pending: np.ndarray) -> Iterator[Iterable]:
        """The batches to run, each window's truncations on a first, empty, part; prepared in
        background threads (tokenizing a window ahead, collating `BATCHES_AHEAD` batches ahead)
        unless `prefetch` is False."""
        windows = self._windows(sequences)
        if not self.prefetch:
            yield self._parts(windows, pending)
            return

        def parts() -> Iterator[Part]:
            with Prefetcher(lambda: windows) as ahead:
                yield from self._parts(ahead, pending)

        with Prefetcher(parts, ahead=BATCHES_AHEAD) as batches:
            yield batches

    def _windows(self, sequences: Sequence[str]) -> Iterator[tuple[int, list, np.ndarray]]:
        """(first row, tokenized items, truncated flags) per window of `WINDOW_ROWS` rows (the
        reference preset: a whole number of its batches)."""
        size = (max(1, WINDOW_ROWS // self.batch_size) * self.batch_size if self.preset
                else WINDOW_ROWS)
        for a in range(0, len(sequences), size):
            items, truncated = self.tokenize(sequences[a:a + size])
            yield a, items, truncated

    def _parts(self, windows: Iterable, pending: np.ndarray) -> Iterator[Part]:
        for a, items, truncated in windows:
            lengths = np.fromiter((len(x) for x in items), dtype=np.int64, count=len(items))
            rows = np.flatnonzero(pending[a:a + len(items)])
            # a window's first part is empty: its truncations, and where it starts
            yield Part(rows[:0], [], lengths[:0], n_truncated=int(truncated.sum()))
            for r in (self._reference_batches(pending[a:a + len(items)]) if self.preset
                      else (rows[p] for p in self.plan_batches(lengths[rows]))):
                items_of = [items[i] for i in r]
                yield Part(r + a, items_of, lengths[r], self._collated(items_of))

    def _reference_batches(self, pending: np.ndarray) -> Iterator[np.ndarray]:
        """The reference preset's batches of a window (positions in it): consecutive runs of
        `batch_size`, each that holds a row still `pending`."""
        for a in range(0, pending.size, self.batch_size):
            if pending[a:a + self.batch_size].any():
                yield np.arange(a, min(a + self.batch_size, pending.size))

    def _collated(self, items: list) -> Any:
        """`collate`, in page-locked memory on CUDA (an asynchronous host-to-device copy)."""
        batch = self.collate(items)
        return pinned(batch) if self.device.type == "cuda" else batch

    def _fits(self, part: Part) -> bool:
        """Whether a planned batch still fits the limits (an out-of-memory error lowers them;
        the reference preset's fixed batches always do)."""
        n = part.rows.size
        return bool(self.preset) or n == 1 or (n <= self.batch_size and (
            not self.max_batch_tokens or n * int(part.lengths.max()) <= self.max_batch_tokens))

    def _split(self, part: Part) -> list[Part]:
        """A batch over the limits, planned again (collated when it runs)."""
        return [Part(part.rows[p], [part.items[i] for i in p], part.lengths[p])
                for p in self.plan_batches(part.lengths)]

    def _telemetry(self, stats: dict) -> dict:
        """`stats` with what the runs table records of how it ran (`store.tables.telemetry`)."""
        device = device_name(self.device)
        seconds = stats.get("seconds") or 0.0
        rate = stats["n_tokens"] / seconds if seconds > 0 and stats.get("n_tokens") else None
        tflops = forward_tflops(self.n_params, rate) if self.device.type == "cuda" else None
        stats.update(device=device, dtype=self.precision, batch_size=self.batch_size,
                     params=self.n_params,
                     peak_memory_bytes=(int(torch.cuda.max_memory_allocated(self.device))
                                        if self.device.type == "cuda" else None),
                     tflops=tflops, mfu=utilisation(device, self.precision, tflops))
        return stats

    def _out_of_memory(self, part: Part) -> None:
        """After an out-of-memory error on `part`: one line for a single sequence, else the
        limits lowered (`_back_off`)."""
        if self.preset:
            raise GenebError(
                f"model {self.model_id}: out of memory on a batch of {part.rows.size} "
                f"sequences on {self.device}; --preset reference runs fixed batches of "
                f"{self.batch_size} (a smaller batch is another preset value): rerun with a "
                "smaller --batch-size or on a larger device") from None
        if part.rows.size == 1:
            raise GenebError(
                f"model {self.model_id}: out of memory on a single sequence of "
                f"{part.lengths[0]} {self.unit} on {self.device}; lower {self.limit} in its "
                "registry entry or use a larger device") from None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        self._back_off(part)

    def _back_off(self, part: Part) -> None:
        """Lower the limits after an out-of-memory error on `part` (see `halve`): it and every
        later batch over them is planned again."""
        if self.halve == "rows":      # half the failed batch, rounded up
            self.batch_size = max(1, min(self.batch_size, (part.rows.size + 1) // 2))
        else:
            self.max_batch_tokens = max(1, part.rows.size * int(part.lengths.max()) // 2)


@dataclass
class Part:
    """One batch: its rows (positions in the split), their items and lengths, the collated input
    (None until it runs, for a batch planned again), and the truncations it accounts for."""

    rows: np.ndarray
    items: list
    lengths: np.ndarray
    inputs: Any = None
    n_truncated: int = 0
