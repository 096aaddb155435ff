"""Embedding throughput: each step of the generic encoder against the official naive loop.

The naive loop is what the official harness does (input order, pad to the longest of each batch,
fp32, batch of 8). Then, one step at a time, on the same sequences (realistic length spread,
100-1000 bp) with a tiny BERT-like model and a single-nucleotide tokenizer built here (random
weights, no network), into memory:

  1. length-sorted batches of a fixed count (32 rows), prepared inline;
  2. + batches to a padded-token budget (`engine.encoders.batching.BATCH_TOKENS`);
  3. + background preparation (tokenizing a window ahead, collating batches ahead);
  4. + the padding mask as a 4D mask built on the device in the device type's form
     (`engine.encoders.batching.MASK_FORMS`: on the CPU the keys each row attends to,
     n x 1 x 1 x L, which sdpa broadcasts, instead of the n x L mask transformers expands to
     n x 1 x L x L every forward; on CUDA that full mask, without transformers' host check);
  5. + torch.compile (with --compile: its one-off compile time printed apart);
  6. the whole encoder as `fill` builds it (on CUDA: bf16 autocast, sdpa attention, pinned
     non-blocking copies).

Each line: sequences/s (tokens/s on CUDA), the ratio against the naive loop, and the max abs
difference of the embeddings from the naive loop's. Every step runs `--repeat` times, round
robin, and keeps its fastest run (the machine is shared: ratios, not absolute times, count).

    .venv/bin/python bench/embed.py            # 3,000 sequences, a few minutes on 2 CPU cores
    .venv/bin/python bench/embed.py --quick    # smoke test
    python bench/embed.py --device cuda        # the same script on a GPU (auto when present)

Goal (issue 16): >= 3x the naive loop on the tiny CPU model. Needs only torch, transformers,
tokenizers and numpy (no zarr, duckdb or polars).
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

from engine.encoders.device import pick_device  # noqa: E402
from engine.encoders.hf import HFEncoder  # noqa: E402
from engine.encoders.streaming import ArraySink  # noqa: E402


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


def padding_ceiling(lengths: list[int], batch: int = 8) -> tuple[float, float]:
    """The naive loop's padded tokens per real token, and its padded attention pairs (a batch of
    width L computes L x L scores per row) per real pair: the most that removing padding can
    speed it up, at equal speed per token (position-wise layers) and per pair (attention)."""
    tokens = pairs = 0
    for i in range(0, len(lengths), batch):
        width = max(lengths[i:i + batch])
        tokens += len(lengths[i:i + batch]) * width
        pairs += len(lengths[i:i + batch]) * width * width
    return tokens / sum(lengths), pairs / sum(n * n for n in lengths)


def timed(fn):
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    t = time.perf_counter()
    value = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return value, time.perf_counter() - t


def steps(folder: Path, device: torch.device, compiled: bool) -> dict[str, HFEncoder]:
    """The encoders of the steps (see the module), by label."""
    def encoder(**settings) -> HFEncoder:
        return HFEncoder(str(folder), device=str(device), **settings)

    fixed = encoder(batch_size=32)
    fixed.max_batch_tokens, fixed.prefetch = None, False
    budget = encoder()
    budget.prefetch = False
    background = encoder()
    for enc in (fixed, budget, background):
        enc.key_mask = False
    out = {"1. length-sorted, fixed batch of 32": fixed,
           f"2. + token budget ({budget.max_batch_tokens:,} padded tokens)": budget,
           "3. + background preparation": background,
           f"4. + padding mask as a 4D mask ({encoder().padded_mask})": encoder()}
    if compiled:
        out["5. + torch.compile"] = encoder(compile_model=True)
    out[f"6. the whole encoder ({encoder().settings['dtype']})"] = encoder()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="300 sequences, one run (smoke test)")
    ap.add_argument("-n", type=int, help="number of sequences (default 3,000; 300 with --quick)")
    ap.add_argument("--device", default=None, help="cpu, cuda (default: cuda when available)")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--repeat", type=int, help="runs per step, the fastest kept (default 2)")
    ap.add_argument("--compile", action="store_true", help="add the torch.compile step")
    args = ap.parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    n = args.n or (300 if args.quick else 3000)
    repeat = args.repeat or (1 if args.quick else 2)
    device = pick_device(args.device)
    rng = random.Random(0)
    seqs = ["".join(rng.choice("ACGT") for _ in range(rng.randint(100, 1000))) for _ in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = tiny_bert(Path(tmp) / "bert", args.hidden, args.layers, 1026)
        naive(folder, seqs[:16], device)                       # warm-up
        encoders = steps(folder, device, args.compile)
        lengths = [len(ids) for ids in next(iter(encoders.values())).tokenize(seqs)[0]]
        warm = {}
        for label, enc in encoders.items():                    # warm-up (compiles step 4)
            _, warm[label] = timed(lambda enc=enc: enc.encode(seqs[:64]))
        best: dict[str, float] = {}
        runs: dict[str, tuple[np.ndarray, dict]] = {}
        ref, t_naive = None, float("inf")
        for _ in range(repeat):
            ref, t = timed(lambda: naive(folder, seqs, device))
            t_naive = min(t_naive, t)
            for label, enc in encoders.items():
                sink = ArraySink(n)
                stats, t = timed(lambda enc=enc, sink=sink: enc.encode_into(seqs, sink))
                best[label] = min(best.get(label, float("inf")), t)
                runs[label] = (sink.array, stats)
    print(f"device {device}, {n} sequences of 100-1000 bp, BERT-like d={args.hidden} "
          f"x{args.layers} layers, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"best of {repeat}")
    cuda = device.type == "cuda"
    print(f"naive loop (input order, pad to longest, fp32, batch 8): {n / t_naive:9.1f} seq/s")
    tokens, pairs = padding_ceiling(lengths)
    print(f"padding ceiling: the naive loop computes {tokens:.2f}x the real tokens and "
          f"{pairs:.2f}x the real attention pairs (what removing padding can gain at most)")
    for label, (emb, stats) in runs.items():
        rate = (f"{stats['n_tokens'] / best[label]:12,.0f} tokens/s" if cuda else
                f"{n / best[label]:9.1f} seq/s")
        extra = f" (compile + warm-up {warm[label]:.1f} s)" if "compile" in label else ""
        print(f"{label:46} {rate}, {t_naive / best[label]:5.2f}x the naive loop, max abs "
              f"difference {float(np.abs(emb - ref).max()):.2e}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
