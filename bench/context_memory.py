"""Peak memory of the windows context policy on long sequences (issue 45).

`fill --context windows:W:S` embeds a sequence's windows a group at a time (the encoder's batch
size) and keeps one running sum per sequence (`engine.encoders.context.ContextEncoder`), so
what a sequence costs in memory beyond its own text is one batch of windows, whatever its
length. This measures it: a tiny BERT (random weights, single-nucleotide tokenizer, built here
with bench/embed.py's `tiny_bert`; no network) embeds random sequences of each length under
`windows:500:250` in a fresh process, and the process's peak resident memory (ru_maxrss) is
read after a warm-up on one group of windows and again after the long ones: the growth is
what the long sequences cost. For contrast, the same windows in one batch per sequence (how
SpliceBERT's adapter collates a sequence's windows) grow with the length.

    .venv/bin/python bench/context_memory.py              # 20 kb and 200 kb, 2 sequences each
    .venv/bin/python bench/context_memory.py --lengths 200000 -n 1

Needs torch, transformers, tokenizers and numpy only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WINDOW, STRIDE, BATCH = 500, 250, 8


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux


def child(folder: str, length: int, n: int, one_batch: bool) -> dict:
    """Peak RSS growth (MiB) of embedding `n` random sequences of `length` under the windows
    policy, after a warm-up that reaches one group's peak."""
    import torch

    from engine.encoders.context import ContextEncoder, window_starts
    from engine.encoders.hf import HFEncoder
    from store.vocab.context import parse_context

    torch.set_num_threads(1)
    inner = HFEncoder(folder, device="cpu", batch_size=BATCH)
    policy = parse_context(f"windows:{WINDOW}:{STRIDE}")
    windows = len(window_starts(length, WINDOW, STRIDE))
    if one_batch:          # every window of a sequence in one forward, as SpliceBERT collates
        inner.batch_size, inner.max_batch_tokens = windows, None
    encoder = ContextEncoder(inner, policy, policy.value(), "left")
    if one_batch:
        encoder.group = windows
    rng = random.Random(0)
    warm = WINDOW + STRIDE * BATCH          # a full group of windows (streamed)
    encoder.encode(["".join(rng.choice("ACGT") for _ in range(warm))])     # warm-up
    before = peak_mib()
    sequences = ["".join(rng.choice("ACGT") for _ in range(length)) for _ in range(n)]
    text = peak_mib() - before
    rows = encoder.encode(sequences)
    return {"length": length, "n": n, "windows_per_sequence": windows,
            "group": encoder.group, "text_mib": round(text, 1),
            "growth_mib": round(peak_mib() - before, 1), "rows": list(rows.shape)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="20000,200000", help="sequence lengths (bp)")
    ap.add_argument("-n", type=int, default=2, help="sequences per length")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        folder, length, n, one = args.child
        print(json.dumps(child(folder, int(length), int(n), one == "1")))
        return 0
    from bench.embed import tiny_bert

    lengths = [int(x) for x in args.lengths.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = tiny_bert(Path(tmp) / "bert", 64, 2, WINDOW + 2)
        print(f"windows:{WINDOW}:{STRIDE}, tiny BERT (hidden 64, 2 layers), batch {BATCH}, "
              f"{args.n} sequences per length, peak RSS growth after a warm-up")
        for one in (False, True):
            label = ("one batch per sequence" if one
                     else f"streamed (groups of {BATCH} windows)")
            for length in lengths:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", str(folder), str(length),
                     str(args.n), "1" if one else "0"],
                    capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.splitlines()[-1])
                print(f"  {label:<34} {length:>9,} bp ({r['windows_per_sequence']:>4} windows):"
                      f" +{r['growth_mib']:7.1f} MiB (the sequences' text: "
                      f"{r['text_mib']:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
