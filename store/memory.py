"""The memory one batch of a run needs beyond the weights: an estimate of the activations of a
forward pass at inference (no gradients), from the batch's shape (rows x tokens of its longest
piece), the model's shape (width, FFN width, attention heads: its checkpoint's config.json) and
its architecture's scaling (`scaling_of`). `fill --dry-run` shows it per model beside the
weights (`store.runnable.memory_fit` says whether the two fit the device: a warning, never a
refusal); docs/guide/long-range.md gives the formula.

With H = rows x tokens x width x v (one hidden-state tensor, v bytes a value), F = rows x
tokens x FFN width x v, S = rows x heads x tokens² x v (one attention-score tensor) and
M = rows x tokens² x v (a decoder's causal mask):

    activations = max(4 H + 2 S + M,   2 H + 3 F)

the attention step (the layer's input, queries, keys and values; the scores and their softmax;
the mask) or the FFN step (input and output; a gated FFN's gate, up and product), whichever is
larger. S and M count only where attention materialises the scores (`QUADRATIC`); scaled
dot-product attention (sdpa, flash) and state-space or Hyena layers (`LINEAR`) hold none.
Depth does not enter: at inference a layer's activations are freed before the next layer runs
(the weights carry the depth). Not counted: a framework's workspace and allocator slack, the
selective scan's per-token states of a Mamba layer's CPU path, a convolution's FFT buffers,
the tokenizer and the rows the run keeps (a few bytes a sequence).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

QUADRATIC = "quadratic"          # attention whose scores are held: S grows with tokens²
EFFICIENT = "efficient"          # attention through sdpa / flash kernels: no scores held
LINEAR = "linear"                # state-space, Hyena, convolution layers: no attention
# The scaling of each catalog architecture family whose layers the formula describes; one
# with attention layers (a hybrid) counts its attention. Families not here are not estimated.
FAMILY_SCALING = {"Transformer encoder": QUADRATIC, "Transformer decoder": QUADRATIC,
                  "Hybrid-Mamba-MoE": QUADRATIC, "StripedHyena": QUADRATIC,
                  "Mamba": LINEAR, "Hyena": LINEAR}
DECODER_FAMILIES = ("Transformer decoder",)       # causal: the mask M is counted
SCALING_SHOWN = {QUADRATIC: "attention scores held: grows with tokens²",
                 EFFICIENT: "sdpa/flash attention: no scores held, grows with tokens",
                 LINEAR: "no attention: grows with tokens"}
# The config.json keys of a checkpoint's width, FFN width and heads, in the order read.
WIDTH_KEYS = ("hidden_size", "d_model", "n_embd", "hidden_dim", "dim")
FFN_KEYS = ("intermediate_size", "d_inner", "n_inner", "ffn_dim", "inner_dim")
HEAD_KEYS = ("num_attention_heads", "n_head", "num_heads", "n_heads")
FFN_ASSUMED = 4                  # FFN width = 4 x width where the config names none
HEAD_WIDTH_ASSUMED = 64          # heads = width / 64 where the config names none
# Bytes a value of the activations takes at each `fill --dtype` on the CPU; on a GPU `auto`
# runs under autocast (16-bit matrix products): 2.
ACTIVATION_BYTES = {"auto": 4, "float32": 4, "bfloat16": 2, "float16": 2}


def config_value(config: Mapping, keys: tuple[str, ...]) -> tuple[int, str] | None:
    """The first positive integer of `keys` in a checkpoint's config and its key; None."""
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value, key
    return None


def activation_bytes_per_value(dtype: str, on_gpu: bool) -> int:
    """v of the formula at `fill --dtype` (see `ACTIVATION_BYTES`)."""
    return 2 if on_gpu and dtype == "auto" else ACTIVATION_BYTES[dtype]


@dataclass(frozen=True)
class Shape:
    """What the formula reads of a model, and where each figure comes from."""

    width: int
    ffn: int
    heads: int
    scaling: str                 # QUADRATIC | EFFICIENT | LINEAR
    decoder: bool
    basis: str

    @classmethod
    def of(cls, config: Mapping | None, width: int, width_basis: str, scaling: str,
           decoder: bool) -> Shape:
        """The shape from a checkpoint's `config` (None: none at hand), its width otherwise
        told (`width`, `width_basis`: `engine.space.model_width`'s), FFN and heads assumed
        where the config names none (said in `basis`)."""
        config = config or {}
        ffn = config_value(config, FFN_KEYS)
        heads = config_value(config, HEAD_KEYS)
        said = [f"width {width:,} ({width_basis})",
                f"FFN {ffn[0]:,} ({ffn[1]})" if ffn else f"FFN {FFN_ASSUMED} x width assumed"]
        if scaling == QUADRATIC:           # heads enter only where scores are held
            said.append(f"{heads[0]} heads ({heads[1]})" if heads else
                        f"heads width / {HEAD_WIDTH_ASSUMED} assumed")
        return cls(width, ffn[0] if ffn else FFN_ASSUMED * width,
                   heads[0] if heads else max(1, width // HEAD_WIDTH_ASSUMED), scaling, decoder,
                   "; ".join(said))


def activation_bytes(shape: Shape, rows: int, tokens: int, value_bytes: int) -> int:
    """The formula of the module for one batch of `rows` pieces of `tokens` tokens."""
    hidden = rows * tokens * shape.width * value_bytes
    ffn = rows * tokens * shape.ffn * value_bytes
    scores = mask = 0
    if shape.scaling == QUADRATIC:
        scores = rows * shape.heads * tokens * tokens * value_bytes
        mask = rows * tokens * tokens * value_bytes if shape.decoder else 0
    return max(4 * hidden + 2 * scores + mask, 2 * hidden + 3 * ffn)


@dataclass(frozen=True)
class MemoryEstimate:
    """Weights plus the activations of the run's largest batch (see the module)."""

    weights: int | None          # None: the catalog gives no parameter count
    activations: int
    rows: int                    # the largest batch: its rows ...
    tokens: int                  # ... of its longest piece's tokens
    shape: Shape
    batch_basis: str             # where the rows come from

    @property
    def scaling(self) -> str:
        return self.shape.scaling

    @property
    def total(self) -> int:
        return (self.weights or 0) + self.activations

    def line(self, held: str, fmt) -> str:
        """The dry run's line (`held`: the weights' precision, `fmt`: bytes as shown)."""
        weights = (f"{fmt(self.weights)} weights ({held})" if self.weights is not None else
                   "weights unknown (no 'params')")
        return (f"≈{fmt(self.total)}: {weights} + {fmt(self.activations)} activations of a "
                f"batch of {self.rows:,} x {self.tokens:,} tokens ({self.batch_basis}; "
                f"{SCALING_SHOWN[self.scaling]}; {self.shape.basis})")
