"""The memory a model's run needs, as `fill --dry-run` shows it: its weights at the run's dtype
plus the activations of the largest batch the run will make (`store.memory`'s formula), and
whether the two fit the device (`store.runnable.memory_fit`: a warning, never a refusal).

The largest batch is the one of the longest piece the model is given (`engine.dry_run.Reach`:
after the context policy and the model's limit): with the batch plan of
`engine.encoders.batching.plan_batches` a batch of shorter pieces holds no more tokens, and no
more tokens² per row. Its rows: the batch size told (`--batch-size`, the entry's
`batch_size`), else the Hugging Face encoder's default; for that encoder at most its padded-token
budget (`--max-batch-tokens`, else the device's `BATCH_TOKENS`) over the piece's tokens, at
least one row; another kind without a told batch size counts one row (said).

The model's shape: its checkpoint's config.json where at hand (`engine.space.checkpoint_config`),
its width by `engine.space.model_width`'s rule. Its scaling: the catalog's architecture family
(`store.memory.FAMILY_SCALING`; a model run once without a family: quadratic where its config
names attention heads); attention counts as `EFFICIENT` where the run asks for scaled
dot-product attention: the generic encoder without remote code (transformers' default, and what
it asks for on CUDA) and Evo (flash attention). A family the formula does not describe (a
CNN-Transformer, whose attention runs on pooled positions) and the kinds without weights get no
estimate.
"""

from __future__ import annotations

from engine.space import checkpoint_config, model_width
from store.catalog import ModelMeta
from store.memory import (
    DECODER_FAMILIES,
    EFFICIENT,
    FAMILY_SCALING,
    HEAD_KEYS,
    QUADRATIC,
    MemoryEstimate,
    Shape,
    activation_bytes,
    activation_bytes_per_value,
    config_value,
)
from store.paths import StorePaths
from store.runnable import device_memory, format_bytes, memory_fit, weight_bytes
from store.vocab.encoder_kinds import KINDS

SDPA_KINDS = ("hf", "evo")       # kinds whose attention runs sdpa/flash kernels (see the module)


def scaling_of(model: ModelMeta, config: dict | None) -> str | None:
    """How the model's activations grow with tokens (`store.memory`); None: not estimated."""
    scaling = FAMILY_SCALING.get(model.architecture_family)
    if scaling is None and model.architecture == "unknown" and config_value(config or {},
                                                                            HEAD_KEYS):
        scaling = QUADRATIC
    if scaling == QUADRATIC and model.encoder in SDPA_KINDS and (
            model.encoder != "hf" or model.remote_code == "no"):
        return EFFICIENT
    return scaling


def batch_rows(model: ModelMeta, told: int | None, tokens: int, device: str,
               max_batch_tokens: int | None) -> tuple[int, str]:
    """(rows of the largest batch, where they come from): see the module."""
    if model.encoder != "hf":
        return (told, "the batch size told") if told else (1, "one row: no batch size told")
    from engine.encoders.batching import BATCH_TOKENS  # lazy: torch
    from engine.encoders.hf import HFEncoder  # lazy: numpy, torch

    rows = told or HFEncoder.default_batch_size
    budget = max_batch_tokens or BATCH_TOKENS["cpu" if device == "cpu" else "cuda"]
    capped = max(1, min(rows, budget // max(1, tokens)))
    said = "the batch size told" if told else "the encoder's default rows"
    return capped, (said if capped == rows else f"{budget:,} padded tokens a batch")


def estimate(paths: StorePaths, model: ModelMeta, tokens: int, told_rows: int | None,
             device: str, dtype: str, max_batch_tokens: int | None) -> MemoryEstimate | None:
    """The weights and activations of the model's largest batch, its longest piece `tokens`
    long, on `device` (cpu, cuda or a device profile's name) at `fill --dtype`; None where it
    is not estimated (see the module)."""
    kind = KINDS[model.encoder]
    if not kind.source or not tokens:
        return None
    config = checkpoint_config(model)
    scaling = scaling_of(model, config)
    if scaling is None:
        return None
    width, basis = model_width(paths, model)
    shape = Shape.of(config, width, basis, scaling,
                     model.architecture_family in DECODER_FAMILIES)
    rows, rows_basis = batch_rows(model, told_rows, tokens, device, max_batch_tokens)
    value = activation_bytes_per_value(dtype, device != "cpu")
    return MemoryEstimate(weight_bytes(model.params, dtype),
                          activation_bytes(shape, rows, tokens, value), rows, tokens, shape,
                          rows_basis)


def device_bytes(device: str) -> int | None:
    """The memory of the device the dry run estimates for: this machine's (its RAM for the
    CPU, torch's answer for its first GPU); None for a device profile (the device table holds
    no memory) or where it cannot be told."""
    if device == "cpu":
        return device_memory("cpu")
    if device != "cuda":
        return None
    import torch  # lazy: torch

    try:
        return int(torch.cuda.get_device_properties(0).total_memory)
    except (RuntimeError, AssertionError):
        return None


def fit_of(found: MemoryEstimate, device: str, dtype: str) -> tuple[str, str]:
    """(whether the estimate fits `device`, in words; the warning where it does not): the
    question `store.runnable.memory_fit` answers for the dashboard, with the activations."""
    memory = device_bytes(device)
    fit = memory_fit(found.weights, found.activations, device, memory, dtype)
    if fit.warning:
        return "", fit.warning
    if memory is None:
        return f"the {device}'s memory is not known here: not compared", ""
    return f"fits the {device}'s {format_bytes(memory)}", ""
