"""The generic Hugging Face encoder: AutoTokenizer + the base model, mean of the last hidden layer.

The official GENEB extractors tokenize with the model's tokenizer, run the frozen model and
pool its last hidden layer (each family's recipe beside ours: `store/catalogs/recipes.toml`, held
against them by tests/engine/test_recipe_parity.py). This encoder computes the same numbers
faster (the batching, autocast, out-of-memory back-off and streaming are `StreamingEncoder`'s,
engine/encoders/streaming.py):

- every sequence is tokenized once, as the task file holds it (case and letters untouched, as
  every official extractor of these families passed it to the tokenizer), truncated to the
  model's context, truncations counted; the entry's `TextRecipe` fields say what else the
  official extractor did: special tokens left out (`special_tokens = false`), the text cut to
  whole k-mers (`cut_to_multiple`) and written after the tokenizer's BOS token (`bos_text`),
  one-hot rows of the ids instead of the ids (`one_hot`); those set are recorded in the
  embeddings' settings;
- batches of length-sorted sequences keep padding near zero, each within a padded-token budget
  (`max_batch_tokens`, by default `engine.encoders.batching.default_batch_tokens` of the device)
  and `batch_size` rows, prepared in background threads (see `StreamingEncoder`);
- on CUDA the model runs scaled-dot-product attention (`attn_implementation="sdpa"`) where its
  architecture has it, else its default (`attention` in the statistics says which ran), and
  `compile_model=True` runs it through `torch.compile` (off by default: on the CPU it does not
  pay, see bench/embed.py; it changes embeddings at float rounding level only, within the
  1e-5 fp32 tolerance the tests hold the encoder to);
- a right-padded model running scaled-dot-product attention gets a padded batch's mask as a
  4D mask built on the device, in the device type's form
  (`engine.encoders.batching.MASK_FORMS`: on the CPU the keys each row attends to,
  n x 1 x 1 x L; on CUDA the full n x 1 x L x L mask transformers would build), where a check
  at load finds it gives the real tokens the same (`key_mask` and `mask_form` in the
  statistics; see `HFEncoder._takes_key_mask`); transformers then never checks the mask on
  the host, and a batch without padding (decided from its lengths) gets no mask at all;
- attention models get right padding (encoders) or left padding with position ids counted from
  the first real token (decoders); models whose forward takes no attention mask (Hyena, Mamba,
  Caduceus), and the `mean-with-padding` recipe (an official mean that also averaged its batch's
  padding, taken at batch 1: over every token of the unpadded sequence), are batched by exact
  token length, so nothing is ever padded for them;
- pooling: `mean` (masked mean over every non-pad token, special tokens included, as the
  official extractors do), `mean-with-padding` (see above) or `cls` (the first token);
- an out-of-memory error halves the padded tokens a batch may hold.

The recipe preset `reference` (`fill --preset reference`; the batches are `StreamingEncoder`'s)
pads each batch as the official extractor did (`store.official.recipes.Reference`): on the
tokenizer's own side or the one the extractor set, with the pad id, never unpadded for the
families above; the 2D mask passed only where the official extractor passed it (HyenaDNA got
the ids alone), no position ids (no extractor passed any), `cls` the batch's first column and
`mean-with-padding` the mean over every position of the padded batch (METAGENE-1's official
mean).

`trust_remote_code` is always passed explicitly: what `check_remote_code` returned when `build`
ran it (with the hub) before anything was loaded, True only when the caller opts in and it is
allowed (a pinned revision or a local folder), else False, so transformers raises instead of
asking on stdin. A checkpoint whose config.json or tokenizer_config.json has `auto_map` needs
the opt-in whatever its registry entry says.

Where the files come from is `engine.encoders.hub.checkpoint`'s rule, asked by every load: a
local folder or a cached snapshot loads from that folder, without the hub; else the hub id at
its revision; neither cached nor reachable is one line at the first load. Whether the run may
ask the hub is decided in `build`, before the remote-code check reads any file
(`engine.encoders.hub.decide_hub`).
"""

from __future__ import annotations

import hashlib
import inspect
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import torch
import torch.nn.functional as F

from engine.encoders import check_remote_code, load_error
from engine.encoders.batching import default_batch_tokens, mask_form
from engine.encoders.checkpoint_checks import SAMPLE_LETTERS, unknown_problem, unknown_share
from engine.encoders.hub import checkpoint, decide_hub
from engine.encoders.streaming import StreamingEncoder
from store.catalog import PADDING_SIDES
from store.vocab.errors import GenebError

if TYPE_CHECKING:
    from engine.data import Sample
    from engine.encoders import EncoderOptions
    from store.catalog import ModelMeta

# Model types whose forward ignores (or has no) attention mask: padding would change them.
NO_MASK_MODEL_TYPES = frozenset({
    "mamba", "mamba2", "falcon_mamba", "hyenadna", "caduceus", "stripedhyena", "hyena",
})
# Architectures whose attention mask, in transformers, is the padding mask and nothing else (no
# sliding window, no causality): only these may take the key mask. A short check at load cannot
# see a window longer than its probe (ModernBERT's 128-token local attention, for one).
KEY_MASK_MODEL_TYPES = frozenset({"bert"})
_NO_LIMIT = 10**12        # tokenizers without a limit report model_max_length ~1e30 (a real
#                           limit may be a million and more: HyenaDNA-1M's)
E = TypeVar("E", bound="HFEncoder")


def build(model: ModelMeta, options: EncoderOptions) -> HFEncoder:
    """The encoder of a catalog entry that passed `preflight`."""
    return build_hf(HFEncoder, model, options)


def build_hf(cls: type[E], model: ModelMeta, options: EncoderOptions) -> E:
    """An encoder of class `cls` (this one, or an adapter built on it) for a catalog entry
    that passed `preflight`. Before anything is loaded, the remote-code check runs once with
    the hub: config.json / tokenizer_config.json naming code (auto_map) need the opt-in
    whatever the entry says; every load passes what it returns. Whether this run may ask the
    hub is decided first when the files need it (see the module)."""
    source = model.path or model.hub_id
    decide_hub(source, model.revision)
    trust = check_remote_code(model.model_id, source, model.revision,
                              model.remote_code, options.trust_remote_code, hub=True)
    return cls.for_model(model, options, padding_side=model.padding_side,
                               max_tokens=model.max_tokens, documented=model.context,
                               text=TextRecipe.of(model),
                               trust_remote_code=trust,
                               spread=options.spread, random_init=model.random_init,
                               max_batch_tokens=options.max_batch_tokens,
                               compile_model=options.compile)


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """transformers prints nothing of its own while a model loads: its library logger at ERROR
    (its loading report, its notices) and its own progress bars off ("Loading weights"), both
    as they were afterwards; huggingface_hub's download bars stay as they are. The library
    logger, not `transformers.modeling_utils`: transformers 5 runs (and prints) its
    tensor-parallel plan check, "The following layers were not sharded", whenever that
    module's own logger level is WARNING or above."""
    # lazy: huggingface_hub
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars
    from transformers.utils import logging as hf_logging  # lazy: transformers

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hub_bars = not are_progress_bars_disabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()       # huggingface_hub's too, turned back on below
    if hub_bars:
        enable_progress_bars()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def weights_sha256(model: torch.nn.Module) -> str:
    """The sha256 of a model's weights: every state-dict entry in name order, its name and its
    bytes as stored (what a random-initialisation control records as its revision)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def from_pretrained(cls, model_id: str, source: str, revision: str | None, trust: bool,
                    **kwargs):
    """`cls.from_pretrained` of the checkpoint `source` at `revision` (from where
    `engine.encoders.hub.checkpoint` says), `trust_remote_code` always explicit: unset, it makes
    transformers ask on stdin, and a "y" there would run the checkpoint's code without the
    user's --trust-remote-code. A load that needs remote code without it, and an unreadable
    file, are one line naming the model."""
    folder = checkpoint(model_id, source, revision)     # None: the hub
    at = {"revision": revision} if folder is None else {}
    kwargs = {**at, **kwargs, "trust_remote_code": bool(trust)}
    try:
        return cls.from_pretrained(str(folder or source), **kwargs)
    except ValueError as exc:
        if "trust_remote_code" in str(exc):
            raise GenebError(
                f"model {model_id}: {source} runs Python code from its repository "
                "(trust_remote_code); rerun with --trust-remote-code to allow that, with "
                f"its revision pinned to a commit (--models {model_id}@<commit>) unless "
                "it is a local folder") from None
        raise
    except OSError as exc:
        where = ("the Hugging Face hub" if folder is None else "the local directory"
                 if Path(source).expanduser() == folder
                 else f"the Hugging Face cache ({folder})")
        raise GenebError(f"model {model_id}: cannot load {source} from {where}: "
                         f"{str(exc).splitlines()[0]}") from None


def check_tokenizer(model: ModelMeta, folder: Path, trust: bool, sample: Sample) -> None:
    """Refuse the tokenizer of the checkpoint in `folder` for the generic encoder when it does
    not know most of the nucleotides of `sample` (each sequence's first SAMPLE_LETTERS, cut as
    the entry's recipe cuts it: `engine.encoders.checkpoint_checks.unknown_share`), or cannot
    be loaded: one line naming the model."""
    from transformers import AutoTokenizer  # lazy: transformers

    recipe = TextRecipe.of(model)
    texts = [t for s in sample.sequences if (t := recipe.text(s[:SAMPLE_LETTERS], None))]
    with quiet_transformers():      # and its notes on texts beyond the model's context
        try:
            tokenizer = from_pretrained(AutoTokenizer, model.model_id, str(folder), None, trust)
        except GenebError:
            raise
        except Exception as exc:  # noqa: BLE001 - a damaged tokenizer file: JSONDecodeError...
            raise load_error(model.model_id, f"the tokenizer of {folder}", exc) from None
        share, unit = unknown_share(tokenizer, texts)
    if problem := unknown_problem(share, unit, tokenizer.unk_token, len(texts), sample.of):
        raise GenebError(f"model {model.model_id}: {problem}")


@dataclass(frozen=True)
class TextRecipe:
    """How an official extractor turned a sequence into the model's input, beyond the
    tokenizer's defaults (the entry's fields of the same names; see the module)."""

    special_tokens: bool = True         # the tokenizer adds its special tokens
    bos_text: bool = False              # the tokenizer's BOS token written before the text
    cut_to_multiple: int | None = None  # the text's end cut to a multiple of this many letters
    one_hot: bool = False               # the model gets one-hot rows of the ids, not the ids

    @classmethod
    def of(cls, model: ModelMeta) -> TextRecipe:
        return cls(**{f.name: getattr(model, f.name) for f in fields(cls)})

    def settings(self) -> dict:
        """The fields that differ from the defaults (what the embeddings' settings record, so
        the settings of a recipe without any stay what they were)."""
        return {k: v for k, v in asdict(self).items() if v != getattr(TextRecipe, k)}

    def text(self, sequence: str, bos: str | None) -> str:
        """The text the tokenizer gets."""
        if self.cut_to_multiple:
            sequence = sequence[:len(sequence) - len(sequence) % self.cut_to_multiple]
        return (bos or "") + sequence if self.bos_text else sequence


class HFEncoder(StreamingEncoder):
    """Embeds sequences with a Hugging Face checkpoint (a hub id or a local directory).

    `trust_remote_code` is the value `check_remote_code` returned for it (see the module).
    """

    kind = "hf"
    default_batch_size = 1_024        # rows; the token budget decides (see the module)

    def __init__(self, source: str, *, padding_side: str | None = None,
                 max_tokens: int | None = None, documented: int | None = None,
                 max_batch_tokens: int | None = None, text: TextRecipe = TextRecipe(),
                 trust_remote_code: bool = False, spread: bool = False,
                 random_init: int | None = None, compile_model: bool = False, **common):
        super().__init__(source, **common)
        self.text = text
        self.random_init = random_init   # the random-initialisation control's seed
        # Over several GPUs only where there are several (a Ray actor given G > 1 of them).
        self.spread = spread and self.device.type == "cuda" and torch.cuda.device_count() > 1
        if padding_side is not None and padding_side not in PADDING_SIDES:
            raise GenebError(f"model {self.model_id}: padding_side {padding_side!r} is not one "
                             f"of {', '.join(PADDING_SIDES)}")
        self._trust = bool(trust_remote_code)
        with quiet_transformers():
            self.tokenizer = self._load_tokenizer()
            self.model = self._load_model()
        config = self.model.config
        self.model_type = getattr(config, "model_type", None) or "unknown"
        params = inspect.signature(self.model.forward).parameters
        takes_mask = "attention_mask" in params
        self._takes_positions = "position_ids" in params
        self._takes_cache = "use_cache" in params
        # whether a padded batch's mask goes to the model (the reference preset: as the
        # official extractor did, where the forward can take it)
        self._passes_mask = True
        if self.reference is not None:
            self._passes_mask = self.reference.mask and (takes_mask or any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()))
            padding_side = (self.tokenizer.padding_side
                            if self.reference.padding_side == "tokenizer"
                            else self.reference.padding_side)
        elif padding_side is None:
            if not takes_mask or self.model_type in NO_MASK_MODEL_TYPES:
                padding_side = "none"
            elif _is_decoder(config):
                padding_side = "left"
            else:
                padding_side = "right"
        if self.pooling == "mean-with-padding" and self.reference is None:
            padding_side = "none"    # the official mean over padding, with batch 1 = no padding
        if padding_side == "left" and not self._takes_positions and self.reference is None:
            # Left padding would shift the positions of the real tokens; a causal model is
            # exact with right padding (real tokens never attend to the pads after them).
            padding_side = "right"
        self.padding_side = padding_side
        self.max_tokens = self._context(max_tokens, documented)
        self.max_batch_tokens = (None if self.reference is not None else
                                 int(max_batch_tokens) if max_batch_tokens else
                                 default_batch_tokens(self.device))
        self.pad_id = _pad_id(self.tokenizer)
        if text.bos_text and not self.tokenizer.bos_token:
            raise GenebError(f"model {self.model_id}: bos_text = true, but its tokenizer has no "
                             "BOS token")
        self.attention = getattr(config, "_attn_implementation", None) or "default"
        self.key_mask = False
        self.key_mask = self._takes_key_mask()       # asked before any compilation
        self.compiled = bool(compile_model)
        if self.compiled:
            self.model = torch.compile(self.model, dynamic=True)

    # ---- loading -------------------------------------------------------------------------

    def _from_pretrained(self, cls, **kwargs):
        return from_pretrained(cls, self.model_id, self.source, self.revision, self._trust,
                               **kwargs)

    def _load_tokenizer(self):
        from transformers import AutoTokenizer  # lazy: transformers

        return self._from_pretrained(AutoTokenizer)

    def _load_model(self):
        from transformers import (  # lazy: transformers
            AutoModel,
            AutoModelForCausalLM,
            AutoModelForMaskedLM,
            AutoModelForSequenceClassification,
        )

        last: Exception | None = None
        for cls in (AutoModel, AutoModelForMaskedLM, AutoModelForCausalLM,
                    AutoModelForSequenceClassification):
            try:
                model = self._attention_first(cls)
            except (ValueError, KeyError) as exc:   # no mapping for this config and class
                last = exc
                continue
            base = getattr(model, "base_model", model)
            model = base if isinstance(base, torch.nn.Module) else model
            if self.random_init is not None:
                self.revision = f"random-init-{self.random_init}-sha256-{weights_sha256(model)}"
            if self.spread:       # inputs go where the first layer is
                self.device = next(model.parameters()).device
                return model.to(dtype=self.weights_dtype or torch.float32).eval()
            return self.placed(model)
        said = (str(last).strip().splitlines() or [type(last).__name__])[0]
        raise GenebError(f"model {self.model_id}: transformers cannot build a model from "
                         f"{self.source} ({said})")

    def _attention_first(self, cls):
        """The model of class `cls`, on CUDA with scaled-dot-product attention where its
        architecture has it (transformers raises ValueError or ImportError for one that has
        not), else with its default attention."""
        if self.device.type == "cuda":
            try:
                return self._build(cls, attn_implementation="sdpa")
            except (ValueError, ImportError) as exc:
                if "attention" not in str(exc).lower() and "sdpa" not in str(exc).lower():
                    raise
        return self._build(cls)

    def _build(self, cls, **attention):
        if self.random_init is not None:
            return self._random(cls, **attention)
        return self._from_pretrained(cls, dtype=torch.float32, **attention,
                                     **({"device_map": "auto"} if self.spread else {}))

    def _random(self, cls, **attention):
        """The checkpoint's architecture (its configuration, the class `cls`) with weights drawn
        by the architecture's own initialisation from torch's generator seeded with
        `random_init` (the caller's generator state restored afterwards), in float32."""
        from transformers import AutoConfig  # lazy: transformers

        config = self._from_pretrained(AutoConfig)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.random_init)
            return cls.from_config(config, trust_remote_code=bool(self._trust),
                                   **attention).to(torch.float32)

    def _context(self, max_tokens: int | None, documented: int | None) -> int | None:
        """The most tokens a sequence keeps: the entry's `max_tokens` cap; else the limit the
        checkpoint states (its tokenizer's `model_max_length`, else its config's
        `max_position_embeddings`) or the entry's documented `context`, the larger where both
        are known (a tokenizer saved with a default below the model card's length cuts no
        sequence the model accepts; where the stated limit is the larger, what every run cut
        before); None where none is known."""
        if max_tokens:
            return int(max_tokens)
        stated = None
        limit = getattr(self.tokenizer, "model_max_length", None)
        pos = getattr(self.model.config, "max_position_embeddings", None)
        for value in (limit, pos):
            if isinstance(value, int) and 0 < value < _NO_LIMIT:
                stated = value
                break
        known = [int(n) for n in (stated, documented) if n]
        return max(known) if known else None

    def _takes_key_mask(self) -> bool:
        """Whether the padding mask goes to the model as a 4D mask in the device's form
        (`engine.encoders.batching.mask_form`: on the CPU which keys each row attends to, a
        boolean n x 1 x 1 x L tensor that scaled-dot-product attention broadcasts itself,
        instead of the n x L mask transformers expands to a full n x 1 x L x L one every
        forward, a quarter to a third of a small model's forward on the CPU, see
        bench/embed.py; on CUDA that full mask, built on the device without transformers'
        host check). Asked once, of a padded two-row batch through `forward` as it runs
        (dtype, autocast, pooling, device): only a right-padded model of
        `KEY_MASK_MODEL_TYPES` running sdpa whose embeddings the 4D mask leaves as the 2D mask
        gives them (to 1e-5 of their scale) takes it; a causal model (the key mask has no
        causality), one whose
        mask holds more than the padding (a sliding window), one that reads masks its own way
        (remote code) or refuses a 4D one keeps the 2D mask."""
        if (self.padding_side != "right" or self.attention != "sdpa" or self.reference is not None
                or self.model_type not in KEY_MASK_MODEL_TYPES):
            return False
        ids, _ = self.tokenize(["ACGTACGTACGTACGTACGTACGT", "ACGTAC"])
        if len(ids[0]) == len(ids[1]):
            return False
        batch = self.collate(ids)
        try:
            with torch.inference_mode():
                flat = self.forward(batch)
                keys = self.forward({**batch, "mask": mask_form(self.device)})
        except Exception:        # noqa: BLE001 - any refusal of the 4D form keeps the 2D one
            return False
        if keys.shape != flat.shape:
            return False
        scale = float(flat.abs().max().clamp(min=1.0))
        return bool((keys - flat).abs().max() <= 1e-5 * scale)

    # ---- identity ------------------------------------------------------------------------

    def recipe(self) -> dict:
        return {"max_tokens": self.max_tokens, "padding_side": self.padding_side,
                "dtype": self.precision, "layer": "last", **self.text.settings()}

    # ---- encoding ------------------------------------------------------------------------

    @property
    def exact_length(self) -> bool:
        return self.padding_side == "none"

    @property
    def padded_mask(self) -> str:
        """How a padded batch's mask goes to the model: "2d", or the device's 4D form."""
        return mask_form(self.device) if self.key_mask else "2d"

    def encode_into(self, sequences, writer) -> dict:
        """`StreamingEncoder.encode_into`, its statistics with the attention that ran, whether
        the padding mask went as a 4D mask and in which form, and whether the model was
        compiled."""
        stats = super().encode_into(sequences, writer)
        stats.update(attention=self.attention, key_mask=self.key_mask,
                     mask_form=self.padded_mask,
                     compiled=self.compiled)
        return stats

    def tokenize(self, sequences: Sequence[str]) -> tuple[list[list[int]], np.ndarray]:
        """Token ids per sequence (truncated to the context) and a truncated flag per sequence."""
        tok, special = self.tokenizer, self.text.special_tokens
        logging.getLogger("transformers.tokenization_utils_base").setLevel(logging.ERROR)
        texts = [self.text.text(s, tok.bos_token) for s in sequences]
        ids = tok(texts, add_special_tokens=special, truncation=False)["input_ids"]
        truncated = np.zeros(len(ids), dtype=bool)
        if self.max_tokens is not None:
            long = [i for i, x in enumerate(ids) if len(x) > self.max_tokens]
            if long:
                again = tok([texts[i] for i in long], add_special_tokens=special,
                            truncation=True, max_length=self.max_tokens)["input_ids"]
                for i, x in zip(long, again, strict=True):
                    ids[i] = x
                truncated[long] = True
        return ids, truncated

    def collate(self, ids: list[list[int]]) -> dict[str, Any]:
        """Ids padded on the model's side, the 2D mask, and how the model gets the mask
        (`mask`: "none" for a batch without padding, else "2d" or the device's 4D form,
        `engine.encoders.batching.mask_form`): decided here, from the lengths."""
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        width = int(lengths.max())
        columns = np.arange(width)
        keep = (columns >= width - lengths[:, None] if self.padding_side == "left"
                else columns < lengths[:, None])
        input_ids = np.full((len(ids), width), self.pad_id, dtype=np.int64)
        input_ids[keep] = np.fromiter(chain.from_iterable(ids), dtype=np.int64,
                                      count=int(lengths.sum()))
        form = "none" if lengths.min() == width else self.padded_mask
        return {"input_ids": torch.from_numpy(input_ids),
                "attention_mask": torch.from_numpy(keep.astype(np.int64)), "mask": form}

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Pooled float32 embeddings (n × d) of one collated batch."""
        input_ids = batch["input_ids"].to(self.device, non_blocking=True)
        mask = batch["attention_mask"].to(self.device, non_blocking=True)
        kwargs: dict[str, Any] = {"input_ids": input_ids}
        if self.padding_side != "none":
            form = batch.get("mask", "2d")
            if form != "none" and self._passes_mask:   # a batch without padding needs no mask
                kwargs["attention_mask"] = _padding_mask(mask, form)
            if self.padding_side == "left" and self._takes_positions and self.reference is None:
                kwargs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0)
        if self._takes_cache:
            kwargs["use_cache"] = False
        if self.text.one_hot:       # rows over the vocabulary, zero at padding
            kwargs["input_ids"] = (F.one_hot(input_ids, len(self.tokenizer))
                                   * mask.unsqueeze(-1)).to(self.weights_dtype or torch.float32)
        with self.autocast():
            out = self.model(**kwargs)
        hidden = _last_hidden(out).float()
        if self.pooling == "cls":
            first = (mask.argmax(dim=1) if self.padding_side == "left" and self.reference is None
                     else torch.zeros(mask.shape[0], dtype=torch.long, device=mask.device))
            return hidden[torch.arange(hidden.shape[0], device=hidden.device), first]
        if self.pooling == "mean-with-padding" and self.reference is not None:
            return hidden.mean(dim=1)        # every position of the batch, its padding too
        keep = mask.bool().unsqueeze(-1)
        summed = torch.where(keep, hidden, torch.zeros((), device=hidden.device)).sum(dim=1)
        return summed / keep.sum(dim=1).clamp(min=1)


def _padding_mask(mask: torch.Tensor, form: str) -> torch.Tensor:
    """The n x L padding mask as the model gets it (see `MASK_FORMS`): as it is ("2d"), as the
    keys each row attends to ("keys", n x 1 x 1 x L, True: attend), or as the full
    n x 1 x L x L mask ("full", what transformers builds from the 2D one)."""
    if form == "2d":
        return mask
    keys = mask.bool()[:, None, None, :]
    if form == "keys":
        return keys
    n, width = mask.shape
    return keys.expand(n, 1, width, width).contiguous()


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
    from transformers.models.auto.modeling_auto import (  # lazy: transformers
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
