"""The generic Hugging Face encoder: AutoTokenizer + the base model, mean of the last hidden layer.

The official GENEB extractors tokenize with the model's tokenizer (special tokens included),
run the frozen model and average the last hidden layer over the tokens the attention mask keeps,
one sequence at a time. This encoder computes the same numbers faster:

- every sequence is tokenized once (truncated to the model's context, truncations counted);
- batches are built from length-sorted sequences (longest first, so an out-of-memory error
  shows up at once), which keeps padding near zero; rows are written back at their original
  positions, so the input order never matters;
- attention models get right padding (encoders) or left padding with position ids counted from
  the first real token (decoders); models whose forward takes no attention mask (Hyena, Mamba,
  Caduceus), and the `mean-with-padding` recipe (an official mean that averaged over padding with
  one sequence per batch, i.e. over every token of the unpadded sequence), are batched by exact
  token length, so nothing is ever padded for them;
- pooling: `mean` (masked mean over every non-pad token, special tokens included, as the
  official extractors do), `mean-with-padding` (see above) or `cls` (the first token);
- `torch.inference_mode`; on CUDA bf16 autocast (fp16 where bf16 is unsupported), fp32 on CPU;
- an out-of-memory error halves the batch and retries (down to one sequence): from then on a
  batch holds at most half the padded tokens of the one that failed, so the shorter sequences
  that follow still share larger batches;
- finished batches are streamed into the split writer (buffered a little to keep Zarr writes
  large, always flushed on an error or interrupt), so an interrupted task resumes where it stopped.

`trust_remote_code` is always passed explicitly: True only when the caller opts in and
`check_remote_code` allows it (a pinned revision or a local folder), else False, so transformers
raises instead of asking on stdin. A checkpoint whose config.json or tokenizer_config.json has
`auto_map` needs the opt-in whatever its registry entry says.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from engine.encoders import ENFORMER_POOLINGS, check_remote_code
from store.catalog import PADDING_SIDES, POOLINGS
from store.errors import GenebError

if TYPE_CHECKING:
    from store.embeddings import SplitWriter

DTYPES = ("auto", "float32", "bfloat16", "float16")
HF_POOLINGS = tuple(p for p in POOLINGS if p not in ENFORMER_POOLINGS)
# Model types whose forward ignores (or has no) attention mask: padding would change them.
NO_MASK_MODEL_TYPES = frozenset({
    "mamba", "mamba2", "falcon_mamba", "hyenadna", "caduceus", "stripedhyena", "hyena",
})
_NO_LIMIT = 1_000_000     # tokenizers without a limit report model_max_length ~1e30
DEFAULT_BATCH_SIZE = 32
DEFAULT_FLUSH_ROWS = 1024


def pick_device(device: str | None = None) -> torch.device:
    if device in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise GenebError(f"--device {device!r} is not a torch device (try cpu, cuda, cuda:1)")\
            from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise GenebError(f"--device {device}: CUDA is not available on this machine; use "
                         "--device cpu or leave --device out")
    return dev


def oom_types() -> tuple[type[BaseException], ...]:
    return (torch.OutOfMemoryError,)


class HFEncoder:
    """Embeds sequences with a Hugging Face checkpoint (a hub id or a local directory).

    `model_id` names the model in messages; `source` is the hub id or path; `revision` the hub
    revision (a commit hash to pin it). The settings dict is the embeddings' identity.
    """

    def __init__(self, source: str, *, model_id: str | None = None, revision: str | None = None,
                 pooling: str = "mean", padding_side: str | None = None,
                 max_tokens: int | None = None, batch_size: int | None = None,
                 max_batch_tokens: int | None = None,
                 device: str | None = None, dtype: str = "auto",
                 trust_remote_code: bool = False, remote_code: str = "no",
                 flush_rows: int = DEFAULT_FLUSH_ROWS, flush_seconds: float = 30.0,
                 oom_errors: tuple[type[BaseException], ...] | None = None,
                 progress: Callable[[int, int], None] | None = None):
        self.model_id = model_id or source
        if pooling not in HF_POOLINGS:
            raise GenebError(f"model {self.model_id}: pooling {pooling!r} is not one of "
                             f"{', '.join(HF_POOLINGS)}")
        if padding_side is not None and padding_side not in PADDING_SIDES:
            raise GenebError(f"model {self.model_id}: padding_side {padding_side!r} is not one "
                             f"of {', '.join(PADDING_SIDES)}")
        self.source = source
        self.revision = revision
        self.pooling = pooling
        self.flush_rows = max(1, int(flush_rows))
        self.flush_seconds = flush_seconds
        self.oom_errors = oom_errors or oom_types()
        self.progress = progress
        self.device = pick_device(device)
        self.autocast_dtype = autocast_dtype(self.device, dtype, self.model_id)
        # Before anything is loaded: config.json / tokenizer_config.json naming code (auto_map)
        # need the opt-in whatever the entry says; every load then passes this explicitly.
        self._trust = check_remote_code(self.model_id, source, revision, remote_code,
                                        trust_remote_code, hub=True)
        self.tokenizer = self._load_tokenizer()
        self.model = self._load_model()
        config = self.model.config
        self.model_type = getattr(config, "model_type", None) or "unknown"
        params = inspect.signature(self.model.forward).parameters
        takes_mask = "attention_mask" in params
        self._takes_positions = "position_ids" in params
        self._takes_cache = "use_cache" in params
        if padding_side is None:
            if not takes_mask or self.model_type in NO_MASK_MODEL_TYPES:
                padding_side = "none"
            elif _is_decoder(config):
                padding_side = "left"
            else:
                padding_side = "right"
        if pooling == "mean-with-padding":
            padding_side = "none"    # the official mean over padding, with batch 1 = no padding
        if padding_side == "left" and not self._takes_positions:
            # Left padding would shift the positions of the real tokens; a causal model is
            # exact with right padding (real tokens never attend to the pads after them).
            padding_side = "right"
        self.padding_side = padding_side
        self.max_tokens = self._context(max_tokens)
        self.batch_size = int(batch_size or DEFAULT_BATCH_SIZE)
        self.max_batch_tokens = int(max_batch_tokens) if max_batch_tokens else None
        self.pad_id = _pad_id(self.tokenizer)

    # ---- loading -------------------------------------------------------------------------

    def _from_pretrained(self, cls, **kwargs):
        # Always explicit: an unset trust_remote_code makes transformers ask on stdin, and a
        # "y" there would run the checkpoint's code without the user's --trust-remote-code.
        kwargs = {"revision": self.revision, **kwargs, "trust_remote_code": bool(self._trust)}
        try:
            return cls.from_pretrained(self.source, **kwargs)
        except ValueError as exc:
            if "trust_remote_code" in str(exc):
                raise GenebError(
                    f"model {self.model_id}: {self.source} runs Python code from its repository "
                    "(trust_remote_code); rerun with --trust-remote-code to allow that, with "
                    f"its revision pinned to a commit (--models {self.model_id}@<commit>) unless "
                    "it is a local folder") from None
            raise
        except OSError as exc:
            where = ("the local directory" if Path(self.source).is_dir()
                     else "the Hugging Face hub (or its local cache)")
            raise GenebError(f"model {self.model_id}: cannot load {self.source} from {where}: "
                             f"{str(exc).splitlines()[0]}") from None

    def _load_tokenizer(self):
        from transformers import AutoTokenizer

        return self._from_pretrained(AutoTokenizer)

    def _load_model(self):
        from transformers import (
            AutoModel,
            AutoModelForCausalLM,
            AutoModelForMaskedLM,
            AutoModelForSequenceClassification,
        )

        logging.getLogger("transformers.modeling_utils").setLevel(logging.ERROR)
        last: Exception | None = None
        for cls in (AutoModel, AutoModelForMaskedLM, AutoModelForCausalLM,
                    AutoModelForSequenceClassification):
            try:
                model = self._from_pretrained(cls, dtype=torch.float32)
            except (ValueError, KeyError) as exc:   # no mapping for this config and class
                last = exc
                continue
            base = getattr(model, "base_model", model)
            model = base if isinstance(base, torch.nn.Module) else model
            return model.to(self.device).eval()
        raise GenebError(f"model {self.model_id}: transformers cannot build a model from "
                         f"{self.source} ({last})")

    def _context(self, max_tokens: int | None) -> int | None:
        if max_tokens:
            return int(max_tokens)
        limit = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(limit, int) and 0 < limit < _NO_LIMIT:
            return limit
        pos = getattr(self.model.config, "max_position_embeddings", None)
        if isinstance(pos, int) and 0 < pos < _NO_LIMIT:
            return pos
        return None

    # ---- identity ------------------------------------------------------------------------

    @property
    def settings(self) -> dict:
        return {
            "encoder": "hf",
            "source": self.source,
            "revision": self.revision,
            "pooling": self.pooling,
            "max_tokens": self.max_tokens,
            "padding_side": self.padding_side,
            "dtype": dtype_label(self.autocast_dtype),
            "layer": "last",
        }

    # ---- encoding ------------------------------------------------------------------------

    def tokenize(self, sequences: Sequence[str]) -> tuple[list[list[int]], np.ndarray]:
        """Token ids per sequence (truncated to the context) and a truncated flag per sequence."""
        tok = self.tokenizer
        logging.getLogger("transformers.tokenization_utils_base").setLevel(logging.ERROR)
        ids = tok(list(sequences), add_special_tokens=True, truncation=False)["input_ids"]
        truncated = np.zeros(len(ids), dtype=bool)
        if self.max_tokens is not None:
            long = [i for i, x in enumerate(ids) if len(x) > self.max_tokens]
            if long:
                again = tok([sequences[i] for i in long], add_special_tokens=True,
                            truncation=True, max_length=self.max_tokens)["input_ids"]
                for i, x in zip(long, again, strict=True):
                    ids[i] = x
                truncated[long] = True
        return ids, truncated

    def plan_batches(self, lengths: np.ndarray) -> list[np.ndarray]:
        """Positions (into `lengths`) per batch; see `plan_batches`."""
        return plan_batches(lengths, self.batch_size, exact_length=self.padding_side == "none",
                            max_batch_tokens=self.max_batch_tokens)

    def _collate(self, ids: list[list[int]]) -> dict[str, torch.Tensor]:
        n, width = len(ids), max(len(x) for x in ids)
        input_ids = torch.full((n, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((n, width), dtype=torch.long)
        for r, x in enumerate(ids):
            if self.padding_side == "left":
                input_ids[r, width - len(x):] = torch.as_tensor(x)
                mask[r, width - len(x):] = 1
            else:
                input_ids[r, :len(x)] = torch.as_tensor(x)
                mask[r, :len(x)] = 1
        return {"input_ids": input_ids, "attention_mask": mask}

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Pooled float32 embeddings (n × d) of one collated batch."""
        input_ids = batch["input_ids"].to(self.device)
        mask = batch["attention_mask"].to(self.device)
        kwargs: dict[str, Any] = {"input_ids": input_ids}
        if self.padding_side != "none":
            kwargs["attention_mask"] = mask
            if self.padding_side == "left" and self._takes_positions:
                kwargs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0)
        if self._takes_cache:
            kwargs["use_cache"] = False
        autocast = (torch.autocast(device_type="cuda", dtype=self.autocast_dtype)
                    if self.autocast_dtype is not None else nullcontext())
        with autocast:
            out = self.model(**kwargs)
        hidden = _last_hidden(out).float()
        if self.pooling == "cls":
            first = mask.argmax(dim=1) if self.padding_side == "left" else \
                torch.zeros(mask.shape[0], dtype=torch.long, device=mask.device)
            return hidden[torch.arange(hidden.shape[0], device=hidden.device), first]
        keep = mask.bool().unsqueeze(-1)
        summed = torch.where(keep, hidden, torch.zeros((), device=hidden.device)).sum(dim=1)
        return summed / keep.sum(dim=1).clamp(min=1)

    def encode(self, sequences: Sequence[str]) -> np.ndarray:
        """All rows at once (tests, small inputs): the same path as `encode_into`."""
        sink = ArraySink(len(sequences))
        self.encode_into(sequences, sink)
        return sink.array

    def encode_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict:
        start = time.perf_counter()
        ids, truncated = self.tokenize(sequences)
        rows = np.asarray(writer.pending(), dtype=np.int64)
        stats = {"n_truncated": int(truncated.sum()), "n_sequences": len(sequences),
                 "n_encoded": int(rows.size), "n_batches": 0, "n_oom_retries": 0,
                 "n_tokens": 0, "n_padded_tokens": 0}
        if rows.size == 0:
            stats["seconds"] = 0.0
            return stats
        lengths = np.fromiter((len(ids[r]) for r in rows), dtype=np.int64, count=rows.size)
        queue = deque(rows[p] for p in self.plan_batches(lengths))

        def embed(batch_rows: np.ndarray) -> torch.Tensor:
            batch = self._collate([ids[r] for r in batch_rows])
            pooled = self.forward(batch)
            stats["n_tokens"] += int(batch["attention_mask"].sum())
            stats["n_padded_tokens"] += int(batch["attention_mask"].numel())
            return pooled

        def shrink(batch_rows: np.ndarray, queue: deque) -> deque:
            """Halve the padded tokens per batch and re-plan what is left."""
            width = max(len(ids[r]) for r in batch_rows)
            self.max_batch_tokens = max(1, batch_rows.size * width // 2)
            left = np.concatenate([batch_rows, *queue])
            left_len = np.fromiter((len(ids[r]) for r in left), dtype=np.int64, count=left.size)
            return deque(left[p] for p in self.plan_batches(left_len))

        def too_big(batch_rows: np.ndarray) -> GenebError:
            return GenebError(
                f"model {self.model_id}: out of memory on a single sequence of "
                f"{len(ids[batch_rows[0]])} tokens on {self.device}; lower max_tokens in its "
                "registry entry or use a larger device")

        stream_batches(self, queue, writer, rows.size, stats, embed, shrink, too_big)
        stats["max_batch_tokens"] = self.max_batch_tokens
        stats["seconds"] = round(time.perf_counter() - start, 3)
        return stats

def autocast_dtype(device: torch.device, dtype: str, model_id: str) -> torch.dtype | None:
    """The autocast dtype of a forward pass: none on the CPU or for 'float32'; on CUDA
    'float16', 'bfloat16', or for 'auto' bf16 where the card supports it, else fp16."""
    if dtype not in DTYPES:
        raise GenebError(f"model {model_id}: dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    if device.type != "cuda" or dtype == "float32":
        return None
    if dtype == "float16":
        return torch.float16
    if dtype == "bfloat16" or torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


def dtype_label(autocast: torch.dtype | None) -> str:
    """How a forward pass computes, as recorded in the embeddings' settings."""
    return "float32" if autocast is None else f"{str(autocast).removeprefix('torch.')}-autocast"


def plan_batches(lengths: np.ndarray, batch_size: int, *, exact_length: bool,
                 max_batch_tokens: int | None = None) -> list[np.ndarray]:
    """Positions (into `lengths`) per batch, longest first.

    At most `batch_size` rows, and at most `max_batch_tokens` padded tokens once an
    out-of-memory error has set that budget (short sequences then still share big batches);
    with `exact_length`, a batch holds one length only (models that are never padded).
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


def stream_batches(encoder, queue: deque, writer, total: int, stats: dict,
                   embed: Callable[[np.ndarray], torch.Tensor],
                   shrink: Callable[[np.ndarray, deque], deque],
                   too_big: Callable[[np.ndarray], GenebError]) -> None:
    """Embed the batches of row indices in `queue` and stream them into `writer`.

    On out-of-memory (`encoder.oom_errors`) the cache is released and `shrink(batch, rest)`
    gives the new queue; a single sequence that does not fit raises `too_big(batch)`. Finished
    batches are buffered (`encoder.flush_rows` rows or `encoder.flush_seconds`) and always
    flushed, also on an error or an interrupt, so a resumed run recomputes nothing written.
    """
    buffer = RowBuffer(writer, encoder.flush_rows, encoder.flush_seconds)
    done = 0
    try:
        with torch.inference_mode():
            while queue:
                batch_rows = queue.popleft()
                try:
                    pooled = embed(batch_rows)
                except encoder.oom_errors:
                    if batch_rows.size == 1:
                        raise too_big(batch_rows) from None
                    if encoder.device.type == "cuda":
                        torch.cuda.empty_cache()
                    stats["n_oom_retries"] += 1
                    queue = shrink(batch_rows, queue)
                    continue
                buffer.add(batch_rows, pooled.cpu().numpy())
                stats["n_batches"] += 1
                done += batch_rows.size
                if encoder.progress is not None:
                    encoder.progress(done, total)
    finally:
        buffer.flush()


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


def _last_hidden(out) -> torch.Tensor:
    hidden = getattr(out, "last_hidden_state", None)
    if hidden is None and getattr(out, "hidden_states", None) is not None:
        hidden = out.hidden_states[-1]
    if hidden is None:
        hidden = out[0] if isinstance(out, (tuple, list)) else out
    return hidden


def _is_decoder(config) -> bool:
    if getattr(config, "is_encoder_decoder", False):
        return False
    if getattr(config, "is_decoder", False):
        return True
    archs = getattr(config, "architectures", None) or []
    if any(a.endswith("ForMaskedLM") for a in archs):
        return False
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return True
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    mt = getattr(config, "model_type", None)
    return mt in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and mt not in MODEL_FOR_MASKED_LM_MAPPING_NAMES


def _pad_id(tokenizer) -> int:
    for name in ("pad_token_id", "eos_token_id", "unk_token_id"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, int):
            return value
    return 0
