"""Embedding throughput: the generic encoder versus the official extractors' naive loop.

The naive loop is what the official harness does (input order, pad to the longest of each batch,
fp32, batch of 8); the encoder sorts by length, batches, and on CUDA runs under bf16 autocast.
Both embed the same sequences (realistic length spread, 100-1000 bp) with a tiny BERT-like model
with a single-nucleotide tokenizer built here (random weights, no network), into memory.

    .venv/bin/python bench/embed.py            # 1,000 sequences, 1-2 minutes on 2 CPU cores
    .venv/bin/python bench/embed.py --quick    # smoke test
    python bench/embed.py --device cuda        # the same script on a GPU (auto when present)

Needs only torch, transformers, tokenizers and numpy (no zarr, duckdb or polars).
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

from engine.encoders.hf import HFEncoder  # noqa: E402
from engine.encoders.streaming import pick_device  # noqa: E402


def tiny_bert(folder: Path, hidden: int, layers: int, max_len: int) -> Path:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"ACGTN"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                   model_max_length=max_len)
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=len(vocab), hidden_size=hidden,
                                 num_hidden_layers=layers, num_attention_heads=max(1, hidden // 32),
                                 intermediate_size=4 * hidden, max_position_embeddings=max_len,
                                 pad_token_id=0))
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def naive(folder: Path, sequences: list[str], device: torch.device) -> np.ndarray:
    """The official extractors' loop: input order, pad to the longest, fp32, batch of 8."""
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder).to(device).eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(sequences), 8):
            enc = tok(sequences[i:i + 8], return_tensors="pt", padding=True, truncation=True,
                      max_length=tok.model_max_length).to(device)
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1)
            out.append(((hidden * mask).sum(1) / mask.sum(1)).cpu().numpy())
    return np.vstack(out)


def timed(fn):
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    t = time.perf_counter()
    value = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return value, time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few hundred sequences (smoke test)")
    ap.add_argument("-n", type=int, help="number of sequences (default 1,000; 100 with --quick)")
    ap.add_argument("--device", default=None, help="cpu, cuda (default: cuda when available)")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32, help="the encoder's batch size")
    args = ap.parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    n = args.n or (100 if args.quick else 1000)
    device = pick_device(args.device)
    rng = random.Random(0)
    seqs = ["".join(rng.choice("ACGT") for _ in range(rng.randint(100, 1000))) for _ in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = tiny_bert(Path(tmp) / "bert", args.hidden, args.layers, 1026)
        naive(folder, seqs[:16], device)                       # warm-up
        ref, t_naive = timed(lambda: naive(folder, seqs, device))
        enc = HFEncoder(str(folder), device=str(device), batch_size=args.batch_size)
        enc.encode(seqs[:16])                                  # warm-up
        emb, t_enc = timed(lambda: enc.encode(seqs))
    diff = float(np.abs(emb - ref).max())
    print(f"device {device}, {n} sequences of 100-1000 bp, BERT-like d={args.hidden} "
          f"x{args.layers} layers, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"naive loop (input order, pad to longest, fp32, batch 8): {n / t_naive:8.1f} seq/s")
    print(f"encoder (length-sorted, batch {args.batch_size}, {enc.settings['dtype']}): "
          f"{n / t_enc:8.1f} seq/s")
    print(f"max abs difference of the embeddings: {diff:.2e}")
    print(f"encoder vs naive loop: {t_naive / t_enc:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
