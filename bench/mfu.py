"""Model FLOPs utilisation of the generic encoder at a real size, and what its pipeline loses
against the model's own forward pass, in one run.

A BERT encoder of 115M parameters (16 layers of width 768, BERT-base's layers, with a
single-nucleotide vocabulary; `--layers`/`--width` for others) is built
from its configuration with weights drawn from a seed (the path of `fill --random-init`: no
weights to download) and a single-nucleotide tokenizer; it embeds N sequences of 400-1,000 bp.
The encoder runs as `fill` builds it (`HFEncoder.encode_into`): batches to a padded-token
budget (`--max-batch-tokens`, default the device's `engine.encoders.batching.BATCH_TOKENS`),
background preparation and writing, on CUDA bf16 autocast, sdpa attention and pinned
non-blocking copies (`--compile` adds torch.compile). Printed:

- sequences/s, tokens/s, achieved TFLOP/s (2 x parameters x tokens/s, the forward pass) and,
  on CUDA with 16-bit autocast, MFU against the device's dense peak
  (the device table, `store/catalogs/devices.toml`); the same figures the runs table records
  (`status --perf`);
- pipeline/forward: the same model, sequences and dtype through a plain loop of the encoder's
  `forward` over the encoder's own batches (its windows, plan and collation), every batch on
  the device before timing: no tokenization, no copies, no writes (goal >= 90 % on a GPU);
- the official extractors' naive loop (input order, batch 8, float32) on the first sequences.

`--null` replaces the forward by zeros of the pooled rows' shape on the device (after the
inputs' copy there): the host side alone (tokenization, batching, copies, row buffers,
writes), on any machine, against the model's tokenizer alone on the same sequences (one call)
in the same run (goal >= 80 %). `--profile` adds one more pipeline run under torch's profiler:
the device's busy fraction (CUDA), every synchronising call (`SYNC_EVENTS`) and the top
host-side costs.

    .venv/bin/python bench/mfu.py --layers 2 --width 256 --n 300   # a CPU smoke run
    .venv/bin/python bench/mfu.py --layers 1 --width 64 --n 5000 --null   # host side, CPU
    python bench/mfu.py                                  # on a GPU: bench/gpu.sh runs it

Goal (issue 16): >= 40 % MFU at bf16 on a data-centre GPU for a >= 100M-parameter model.
Needs torch, transformers, tokenizers and numpy (no zarr, duckdb or polars).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

# What the profiler names a call that makes the host wait for the device (or read it).
SYNC_EVENTS = frozenset({"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                         "cudaMemcpy", "aten::item", "aten::_local_scalar_dense",
                         "aten::is_nonzero"})


def checkpoint(folder: Path, layers: int, width: int, max_len: int) -> Path:
    """A configuration and a tokenizer, no weights: the encoder draws them (random_init)."""
    from transformers import BertConfig

    from tests.engine.tiny_models import char_tokenizer

    tok = char_tokenizer(max_len)
    BertConfig(vocab_size=len(tok), hidden_size=width, num_hidden_layers=layers,
               num_attention_heads=max(1, width // 64), intermediate_size=4 * width,
               max_position_embeddings=max_len).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def naive(encoder, sequences: list[str]) -> float:
    """Seconds of the official loop: input order, batches of 8 padded to their longest, fp32."""
    tok, model = encoder.tokenizer, encoder.model
    start = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(sequences), 8):
            batch = tok(sequences[i:i + 8], padding=True, return_tensors="pt")
            model(**{k: v.to(encoder.device) for k, v in batch.items()})
    synchronize(encoder.device)
    return time.perf_counter() - start


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_batches(encoder, sequences: list[str]) -> list:
    """The encoder's own batches of `sequences` (its windows, its plan, its collation), every
    tensor on the device: what the plain forward loop runs."""
    def on_device(batch):
        if isinstance(batch, dict):
            return {k: on_device(v) for k, v in batch.items()}
        return batch.to(encoder.device) if isinstance(batch, torch.Tensor) else batch

    pending = np.ones(len(sequences), dtype=bool)
    parts = encoder._parts(encoder._windows(sequences), pending)
    batches = [on_device(p.inputs) for p in parts if p.rows.size]
    synchronize(encoder.device)
    return batches


def plain_forward(encoder, batches: list) -> float:
    """Seconds of the encoder's forward over `batches` (already on the device), back to back:
    no tokenization, no copies, no writes; the pooled rows stay on the device."""
    start = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            encoder.forward(batch)
    synchronize(encoder.device)
    return time.perf_counter() - start


def tokenizer_alone(encoder, sequences: list[str]) -> tuple[float, int]:
    """Seconds and tokens of the model's tokenizer alone on `sequences`, one call."""
    start = time.perf_counter()
    ids = encoder.tokenizer(sequences, truncation=False)["input_ids"]
    return time.perf_counter() - start, sum(map(len, ids))


def null_model(encoder) -> None:
    """The forward replaced by zeros of the pooled rows' shape, on the device (after the
    inputs' copy to it, as the real forward makes it): what is left is the host side."""
    width = encoder.model.config.hidden_size

    def forward(batch):
        ids = batch["input_ids"].to(encoder.device, non_blocking=True)
        return torch.zeros((ids.shape[0], width), device=encoder.device)

    encoder.forward = forward


def profiled(encoder, sequences: list[str]) -> None:
    """One more pipeline run under torch's profiler: the device's busy fraction (CUDA), the
    top host-side costs, and every synchronising call (`SYNC_EVENTS`)."""
    from torch.profiler import ProfilerActivity, profile

    from engine.encoders.streaming import ArraySink

    cuda = encoder.device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    start = time.perf_counter()
    with profile(activities=activities) as prof:
        encoder.encode_into(sequences, ArraySink(len(sequences)))
    wall = time.perf_counter() - start
    events = prof.key_averages()
    print("profile (a separate run, slowed by the profiler):")
    if cuda:
        busy = sum(getattr(e, "self_device_time_total", 0) for e in events) / 1e6
        print(f"  device busy {busy:.2f} s of {wall:.2f} s: {busy / wall:.1%}")
    syncs = {e.key: e.count for e in events if e.key in SYNC_EVENTS}
    print("  synchronising calls: " + (", ".join(f"{k} x {n:,}" for k, n in syncs.items())
                                       or "none"))
    print(events.table(sort_by="self_cpu_time_total", row_limit=12))


def main() -> int:
    from engine.encoders.hf import HFEncoder
    from engine.encoders.streaming import ArraySink
    from store.vocab.encoder_kinds import DTYPES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2_000, help="sequences (default 2,000)")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--max-batch-tokens", type=int, help="padded tokens per batch (default: "
                    "the device's budget)")
    ap.add_argument("--compile", action="store_true", help="run the model through torch.compile")
    ap.add_argument("--naive", type=int, default=200, help="sequences of the baseline loop")
    ap.add_argument("--device", default=None, help="cuda or cpu (default: cuda when present)")
    ap.add_argument("--dtype", default="auto", choices=DTYPES, help="as `fill --dtype` (auto: "
                    "bf16 autocast over fp32 weights on CUDA; bfloat16: bf16 weights)")
    ap.add_argument("--null", action="store_true", help="the forward replaced by zeros: the "
                    "host side alone, against the tokenizer's own rate")
    ap.add_argument("--profile", action="store_true", help="add a torch profiler summary")
    args = ap.parse_args()
    rng = random.Random(0)
    sequences = ["".join(rng.choice("ACGT") for _ in range(rng.randint(400, 1_000)))
                 for _ in range(args.n)]
    with tempfile.TemporaryDirectory(prefix="geneb-mfu-") as tmp:
        folder = checkpoint(Path(tmp) / "bert-random", args.layers, args.width, 1_024)
        encoder = HFEncoder(str(folder), model_id="bert-random", random_init=0,
                            max_batch_tokens=args.max_batch_tokens, device=args.device,
                            dtype=args.dtype, compile_model=args.compile)
        if args.null:
            null_model(encoder)
        encoder.encode(sequences[:64])                       # warm-up (kernels, allocator)
        stats = encoder.encode_into(sequences, ArraySink(len(sequences)))
        if args.null:
            tok_seconds, tok_tokens = tokenizer_alone(encoder, sequences)
        else:
            forward = plain_forward(encoder, device_batches(encoder, sequences))
            base = naive(encoder, sequences[:args.naive]) * len(sequences) / args.naive
    seconds = stats["seconds"]
    rate = stats["n_tokens"] / seconds
    print(f"{encoder.n_params / 1e6:.1f}M parameters ({args.layers} layers, width "
          f"{args.width}), random init; {stats['device']} ({stats['dtype']}); "
          f"{len(sequences):,} sequences, {stats['n_tokens']:,} tokens "
          f"(padding {1 - stats['n_tokens'] / stats['n_padded_tokens']:.1%}); attention "
          f"{stats['attention']}, mask {stats['mask_form']}, {stats['max_batch_tokens']:,} "
          f"padded tokens per batch{', compiled' if stats['compiled'] else ''}")
    if args.null:
        tok_rate = tok_tokens / tok_seconds
        print(f"null model (the forward replaced by zeros): pipeline {rate:,.0f} tokens/s; the "
              f"tokenizer alone (one call, the same sequences) {tok_rate:,.0f} tokens/s; "
              f"pipeline/tokenizer {rate / tok_rate:.1%} (goal >= 80 %)")
    else:
        summary(stats, forward, base, args.naive)
    if args.profile:
        profiled(encoder, sequences)
    return 0


def summary(stats: dict, forward: float, base: float, n_naive: int) -> None:
    """The pipeline against the plain forward and the naive loop; TFLOP/s and MFU on CUDA."""
    seconds, n = stats["seconds"], stats["n_sequences"]
    rate = stats["n_tokens"] / seconds
    print(f"encoder: {n / seconds:,.1f} sequences/s, {rate:,.0f} tokens/s; plain "
          f"forward over its batches (on the device, no host work) "
          f"{stats['n_tokens'] / forward:,.0f} tokens/s; pipeline/forward {forward / seconds:.1%}"
          f" (goal >= 90 % on a GPU)")
    print(f"naive loop (scaled from {n_naive}): {n / base:,.1f} sequences/s; "
          f"encoder/naive {base / seconds:.2f}x")
    tflops = stats["tflops"]
    if tflops is None:
        print("TFLOP/s and MFU: not on the CPU (measured on CUDA only)")
    else:
        mfu = f"{stats['mfu']:.1%}" if stats["mfu"] is not None else "unknown peak"
        print(f"achieved {tflops:.1f} TFLOP/s (2 x parameters x tokens/s); MFU {mfu}; peak "
              f"memory {stats['peak_memory_bytes'] / 2**30:.2f} GiB; goal >= 40 %")


if __name__ == "__main__":
    sys.exit(main())
