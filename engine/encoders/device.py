"""Where an encoder runs and in what precision: the device a `--device` names (`pick_device`),
its name in the runs table (`device_name`), and what `fill --dtype` means on it (`precision_of`;
`dtype_problem`, the refusal `engine.encoders.preflight` checks before the store changes;
`precision_name`, how the embeddings' settings, the runs table and the result rows name it)."""

from __future__ import annotations

import torch

from store.vocab.encoder_kinds import DTYPES
from store.vocab.errors import GenebError
from store.vocab.variant import AUTOCAST, REFERENCE_PRECISION, dtype_precision


def device_name(device: torch.device) -> str:
    """"cpu", or the CUDA device's name (what the runs table records)."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else device.type


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


def dtype_problem(device: torch.device, dtype: str) -> str | None:
    """Why `device` cannot run weights cast to `dtype` (`fill --dtype`), None when it can:
    'auto' and 'float32' run anywhere; 'bfloat16' and 'float16' on the CPU and on CUDA, bfloat16
    on a card that supports it."""
    if dtype not in DTYPES:
        return f"--dtype {dtype!r} is not one of {', '.join(DTYPES)}"
    if dtype in ("auto", "float32"):
        return None
    if device.type not in ("cpu", "cuda"):
        return f"--dtype {dtype}: weights in {dtype} run on the CPU or CUDA, not on {device}"
    if dtype == "bfloat16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        return (f"--dtype bfloat16: {device_name(device)} has no bfloat16; use --dtype float16, "
                "float32 or auto")
    return None


def precision_of(device: torch.device, dtype: str,
                 model_id: str) -> tuple[torch.dtype | None, torch.dtype | None]:
    """(the dtype the weights are cast to, the autocast dtype of a forward pass), None for
    neither, of the precision `--dtype` computes in on `device`
    (`store.vocab.variant.dtype_precision`: 'auto' autocasts on CUDA only, bf16 where the card
    supports it, else fp16, over float32 weights; 'bfloat16' and 'float16' cast the weights,
    `dtype_problem` refuses a device without them; 'float32' does neither)."""
    if (problem := dtype_problem(device, dtype)) is not None:
        raise GenebError(f"model {model_id}: {problem}")
    name = dtype_precision(dtype, device.type, device.type == "cuda"
                           and torch.cuda.is_bf16_supported())
    if name.endswith(AUTOCAST):
        return None, getattr(torch, name.removesuffix(AUTOCAST))
    return (None if name == REFERENCE_PRECISION else getattr(torch, name)), None


def precision_name(weights: torch.dtype | None, autocast: torch.dtype | None) -> str:
    """How a forward pass computes, as the embeddings' settings, the runs table and the result
    rows record it (`store.vocab.variant.dtype_precision`'s names): float32, bfloat16 / float16
    (weights cast), bfloat16-autocast / float16-autocast."""
    if weights is not None:
        return str(weights).removeprefix("torch.")
    if autocast is None:
        return REFERENCE_PRECISION
    return f"{str(autocast).removeprefix('torch.')}{AUTOCAST}"

