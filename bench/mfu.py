"""Model FLOPs utilisation of the generic encoder at a real size, from a random-initialised model.

A BERT encoder of 115M parameters (16 layers of width 768, BERT-base's layers, with a
single-nucleotide vocabulary; `--layers`/`--width` for others) is built
from its configuration with weights drawn from a seed (the path of `fill --random-init`: no
weights to download) and a single-nucleotide tokenizer; it embeds N sequences of 400-1,000 bp.
The encoder runs as `fill` builds it: batches to a padded-token budget (`--max-batch-tokens`,
default the device's `engine.encoders.batching.BATCH_TOKENS`), background preparation, on CUDA
bf16 autocast, sdpa attention and pinned non-blocking copies (`--compile` adds torch.compile).
Printed: sequences/s, tokens/s, achieved TFLOP/s (2 x parameters x tokens/s, the forward pass)
and, on CUDA with 16-bit autocast, MFU against the device's dense peak
(`engine.encoders.streaming.PEAK_TFLOPS`); the same figures the runs table records
(`status --perf`). Baseline in the same run: the official extractors' naive loop (input order,
batch 8, float32) on the first sequences, so the ratio says what length-sorted batching and
autocast give. On the CPU there is no MFU (float32, no listed peak): the throughput only.

    .venv/bin/python bench/mfu.py --layers 2 --n 200    # a CPU smoke run (~1 min)
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

import torch  # noqa: E402


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
    if encoder.device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> int:
    from engine.encoders.hf import HFEncoder
    from engine.encoders.streaming import ArraySink

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2_000, help="sequences (default 2,000)")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--max-batch-tokens", type=int, help="padded tokens per batch (default: "
                    "the device's budget)")
    ap.add_argument("--compile", action="store_true", help="run the model through torch.compile")
    ap.add_argument("--naive", type=int, default=200, help="sequences of the baseline loop")
    ap.add_argument("--device", default=None, help="cuda or cpu (default: cuda when present)")
    args = ap.parse_args()
    rng = random.Random(0)
    sequences = ["".join(rng.choice("ACGT") for _ in range(rng.randint(400, 1_000)))
                 for _ in range(args.n)]
    with tempfile.TemporaryDirectory(prefix="geneb-mfu-") as tmp:
        folder = checkpoint(Path(tmp) / "bert-random", args.layers, args.width, 1_024)
        encoder = HFEncoder(str(folder), model_id="bert-random", random_init=0,
                            max_batch_tokens=args.max_batch_tokens, device=args.device,
                            compile_model=args.compile)
        encoder.encode(sequences[:64])                       # warm-up (kernels, allocator)
        stats = encoder.encode_into(sequences, ArraySink(len(sequences)))
        base = naive(encoder, sequences[:args.naive]) * len(sequences) / args.naive
    seconds = stats["seconds"]
    print(f"{encoder.n_params / 1e6:.1f}M parameters ({args.layers} layers, width "
          f"{args.width}), random init; {stats['device']} ({stats['dtype']}); "
          f"{len(sequences):,} sequences, {stats['n_tokens']:,} tokens "
          f"(padding {1 - stats['n_tokens'] / stats['n_padded_tokens']:.1%}); attention "
          f"{stats['attention']}, {stats['max_batch_tokens']:,} padded tokens per batch"
          f"{', compiled' if stats['compiled'] else ''}")
    print(f"encoder: {len(sequences) / seconds:,.1f} sequences/s, "
          f"{stats['n_tokens'] / seconds:,.0f} tokens/s; naive loop (scaled from "
          f"{args.naive}): {len(sequences) / base:,.1f} sequences/s; ratio {base / seconds:.2f}x")
    tflops = stats["tflops"]
    if tflops is None:
        print("TFLOP/s and MFU: not on the CPU (measured on CUDA only)")
    else:
        mfu = f"{stats['mfu']:.1%}" if stats["mfu"] is not None else "unknown peak"
        print(f"achieved {tflops:.1f} TFLOP/s (2 x parameters x tokens/s); MFU {mfu}; peak "
              f"memory {stats['peak_memory_bytes'] / 2**30:.2f} GiB; goal >= 40 %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
